/**
 * Every limit and rule of the catalogue at its boundary, against the live service: N is accepted,
 * N+1 is refused with 400 (limits) or 409 (uniqueness) and an OData error whose message names the
 * rule, and a refused request writes nothing (every tenant row of the account is read raw before
 * and after, and the affected collection is counted). Limits that a single request could pass only
 * by racing others are raced over real HTTP.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultOf } from '../../src/catalogue/values';
import type { EdmValue } from '../../src/odata/edm';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, type LiveService, type Seller, tenantRows } from '../support/live-service';
import { atomEntry } from '../support/entries';
import { errorMessage } from '../support/odata-error';
import { parseXml } from '../clients/datajs';

const M_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices/metadata';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'limits');
});
after(() => live.close());

// ---------------------------------------------------------------------------------------------
// Requests

type Json = Record<string, unknown>;

const JSON_HEADERS = { Accept: 'application/json', 'Content-Type': 'application/json' };

function send(method: string, path: string, body?: Json, as: Seller = seller): Promise<HttpResponse> {
  return asSeller(as, live.root + path, {
    method,
    headers: JSON_HEADERS,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const post = (set: string, body: Json, as: Seller = seller) => send('POST', `/${set}`, body, as);
const merge = (path: string, body: Json, as: Seller = seller) => send('MERGE', path, body, as);

function postAtom(set: string, typeName: string, props: Record<string, string | null>, as: Seller = seller): Promise<HttpResponse> {
  return asSeller(as, live.root + `/${set}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/atom+xml' },
    body: atomEntry(typeName, props),
  });
}

function mergeAtom(path: string, typeName: string, props: Record<string, string | null>, as: Seller = seller): Promise<HttpResponse> {
  return asSeller(as, live.root + path, {
    method: 'MERGE',
    headers: { 'Content-Type': 'application/atom+xml' },
    body: atomEntry(typeName, props),
  });
}

/** The properties of a JSON or Atom entity answer (Atom values as element text). */
function entityOf(res: HttpResponse): Json {
  const type = String(res.headers['content-type'] ?? '');
  if (type.startsWith('application/json')) return (JSON.parse(res.body) as { d: Json }).d;
  assert.match(type, /^application\/atom\+xml/, res.body);
  const doc = parseXml(res.body);
  const props = doc.getElementsByTagNameNS(M_NS, 'properties')[0];
  assert.ok(props, 'the Atom entry has m:properties');
  const out: Json = {};
  for (const el of Array.from(props.children)) {
    out[el.localName] = el.getAttributeNS(M_NS, 'null') === 'true' ? null : (el.textContent ?? '');
  }
  return out;
}

/** A created entity: asserts 201 and answers its properties. */
function created(res: HttpResponse): Json {
  assert.equal(res.status, 201, res.body);
  return entityOf(res);
}

const idOf = (res: HttpResponse) => String(created(res).Id);

async function count(path: string, as: Seller = seller): Promise<number> {
  const res = await asSeller(as, live.root + `${path}/$count`);
  assert.equal(res.status, 200, res.body);
  return Number(res.body);
}

async function getEntity(path: string, as: Seller = seller): Promise<Json> {
  const res = await asSeller(as, live.root + path, { headers: { Accept: 'application/json' } });
  assert.equal(res.status, 200, res.body);
  return entityOf(res);
}

// ---------------------------------------------------------------------------------------------
// What is stored: every tenant row of an account, raw

const snapshot = (accountId: number) => tenantRows(live, accountId);

/**
 * Sends a request that must be refused: the status, a message naming the rule, and nothing
 * written (every row of the account, and the given collections counted, unchanged).
 */
async function refused(request: () => Promise<HttpResponse>, status: 400 | 409, rule: RegExp, counted: readonly string[] = [], as: Seller = seller): Promise<void> {
  const rowsBefore = await snapshot(as.accountId);
  const countsBefore = await Promise.all(counted.map((p) => count(p, as)));
  const res = await request();
  assert.equal(res.status, status, res.body);
  assert.match(errorMessage(res), rule);
  assert.deepEqual(await Promise.all(counted.map((p) => count(p, as))), countsBefore, 'the collection counts are unchanged');
  assert.deepEqual(await snapshot(as.accountId), rowsBefore, 'nothing was written');
}

// ---------------------------------------------------------------------------------------------
// Fixtures

async function newProduct(extra: Json = {}, as: Seller = seller): Promise<string> {
  return idOf(await post('Products', { Title: 'Limit test product', Price: '10.00', StockAmount: 5, ...extra }, as));
}

async function newVariation(productId: string, extra: Json = {}, as: Seller = seller): Promise<string> {
  return idOf(await post('ProductVariations', { ProductId: productId, Price: '1.00', StockAmount: 1, ...extra }, as));
}

/** Creates n entities with up to 20 requests in flight; answers the ids in creation order of i. */
async function createMany(n: number, make: (i: number) => Promise<HttpResponse>): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < n; start += 20) {
    const batch = await Promise.all(Array.from({ length: Math.min(20, n - start) }, (_, k) => make(start + k)));
    for (const res of batch) ids.push(idOf(res));
  }
  return ids;
}

const productPath = (id: string) => `/Products(${id}L)`;
const pipeValues = (n: number, length = 5) => Array.from({ length: n }, (_, i) => `v${i}`.padEnd(length, 'x')).join('|');

/** A row written through the real store, for sets that sellers cannot create. */
async function seed(accountId: number, typeName: string, values: Record<string, EdmValue>): Promise<bigint> {
  const app = live.service.app;
  const type = app.model.typeByName.get(typeName)!;
  return app.store.write(accountId, async (tx) => {
    const id = await app.store.nextId(tx);
    const now = app.clock.now();
    const row: Record<string, EdmValue> = {};
    for (const p of type.properties) {
      if (p.access === 'key') row[p.name] = id;
      else if (Object.prototype.hasOwnProperty.call(values, p.name)) row[p.name] = values[p.name]!;
      else if (p.timestamp) row[p.name] = now;
      else row[p.name] = defaultOf(p);
      if (row[p.name] === null && !p.nullable && p.access !== 'key') throw new Error(`seed ${typeName}: ${p.name} needs a value`);
    }
    await app.entities.insert(tx, accountId, type, row);
    return id;
  });
}

// ---------------------------------------------------------------------------------------------

