/**
 * Unit tests of the resource path parser (src/odata/uri/resource-path.ts) against the catalogue
 * model: every kind of path, key literal forms and the Int64 edges, aliases, percent-decoding,
 * the 400/404 rules, and a fuzz loop that may only ever produce a result or a 400/404 ODataError.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../src/model/catalogue-model';
import { ODataError } from '../../src/odata/errors';
import { INT64_MAX, INT64_MIN } from '../../src/odata/edm';
import {
  formatKey,
  MAX_SEGMENTS,
  parseResourcePath,
  type ResourcePath,
  type ResourceTarget,
} from '../../src/odata/uri/resource-path';
import { mulberry32 } from '../support/random';

/** A plain-data view of a parse result, so expectations can be written as literals. */
type Shape =
  | { kind: 'serviceDocument' | 'metadata' | 'batch' }
  | { kind: 'operation'; operation: string }
  | {
      kind: 'resource';
      set: string;
      setName: string;
      key?: bigint;
      steps: { name: string; navigation: string; key?: bigint }[];
      target: TargetShape;
    };

type TargetShape =
  | { kind: 'collection' | 'entity' | 'count' }
  | { kind: 'property'; property: string; rawValue: boolean }
  | { kind: 'links'; navigation: string; name: string; key?: bigint; count: boolean };

function targetShape(t: ResourceTarget): TargetShape {
  switch (t.kind) {
    case 'property':
      return { kind: 'property', property: t.property.name, rawValue: t.rawValue };
    case 'links':
      return { kind: 'links', navigation: t.navigation.name, name: t.name, ...(t.key !== undefined ? { key: t.key } : {}), count: t.count };
    default:
      return { kind: t.kind };
  }
}

function shape(p: ResourcePath): Shape {
  switch (p.kind) {
    case 'operation':
      return { kind: 'operation', operation: p.operation.name };
    case 'resource':
      return {
        kind: 'resource',
        set: p.set.name,
        setName: p.setName,
        ...(p.key !== undefined ? { key: p.key } : {}),
        steps: p.steps.map((s) => ({ name: s.name, navigation: s.navigation.name, ...(s.key !== undefined ? { key: s.key } : {}) })),
        target: targetShape(p.target),
      };
    default:
      return { kind: p.kind };
  }
}

/** Shorthand for resource shapes. */
function res(set: string, setName: string, key: bigint | undefined, steps: [string, string, bigint?][], target: TargetShape): Shape {
  return {
    kind: 'resource',
    set,
    setName,
    ...(key !== undefined ? { key } : {}),
    steps: steps.map(([name, navigation, k]) => ({ name, navigation, ...(k !== undefined ? { key: k } : {}) })),
    target,
  };
}

const COLLECTION: TargetShape = { kind: 'collection' };
const ENTITY: TargetShape = { kind: 'entity' };
const COUNT: TargetShape = { kind: 'count' };
const prop = (property: string, rawValue = false): TargetShape => ({ kind: 'property', property, rawValue });
const links = (navigation: string, name: string, key?: bigint, count = false): TargetShape => ({
  kind: 'links',
  navigation,
  name,
  ...(key !== undefined ? { key } : {}),
  count,
});

