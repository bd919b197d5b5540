/**
 * The query options other than $filter, against a live server: $orderby (several keys,
 * directions, navigation paths, null order), $top and $skip, server paging with next links and
 * $skiptoken, $select (properties and navigations), $expand shapes in Atom (m:inline) and JSON
 * (inline with absolute URIs; V1 arrays, V2 results), $inlinecount, /$count, $format, the
 * answered DataServiceVersion, and the account scope inside expansions and counts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { childElements, parseXml, type XmlElement } from '../clients/datajs';
import { asSeller as asSellerDeclaring, CONNECTOR_VERSIONS, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import type { HttpRequest } from '../support/http-client';
import type { HttpResponse } from '../support/http-client';
import { ATOM, D, M } from '../support/spec';
import { seedRow } from './fixture';

/** Every request declares its versions as the connector does, and so gets the 1.0 shapes it reads. */
const asSeller = (who: Seller, url: string, init: HttpRequest = {}) => asSellerDeclaring(who, url, { ...init, headers: { ...CONNECTOR_VERSIONS, ...(init.headers ?? {}) } });

let live: LiveService;
let a: Seller;
let b: Seller;

interface Product {
  readonly id: string;
  readonly title: string;
  readonly price: number;
  readonly ean: string | null;
}

const products: Product[] = [];
let catalogId = '';
let orderId = '';

const json = { Accept: 'application/json' };

async function get(seller: Seller, path: string, headers: Record<string, string> = json): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${path}`, { headers });
}

async function getOk(seller: Seller, path: string, headers: Record<string, string> = json): Promise<HttpResponse> {
  const res = await get(seller, path, headers);
  assert.equal(res.status, 200, `${path}: ${res.body.slice(0, 300)}`);
  return res;
}

async function post(seller: Seller, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await asSeller(seller, `${live.root}/${path}`, { method: 'POST', headers: { ...json, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  assert.ok(res.status === 201 || res.status === 204, `${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return res.body ? ((JSON.parse(res.body) as { d: Record<string, unknown> }).d) : {};
}

type Entity = Record<string, unknown> & { __metadata: { uri: string } };

/** The entities of a V1 (`d` array) or V2 (`d.results`) JSON feed. */
function feed(res: HttpResponse): Entity[] {
  const d = (JSON.parse(res.body) as { d: Entity[] | { results: Entity[] } }).d;
  return Array.isArray(d) ? d : d.results;
}

const titles = (res: HttpResponse) => feed(res).map((e) => e.Title as string);

function atomEntries(res: HttpResponse): XmlElement[] {
  return childElements(parseXml(res.body).documentElement, ATOM, 'entry');
}

function property(entry: XmlElement, name: string): string | null {
  const props = entry.getElementsByTagNameNS(M, 'properties')[0]!;
  const el = childElements(props, D, name)[0];
  return el === undefined ? null : el.textContent;
}