describe('ProductSpecifics', () => {
  test('a Name is used once per product (409), in JSON and Atom; another product may use it', async () => {
    const p = await newProduct();
    const specifics = `${productPath(p)}/ProductSpecifics`;
    created(await post('ProductSpecifics', { ProductId: p, Name: 'Brand', Value: 'Acme' }));
    await refused(() => post('ProductSpecifics', { ProductId: p, Name: 'Brand', Value: 'Other' }), 409, /Name may be used once per product/, [specifics]);
    await refused(() => postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: p, Name: 'Brand', Value: 'Other' }), 409, /Name may be used once per product/, [specifics]);
    // Through the product's navigation too.
    await refused(() => send('POST', specifics, { Name: 'Brand', Value: 'Other' }), 409, /Name may be used once per product/, [specifics]);
    const q = await newProduct();
    created(await post('ProductSpecifics', { ProductId: q, Name: 'Brand', Value: 'Acme' }));
    created(await postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: p, Name: 'Colour', Value: 'Red' }));
    assert.equal(await count(specifics), 2);
  });

  test('renaming a specific onto a used Name is a 409 and changes nothing; keeping its own Name is fine', async () => {
    const p = await newProduct();
    created(await post('ProductSpecifics', { ProductId: p, Name: 'Brand', Value: 'Acme' }));
    const id = idOf(await post('ProductSpecifics', { ProductId: p, Name: 'Material', Value: 'Steel' }));
    await refused(() => merge(`/ProductSpecifics(${id}L)`, { Name: 'Brand' }), 409, /Name may be used once per product/);
    await refused(() => mergeAtom(`/ProductSpecifics(${id}L)`, 'ProductSpecific', { Name: 'Brand' }), 409, /Name may be used once per product/);
    assert.equal((await merge(`/ProductSpecifics(${id}L)`, { Name: 'Material', Value: 'Iron' })).status, 204);
    assert.equal((await getEntity(`/ProductSpecifics(${id}L)`)).Value, 'Iron');
  });

  test('Value: 20 pipe-separated values are accepted, 21 refused (JSON and Atom)', async () => {
    const p = await newProduct();
    const specifics = `${productPath(p)}/ProductSpecifics`;
    const twenty = pipeValues(20);
    assert.equal(twenty.split('|').length, 20);
    assert.equal(created(await post('ProductSpecifics', { ProductId: p, Name: 'Fits', Value: twenty })).Value, twenty);
    assert.equal(created(await postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: p, Name: 'Fits too', Value: twenty })).Value, twenty);
    const rule = /at most 20 values separated by '\|'/;
    await refused(() => post('ProductSpecifics', { ProductId: p, Name: 'Fits 21', Value: pipeValues(21) }), 400, rule, [specifics]);
    await refused(() => postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: p, Name: 'Fits 21', Value: pipeValues(21) }), 400, rule, [specifics]);
    assert.equal(await count(specifics), 2);
  });

  test('Value: each value up to 50 characters (counted as characters), 51 refused; empty values refused', async () => {
    const p = await newProduct();
    const specifics = `${productPath(p)}/ProductSpecifics`;
    const fifty = 'a'.repeat(50);
    const fiftyUmlauts = 'ä'.repeat(50);
    created(await post('ProductSpecifics', { ProductId: p, Name: 'Single', Value: fifty }));
    created(await post('ProductSpecifics', { ProductId: p, Name: 'Several', Value: `x|${fifty}|${fiftyUmlauts}` }));
    created(await postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: p, Name: 'Atom', Value: `${fiftyUmlauts}|y` }));
    const rule = /Each '\|'-separated value of a ProductSpecific Value must be 1 to 50 characters/;
    await refused(() => post('ProductSpecifics', { ProductId: p, Name: 'Long', Value: 'a'.repeat(51) }), 400, rule, [specifics]);
    await refused(() => post('ProductSpecifics', { ProductId: p, Name: 'Long', Value: `x|${'ä'.repeat(51)}|y` }), 400, rule, [specifics]);
    await refused(() => postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: p, Name: 'Long', Value: `x|${'b'.repeat(51)}` }), 400, rule, [specifics]);
    for (const value of ['a||b', '|a', 'a|', 'a| |b']) {
      await refused(() => post('ProductSpecifics', { ProductId: p, Name: 'Empty', Value: value }), 400, rule, [specifics]);
    }
    await refused(() => post('ProductSpecifics', { ProductId: p, Name: 'Empty', Value: '' }), 400, /'Value' .* cannot be empty or blank/, [specifics]);
    await refused(() => postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: p, Name: 'Empty', Value: 'a||b' }), 400, rule, [specifics]);
    assert.equal(await count(specifics), 3);
  });

  test('an update is held to the same Value rules', async () => {
    const p = await newProduct();
    const id = idOf(await post('ProductSpecifics', { ProductId: p, Name: 'Fits', Value: 'A|B' }));
    await refused(() => merge(`/ProductSpecifics(${id}L)`, { Value: pipeValues(21) }), 400, /at most 20 values/);
    await refused(() => mergeAtom(`/ProductSpecifics(${id}L)`, 'ProductSpecific', { Value: `A|${'c'.repeat(51)}` }), 400, /1 to 50 characters/);
    assert.equal((await merge(`/ProductSpecifics(${id}L)`, { Value: pipeValues(20, 50) })).status, 204);
    assert.equal((await getEntity(`/ProductSpecifics(${id}L)`)).Value, pipeValues(20, 50));
  });

  test('Name and Value are required; Name is at most 255 characters', async () => {
    const p = await newProduct();
    const specifics = `${productPath(p)}/ProductSpecifics`;
    await refused(() => post('ProductSpecifics', { ProductId: p, Value: 'x' }), 400, /'Name' is required/, [specifics]);
    await refused(() => post('ProductSpecifics', { ProductId: p, Name: 'x' }), 400, /'Value' is required/, [specifics]);
    await refused(() => post('ProductSpecifics', { ProductId: p, Name: null, Value: 'x' }), 400, /'Name'.*cannot be null/, [specifics]);
    await refused(() => postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: p, Name: 'x', Value: null }), 400, /'Value'.*cannot be null/, [specifics]);
    await refused(() => post('ProductSpecifics', { ProductId: p, Name: 'n'.repeat(256), Value: 'x' }), 400, /'Name' is longer than its maximum length of 255/, [specifics]);
    created(await post('ProductSpecifics', { ProductId: p, Name: 'n'.repeat(255), Value: 'x' }));
  });
});

