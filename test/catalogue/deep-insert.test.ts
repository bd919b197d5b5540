/**
 * Deep insert against the live service: a POST of a product that carries its specifics, images
 * and variations inline (each variation with its characteristics and pictures) creates the whole
 * tree in one transaction, in JSON (arrays and `{"results":[…]}`) and in Atom (`m:inline` feeds),
 * alone and inside a $batch changeset. Every rule holds for each entity of the tree, and a tree
 * that breaks one, early (121 variations) or deep inside the transaction (a duplicate
 * characteristic of the last variation), is refused whole: the account's rows are read raw before
 * and after.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { getEntity, JSON_HEADERS } from '../support/live-client';
import { errorMessage } from '../support/odata-error';
import { parseXml } from '../clients/datajs';
import { ATOM, D, M, RELATED, SCHEME } from '../support/spec';
import { batchBody, changesetPart, httpPart, jsonOperation, postBatch, readBatchAnswer, changesetAnswers, singleAnswer, errorMessageOf } from '../batch/support';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'deep');
});
after(() => live.close());

type Json = Record<string, unknown>;

/** The acceptance's full product: 5 specifics, 3 images, 10 variations with 2 characteristics and a picture each. */
function fullProduct(label: string, variations = 10): { product: Json; specifics: Json[]; images: Json[]; variations: { variation: Json; specifics: Json[]; picture: Json }[] } {
  return {
    product: { Title: `Deep ${label}`, Price: '19.99', StockAmount: 7, Brand: 'Acme' },
    specifics: Array.from({ length: 5 }, (_, i) => ({ Name: `Spec ${i}`, Value: `value ${i}|other ${i}` })),
    images: [1, 2, 3].map((type) => ({ ImageUrl: `https://img.example.com/${label}/${type}.jpg`, Type: type })),
    variations: Array.from({ length: variations }, (_, i) => ({
      variation: { Price: `${10 + i}.5`, StockAmount: i, Sku: `${label}-SKU-${i}` },
      specifics: [
        { Name: 'Colour', Value: `colour ${i % 30}` },
        { Name: 'Size', Value: `size ${i % 30}` },
      ],
      picture: { ImageUrl: `https://img.example.com/${label}/v${i}.jpg`, ImagePosition: 0 },
    })),
  };
}

type Tree = ReturnType<typeof fullProduct>;

/** The tree as JSON verbose: version 2 collections (`results`) for some navigations, arrays for others. */
function jsonBody(tree: Tree): Json {
  return {
    __metadata: { type: 'CatalogueService.Product' },
    ...tree.product,
    ProductSpecifics: { results: tree.specifics },
    ProductImages: tree.images,
    ProductVariations: tree.variations.map((v) => ({
      ...v.variation,
      ProductVariationSpecifics: v.specifics,
      ProductVariationPictures: { results: [v.picture] },
    })),
  };
}

const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function atomProperties(values: Json): string {
  return Object.entries(values)
    .map(([name, value]) => `<d:${name}>${esc(String(value))}</d:${name}>`)
    .join('');
}

function atomEntryOf(typeName: string, values: Json, links: string[] = []): string {
  return (
    `<entry><category term="CatalogueService.${typeName}" scheme="${SCHEME}"/><title/><author><name/></author><updated>2015-06-29T00:00:00Z</updated><id/>` +
    links.join('') +
    `<content type="application/xml"><m:properties>${atomProperties(values)}</m:properties></content></entry>`
  );
}

const inlineFeed = (nav: string, entries: string[]) => `<link rel="${RELATED}${nav}" type="application/atom+xml;type=feed" title="${nav}"><m:inline><feed>${entries.join('')}</feed></m:inline></link>`;