before(async () => {
  live = await startLive({ env: { PAGE_SIZE: '0' } });
  a = await newSeller(live, 'options-a');
  b = await newSeller(live, 'options-b');
  const rows: [string, number, string | null][] = [
    ['Kaffee', 4.5, '400'],
    ['Apfel', 1.2, null],
    ['Zucker', 1.2, '100'],
    ['Brot', 2.75, null],
    ['Milch', 0.99, '300'],
    ['Ei', 2.75, '200'],
    ['Honig', 6, null],
  ];
  for (const [title, price, ean] of rows) {
    const d = await post(a, 'Products', { Title: title, Price: String(price), StockAmount: 1, Ean: ean });
    products.push({ id: d.Id as string, title, price, ean });
  }
  for (const p of products) {
    for (const name of ['Marke', 'Farbe']) await post(a, 'ProductSpecifics', { ProductId: p.id, Name: name, Value: `${name} von ${p.title}` });
  }
  const kaffee = products[0]!;
  for (let k = 0; k < 3; k++) {
    const v = await post(a, 'ProductVariations', { ProductId: kaffee.id, Price: '4.5', StockAmount: k, Sku: `K-${k}` });
    await post(a, 'ProductVariationSpecifics', { ProductVariationId: v.Id, Name: 'Röstung', Value: `Stufe ${k}` });
  }
  await post(a, 'ProductImages', { ProductId: kaffee.id, ImageUrl: 'https://img.example.com/k.jpg', Type: 1 });
  catalogId = (await post(a, 'Catalogs', { Name: 'Frühstück' })).Id as string;
  for (const p of products.slice(0, 4)) await post(a, `Products(${p.id}L)/$links/Catalogs`, { uri: `${live.root}/Catalogs(${catalogId}L)` });
  // Another account with look-alike data: it must never appear in a's answers.
  const foreign = await post(b, 'Products', { Title: 'Kaffee', Price: '4.5', StockAmount: 1 });
  await post(b, 'ProductSpecifics', { ProductId: foreign.Id, Name: 'Marke', Value: 'Fremd' });
  await post(b, 'ProductVariations', { ProductId: foreign.Id, Price: '1', StockAmount: 1 });
  // An order item without a variation: a null to-one expansion.
  const buyer = await seedRow(live, a.accountId, 'Buyers', { BuyerName: 'kaeufer', Email: 'k@example.com' });
  orderId = String(await seedRow(live, a.accountId, 'SalesOrders', { BuyerId: buyer, PlatformOrderId: 'P-1' }));
  await seedRow(live, a.accountId, 'SalesOrderItems', { SalesOrderId: BigInt(orderId), ProductId: BigInt(kaffee.id), PlatformItemId: 'I-1', TransactionId: 'T-1' });
});

after(async () => {
  await live.close();
});

describe('$orderby, $top, $skip', () => {
  const byTitle = () => [...products].sort((x, y) => (x.title < y.title ? -1 : x.title > y.title ? 1 : 0));

  test('several keys with directions: Price desc, then Title', async () => {
    const expected = [...products].sort((x, y) => y.price - x.price || (x.title < y.title ? -1 : 1)).map((p) => p.title);
    assert.deepEqual(titles(await getOk(a, 'Products?$orderby=Price%20desc,Title%20asc')), expected);
  });

  test('nulls come first ascending and last descending', async () => {
    const asc = titles(await getOk(a, 'Products?$orderby=Ean,Title'));
    assert.deepEqual(asc, ['Apfel', 'Brot', 'Honig', 'Zucker', 'Ei', 'Milch', 'Kaffee']);
    const desc = titles(await getOk(a, 'Products?$orderby=Ean%20desc,Title'));
    assert.deepEqual(desc, ['Kaffee', 'Milch', 'Ei', 'Zucker', 'Apfel', 'Brot', 'Honig']);
  });

  test('a navigation path: ProductSpecifics by Product/Title desc, then Name', async () => {
    const res = await getOk(a, 'ProductSpecifics?$orderby=Product/Title%20desc,Name');
    const got = feed(res).map((e) => `${e.Value as string}`);
    const expected = byTitle()
      .reverse()
      .flatMap((p) => [`Farbe von ${p.title}`, `Marke von ${p.title}`]);
    assert.deepEqual(got, expected);
  });

  test('$skip and $top page through the ordering', async () => {
    assert.deepEqual(titles(await getOk(a, 'Products?$orderby=Title&$skip=2&$top=3')), byTitle().slice(2, 5).map((p) => p.title));
    assert.deepEqual(titles(await getOk(a, 'Products?$orderby=Title&$skip=6')), ['Zucker']);
    assert.deepEqual(titles(await getOk(a, 'Products?$top=0')), []);
  });

  test('without $orderby, entities come by key', async () => {
    assert.deepEqual(feed(await getOk(a, 'Products')).map((e) => e.Id), products.map((p) => p.id));
  });
});