describe('ProductImages', () => {
  test('Type 1 to 12 are accepted, 0 and 13 refused (JSON and Atom)', async () => {
    const p = await newProduct();
    const images = `${productPath(p)}/ProductImages`;
    for (let type = 1; type <= 12; type++) {
      const body = { ProductId: p, ImageUrl: `https://img.example.com/${type}.jpg`, Type: type };
      const res = type % 2 ? await post('ProductImages', body) : await postAtom('ProductImages', 'ProductImage', { ...body, Type: String(type) });
      assert.equal(Number(created(res).Type), type);
    }
    assert.equal(await count(images), 12);
    const rule = /'Type' must be from 1 to 12/;
    for (const type of [0, 13, -1]) {
      await refused(() => post('ProductImages', { ProductId: p, ImageUrl: 'https://img.example.com/x.jpg', Type: type }), 400, rule, [images]);
      await refused(() => postAtom('ProductImages', 'ProductImage', { ProductId: p, ImageUrl: 'https://img.example.com/x.jpg', Type: String(type) }), 400, rule, [images]);
    }
    assert.equal(await count(images), 12);
  });

  test('one image per (product, Type) slot: a second one is a 409, another product is free', async () => {
    const p = await newProduct();
    const images = `${productPath(p)}/ProductImages`;
    created(await post('ProductImages', { ProductId: p, ImageUrl: 'http://img.example.com/list.jpg', Type: 1 }));
    const offer = idOf(await post('ProductImages', { ProductId: p, ImageUrl: 'http://img.example.com/offer.jpg', Type: 2 }));
    const rule = /already has an image of Type 1: each Type slot/;
    await refused(() => post('ProductImages', { ProductId: p, ImageUrl: 'http://img.example.com/again.jpg', Type: 1 }), 409, rule, [images]);
    await refused(() => postAtom('ProductImages', 'ProductImage', { ProductId: p, ImageUrl: 'http://img.example.com/again.jpg', Type: '1' }), 409, rule, [images]);
    await refused(() => send('POST', images, { ImageUrl: 'http://img.example.com/again.jpg', Type: 1 }), 409, rule, [images]);
    // Moving an image into an occupied slot is the same conflict.
    await refused(() => merge(`/ProductImages(${offer}L)`, { Type: 1 }), 409, rule);
    await refused(() => mergeAtom(`/ProductImages(${offer}L)`, 'ProductImage', { Type: '1' }), 409, rule);
    assert.equal((await merge(`/ProductImages(${offer}L)`, { Type: 3 })).status, 204);
    assert.equal((await getEntity(`/ProductImages(${offer}L)`)).Type, 3);
    const q = await newProduct();
    created(await post('ProductImages', { ProductId: q, ImageUrl: 'http://img.example.com/list.jpg', Type: 1 }));
    assert.equal(await count(images), 2);
  });

  test('ImageUrl must be an absolute http or https URL of at most 2048 characters', async () => {
    const p = await newProduct();
    const images = `${productPath(p)}/ProductImages`;
    const rule = /'ImageUrl' must be an absolute http or https URL/;
    for (const url of ['ftp://img.example.com/a.jpg', 'images/a.jpg', '/images/a.jpg', '//img.example.com/a.jpg', 'http://', 'javascript:alert(1)', 'file:///etc/passwd']) {
      await refused(() => post('ProductImages', { ProductId: p, ImageUrl: url, Type: 1 }), 400, rule, [images]);
    }
    await refused(() => post('ProductImages', { ProductId: p, ImageUrl: '', Type: 1 }), 400, /'ImageUrl' .* cannot be empty or blank/, [images]);
    await refused(() => postAtom('ProductImages', 'ProductImage', { ProductId: p, ImageUrl: 'data:image/png;base64,AAAA', Type: '1' }), 400, rule, [images]);
    const base = 'https://img.example.com/';
    const longest = base + 'a'.repeat(2048 - base.length);
    assert.equal(created(await post('ProductImages', { ProductId: p, ImageUrl: longest, Type: 1 })).ImageUrl, longest);
    await refused(() => post('ProductImages', { ProductId: p, ImageUrl: longest + 'a', Type: 2 }), 400, /'ImageUrl' is longer than its maximum length of 2048/, [images]);
    await refused(() => post('ProductImages', { ProductId: p, Type: 2 }), 400, /'ImageUrl' is required/, [images]);
    await refused(() => post('ProductImages', { ProductId: p, ImageUrl: base + 'b.jpg' }), 400, /'Type' is required/, [images]);
    const id = idOf(await post('ProductImages', { ProductId: p, ImageUrl: 'HTTP://IMG.EXAMPLE.COM/b.jpg', Type: 2 }));
    await refused(() => merge(`/ProductImages(${id}L)`, { ImageUrl: 'mailto:a@b.c' }), 400, rule);
  });
});

describe('ProductVariations', () => {
  test('120 variations per product: the 121st is refused, also by moving one in', async () => {
    const p = await newProduct({ ProductType: 1 });
    const variations = `${productPath(p)}/ProductVariations`;
    await createMany(120, (i) => post('ProductVariations', { ProductId: p, Price: '1.50', StockAmount: i, Sku: `S-${i}` }));
    assert.equal(await count(variations), 120);
    const rule = /A product has at most 120 variations/;
    await refused(() => post('ProductVariations', { ProductId: p, Price: '1.50', StockAmount: 1, Sku: 'S-121' }), 400, rule, [variations]);
    await refused(() => postAtom('ProductVariations', 'ProductVariation', { ProductId: p, Price: '1.50', StockAmount: '1' }), 400, rule, [variations]);
    await refused(() => send('POST', variations, { Price: '1.50', StockAmount: 1 }), 400, rule, [variations]);
    const other = await newProduct();
    const mover = await newVariation(other);
    await refused(() => merge(`/ProductVariations(${mover}L)`, { ProductId: p }), 400, rule, [variations, `${productPath(other)}/ProductVariations`]);
    // Deleting one frees a place.
    const first = (JSON.parse((await send('GET', variations)).body) as { d: { results?: Json[] } | Json[] }).d;
    const rows = Array.isArray(first) ? first : (first.results ?? []);
    assert.equal(rows.length, 120);
    assert.equal((await send('DELETE', `/ProductVariations(${String(rows[0]!.Id)}L)`)).status, 204);
    assert.equal((await merge(`/ProductVariations(${mover}L)`, { ProductId: p })).status, 204);
    assert.equal(await count(variations), 120);
  });

  test('Sku is unique per product (409); another product may reuse it; null Skus never collide', async () => {
    const p = await newProduct();
    const variations = `${productPath(p)}/ProductVariations`;
    await newVariation(p, { Sku: 'RED-S' });
    const rule = /already has a variation with Sku 'RED-S': Sku values are unique per product/;
    await refused(() => post('ProductVariations', { ProductId: p, Price: '2', StockAmount: 2, Sku: 'RED-S' }), 409, rule, [variations]);
    await refused(() => postAtom('ProductVariations', 'ProductVariation', { ProductId: p, Price: '2', StockAmount: '2', Sku: 'RED-S' }), 409, rule, [variations]);
    const q = await newProduct();
    assert.equal(created(await post('ProductVariations', { ProductId: q, Price: '2', StockAmount: 2, Sku: 'RED-S' })).Sku, 'RED-S');
    // Null Skus: omitted, explicit null (JSON and Atom), several on one product.
    await newVariation(p);
    await newVariation(p);
    await newVariation(p, { Sku: null });
    created(await postAtom('ProductVariations', 'ProductVariation', { ProductId: p, Price: '2', StockAmount: '2', Sku: null }));
    assert.equal(await count(variations), 5);
    // Changing a Sku onto a used one conflicts; onto a free one, or to null, does not.
    const blue = await newVariation(p, { Sku: 'BLUE-S' });
    await refused(() => merge(`/ProductVariations(${blue}L)`, { Sku: 'RED-S' }), 409, rule);
    assert.equal((await merge(`/ProductVariations(${blue}L)`, { Sku: null })).status, 204);
    assert.equal((await merge(`/ProductVariations(${blue}L)`, { Sku: 'BLUE-M' })).status, 204);
    // Moving a variation into a product that has its Sku conflicts.
    const movingRed = await newVariation(await newProduct(), { Sku: 'RED-S' });
    await refused(() => merge(`/ProductVariations(${movingRed}L)`, { ProductId: q }), 409, /Sku 'RED-S'/);
  });

  test('Price and StockAmount are required and at least 0; Sku at most 255 characters', async () => {
    const p = await newProduct();
    const variations = `${productPath(p)}/ProductVariations`;
    await refused(() => post('ProductVariations', { ProductId: p, StockAmount: 1 }), 400, /'Price' is required/, [variations]);
    await refused(() => post('ProductVariations', { ProductId: p, Price: '1' }), 400, /'StockAmount' is required/, [variations]);
    await refused(() => post('ProductVariations', { ProductId: p, Price: '-0.01', StockAmount: 1 }), 400, /'Price' must be at least 0/, [variations]);
    await refused(() => post('ProductVariations', { ProductId: p, Price: '1', StockAmount: -1 }), 400, /'StockAmount' must be at least 0/, [variations]);
    await refused(() => postAtom('ProductVariations', 'ProductVariation', { ProductId: p, Price: '1', StockAmount: '-1' }), 400, /'StockAmount' must be at least 0/, [variations]);
    await refused(() => post('ProductVariations', { ProductId: p, Price: '1', StockAmount: 1, Sku: 's'.repeat(256) }), 400, /'Sku' is longer than its maximum length of 255/, [variations]);
    const v = created(await post('ProductVariations', { ProductId: p, Price: '0', StockAmount: 0, Sku: 's'.repeat(255) }));
    assert.equal(v.Price, '0');
    assert.equal(v.StockAmount, 0);
    await refused(() => merge(`/ProductVariations(${String(v.Id)}L)`, { Price: null }), 400, /'Price'.*cannot be null/);
    await refused(() => merge(`/ProductVariations(${String(v.Id)}L)`, { StockAmount: -5 }), 400, /'StockAmount' must be at least 0/);
  });
});