const OK: readonly [string, Shape][] = [
  // Service document, $metadata, $batch, operations.
  ['', { kind: 'serviceDocument' }],
  ['/', { kind: 'serviceDocument' }],
  ['/$metadata', { kind: 'metadata' }],
  ['/$metadata/', { kind: 'metadata' }],
  ['$metadata', { kind: 'metadata' }],
  ['/$batch', { kind: 'batch' }],
  ['/GetSalesOrderHistory', { kind: 'operation', operation: 'GetSalesOrderHistory' }],
  ['/ProductIsListed()', { kind: 'operation', operation: 'ProductIsListed' }],
  ['/SetEbayCategory/', { kind: 'operation', operation: 'SetEbayCategory' }],

  // Sets and key forms.
  ['/Products', res('Product', 'Products', undefined, [], COLLECTION)],
  ['/Products/', res('Product', 'Products', undefined, [], COLLECTION)],
  ['Products', res('Product', 'Products', undefined, [], COLLECTION)],
  ['/SalesOrders()', res('SalesOrder', 'SalesOrders', undefined, [], COLLECTION)],
  ['/SalesOrders(%20)', res('SalesOrder', 'SalesOrders', undefined, [], COLLECTION)],
  ['/Products(5L)', res('Product', 'Products', 5n, [], ENTITY)],
  ['/Products(5L)/', res('Product', 'Products', 5n, [], ENTITY)],
  ['/Products(5)', res('Product', 'Products', 5n, [], ENTITY)],
  ['/Products(5l)', res('Product', 'Products', 5n, [], ENTITY)],
  ['/Products(Id=5L)', res('Product', 'Products', 5n, [], ENTITY)],
  ['/Products(Id=5)', res('Product', 'Products', 5n, [], ENTITY)],
  ['/Products(%20Id%20=%205L%20)', res('Product', 'Products', 5n, [], ENTITY)],
  ['/Products( 5L )', res('Product', 'Products', 5n, [], ENTITY)],
  ['/Products(00042L)', res('Product', 'Products', 42n, [], ENTITY)],
  ['/Products(0)', res('Product', 'Products', 0n, [], ENTITY)],
  ['/Products(-7L)', res('Product', 'Products', -7n, [], ENTITY)],
  ['/Products(9223372036854775807L)', res('Product', 'Products', 9223372036854775807n, [], ENTITY)],
  ['/Products(9223372036854775807)', res('Product', 'Products', INT64_MAX, [], ENTITY)],
  ['/Products(-9223372036854775808L)', res('Product', 'Products', -9223372036854775808n, [], ENTITY)],
  ['/Products(0000000000000000000000000000001L)', res('Product', 'Products', 1n, [], ENTITY)],
  ['/Products%285L%29', res('Product', 'Products', 5n, [], ENTITY)],
  ['/Products(5L)/$links/Catalogs/$count', res('Product', 'Products', 5n, [], links('Catalogs', 'Catalogs', undefined, true))],

  // Collections and $count.
  ['/Products/$count', res('Product', 'Products', undefined, [], COUNT)],
  ['/Products()/$count', res('Product', 'Products', undefined, [], COUNT)],
  ['/Products/$count/', res('Product', 'Products', undefined, [], COUNT)],
  ['/Products(1L)/ProductImages/$count', res('Product', 'Products', 1n, [['ProductImages', 'ProductImages']], COUNT)],

  // Navigation.
  ['/Products(5L)/ProductVariations', res('Product', 'Products', 5n, [['ProductVariations', 'ProductVariations']], COLLECTION)],
  ['/Products(5L)/ProductVariations()', res('Product', 'Products', 5n, [['ProductVariations', 'ProductVariations']], COLLECTION)],
  ['/Products(5L)/ProductVariations(7L)', res('Product', 'Products', 5n, [['ProductVariations', 'ProductVariations', 7n]], ENTITY)],
  ['/Products(5L)/ProductVariations(Id=7)', res('Product', 'Products', 5n, [['ProductVariations', 'ProductVariations', 7n]], ENTITY)],
  ['/ProductImages(3L)/Product', res('ProductImage', 'ProductImages', 3n, [['Product', 'Product']], ENTITY)],
  [
    '/ProductImages(3L)/Product/ProductVariations(9L)/ProductVariationSpecifics',
    res(
      'ProductImage',
      'ProductImages',
      3n,
      [
        ['Product', 'Product'],
        ['ProductVariations', 'ProductVariations', 9n],
        ['ProductVariationSpecifics', 'ProductVariationSpecifics'],
      ],
      COLLECTION,
    ),
  ],
  ['/SalesOrders(1L)/Buyer/Addresses', res('SalesOrder', 'SalesOrders', 1n, [['Buyer', 'Buyer'], ['Addresses', 'Addresses']], COLLECTION)],
  ['/Catalogs(1L)/ChildCatalogs(2L)/Products', res('Catalog', 'Catalogs', 1n, [['ChildCatalogs', 'ChildCatalogs', 2n], ['Products', 'Products']], COLLECTION)],
  ['/Products(1L)/ChildProducts', res('Product', 'Products', 1n, [['ChildProducts', 'ChildProducts']], COLLECTION)],

  // The set alias keeps the name as written; ProductVariationPictures is also a navigation of its own.
  ['/ProductVariationPictures', res('ProductVariationImage', 'ProductVariationPictures', undefined, [], COLLECTION)],
  ['/ProductVariationPictures(4L)', res('ProductVariationImage', 'ProductVariationPictures', 4n, [], ENTITY)],
  ['/ProductVariationImages(4L)', res('ProductVariationImage', 'ProductVariationImages', 4n, [], ENTITY)],
  [
    '/ProductVariations(1L)/ProductVariationPictures',
    res('ProductVariation', 'ProductVariations', 1n, [['ProductVariationPictures', 'ProductVariationPictures']], COLLECTION),
  ],
  [
    '/ProductVariations(1L)/ProductVariationPictures(2L)/ImageUrl',
    res('ProductVariation', 'ProductVariations', 1n, [['ProductVariationPictures', 'ProductVariationPictures', 2n]], prop('ImageUrl')),
  ],
  [
    '/ProductVariations(1L)/$links/ProductVariationPictures',
    res('ProductVariation', 'ProductVariations', 1n, [], links('ProductVariationPictures', 'ProductVariationPictures')),
  ],

  // Properties and $value.
  ['/Products(5L)/Title', res('Product', 'Products', 5n, [], prop('Title'))],
  ['/Products(5L)/Title/$value', res('Product', 'Products', 5n, [], prop('Title', true))],
  ['/Products(5L)/Id', res('Product', 'Products', 5n, [], prop('Id'))],
  ['/ProductImages(3L)/Product/Price/$value', res('ProductImage', 'ProductImages', 3n, [['Product', 'Product']], prop('Price', true))],
  [
    '/Products(1L)/ProductVariations(2L)/Sku/$value/',
    res('Product', 'Products', 1n, [['ProductVariations', 'ProductVariations', 2n]], prop('Sku', true)),
  ],

  // $links.
  ['/Products(5L)/$links/Catalogs', res('Product', 'Products', 5n, [], links('Catalogs', 'Catalogs'))],
  ['/Products(5L)/$links/Catalogs(9L)', res('Product', 'Products', 5n, [], links('Catalogs', 'Catalogs', 9n))],
  ['/Products(5L)/$links/Catalogs(Id=9)', res('Product', 'Products', 5n, [], links('Catalogs', 'Catalogs', 9n))],
  ['/Products(5L)/$links/Catalogs()', res('Product', 'Products', 5n, [], links('Catalogs', 'Catalogs'))],
  ['/ProductImages(3L)/$links/Product', res('ProductImage', 'ProductImages', 3n, [], links('Product', 'Product'))],
  ['/Catalogs(1L)/$links/ChildCatalogs/$count', res('Catalog', 'Catalogs', 1n, [], links('ChildCatalogs', 'ChildCatalogs', undefined, true))],
  [
    '/ProductImages(3L)/Product/$links/Catalogs',
    res('ProductImage', 'ProductImages', 3n, [['Product', 'Product']], links('Catalogs', 'Catalogs')),
  ],

  // Percent-decoding happens per segment, after splitting.
  ['/Products(%2042L%20)', res('Product', 'Products', 42n, [], ENTITY)],
  ['/%50roducts(1L)', res('Product', 'Products', 1n, [], ENTITY)],
  ['/Products(1L)/%24links/Catalogs', res('Product', 'Products', 1n, [], links('Catalogs', 'Catalogs'))],
];