describe('$select', () => {
  test('JSON: only the selected properties (and __metadata); the answer is version 2.0', async () => {
    const res = await getOk(a, `Products?$select=Title,Price&$filter=Id%20eq%20${products[0]!.id}L`);
    assert.equal(res.headers['dataserviceversion'], '2.0;');
    const [e] = feed(res);
    assert.deepEqual(Object.keys(e!), ['__metadata', 'Title', 'Price']);
    assert.match(e!.__metadata.uri, new RegExp(`/Products\\(${products[0]!.id}L\\)$`));
  });

  test('Atom: m:properties holds only the selected properties; unselected navigations have no link', async () => {
    const res = await getOk(a, `Products(${products[0]!.id}L)?$select=Title,ProductImages`, { Accept: 'application/atom+xml' });
    const entry = parseXml(res.body).documentElement;
    const props = entry.getElementsByTagNameNS(M, 'properties')[0]!;
    assert.deepEqual(Array.from(props.children).map((c) => c.localName), ['Title']);
    const related = childElements(entry, ATOM, 'link').filter((l) => l.getAttribute('rel')!.includes('/related/'));
    assert.deepEqual(related.map((l) => l.getAttribute('title')), ['ProductImages']);
  });

  test('a navigation with $expand, and a property path through it', async () => {
    const res = await getOk(a, `Products(${products[0]!.id}L)?$select=Title,ProductVariations/Sku&$expand=ProductVariations`);
    const d = (JSON.parse(res.body) as { d: Entity }).d;
    assert.deepEqual(Object.keys(d), ['__metadata', 'Title', 'ProductVariations']);
    const variations = (d.ProductVariations as { results: Entity[] }).results;
    assert.deepEqual(variations.map((v) => Object.keys(v)), [['__metadata', 'Sku'], ['__metadata', 'Sku'], ['__metadata', 'Sku']]);
  });

  test('a navigation selected but not expanded stays deferred', async () => {
    const d = (JSON.parse((await getOk(a, `Products(${products[0]!.id}L)?$select=ProductImages`)).body) as { d: Entity }).d;
    assert.deepEqual(Object.keys(d), ['__metadata', 'ProductImages']);
    assert.deepEqual(Object.keys(d.ProductImages as object), ['__deferred']);
  });

  test('$select=* keeps every property', async () => {
    const d = (JSON.parse((await getOk(a, `Products(${products[0]!.id}L)?$select=*`)).body) as { d: Entity }).d;
    assert.ok('Description' in d && 'Price' in d && 'ModificationDate' in d);
  });
});