describe('ProductVariationSpecifics', () => {
  test('at most 5 distinct names per product across its variations; a 6th is refused, a used name is fine', async () => {
    const p = await newProduct({ ProductType: 1 });
    const [v1, v2, v3] = [await newVariation(p), await newVariation(p), await newVariation(p)];
    for (const [i, name] of ['Colour', 'Size', 'Material', 'Pattern', 'Fit'].entries()) {
      created(await post('ProductVariationSpecifics', { ProductVariationId: i < 3 ? v1 : v2, Name: name, Value: 'a' }));
    }
    const counted = [`/ProductVariations(${v1}L)/ProductVariationSpecifics`, `/ProductVariations(${v2}L)/ProductVariationSpecifics`, `/ProductVariations(${v3}L)/ProductVariationSpecifics`];
    const rule = /A product has at most 5 characteristic names across its variations/;
    await refused(() => post('ProductVariationSpecifics', { ProductVariationId: v3, Name: 'Sleeve', Value: 'long' }), 400, rule, counted);
    await refused(() => postAtom('ProductVariationSpecifics', 'ProductVariationSpecific', { ProductVariationId: v3, Name: 'Sleeve', Value: 'long' }), 400, rule, counted);
    await refused(() => send('POST', `/ProductVariations(${v3}L)/ProductVariationSpecifics`, { Name: 'Sleeve', Value: 'long' }), 400, rule, counted);
    const size = idOf(await post('ProductVariationSpecifics', { ProductVariationId: v3, Name: 'Size', Value: 'XL' }));
    // Renaming onto a 6th name is refused; renaming to a used one is fine.
    await refused(() => merge(`/ProductVariationSpecifics(${size}L)`, { Name: 'Sleeve' }), 400, rule);
    assert.equal((await merge(`/ProductVariationSpecifics(${size}L)`, { Name: 'Colour' })).status, 204);
    // Another product has its own five.
    const q = await newProduct();
    const w = await newVariation(q);
    created(await post('ProductVariationSpecifics', { ProductVariationId: w, Name: 'Sleeve', Value: 'long' }));
  });

  test('a Name is used once per variation (409)', async () => {
    const p = await newProduct();
    const v = await newVariation(p);
    created(await post('ProductVariationSpecifics', { ProductVariationId: v, Name: 'Colour', Value: 'Red' }));
    await refused(() => post('ProductVariationSpecifics', { ProductVariationId: v, Name: 'Colour', Value: 'Blue' }), 409, /already has a characteristic named 'Colour'/, [`/ProductVariations(${v}L)/ProductVariationSpecifics`]);
  });

  test('at most 30 distinct values per name: the 31st is refused, a repeated value is fine', async () => {
    const p = await newProduct({ ProductType: 1 });
    const vs = await createMany(32, (i) => post('ProductVariations', { ProductId: p, Price: '1', StockAmount: 1, Sku: `C-${i}` }));
    const specIds = await createMany(30, (i) => post('ProductVariationSpecifics', { ProductVariationId: vs[i]!, Name: 'Colour', Value: `colour ${i}` }));
    const counted = [`/ProductVariations(${vs[30]!}L)/ProductVariationSpecifics`, `/ProductVariations(${vs[31]!}L)/ProductVariationSpecifics`];
    const rule = /A product has at most 30 values for the characteristic 'Colour'/;
    await refused(() => post('ProductVariationSpecifics', { ProductVariationId: vs[30]!, Name: 'Colour', Value: 'colour 30' }), 400, rule, counted);
    await refused(() => postAtom('ProductVariationSpecifics', 'ProductVariationSpecific', { ProductVariationId: vs[30]!, Name: 'Colour', Value: 'colour 30' }), 400, rule, counted);
    const repeated = idOf(await post('ProductVariationSpecifics', { ProductVariationId: vs[30]!, Name: 'Colour', Value: 'colour 7' }));
    // Changing the repeated value into a new one would make a 31st.
    await refused(() => merge(`/ProductVariationSpecifics(${repeated}L)`, { Value: 'colour 30' }), 400, rule);
    // Changing a value that only one variation has replaces it: still 30.
    assert.equal((await merge(`/ProductVariationSpecifics(${specIds[0]!}L)`, { Value: 'colour 30' })).status, 204);
    assert.equal((await getEntity(`/ProductVariationSpecifics(${specIds[0]!}L)`)).Value, 'colour 30');
    // Other names have their own 30.
    created(await post('ProductVariationSpecifics', { ProductVariationId: vs[31]!, Name: 'Size', Value: 'colour 99' }));
  });

  test('moving a variation into another product is held to that product\'s name and value limits', async () => {
    const full = await newProduct({ ProductType: 1 });
    const fv = await newVariation(full);
    for (const name of ['N1', 'N2', 'N3', 'N4', 'N5']) created(await post('ProductVariationSpecifics', { ProductVariationId: fv, Name: name, Value: 'a' }));
    const other = await newProduct({ ProductType: 1 });
    const ov = await newVariation(other);
    created(await post('ProductVariationSpecifics', { ProductVariationId: ov, Name: 'N6', Value: 'a' }));
    await refused(() => merge(`/ProductVariations(${ov}L)`, { ProductId: full }), 400, /at most 5 characteristic names/, [`${productPath(full)}/ProductVariations`]);

    const colours = await newProduct({ ProductType: 1 });
    const cvs = await createMany(30, () => post('ProductVariations', { ProductId: colours, Price: '1', StockAmount: 1 }));
    await createMany(30, (i) => post('ProductVariationSpecifics', { ProductVariationId: cvs[i]!, Name: 'Colour', Value: `c${i}` }));
    const third = await newProduct({ ProductType: 1 });
    const tv = await newVariation(third);
    created(await post('ProductVariationSpecifics', { ProductVariationId: tv, Name: 'Colour', Value: 'c-new' }));
    await refused(() => merge(`/ProductVariations(${tv}L)`, { ProductId: colours }), 400, /at most 30 values for the characteristic 'Colour'/, [`${productPath(colours)}/ProductVariations`]);
    // A variation whose characteristics fit may move.
    const fitting = await newVariation(third);
    created(await post('ProductVariationSpecifics', { ProductVariationId: fitting, Name: 'Colour', Value: 'c3' }));
    assert.equal((await merge(`/ProductVariations(${fitting}L)`, { ProductId: colours })).status, 204);
  });
});