for (const [path, expected] of OK) {
  test(`parses ${JSON.stringify(path)}`, () => {
    assert.deepEqual(shape(parseResourcePath(model, path)), expected);
  });
}

/** [path, status, substrings the message must contain] */
const FAIL: readonly [string, 400 | 404, readonly string[]][] = [
  // Unknown names: WCF's exact 404 wording, naming the segment.
  ['/Productz', 404, ["Resource not found for the segment 'Productz'."]],
  ['/products', 404, ["Resource not found for the segment 'products'."]],
  ['/Productz(1L)', 404, ["Resource not found for the segment 'Productz'."]],
  ['/getSalesOrderHistory', 404, ["Resource not found for the segment 'getSalesOrderHistory'."]],
  ['/$count', 404, ["Resource not found for the segment '$count'."]],
  ['/Products(1L)/Nope', 404, ["Resource not found for the segment 'Nope'."]],
  ['/Products(1L)/title', 404, ["Resource not found for the segment 'title'."]],
  ['/Products(1L)/ProductVariationPictures', 404, ["Resource not found for the segment 'ProductVariationPictures'."]],
  ['/Products(1L)/$links/Nope', 404, ["Resource not found for the segment 'Nope'."]],
  ['/Products(1L)/$metadata', 404, ["Resource not found for the segment '$metadata'."]],
  ['/Pro%20ducts', 404, ["Resource not found for the segment 'Pro ducts'."]],
  ['/Prod%2Fucts', 404, ["Resource not found for the segment 'Prod/ucts'."]],

  // Key literals.
  ['/Products(9223372036854775808L)', 400, ['Products(9223372036854775808L)', 'outside the Int64 range']],
  ['/Products(-9223372036854775809L)', 400, ['outside the Int64 range']],
  ['/Products(99999999999999999999999L)', 400, ['outside the Int64 range']],
  ['/Products(Id=9223372036854775808)', 400, ['outside the Int64 range']],
  ["/Products('x')", 400, ["Products('x')"]],
  ['/Products(%27x%27)', 400, ["Products('x')"]],
  ['/Products(1.5)', 400, ['Products(1.5)']],
  ['/Products(1.5M)', 400, ['Products(1.5M)']],
  ["/Products(guid'12345678-1234-1234-1234-123456789012')", 400, ["Products(guid'12345678-1234-1234-1234-123456789012')"]],
  ['/Products(1L,2L)', 400, ['Products(1L,2L)']],
  ['/Products(Id=1,Id=2)', 400, ['Products(Id=1,Id=2)']],
  ['/Products(Foo=1)', 400, ['Products(Foo=1)', "'Foo'"]],
  ['/Products(id=1)', 400, ['Products(id=1)']],
  ['/Products(Id=)', 400, ['Products(Id=)']],
  ['/Products(=1)', 400, ['Products(=1)']],
  ['/Products(+1L)', 400, ['Products(+1L)']],
  ['/Products(1LL)', 400, ['Products(1LL)']],
  ['/Products(L)', 400, ['Products(L)']],
  ['/Products(-)', 400, ['Products(-)']],
  ['/Products(1 2)', 400, ['Products(1 2)']],
  ['/Products(0x10)', 400, ['Products(0x10)']],
  ['/Products(١)', 400, ['Products(١)']],
  ['/Products(1L', 400, ['Products(1L']],
  ['/Products1L)', 400, ['Products1L)']],
  ['/Products((1L))', 400, ['Products((1L))']],
  ['/Products(1L)(2L)', 400, ['Products(1L)(2L)']],
  ['/Products(1L)x', 400, ['Products(1L)x']],
  ['/(1L)', 400, ['(1L)']],
  [`/Products(${'0'.repeat(40)}1)`, 400, ['longer than 40 characters']],
  ['/Products(1L)/ProductVariations(x)', 400, ['ProductVariations(x)']],
  ['/Products(1L)/ProductVariations(99999999999999999999)', 400, ['outside the Int64 range']],

  // Special segments.
  ['/$metadata/Products', 400, ["'Products'", "'$metadata'"]],
  ['/$metadata()', 400, ['$metadata()']],
  ['/$batch/x', 400, ["'x'"]],
  ['/$batch(1)', 400, ['$batch(1)']],
  ['/GetSalesOrderHistory(1L)', 400, ['GetSalesOrderHistory(1L)']],
  ['/GetSalesOrderHistory/$value', 400, ["'$value'"]],

  // Collections: only $count may follow.
  ['/Products/ProductImages', 400, ["'ProductImages'", 'cannot navigate from a collection; address one entity with a key']],
  ['/Products()/Title', 400, ["'Title'", 'cannot navigate from a collection; address one entity with a key']],
  ['/Products/Nope', 400, ["'Nope'", 'cannot navigate from a collection']],
  ['/Products/$links/Catalogs', 400, ["'$links'", 'cannot navigate from a collection']],
  ['/Products(1L)/ProductImages/Product', 400, ["'Product'", 'cannot navigate from a collection; address one entity with a key']],
  ['/Products/$count/$value', 400, ["'$value'"]],
  ['/Products/$count/x', 400, ["'x'"]],
  ['/Products/$count()', 400, ['$count()']],
  ['/Products/$value', 400, ["'$value'"]],

  // Single entities.
  ['/Products(1L)/$count', 400, ["'$count'", 'not supported']],
  ['/Products(1L)/$value', 400, ["'$value'"]],
  ['/ProductImages(3L)/Product(1L)', 400, ['Product(1L)']],
  ['/ProductImages(3L)/Product()', 400, ['Product()']],
  ['/ProductImages(3L)/Product/$count', 400, ["'$count'"]],

  // Properties.
  ['/Products(1L)/Title()', 400, ['Title()']],
  ['/Products(1L)/Title/Foo', 400, ["'Foo'"]],
  ['/Products(1L)/Title/$count', 400, ["'$count'"]],
  ['/Products(1L)/Title/$value/x', 400, ["'x'"]],
  ['/Products(1L)/Title/$value()', 400, ['$value()']],

  // $links.
  ['/Products(1L)/$links', 400, ['$links']],
  ['/Products(1L)/$links/', 400, ['$links']],
  ['/Products(1L)/$links()/Catalogs', 400, ['$links()']],
  ['/Products(1L)/$links/Title', 400, ["'Title'"]],
  ['/Products(1L)/$links/$count', 400, ["'$count'"]],
  ['/Products(1L)/$links/Catalogs/Products', 400, ["'Products'"]],
  ['/Products(1L)/$links/Catalogs(2L)/$count', 400, ["'$count'"]],
  ['/Products(1L)/$links/Catalogs/$count/x', 400, ["'x'"]],
  ['/Products(1L)/$links/Catalogs(x)', 400, ['Catalogs(x)']],
  ['/ProductImages(3L)/$links/Product(1L)', 400, ['Product(1L)']],
  ['/ProductImages(3L)/$links/Product/$count', 400, ["'$count'"]],

  // Empty segments, encoding, limits.
  ['/Products//x', 400, ["after 'Products'"]],
  ['/Products(1L)//', 400, ["after 'Products(1L)'"]],
  ['//', 400, ['empty segment']],
  ['//Products', 400, ['empty segment']],
  ['/Products%', 400, ["'Products%'", 'percent-encoding']],
  ['/Products(1L)/%E0%A4%A', 400, ['%E0%A4%A']],
  ['/%C0%AF', 400, ['%C0%AF']],
  ['/Products(1L)' + '/Product'.repeat(MAX_SEGMENTS), 400, [`more than the ${MAX_SEGMENTS} allowed`]],
];