describe('$expand shapes', () => {
  test('JSON, version 1.0: expanded collections are arrays, every inline entity has its absolute URI', async () => {
    const res = await getOk(a, `Products(${products[0]!.id}L)?$expand=ProductVariations/ProductVariationSpecifics,ProductImages,Catalogs`);
    assert.equal(res.headers['dataserviceversion'], '1.0;');
    const d = (JSON.parse(res.body) as { d: Entity }).d;
    const variations = d.ProductVariations as Entity[];
    assert.equal(variations.length, 3);
    for (const [k, v] of variations.entries()) {
      assert.equal(v.__metadata.uri, `${live.root}/ProductVariations(${v.Id as string}L)`);
      const specifics = v.ProductVariationSpecifics as Entity[];
      assert.deepEqual(specifics.map((s) => s.Value), [`Stufe ${k}`]);
      assert.equal(specifics[0]!.__metadata.uri, `${live.root}/ProductVariationSpecifics(${specifics[0]!.Id as string}L)`);
      assert.deepEqual(Object.keys(v.ListingItems as object), ['__deferred']);
    }
    assert.deepEqual((d.Catalogs as Entity[]).map((c) => c.Name), ['Frühstück']);
    assert.deepEqual((d.ProductImages as Entity[]).map((i) => i.Type), [1]);
  });

  test('JSON, version 2.0 (with $inlinecount): expanded collections are {"results":[…]}', async () => {
    const res = await getOk(a, `Products?$filter=Id%20eq%20${products[0]!.id}L&$expand=ProductVariations&$inlinecount=allpages`);
    const d = (JSON.parse(res.body) as { d: { __count: string; results: Entity[] } }).d;
    assert.equal(d.__count, '1');
    assert.equal((d.results[0]!.ProductVariations as { results: Entity[] }).results.length, 3);
  });

  test('Atom: m:inline feeds, two levels deep, and m:inline entries for to-one navigations', async () => {
    const res = await getOk(a, `Products(${products[0]!.id}L)?$expand=ProductVariations/ProductVariationSpecifics`, { Accept: 'application/atom+xml' });
    const entry = parseXml(res.body).documentElement;
    const link = childElements(entry, ATOM, 'link').find((l) => l.getAttribute('title') === 'ProductVariations')!;
    const inlineFeed = childElements(childElements(link, M, 'inline')[0]!, ATOM, 'feed')[0]!;
    const variations = childElements(inlineFeed, ATOM, 'entry');
    assert.equal(variations.length, 3);
    for (const v of variations) {
      assert.match(childElements(v, ATOM, 'id')[0]!.textContent!, new RegExp(`^${live.root.replace(/[.]/g, '\\.')}/ProductVariations\\(\\d+L\\)$`));
      const specLink = childElements(v, ATOM, 'link').find((l) => l.getAttribute('title') === 'ProductVariationSpecifics')!;
      const specFeed = childElements(childElements(specLink, M, 'inline')[0]!, ATOM, 'feed')[0]!;
      assert.equal(childElements(specFeed, ATOM, 'entry').length, 1);
    }
    const specifics = await getOk(a, `ProductSpecifics?$expand=Product&$top=1`, { Accept: 'application/atom+xml' });
    const specificEntry = atomEntries(specifics)[0]!;
    const productLink = childElements(specificEntry, ATOM, 'link').find((l) => l.getAttribute('title') === 'Product')!;
    const inlineEntry = childElements(childElements(productLink, M, 'inline')[0]!, ATOM, 'entry')[0]!;
    assert.equal(property(inlineEntry, 'Title'), products[0]!.title);
  });

  test('a to-one navigation that leads nowhere is null (JSON) and an empty m:inline (Atom)', async () => {
    const path = `SalesOrders(${orderId}L)?$expand=SalesOrderItems/ProductVariation,SalesOrderItems/Product,Buyer,Address`;
    const d = (JSON.parse((await getOk(a, path)).body) as { d: Entity }).d;
    const items = d.SalesOrderItems as Entity[];
    assert.equal(items[0]!.ProductVariation, null);
    assert.equal((items[0]!.Product as Entity).Title, products[0]!.title);
    assert.equal(d.Address, null);
    assert.equal((d.Buyer as Entity).BuyerName, 'kaeufer');
    const atom = await getOk(a, path, { Accept: 'application/atom+xml' });
    const item = childElements(
      childElements(childElements(parseXml(atom.body).documentElement, ATOM, 'link').find((l) => l.getAttribute('title') === 'SalesOrderItems')!, M, 'inline')[0]!,
      ATOM,
      'feed',
    )[0]!;
    const variationLink = childElements(childElements(item, ATOM, 'entry')[0]!, ATOM, 'link').find((l) => l.getAttribute('title') === 'ProductVariation')!;
    const inline = childElements(variationLink, M, 'inline')[0]!;
    assert.equal(inline.children.length, 0);
  });

  test('ProductVariationPictures expands under its own name; its twin ProductVariationImages stays deferred', async () => {
    const d = (JSON.parse((await getOk(a, `ProductVariations?$expand=ProductVariationPictures&$top=1`)).body) as { d: Entity[] }).d;
    assert.ok(Array.isArray(d[0]!.ProductVariationPictures));
    assert.ok('__deferred' in (d[0]!.ProductVariationImages as object));
  });
});