describe('Products: required properties, lengths and bounds', () => {
  const products = '/Products';

  test('Title, Price and StockAmount are required on create and never null', async () => {
    await refused(() => post('Products', { Price: '1', StockAmount: 1 }), 400, /'Title' is required/, [products]);
    await refused(() => post('Products', { Title: 'x', StockAmount: 1 }), 400, /'Price' is required/, [products]);
    await refused(() => post('Products', { Title: 'x', Price: '1' }), 400, /'StockAmount' is required/, [products]);
    await refused(() => post('Products', { Title: null, Price: '1', StockAmount: 1 }), 400, /'Title'.*cannot be null/, [products]);
    await refused(() => postAtom('Products', 'Product', { Title: 'x', Price: null, StockAmount: '1' }), 400, /'Price'.*cannot be null/, [products]);
    await refused(() => postAtom('Products', 'Product', { Title: 'x', Price: '1' }), 400, /'StockAmount' is required/, [products]);
    const p = await newProduct({ ForeignId: null, Description: null });
    const path = productPath(p);
    await refused(() => merge(path, { Title: null }), 400, /'Title'.*cannot be null/);
    await refused(() => merge(path, { StockAmount: null }), 400, /'StockAmount'.*cannot be null/);
    await refused(() => mergeAtom(path, 'Product', { Price: null }), 400, /'Price'.*cannot be null/);
    // PUT replaces: a property left out is reset, and a required one cannot be.
    await refused(() => send('PUT', path, { Price: '2', StockAmount: 2 }), 400, /'Title'/);
    // Nullable properties take null.
    assert.equal((await merge(path, { ForeignId: 'F-1', Brand: 'Acme' })).status, 204);
    assert.equal((await merge(path, { ForeignId: null, Brand: null })).status, 204);
    const stored = await getEntity(path);
    assert.equal(stored.ForeignId, null);
    assert.equal(stored.Brand, null);
  });

  test('Title is at most 80 characters, counted as .NET counts them (UTF-16 code units), not bytes', async () => {
    for (const title of ['t'.repeat(80), 'ä'.repeat(80), '€'.repeat(80), '日本'.repeat(40), '😀'.repeat(40)]) {
      assert.equal(created(await post('Products', { Title: title, Price: '1', StockAmount: 1 })).Title, title);
    }
    assert.equal(created(await postAtom('Products', 'Product', { Title: 'ö'.repeat(80), Price: '1', StockAmount: '1' })).Title, 'ö'.repeat(80));
    const rule = /'Title' is longer than its maximum length of 80 characters/;
    for (const title of ['t'.repeat(81), 'ä'.repeat(81), '😀'.repeat(41), `${'😀'.repeat(40)}t`]) {
      await refused(() => post('Products', { Title: title, Price: '1', StockAmount: 1 }), 400, rule, [products]);
    }
    await refused(() => postAtom('Products', 'Product', { Title: 'ö'.repeat(81), Price: '1', StockAmount: '1' }), 400, rule, [products]);
    const p = await newProduct();
    await refused(() => merge(productPath(p), { Title: 'x'.repeat(81) }), 400, rule);
  });

  test('other maximum lengths: N accepted, N+1 refused', async () => {
    const cases: [string, number][] = [
      ['ForeignId', 255],
      ['ShortDescription', 2000],
      ['UnitType', 50],
      ['Ean', 255],
      ['Brand', 255],
    ];
    for (const [name, max] of cases) {
      assert.equal(created(await post('Products', { Title: 'x', Price: '1', StockAmount: 1, [name]: 'é'.repeat(max) }))[name], 'é'.repeat(max));
      await refused(() => post('Products', { Title: 'x', Price: '1', StockAmount: 1, [name]: 'é'.repeat(max + 1) }), 400, new RegExp(`'${name}' is longer than its maximum length of ${max}`), [products]);
    }
    const long = 'HTML <b>allowed</b> '.repeat(1000);
    assert.equal(created(await post('Products', { Title: 'x', Price: '1', StockAmount: 1, Description: long })).Description, long);
  });

  test('Price and StockAmount are at least 0; ProductType is 0, 1 or 2', async () => {
    const zero = created(await post('Products', { Title: 'free', Price: '0', StockAmount: 0 }));
    assert.equal(zero.Price, '0');
    assert.equal(zero.StockAmount, 0);
    await refused(() => post('Products', { Title: 'x', Price: '-0.01', StockAmount: 1 }), 400, /'Price' must be at least 0/, [products]);
    await refused(() => post('Products', { Title: 'x', Price: '1', StockAmount: -1 }), 400, /'StockAmount' must be at least 0/, [products]);
    await refused(() => postAtom('Products', 'Product', { Title: 'x', Price: '-1', StockAmount: '1' }), 400, /'Price' must be at least 0/, [products]);
    await refused(() => post('Products', { Title: 'x', Price: '1', StockAmount: 1, BestOfferMinimumPrice: '-1' }), 400, /'BestOfferMinimumPrice' must be at least 0/, [products]);
    for (const type of [0, 1, 2]) assert.equal(created(await post('Products', { Title: 'x', Price: '1', StockAmount: 1, ProductType: type })).ProductType, type);
    for (const type of [-1, 3]) {
      await refused(() => post('Products', { Title: 'x', Price: '1', StockAmount: 1, ProductType: type }), 400, /'ProductType' must be from 0 to 2/, [products]);
    }
    await refused(() => postAtom('Products', 'Product', { Title: 'x', Price: '1', StockAmount: '1', ProductType: '3' }), 400, /'ProductType' must be from 0 to 2/, [products]);
    const p = await newProduct();
    await refused(() => merge(productPath(p), { ProductType: 3 }), 400, /'ProductType' must be from 0 to 2/);
    await refused(() => merge(productPath(p), { Price: '-5' }), 400, /'Price' must be at least 0/);
  });

  test('values of the wrong JSON or XML type are a 400 naming the property', async () => {
    const cases: [Json, RegExp][] = [
      [{ Title: 'x', Price: '1', StockAmount: 'many' }, /property 'StockAmount'/],
      [{ Title: 'x', Price: '1', StockAmount: 1.5 }, /property 'StockAmount'/],
      [{ Title: 'x', Price: '1', StockAmount: true }, /property 'StockAmount'/],
      [{ Title: 'x', Price: '1', StockAmount: [1] }, /property 'StockAmount'/],
      [{ Title: 'x', Price: '1', StockAmount: 2147483648 }, /property 'StockAmount'/],
      [{ Title: { text: 'x' }, Price: '1', StockAmount: 1 }, /property 'Title'/],
      [{ Title: ['x'], Price: '1', StockAmount: 1 }, /property 'Title'/],
      [{ Title: true, Price: '1', StockAmount: 1 }, /property 'Title'/],
      [{ Title: 'x', Price: 'cheap', StockAmount: 1 }, /property 'Price'/],
      [{ Title: 'x', Price: {}, StockAmount: 1 }, /property 'Price'/],
      [{ Title: 'x', Price: '1', StockAmount: 1, DisableAutomatch: 'yes' }, /property 'DisableAutomatch'/],
      [{ Title: 'x', Price: '1', StockAmount: 1, ExternalProductId: 'x1' }, /property 'ExternalProductId'/],
    ];
    for (const [body, rule] of cases) await refused(() => post('Products', body), 400, rule, [products]);
    await refused(() => postAtom('Products', 'Product', { Title: 'x', Price: '1', StockAmount: 'many' }), 400, /property 'StockAmount'/, [products]);
    await refused(() => postAtom('Products', 'Product', { Title: 'x', Price: 'cheap', StockAmount: '1' }), 400, /property 'Price'/, [products]);
    const p = await newProduct();
    await refused(() => merge(productPath(p), { StockAmount: 'many' }), 400, /property 'StockAmount'/);
    await refused(() => merge(productPath(p), { Title: { a: 1 } }), 400, /property 'Title'/);
    await refused(() => post('ProductImages', { ProductId: p, ImageUrl: 'http://a.example/x.jpg', Type: 'list' }), 400, /property 'Type'/);
    await refused(() => post('ProductSpecifics', { ProductId: { id: p }, Name: 'n', Value: 'v' }), 400, /property 'ProductId'/);
  });

  test('read-only properties sent with another value are ignored, never refused', async () => {
    const res = await post('Products', { Title: 'x', Price: '1', StockAmount: 1, EbayCategoryId1: '77', CreationDate: 'not a date at all' });
    assert.equal(res.status, 201, res.body);
    const p = await newProduct();
    assert.equal((await merge(productPath(p), { AutoMatched: true, ModificationDate: { odd: 1 } })).status, 204);
  });
});