for (const [path, status, parts] of FAIL) {
  test(`refuses ${JSON.stringify(path.length > 80 ? path.slice(0, 80) + '…' : path)} with ${status}`, () => {
    assert.throws(
      () => parseResourcePath(model, path),
      (e: unknown) => {
        assert.ok(e instanceof ODataError, `expected an ODataError, got ${String(e)}`);
        assert.equal(e.status, status, e.message);
        for (const part of parts) assert.ok(e.message.includes(part), `message ${JSON.stringify(e.message)} lacks ${JSON.stringify(part)}`);
        return true;
      },
    );
  });
}

test('the returned definitions are the model objects themselves', () => {
  const p = parseResourcePath(model, '/ProductVariations(1L)/ProductVariationPictures(2L)/ImageUrl/$value');
  assert.equal(p.kind, 'resource');
  if (p.kind !== 'resource') return;
  const variation = model.typeByName.get('ProductVariation');
  assert.equal(p.set, variation);
  const nav = variation?.navigations.find((n) => n.name === 'ProductVariationPictures');
  assert.ok(nav);
  assert.equal(p.steps[0]?.navigation, nav);
  assert.equal(p.target.kind, 'property');
  if (p.target.kind === 'property') {
    assert.equal(p.target.property, model.typeByName.get('ProductVariationImage')?.properties.find((x) => x.name === 'ImageUrl'));
  }
  const alias = parseResourcePath(model, '/ProductVariationPictures');
  assert.equal(alias.kind === 'resource' && alias.set, model.typeByName.get('ProductVariationImage'));
  const op = parseResourcePath(model, '/ReviseInventoryStatus');
  assert.equal(op.kind === 'operation' && op.operation, model.operationByName.get('ReviseInventoryStatus'));
});