describe('counts and formats', () => {
  test('$inlinecount=allpages counts every match whatever $top says (JSON __count, Atom m:count)', async () => {
    const res = await getOk(a, 'Products?$inlinecount=allpages&$top=2&$filter=Price%20lt%203');
    const d = (JSON.parse(res.body) as { d: { __count: string; results: Entity[] } }).d;
    assert.equal(d.__count, String(products.filter((p) => p.price < 3).length));
    assert.equal(d.results.length, 2);
    assert.equal(Object.keys(d)[0], '__count', '__count comes before results');
    const atom = await getOk(a, 'Products?$inlinecount=allpages&$top=2&$filter=Price%20lt%203', { Accept: 'application/atom+xml' });
    assert.equal(childElements(parseXml(atom.body).documentElement, M, 'count')[0]!.textContent, d.__count);
  });

  test('$inlinecount=none writes no count but is a version 2.0 answer', async () => {
    const res = await getOk(a, 'Products?$inlinecount=none&$top=1');
    assert.equal(res.headers['dataserviceversion'], '2.0;');
    assert.deepEqual(Object.keys((JSON.parse(res.body) as { d: object }).d), ['results']);
  });

  test('/$count is text/plain, honours $filter, $skip and $top, and counts only the account', async () => {
    const all = await getOk(a, 'Products/$count');
    assert.equal(all.headers['content-type'], 'text/plain;charset=utf-8');
    assert.equal(all.headers['dataserviceversion'], '2.0;');
    assert.equal(all.body, String(products.length));
    assert.equal((await getOk(a, 'Products/$count?$filter=Price%20eq%202.75')).body, '2');
    assert.equal((await getOk(a, 'Products/$count?$skip=5&$top=10')).body, String(products.length - 5));
    assert.equal((await getOk(a, `Products(${products[0]!.id}L)/ProductVariations/$count`)).body, '3');
    assert.equal((await getOk(a, `Products(${products[0]!.id}L)/$links/Catalogs/$count`)).body, '1');
    assert.equal((await getOk(b, 'Products/$count')).body, '1');
  });

  test('$format=json, atom and xml', async () => {
    assert.match((await getOk(a, 'Products?$format=json&$top=1', {})).headers['content-type']!, /^application\/json/);
    assert.match((await getOk(a, 'Products?$format=atom&$top=1', {})).headers['content-type']!, /^application\/atom\+xml/);
    const xml = await getOk(a, 'Products?$format=xml&$top=1', {});
    assert.match(xml.headers['content-type']!, /^application\/xml/);
    assert.equal(atomEntries(xml).length, 1);
  });

  test('$links of a collection take $filter, $orderby, $top and $inlinecount', async () => {
    const res = await getOk(a, `Catalogs(${catalogId}L)/$links/Products?$orderby=Title%20desc&$top=2&$inlinecount=allpages`);
    const d = (JSON.parse(res.body) as { d: { __count: string; results: { uri: string }[] } }).d;
    assert.equal(d.__count, '4');
    const expected = products.slice(0, 4).sort((x, y) => (x.title < y.title ? 1 : -1)).slice(0, 2);
    assert.deepEqual(d.results.map((r) => r.uri), expected.map((p) => `${live.root}/Products(${p.id}L)`));
  });
});

describe('versions', () => {
  test('a client that reads only 1.0 is refused a 2.0 answer with a 400 naming the version', async () => {
    const res = await get(a, 'Products?$select=Title', { ...json, MaxDataServiceVersion: '1.0' });
    assert.equal(res.status, 400);
    assert.match(res.body, /version 2\.0/);
    assert.equal((await get(a, 'Products?$top=1', { ...json, MaxDataServiceVersion: '1.0' })).status, 200);
  });

  test('an entity read with a $filter it does not pass is a 404', async () => {
    const p = products[0]!;
    assert.equal((await get(a, `Products(${p.id}L)?$filter=Price%20gt%20100`)).status, 404);
    assert.equal((await get(a, `Products(${p.id}L)?$filter=Price%20lt%20100`)).status, 200);
  });
});