describe('foreign keys point at an existing row of the same account (400)', () => {
  test('every foreign key on create and on update', async () => {
    const other = await newSeller(live, 'limits-other');
    const p = await newProduct();
    const v = await newVariation(p);
    const theirs = await newProduct({}, other);
    const theirVariation = await newVariation(theirs, {}, other);
    const missing = '987654321987';
    for (const foreign of [missing, theirs]) {
      const productRule = new RegExp(`ProductId ${foreign} does not refer to an existing Product`);
      await refused(() => post('ProductImages', { ProductId: foreign, ImageUrl: 'http://a.example/x.jpg', Type: 1 }), 400, productRule);
      await refused(() => post('ProductSpecifics', { ProductId: foreign, Name: 'n', Value: 'v' }), 400, productRule);
      await refused(() => postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: foreign, Name: 'n', Value: 'v' }), 400, productRule);
      await refused(() => post('ProductVariations', { ProductId: foreign, Price: '1', StockAmount: 1 }), 400, productRule);
      await refused(() => post('OptionalProductAttributes', { ProductId: foreign, Name: 'n' }), 400, productRule);
      await refused(() => post('DiscountOffers', { ProductId: foreign, Price: '1', Type: 1 }), 400, productRule);
      await refused(() => post('CarParts', { ProductId: foreign, KType: 1234 }), 400, productRule);
      await refused(() => post('ProductRelations', { ParentProductId: p, ChildProductId: foreign }), 400, new RegExp(`ChildProductId ${foreign} does not refer to an existing Product`));
      await refused(() => post('ProductRelations', { ParentProductId: foreign, ChildProductId: p }), 400, new RegExp(`ParentProductId ${foreign} does not refer to an existing Product`));
      await refused(() => post('ProductVariations', { Product: { __metadata: { uri: `Products(${foreign}L)` } }, Price: '1', StockAmount: 1 }), 400, productRule);
    }
    for (const foreign of [missing, theirVariation]) {
      const variationRule = new RegExp(`ProductVariationId ${foreign} does not refer to an existing ProductVariation`);
      await refused(() => post('ProductVariationSpecifics', { ProductVariationId: foreign, Name: 'n', Value: 'v' }), 400, variationRule);
      await refused(() => post('ProductVariationImages', { ProductVariationId: foreign, ImageUrl: 'http://a.example/x.jpg' }), 400, variationRule);
      await refused(() => post('DiscountOffers', { ProductId: p, ProductVariationId: foreign, Price: '1', Type: 1 }), 400, variationRule);
    }
    // Updates that point a row elsewhere.
    const image = idOf(await post('ProductImages', { ProductId: p, ImageUrl: 'http://a.example/x.jpg', Type: 1 }));
    const vSpec = idOf(await post('ProductVariationSpecifics', { ProductVariationId: v, Name: 'n', Value: 'v' }));
    for (const foreign of [missing, theirs]) {
      await refused(() => merge(`/ProductImages(${image}L)`, { ProductId: foreign }), 400, new RegExp(`ProductId ${foreign} does not refer`));
      await refused(() => merge(`/ProductVariations(${v}L)`, { ProductId: foreign }), 400, new RegExp(`ProductId ${foreign} does not refer`));
    }
    await refused(() => merge(`/ProductVariationSpecifics(${vSpec}L)`, { ProductVariationId: theirVariation }), 400, /ProductVariationId \d+ does not refer/);
    // The other account's data is untouched.
    assert.equal(await count(`${productPath(theirs)}/ProductVariations`, other), 1);
  });

  test('a discount offer\'s variation belongs to its product', async () => {
    const p = await newProduct();
    const q = await newProduct();
    const vq = await newVariation(q);
    await refused(() => post('DiscountOffers', { ProductId: p, ProductVariationId: vq, Price: '1', Type: 1 }), 400, /belongs to another product/);
  });
});