test('keys are bigints over the whole Int64 range, never numbers', () => {
  for (const key of [INT64_MIN, -1n, 0n, 1n, 2n ** 53n + 1n, INT64_MAX]) {
    const p = parseResourcePath(model, `/Products${formatKey(key)}`);
    assert.equal(p.kind === 'resource' && p.key, key);
    assert.equal(typeof (p.kind === 'resource' ? p.key : undefined), 'bigint');
  }
  assert.equal(formatKey(42n), '(42L)');
  assert.equal(formatKey(-9223372036854775808n), '(-9223372036854775808L)');
});

test('exactly the segment limit is allowed', () => {
  // Products(1L) + 30 x (ProductVariations(1L)/Product) = 61 segments > 32; build exactly 32.
  const segs = ['Products(1L)'];
  while (segs.length < MAX_SEGMENTS - 1) segs.push(segs.length % 2 === 1 ? 'ProductVariations(2L)' : 'Product');
  segs.push('Title');
  assert.equal(segs.length, MAX_SEGMENTS);
  const p = parseResourcePath(model, '/' + segs.join('/'));
  assert.equal(p.kind, 'resource');
  assert.equal(p.kind === 'resource' && p.steps.length, MAX_SEGMENTS - 2);
  assert.deepEqual(p.kind === 'resource' && targetShape(p.target), prop('Title'));
  // One more is a 400, also with a trailing slash not counted.
  assert.doesNotThrow(() => parseResourcePath(model, '/' + segs.join('/') + '/'));
  assert.throws(() => parseResourcePath(model, '/' + segs.join('/') + '/$value'), (e: unknown) => e instanceof ODataError && e.status === 400);
});