describe('the account scope inside expansions and counts', () => {
  test("expansions hold only the account's rows; filters on foreign keys find nothing of another account", async () => {
    const d = (JSON.parse((await getOk(a, 'Products?$expand=ProductSpecifics,ProductVariations')).body) as { d: Entity[] }).d;
    const values = d.flatMap((p) => (p.ProductSpecifics as Entity[]).map((s) => s.Value));
    assert.ok(!values.includes('Fremd'));
    assert.equal(d.flatMap((p) => p.ProductVariations as Entity[]).length, 3);
    const foreignId = feed(await getOk(b, 'Products'))[0]!.Id as string;
    assert.deepEqual(feed(await getOk(a, `ProductSpecifics?$filter=ProductId%20eq%20${foreignId}L`)), []);
    assert.deepEqual(feed(await getOk(a, `ProductSpecifics?$filter=Product/Title%20eq%20'Kaffee'`)).map((s) => s.Value), ['Marke von Kaffee', 'Farbe von Kaffee']);
    const inline = (JSON.parse((await getOk(a, 'Products?$inlinecount=allpages&$top=1')).body) as { d: { __count: string } }).d;
    assert.equal(inline.__count, String(products.length));
  });
});

describe('server paging (PAGE_SIZE)', () => {
  let paged: LiveService;
  let seller: Seller;
  const names = Array.from({ length: 11 }, (_, i) => `P${String(i).padStart(2, '0')}`);

  before(async () => {
    paged = await startLive({ env: { PAGE_SIZE: '4' } });
    seller = await newSeller(paged, 'paged');
    for (const [i, title] of names.entries()) {
      const res = await asSeller(seller, `${paged.root}/Products`, {
        method: 'POST',
        headers: { ...json, 'Content-Type': 'application/json' },
        body: JSON.stringify({ Title: title, Price: String(i % 3), StockAmount: i }),
      });
      assert.equal(res.status, 201);
    }
  });

  after(async () => {
    await paged.close();
  });

  /** Follows __next links from a first URL; answers every page's titles. */
  async function follow(first: string): Promise<string[][]> {
    const pages: string[][] = [];
    let next: string | undefined = `${paged.root}/${first}`;
    while (next !== undefined) {
      const res = await asSeller(seller, next, { headers: json });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.headers['dataserviceversion'], '2.0;');
      const d = (JSON.parse(res.body) as { d: { results: Entity[]; __next?: string } }).d;
      pages.push(d.results.map((e) => e.Title as string));
      next = d.__next;
      assert.ok(pages.length < 20, 'paging ends');
    }
    return pages;
  }

  test('JSON: pages of 4 with __next until every entity was delivered once, in key order', async () => {
    const pages = await follow('Products');
    assert.deepEqual(pages.map((p) => p.length), [4, 4, 3]);
    assert.deepEqual(pages.flat(), names);
  });

  test('the next links keep $filter and $orderby (with a descending key and ties)', async () => {
    const pages = await follow('Products?$filter=StockAmount%20ge%201&$orderby=Price%20desc,Title%20desc');
    const expected = names
      .map((t, i) => ({ t, i, price: i % 3 }))
      .filter((x) => x.i >= 1)
      .sort((x, y) => y.price - x.price || (x.t < y.t ? 1 : -1))
      .map((x) => x.t);
    assert.deepEqual(pages.flat(), expected);
  });

  test('$top counts across pages', async () => {
    const pages = await follow('Products?$top=6');
    assert.deepEqual(pages.flat(), names.slice(0, 6));
  });

  test('Atom: <link rel="next"> after the entries', async () => {
    const res = await asSeller(seller, `${paged.root}/Products`, { headers: { Accept: 'application/atom+xml' } });
    const feedElement = parseXml(res.body).documentElement;
    const next = childElements(feedElement, ATOM, 'link').find((l) => l.getAttribute('rel') === 'next')!;
    assert.equal(atomEntries(res).length, 4);
    assert.equal(Array.from(feedElement.children).at(-1), next, 'the next link comes last');
    const second = await asSeller(seller, next.getAttribute('href')!, { headers: { Accept: 'application/atom+xml' } });
    assert.deepEqual(atomEntries(second).map((e) => property(e, 'Title')), names.slice(4, 8));
  });

  test('a $skiptoken that does not fit the request is a 400', async () => {
    for (const token of ['abc', "'x'", '1L,2L', "5L'"]) {
      const res = await asSeller(seller, `${paged.root}/Products?$skiptoken=${encodeURIComponent(token)}`, { headers: json });
      assert.equal(res.status, 400, token);
    }
  });
});