describe('ProductRelations', () => {
  test('no self-relation, no duplicate pair, no cycle; Quantity at least 1', async () => {
    const [a, b, c] = [await newProduct({ ProductType: 2 }), await newProduct(), await newProduct()];
    const relations = '/ProductRelations';
    await refused(() => post('ProductRelations', { ParentProductId: a, ChildProductId: a }), 400, /cannot be related to itself/, [relations]);
    const ab = idOf(await post('ProductRelations', { ParentProductId: a, ChildProductId: b, Quantity: 2 }));
    await refused(() => post('ProductRelations', { ParentProductId: a, ChildProductId: b }), 409, new RegExp(`Product ${a} is already the parent of product ${b}`), [relations]);
    created(await post('ProductRelations', { ParentProductId: b, ChildProductId: c }));
    await refused(() => post('ProductRelations', { ParentProductId: b, ChildProductId: a }), 400, /would make a cycle/, [relations]);
    await refused(() => post('ProductRelations', { ParentProductId: c, ChildProductId: a }), 400, /would make a cycle/, [relations]);
    await refused(() => postAtom('ProductRelations', 'ProductRelation', { ParentProductId: c, ChildProductId: a }), 400, /would make a cycle/, [relations]);
    await refused(() => post('ProductRelations', { ParentProductId: a, ChildProductId: c, Quantity: 0 }), 400, /'Quantity' must be at least 1/, [relations]);
    // Updates: onto itself, onto an existing pair, into a cycle.
    const ac = idOf(await post('ProductRelations', { ParentProductId: a, ChildProductId: c }));
    await refused(() => merge(`/ProductRelations(${ac}L)`, { ChildProductId: a }), 400, /cannot be related to itself/);
    await refused(() => merge(`/ProductRelations(${ac}L)`, { ChildProductId: b }), 409, /already the parent/);
    await refused(() => merge(`/ProductRelations(${ab}L)`, { ParentProductId: c, ChildProductId: a }), 400, /would make a cycle/);
    assert.equal(await count(`${productPath(a)}/ChildProducts`), 2);
  });

  test('an update replaces the relation: reversing the only link between two products is no cycle', async () => {
    const [x, y, z] = [await newProduct(), await newProduct(), await newProduct()];
    const xy = idOf(await post('ProductRelations', { ParentProductId: x, ChildProductId: y }));
    assert.equal((await merge(`/ProductRelations(${xy}L)`, { ParentProductId: y, ChildProductId: x })).status, 204);
    const stored = await getEntity(`/ProductRelations(${xy}L)`);
    assert.deepEqual([stored.ParentProductId, stored.ChildProductId], [y, x]);
    // y -> x -> z; z -> y would close the loop, also when written by moving y -> x.
    created(await post('ProductRelations', { ParentProductId: x, ChildProductId: z }));
    await refused(() => post('ProductRelations', { ParentProductId: z, ChildProductId: y }), 400, /would make a cycle/);
    const zw = idOf(await post('ProductRelations', { ParentProductId: z, ChildProductId: await newProduct() }));
    await refused(() => merge(`/ProductRelations(${zw}L)`, { ChildProductId: x }), 400, /would make a cycle/);
  });
});

describe('other per-set rules', () => {
  test('OptionalProductAttributes: Name once per product (409); Value at most 4000 characters', async () => {
    const p = await newProduct();
    const path = `${productPath(p)}/OptionalProductAttributes`;
    created(await post('OptionalProductAttributes', { ProductId: p, Name: 'Warranty', Value: 'v'.repeat(4000) }));
    await refused(() => post('OptionalProductAttributes', { ProductId: p, Name: 'Warranty', Value: '2y' }), 409, /already has an OptionalProductAttribute named 'Warranty'/, [path]);
    await refused(() => post('OptionalProductAttributes', { ProductId: p, Name: 'Other', Value: 'v'.repeat(4001) }), 400, /'Value' is longer than its maximum length of 4000/, [path]);
  });

  test('ProductVariationImages: ImagePosition 0 to 11, once per variation; absolute http(s) ImageUrl', async () => {
    const p = await newProduct();
    const v = await newVariation(p);
    const path = `/ProductVariations(${v}L)/ProductVariationImages`;
    for (const position of [0, 11]) created(await post('ProductVariationImages', { ProductVariationId: v, ImageUrl: 'https://a.example/x.jpg', ImagePosition: position }));
    await refused(() => post('ProductVariationImages', { ProductVariationId: v, ImageUrl: 'https://a.example/x.jpg', ImagePosition: 12 }), 400, /'ImagePosition' must be from 0 to 11/, [path]);
    await refused(() => post('ProductVariationPictures', { ProductVariationId: v, ImageUrl: 'https://a.example/x.jpg', ImagePosition: -1 }), 400, /'ImagePosition' must be from 0 to 11/, [path]);
    await refused(() => post('ProductVariationImages', { ProductVariationId: v, ImageUrl: 'https://a.example/y.jpg', ImagePosition: 11 }), 409, /already has an image at ImagePosition 11/, [path]);
    await refused(() => post('ProductVariationImages', { ProductVariationId: v, ImageUrl: 'a.jpg', ImagePosition: 5 }), 400, /'ImageUrl' must be an absolute http or https URL/, [path]);
  });

  test('CarParts: HSN at most 4 and TSN at most 3 characters', async () => {
    const p = await newProduct();
    const path = `${productPath(p)}/CarParts`;
    created(await post('CarParts', { ProductId: p, HSN: '0603', TSN: 'ABC' }));
    await refused(() => post('CarParts', { ProductId: p, HSN: '06031' }), 400, /'HSN' is longer than its maximum length of 4/, [path]);
    await refused(() => post('CarParts', { ProductId: p, TSN: 'ABCD' }), 400, /'TSN' is longer than its maximum length of 3/, [path]);
  });
});