test('messages clip long segments and never carry control characters', () => {
  const long = 'X'.repeat(500);
  assert.throws(
    () => parseResourcePath(model, `/${long}`),
    (e: unknown) => e instanceof ODataError && e.status === 404 && e.message.length < 120 && e.message.includes('X'.repeat(60) + '…'),
  );
  assert.throws(
    () => parseResourcePath(model, '/Pro%00d%0Aucts'),
    (e: unknown) => e instanceof ODataError && e.status === 404 && !/[\u0000-\u001f]/.test(e.message) && e.message.includes('Pro\uFFFDd\uFFFDucts'),
  );
  // A clip never splits a surrogate pair.
  assert.throws(
    () => parseResourcePath(model, '/' + 'a'.repeat(59) + encodeURIComponent('😀😀')),
    (e: unknown) => e instanceof ODataError && !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(e.message) && e.message.includes('a'.repeat(59) + '😀…'),
  );
});


/** Seeded, so a failing fuzz case can be replayed. */
const random = mulberry32;

const FUZZ_CHARS = Array.from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789()'=/$%L,-. ");
const FUZZ_NAMES = [
  'Products', 'ProductVariations', 'ProductVariationPictures', 'ProductVariationImages', 'ProductImages', 'Product',
  'Catalogs', 'ChildCatalogs', 'SalesOrders', 'Buyer', 'Addresses', 'Title', 'Id', 'ImageUrl', '$links', '$count',
  '$value', '$metadata', '$batch', 'GetSalesOrderHistory', 'Nope',
];
const FUZZ_PREDICATES = [
  '()', '(1L)', '(42)', '(Id=7L)', '( 3l )', '(%201%20)', '(-5L)', '(9223372036854775807L)', '(9223372036854775808L)',
  "('x')", '(1,2)', '(Id=)', '(', ')', '(1.5)',
];
const FUZZ_TOKENS = [
  '/', '/', '/', '(', ')', '()', '(1L)', '(Id=', '9223372036854775808', '9223372036854775807', '-', 'L', "'", '%27', '%20',
  '%2F', '%28', '%29', '%', '%Z', '%C3', '%C3%A9', '%00', 'Products', 'ProductVariations', 'ProductVariationPictures',
  'ProductImages', 'Product', 'Catalogs', 'Title', 'Id', '$links', '$count', '$value', '$metadata', '$batch',
  'GetSalesOrderHistory', 'Buyer', 'ChildCatalogs',
];