function atomBody(tree: Tree): string {
  const variations = tree.variations.map((v) =>
    atomEntryOf('ProductVariation', v.variation, [
      inlineFeed('ProductVariationSpecifics', v.specifics.map((s) => atomEntryOf('ProductVariationSpecific', s))),
      inlineFeed('ProductVariationPictures', [atomEntryOf('ProductVariationImage', v.picture)]),
    ]),
  );
  const entry = atomEntryOf('Product', tree.product, [
    inlineFeed('ProductSpecifics', tree.specifics.map((s) => atomEntryOf('ProductSpecific', s))),
    inlineFeed('ProductImages', tree.images.map((i) => atomEntryOf('ProductImage', i))),
    inlineFeed('ProductVariations', variations),
  ]);
  return `<?xml version="1.0" encoding="utf-8"?>` + entry.replace('<entry>', `<entry xmlns="${ATOM}" xmlns:d="${D}" xmlns:m="${M}">`);
}

const postJson = (path: string, body: unknown) => asSeller(seller, `${live.root}/${path}`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
const postAtom = (path: string, body: string) => asSeller(seller, `${live.root}/${path}`, { method: 'POST', headers: { 'Content-Type': 'application/atom+xml', Accept: 'application/atom+xml' }, body });

const EXPAND = 'ProductSpecifics,ProductImages,ProductVariations/ProductVariationSpecifics,ProductVariations/ProductVariationPictures';

/** The stored tree, read back through $expand, as comparable plain values. */
async function storedTree(id: string): Promise<Json> {
  const res = await asSeller(seller, `${live.root}/Products(${id}L)?$expand=${EXPAND}`, { headers: { Accept: 'application/json', MaxDataServiceVersion: '1.0' } });
  assert.equal(res.status, 200, res.body);
  const d = (JSON.parse(res.body) as { d: Json }).d;
  const pick = (e: Json, names: string[]) => Object.fromEntries(names.map((n) => [n, e[n]]));
  const list = (v: unknown) => v as Json[];
  const byId = (a: Json, b: Json) => (BigInt(String(a.Id)) < BigInt(String(b.Id)) ? -1 : 1);
  return {
    product: pick(d, ['Title', 'Price', 'StockAmount', 'Brand']),
    specifics: list(d.ProductSpecifics).sort(byId).map((s) => pick(s, ['Name', 'Value', 'ProductId'])),
    images: list(d.ProductImages).sort(byId).map((i) => pick(i, ['ImageUrl', 'Type', 'ProductId'])),
    variations: list(d.ProductVariations)
      .sort(byId)
      .map((v) => ({
        variation: pick(v, ['Price', 'StockAmount', 'Sku', 'ProductId']),
        specifics: list(v.ProductVariationSpecifics).sort(byId).map((s) => ({ ...pick(s, ['Name', 'Value']), ofVariation: s.ProductVariationId === v.Id })),
        pictures: list(v.ProductVariationPictures).map((p) => ({ ...pick(p, ['ImageUrl', 'ImagePosition']), ofVariation: p.ProductVariationId === v.Id })),
      })),
  };
}

/** What storedTree must answer for `tree` created as product `id`. */
function expectedTree(tree: Tree, id: string): Json {
  return {
    product: tree.product,
    specifics: tree.specifics.map((s) => ({ ...s, ProductId: id })),
    images: tree.images.map((i) => ({ ...i, ProductId: id })),
    variations: tree.variations.map((v) => ({
      variation: { ...v.variation, ProductId: id },
      specifics: v.specifics.map((s) => ({ ...s, ofVariation: true })),
      pictures: [{ ...v.picture, ofVariation: true }],
    })),
  };
}

/** Decimal text compared by value: the service may write "10.5" with more places. */
function normalise(tree: Json): Json {
  return JSON.parse(JSON.stringify(tree, (_k, v: unknown) => (typeof v === 'string' && /^-?\d+\.\d+$/.test(v) ? String(Number(v)) : v))) as Json;
}

function createdId(res: HttpResponse): string {
  assert.equal(res.status, 201, res.body);
  const location = String(res.headers.location ?? '');
  const m = /\/Products\((\d+)L\)$/.exec(location);
  assert.ok(m, `Location names the product: ${location}`);
  return m[1]!;
}

describe('deep insert of a product with its parts', () => {
  test('JSON: a full product in one POST is created whole and answered as the top-level entry', async () => {
    const tree = fullProduct('json');
    const res = await postJson('Products', jsonBody(tree));
    const id = createdId(res);
    const d = (JSON.parse(res.body) as { d: Json }).d;
    assert.equal(d.Title, 'Deep json');
    // WCF answers the created entry alone: its navigations are deferred links, not the inline tree.
    assert.deepEqual(Object.keys(d.ProductVariations as Json), ['__deferred']);
    assert.deepEqual(Object.keys(d.ProductSpecifics as Json), ['__deferred']);
    assert.deepEqual(normalise(await storedTree(id)), normalise(expectedTree(tree, id)));
  });

  test('Atom: the same product with m:inline feeds is created whole', async () => {
    const tree = fullProduct('atom');
    const res = await postAtom('Products', atomBody(tree));
    const id = createdId(res);
    const doc = parseXml(res.body);
    assert.equal(doc.documentElement.localName, 'entry');
    assert.equal(doc.getElementsByTagNameNS(M, 'inline').length, 0, 'the answer carries no inline content');
    assert.deepEqual(normalise(await storedTree(id)), normalise(expectedTree(tree, id)));
  });

  test('a foreign key sent in a nested entity is replaced by the new parent', async () => {
    const tree = fullProduct('fk', 1);
    const body = jsonBody(tree);
    (body.ProductSpecifics as { results: Json[] }).results[0]!.ProductId = '999999';
    const id = createdId(await postJson('Products', body));
    const stored = await storedTree(id);
    assert.equal((stored.specifics as Json[])[0]!.ProductId, id);
  });

  test('POST to a navigation takes inline children too (a variation with its characteristics)', async () => {
    const productId = createdId(await postJson('Products', { Title: 'Parent', Price: '1', StockAmount: 1 }));
    const res = await postJson(`Products(${productId}L)/ProductVariations`, {
      Price: '2', StockAmount: 1, Sku: 'NAV-1',
      ProductVariationSpecifics: [{ Name: 'Colour', Value: 'red' }],
      ProductVariationImages: [{ ImageUrl: 'https://img.example.com/nav.jpg' }],
    });
    assert.equal(res.status, 201, res.body);
    const tree = await storedTree(productId);
    const variation = (tree.variations as { specifics: Json[]; pictures: Json[] }[])[0]!;
    assert.deepEqual(variation.specifics, [{ Name: 'Colour', Value: 'red', ofVariation: true }]);
    assert.equal(variation.pictures.length, 1);
  });

  test('120 variations are accepted, 121 are refused whole in both formats and nothing is stored', async () => {
    const many = fullProduct('many', 121);
    for (const v of many.variations) {
      v.specifics = [];
    }
    const before = await tenantRows(live, seller.accountId);
    const json = await postJson('Products', jsonBody(many));
    assert.equal(json.status, 400, json.body);
    assert.match(errorMessage(json), /at most 120 ProductVariations/);
    const atom = await postAtom('Products', atomBody(many));
    assert.equal(atom.status, 400, atom.body);
    assert.match(errorMessage(atom), /at most 120 ProductVariations/);
    assert.deepEqual(await tenantRows(live, seller.accountId), before);

    many.variations.pop();
    const id = createdId(await postJson('Products', jsonBody(many)));
    assert.equal(((await storedTree(id)).variations as unknown[]).length, 120);
  });

  test('a rule broken deep inside the tree refuses the whole tree: nothing is stored', async () => {
    const before = await tenantRows(live, seller.accountId);
    // The last variation names one characteristic twice (a unique key: 409).
    const duplicate = fullProduct('dup');
    duplicate.variations[9]!.specifics[1]!.Name = 'Colour';
    const res = await postJson('Products', jsonBody(duplicate));
    assert.equal(res.status, 409, res.body);
    assert.match(errorMessage(res), /characteristic named 'Colour'/);
    // A sixth characteristic name across the variations (a counting limit: 400), in Atom.
    const names = fullProduct('names');
    names.variations.forEach((v, i) => (v.specifics[1]!.Name = `Name ${i}`));
    const atom = await postAtom('Products', atomBody(names));
    assert.equal(atom.status, 400, atom.body);
    assert.match(errorMessage(atom), /at most 5 characteristic names/);
    // A second image of Type 1 (409), a missing required Value (400, named before the transaction).
    const images = fullProduct('images');
    images.images[2]!.Type = 1;
    assert.equal((await postJson('Products', jsonBody(images))).status, 409);
    const missing = fullProduct('missing');
    delete missing.variations[3]!.specifics[0]!.Value;
    const refused = await postJson('Products', jsonBody(missing));
    assert.equal(refused.status, 400, refused.body);
    assert.match(errorMessage(refused), /ProductVariations\[3\]\/ProductVariationSpecifics\[0\].*'Value' is required/);
    assert.deepEqual(await tenantRows(live, seller.accountId), before);
  });

  test('inline entities are refused where nothing is owned, and in updates', async () => {
    const catalogs = await postJson('Products', { Title: 'x', Price: '1', StockAmount: 1, Catalogs: [{ Name: 'New catalog' }] });
    assert.equal(catalogs.status, 400, catalogs.body);
    assert.match(errorMessage(catalogs), /cannot be created inline under 'Products\/Catalogs'/);
    const id = createdId(await postJson('Products', { Title: 'Upd', Price: '1', StockAmount: 1 }));
    const res = await asSeller(seller, `${live.root}/Products(${id}L)`, { method: 'MERGE', headers: JSON_HEADERS, body: JSON.stringify({ ProductSpecifics: [{ Name: 'a', Value: 'b' }] }) });
    assert.equal(res.status, 400, res.body);
    assert.match(errorMessage(res), /deep insert is for POST only/);
    const product = await getEntity(live, seller, 'Products', id);
    assert.equal(product.Title, 'Upd');
  });

  test('inside a $batch changeset (JSON and Atom): the tree is created, and $1 names the new product', async () => {
    const tree = fullProduct('batch', 3);
    const res = await postBatch(
      live,
      seller,
      batchBody([changesetPart([jsonOperation('POST', 'Products', 1, jsonBody(tree)), jsonOperation('POST', '$1/ProductSpecifics', 2, { Name: 'Later', Value: 'x' })])]),
    );
    assert.equal(res.status, 202, res.body);
    const answers = changesetAnswers(readBatchAnswer(res)[0]);
    assert.deepEqual(answers.map((a) => a.status), [201, 201]);
    const id = /\/Products\((\d+)L\)$/.exec(answers[0]!.headers.get('location') ?? '')![1]!;
    const stored = await storedTree(id);
    assert.equal((stored.specifics as unknown[]).length, 6);
    assert.equal((stored.variations as unknown[]).length, 3);

    // The same in Atom, as a part of a changeset.
    const atomTree = fullProduct('batchatom', 2);
    const atomRes = await postBatch(
      live,
      seller,
      batchBody([changesetPart([httpPart({ method: 'POST', target: 'Products', headers: ['Content-ID: 1', 'Content-Type: application/atom+xml'], body: atomBody(atomTree) })])]),
    );
    const [atomAnswer] = changesetAnswers(readBatchAnswer(atomRes)[0]);
    assert.equal(atomAnswer!.status, 201, atomAnswer!.body);
    const atomId = /\/Products\((\d+)L\)$/.exec(atomAnswer!.headers.get('location') ?? '')![1]!;
    assert.deepEqual(normalise(await storedTree(atomId)), normalise(expectedTree(atomTree, atomId)));

    // A changeset whose deep insert breaks a rule stores nothing of it, nor of its other operations.
    const before = await tenantRows(live, seller.accountId);
    const bad = fullProduct('batchbad', 2);
    bad.variations[1]!.variation.Sku = bad.variations[0]!.variation.Sku;
    const refused = await postBatch(live, seller, batchBody([changesetPart([jsonOperation('POST', 'Products', 1, { Title: 'Plain', Price: '1', StockAmount: 1 }), jsonOperation('POST', 'Products', 2, jsonBody(bad))])]));
    assert.equal(refused.status, 202, refused.body);
    const answer = singleAnswer(readBatchAnswer(refused)[0]);
    assert.equal(answer.status, 409);
    assert.match(errorMessageOf(answer), /Sku/);
    assert.deepEqual(await tenantRows(live, seller.accountId), before);
  });
});