describe('SalesOrderItems: TrackingNumbers', () => {
  async function orderItem(): Promise<string> {
    const p = await newProduct();
    const buyer = await seed(seller.accountId, 'Buyer', { BuyerName: 'buyer-1', Email: 'b@example.com' });
    const order = await seed(seller.accountId, 'SalesOrder', { BuyerId: buyer, PlatformOrderId: `order-${buyer}`, CurrencyCode: 'EUR' });
    const item = await seed(seller.accountId, 'SalesOrderItem', { SalesOrderId: order, ProductId: BigInt(p), PlatformItemId: `item-${buyer}`, TransactionId: 't-1', Name: 'thing', Amount: 1, Price: '10' });
    return `/SalesOrderItems(${item}L)`;
  }
  const numbers = (n: number) => Array.from({ length: n }, (_, i) => `00340434${String(i).padStart(4, '0')}`).join(';');

  test('at most 8 numbers separated by \';\', with CarrierUsed in the same request', async () => {
    const item = await orderItem();
    assert.equal((await merge(item, { CarrierUsed: 'DHL', TrackingNumbers: numbers(8) })).status, 204);
    const stored = await getEntity(item);
    assert.equal(stored.TrackingNumbers, numbers(8));
    assert.equal(stored.CarrierUsed, 'DHL');
    const rule = /TrackingNumbers holds 1 to 8 non-empty numbers separated by ';'/;
    await refused(() => merge(item, { CarrierUsed: 'DHL', TrackingNumbers: numbers(9) }), 400, rule);
    await refused(() => merge(item, { TrackingNumbers: numbers(9) }), 400, rule);
    await refused(() => mergeAtom(item, 'SalesOrderItem', { TrackingNumbers: numbers(9) }), 400, rule);
    await refused(() => merge(item, { TrackingNumbers: '1;;2' }), 400, rule);
    await refused(() => send('PUT', item, { CarrierUsed: 'DHL', TrackingNumbers: numbers(9) }), 400, rule);
    assert.equal((await getEntity(item)).TrackingNumbers, numbers(8));
  });

  test('TrackingNumbers needs CarrierUsed, sent or already stored', async () => {
    const item = await orderItem();
    const rule = /TrackingNumbers needs CarrierUsed/;
    await refused(() => merge(item, { TrackingNumbers: '123' }), 400, rule);
    await refused(() => merge(item, { TrackingNumbers: '123', CarrierUsed: null }), 400, rule);
    await refused(() => mergeAtom(item, 'SalesOrderItem', { TrackingNumbers: '123' }), 400, rule);
    assert.equal((await merge(item, { CarrierUsed: 'UPS' })).status, 204);
    assert.equal((await merge(item, { TrackingNumbers: '1Z999' })).status, 204);
    // Removing the carrier while numbers are stored would leave them without one.
    await refused(() => merge(item, { CarrierUsed: null }), 400, rule);
    const stored = await getEntity(item);
    assert.equal(stored.TrackingNumbers, '1Z999');
    assert.equal(stored.CarrierUsed, 'UPS');
    await refused(() => merge(item, { CarrierUsed: 'c'.repeat(256) }), 400, /'CarrierUsed' is longer than its maximum length of 255/);
  });
});

describe('limits hold under concurrent requests', () => {
  test('115 variations + 20 parallel POSTs: exactly 5 are created, 15 refused, 120 in the end', async () => {
    const p = await newProduct({ ProductType: 1 });
    const variations = `${productPath(p)}/ProductVariations`;
    await createMany(115, (i) => post('ProductVariations', { ProductId: p, Price: '1', StockAmount: 1, Sku: `R-${i}` }));
    assert.equal(await count(variations), 115);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post('ProductVariations', { ProductId: p, Price: '2', StockAmount: 2, Sku: `RACE-${i}` })));
    const ok = answers.filter((r) => r.status === 201);
    const no = answers.filter((r) => r.status !== 201);
    assert.equal(ok.length, 5, answers.map((r) => r.status).join(','));
    assert.equal(no.length, 15);
    for (const r of no) {
      assert.equal(r.status, 400, r.body);
      assert.match(errorMessage(r), /A product has at most 120 variations/);
    }
    assert.equal(await count(variations), 120);
    const ids = new Set(ok.map((r) => String(entityOf(r).Id)));
    assert.equal(ids.size, 5);
    for (const id of ids) assert.equal((await getEntity(`/ProductVariations(${id}L)`)).ProductId, p);
  });

  test('10 parallel POSTs into one image slot: exactly one is created', async () => {
    const p = await newProduct();
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post('ProductImages', { ProductId: p, ImageUrl: `https://a.example/${i}.jpg`, Type: 1 })));
    assert.deepEqual(answers.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of answers.filter((x) => x.status === 409)) assert.match(errorMessage(r), /already has an image of Type 1/);
    assert.equal(await count(`${productPath(p)}/ProductImages`), 1);
    const winner = entityOf(answers.find((r) => r.status === 201)!);
    const stored = JSON.parse((await send('GET', `${productPath(p)}/ProductImages`)).body) as { d: Json[] | { results: Json[] } };
    const rows = Array.isArray(stored.d) ? stored.d : stored.d.results;
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.ImageUrl, winner.ImageUrl);
  });

  test('10 parallel POSTs of further images at Type 3: all are created, numbered 3 to 12 without a gap', async () => {
    const p = await newProduct();
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post('ProductImages', { ProductId: p, ImageUrl: `https://a.example/${i}.jpg`, Type: 3 })));
    assert.deepEqual(answers.map((r) => r.status), Array(10).fill(201));
    const stored = JSON.parse((await send('GET', `${productPath(p)}/ProductImages`)).body) as { d: Json[] | { results: Json[] } };
    const rows = Array.isArray(stored.d) ? stored.d : stored.d.results;
    assert.deepEqual(rows.map((r) => Number(r.Type)).sort((a, b) => a - b), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  test('10 parallel POSTs of one specific Name (JSON and Atom): exactly one is created', async () => {
    const p = await newProduct();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2
          ? post('ProductSpecifics', { ProductId: p, Name: 'Brand', Value: `Maker ${i}` })
          : postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: p, Name: 'Brand', Value: `Maker ${i}` }),
      ),
    );
    assert.deepEqual(answers.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of answers.filter((x) => x.status === 409)) assert.match(errorMessage(r), /Name may be used once per product/);
    assert.equal(await count(`${productPath(p)}/ProductSpecifics`), 1);
  });

  test('parallel new characteristic names: only one fits under the 5-name limit', async () => {
    const p = await newProduct({ ProductType: 1 });
    const vs = await createMany(8, () => post('ProductVariations', { ProductId: p, Price: '1', StockAmount: 1 }));
    for (const name of ['A', 'B', 'C', 'D']) created(await post('ProductVariationSpecifics', { ProductVariationId: vs[0]!, Name: name, Value: 'x' }));
    const answers = await Promise.all(vs.slice(1).map((v, i) => post('ProductVariationSpecifics', { ProductVariationId: v, Name: `New ${i}`, Value: 'x' })));
    assert.deepEqual(answers.map((r) => r.status).sort(), [201, 400, 400, 400, 400, 400, 400]);
    for (const r of answers.filter((x) => x.status === 400)) assert.match(errorMessage(r), /at most 5 characteristic names/);
    const perVariation = await Promise.all(vs.map((v) => count(`/ProductVariations(${v}L)/ProductVariationSpecifics`)));
    assert.equal(perVariation.reduce((a, b) => a + b, 0), 5);
  });

  test('parallel new values of one name: only the ones under the 30-value limit are created', async () => {
    const p = await newProduct({ ProductType: 1 });
    const vs = await createMany(40, () => post('ProductVariations', { ProductId: p, Price: '1', StockAmount: 1 }));
    await createMany(27, (i) => post('ProductVariationSpecifics', { ProductVariationId: vs[i]!, Name: 'Colour', Value: `c${i}` }));
    const answers = await Promise.all(vs.slice(27).map((v, i) => post('ProductVariationSpecifics', { ProductVariationId: v, Name: 'Colour', Value: `new ${i}` })));
    assert.equal(answers.filter((r) => r.status === 201).length, 3, answers.map((r) => r.status).join(','));
    for (const r of answers.filter((x) => x.status !== 201)) {
      assert.equal(r.status, 400);
      assert.match(errorMessage(r), /at most 30 values for the characteristic 'Colour'/);
    }
  });
});