test('fuzz: 5000 random path-ish strings give a result or a 400/404 ODataError, nothing else', () => {
  const seed = Number(process.env.FUZZ_SEED ?? 20240611);
  const next = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const outcomes = { ok: 0, 400: 0, 404: 0 };
  for (let i = 0; i < 5000; i++) {
    let path = next() < 0.8 ? '/' : '';
    if (next() < 0.5) {
      // Character soup.
      const length = 1 + Math.floor(next() * 30);
      for (let j = 0; j < length; j++) path += next() < 0.5 ? pick(FUZZ_CHARS) : pick(FUZZ_TOKENS);
    } else {
      // Plausible segments, now and then with a random character dropped in.
      const count = 1 + Math.floor(next() * 5);
      const segments: string[] = [];
      for (let j = 0; j < count; j++) segments.push(pick(FUZZ_NAMES) + (next() < 0.5 ? pick(FUZZ_PREDICATES) : ''));
      path += segments.join('/');
      if (next() < 0.3) {
        const at = Math.floor(next() * (path.length + 1));
        path = path.slice(0, at) + pick(FUZZ_CHARS) + path.slice(at);
      }
    }
    let result: ResourcePath;
    try {
      result = parseResourcePath(model, path);
    } catch (e) {
      if (!(e instanceof ODataError) || (e.status !== 400 && e.status !== 404)) {
        assert.fail(`seed ${seed}, case ${i}: ${JSON.stringify(path)} threw ${e instanceof Error ? e.stack : String(e)}`);
      }
      assert.ok(e.message.length > 0 && e.message.length < 400, `seed ${seed}, case ${i}: message ${JSON.stringify(e.message)}`);
      assert.ok(!/[\u0000-\u001f]/.test(e.message), `seed ${seed}, case ${i}: control character in ${JSON.stringify(e.message)}`);
      outcomes[e.status as 400 | 404]++;
      continue;
    }
    outcomes.ok++;
    // A result is well formed: keys in range, as many steps as the path can hold.
    if (result.kind === 'resource') {
      for (const key of [result.key, ...result.steps.map((s) => s.key), result.target.kind === 'links' ? result.target.key : undefined]) {
        if (key !== undefined) assert.ok(typeof key === 'bigint' && key >= INT64_MIN && key <= INT64_MAX, `seed ${seed}, case ${i}`);
      }
      assert.ok(result.steps.length < MAX_SEGMENTS);
    }
  }
  // The generator must reach all three outcomes, or the loop tests little.
  assert.ok(outcomes.ok > 50 && outcomes[400] > 500 && outcomes[404] > 500, JSON.stringify(outcomes));
});
