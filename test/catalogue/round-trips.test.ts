/**
 * Every entity set over real HTTP, in Atom and in JSON (bodies sent and answers read in the same
 * format): create -> read -> PUT -> read -> MERGE -> read -> DELETE -> 404 for the seller's
 * catalogue sets; seeded orders and order items updated through their writable properties;
 * seeded buyers, addresses, listings and listing items read only. Also the verb variants (PATCH,
 * X-HTTP-Method), ProductVariationPictures (set alias and twin navigation), properties and $value, $links with the
 * catalog tree rule, cascading product deletes, idempotent CarParts, read-only properties and the
 * loosely typed JSON that existing clients send.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultOf } from '../../src/catalogue/values';
import type { EdmValue } from '../../src/odata/edm';
import type { EdmType } from '../../src/model/types';
import { childElements, loadDatajs, odataRequest, parseXml, type XmlElement } from '../clients/datajs';
import type { HttpResponse } from '../support/http-client';
import { asSeller as asSellerDeclaring, CONNECTOR_VERSIONS, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import type { HttpRequest } from '../support/http-client';
import { atomEntry } from '../support/entries';
import { ATOM, D, M } from '../support/spec';
import { setType as typeOf } from '../support/model-types';

/** Every request declares its versions as the connector does, and so gets the 1.0 shapes it reads. */
const asSeller = (who: Seller, url: string, init: HttpRequest = {}) => asSellerDeclaring(who, url, { ...init, headers: { ...CONNECTOR_VERSIONS, ...(init.headers ?? {}) } });


type Format = 'atom' | 'json';
const FORMATS: readonly Format[] = ['atom', 'json'];
const CONTENT_TYPE: Record<Format, string> = { atom: 'application/atom+xml;charset=utf-8', json: 'application/json;charset=utf-8' };

/**
 * Property values in their Atom text form ("12", "19.99", "true", "2024-01-02T03:04:05"), null
 * for null. The JSON bodies are made from them by Edm type; answers in both formats are read back
 * into the same form, so one table serves both formats.
 */
type Values = Record<string, string | null>;

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live);
});
after(() => live.close());

// ---------------------------------------------------------------------------------------------
// Wire helpers

function edmOf(set: string, property: string): EdmType {
  const p = typeOf(set).properties.find((x) => x.name === property);
  if (!p) throw new Error(`${set} has no property ${property}`);
  return p.type;
}

const msOf = (iso: string) => Date.parse(/Z$/.test(iso) ? iso : iso + 'Z');

/** One comparable form per value: decimals without trailing zeros, DateTimes as milliseconds. */
function norm(edm: EdmType, text: string | null): string | null {
  if (text === null) return null;
  if (edm === 'Edm.Decimal') {
    const [i = '', f = ''] = text.split('.');
    const fraction = f.replace(/0+$/, '');
    return fraction ? `${i}.${fraction}` : i;
  }
  if (edm === 'Edm.DateTime') return String(msOf(text));
  return text;
}

function normValues(set: string, values: Values): Values {
  const out: Values = {};
  for (const [name, v] of Object.entries(values)) out[name] = norm(edmOf(set, name), v);
  return out;
}

/** A JSON value as a client sends it: Int64 and Decimal as strings, Int32 numbers, "\/Date(ms)\/". */
function jsonValue(edm: EdmType, text: string | null): unknown {
  if (text === null) return null;
  switch (edm) {
    case 'Edm.Int32':
      return Number(text);
    case 'Edm.Boolean':
      return text === 'true';
    case 'Edm.DateTime':
      return `/Date(${msOf(text)})/`;
    default:
      return text;
  }
}

function jsonBody(set: string, values: Values): string {
  const body: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(values)) body[name] = jsonValue(edmOf(set, name), v);
  // As .NET and PHP clients write it: "\/Date(…)\/".
  return JSON.stringify(body).replace(/"\/Date\((-?\d+)\)\/"/g, '"\\/Date($1)\\/"');
}

const atomBody = (set: string, values: Values) => atomEntry(typeOf(set), values, { typed: true });

function bodyFor(format: Format, set: string, values: Values): { body: string; contentType: string } {
  return format === 'json'
    ? { body: jsonBody(set, values), contentType: 'application/json' }
    : { body: atomBody(set, values), contentType: 'application/atom+xml' };
}

const accept = (format: Format): Record<string, string> => (format === 'json' ? { Accept: 'application/json' } : {});

function send(format: Format, method: string, path: string, set: string, values: Values, extra: Record<string, string> = {}): Promise<HttpResponse> {
  const { body, contentType } = bodyFor(format, set, values);
  return asSeller(seller, live.root + path, { method, headers: { 'Content-Type': contentType, ...accept(format), ...extra }, body });
}

function get(format: Format, path: string): Promise<HttpResponse> {
  return asSeller(seller, live.root + path, { headers: accept(format) });
}

const jsonOf = (res: HttpResponse) => JSON.parse(res.body) as Record<string, unknown>;
const obj = (v: unknown) => v as Record<string, unknown>;

/** The values of an Atom entry, with the identity checks every entry must pass. */
function atomValues(entry: XmlElement, set: string, id: string | undefined): Values & { Id: string } {
  const type = typeOf(set);
  assert.equal(entry.localName, 'entry');
  const entryId = childElements(entry, ATOM, 'id')[0]?.textContent ?? '';
  const m = new RegExp(`^${live.root.replace(/\./g, '\\.')}/${type.setName}\\((\\d+)L\\)$`).exec(entryId);
  assert.ok(m, `atom:id ${entryId}`);
  if (id !== undefined) assert.equal(m[1], id);
  assert.equal(childElements(entry, ATOM, 'category')[0]?.getAttribute('term'), `CatalogueService.${type.name}`);
  const props = childElements(childElements(entry, ATOM, 'content')[0]!, M, 'properties')[0]!;
  const values: Values = {};
  for (const e of Array.from(props.children)) {
    const edm = edmOf(set, e.localName);
    assert.equal(e.getAttributeNS(M, 'type'), edm === 'Edm.String' ? null : edm, `m:type of ${e.localName}`);
    values[e.localName] = e.getAttributeNS(M, 'null') === 'true' ? null : norm(edm, e.textContent ?? '');
  }
  assert.equal(values.Id, m[1]);
  return values as Values & { Id: string };
}

/** The values of a JSON entity, checking each value's JSON type against its Edm type. */
function jsonValues(d: Record<string, unknown>, set: string, id: string | undefined): Values & { Id: string } {
  const type = typeOf(set);
  const meta = obj(d.__metadata);
  assert.equal(meta.type, `CatalogueService.${type.name}`);
  const m = new RegExp(`^${live.root.replace(/\./g, '\\.')}/${type.setName}\\((\\d+)L\\)$`).exec(String(meta.uri));
  assert.ok(m, `__metadata.uri ${String(meta.uri)}`);
  if (id !== undefined) assert.equal(m[1], id);
  const values: Values = {};
  for (const p of type.properties) {
    assert.ok(p.name in d, `${p.name} is present`);
    const v = d[p.name];
    if (v === null) {
      values[p.name] = null;
      continue;
    }
    switch (p.type) {
      case 'Edm.Int64':
      case 'Edm.Decimal':
      case 'Edm.String':
        assert.equal(typeof v, 'string', `${p.name} (${p.type}) is a JSON string`);
        values[p.name] = norm(p.type, v as string);
        break;
      case 'Edm.Int32':
        assert.equal(typeof v, 'number', `${p.name} is a JSON number`);
        values[p.name] = String(v);
        break;
      case 'Edm.Boolean':
        assert.equal(typeof v, 'boolean', `${p.name} is a JSON boolean`);
        values[p.name] = String(v);
        break;
      case 'Edm.DateTime': {
        const date = /^\/Date\((-?\d+)\)\/$/.exec(v as string);
        assert.ok(date, `${p.name} is \\/Date(ms)\\/`);
        values[p.name] = date[1]!;
        break;
      }
    }
  }
  assert.equal(values.Id, m[1]);
  return values as Values & { Id: string };
}

/** An entity answer (GET or 201) in the given format, read into comparable values. */
function entityValues(format: Format, res: HttpResponse, set: string, id?: string): Values & { Id: string } {
  assert.equal(res.headers['content-type'], CONTENT_TYPE[format]);
  assert.equal(res.headers['dataserviceversion'], '1.0;');
  assert.equal(res.headers['cache-control'], 'no-cache');
  if (format === 'atom') return atomValues(parseXml(res.body).documentElement, set, id);
  const body = jsonOf(res);
  assert.deepEqual(Object.keys(body), ['d']);
  return jsonValues(obj(body.d), set, id);
}

/** The entities of a feed answer, read into comparable values. */
function feedValues(format: Format, res: HttpResponse, set: string): (Values & { Id: string })[] {
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['content-type'], CONTENT_TYPE[format]);
  if (format === 'atom') {
    const feed = parseXml(res.body).documentElement;
    assert.equal(feed.localName, 'feed');
    return childElements(feed, ATOM, 'entry').map((e) => atomValues(e, set, undefined));
  }
  const d = jsonOf(res).d;
  assert.ok(Array.isArray(d), 'a V1 feed is {"d":[…]}');
  return (d as Record<string, unknown>[]).map((e) => jsonValues(e, set, undefined));
}

async function read(format: Format, set: string, id: string): Promise<Values & { Id: string }> {
  const res = await get(format, `/${set}(${id}L)`);
  assert.equal(res.status, 200, res.body);
  return entityValues(format, res, set, id);
}

/** `expected` (in text form) is contained in `actual` (normalised). */
function assertHas(actual: Values, set: string, expected: Values, what: string): void {
  const want = normValues(set, expected);
  const got: Values = {};
  for (const name of Object.keys(want)) got[name] = actual[name] ?? null;
  assert.deepEqual(got, want, what);
}

/** The values read before (already normalised) are unchanged in `actual`. */
function assertKept(actual: Values, before: Values, what: string): void {
  const got: Values = {};
  for (const name of Object.keys(before)) got[name] = actual[name] ?? null;
  assert.deepEqual(got, before, what);
}

function assertStatus(res: HttpResponse, status: number, what = ''): void {
  assert.equal(res.status, status, `${what} ${res.body}`);
}

/** 201 with Location = the absolute entity URI; answers the Id. */
function created(format: Format, res: HttpResponse, set: string): Values & { Id: string } {
  assertStatus(res, 201, `POST ${set}`);
  const values = entityValues(format, res, set);
  assert.equal(res.headers.location, `${live.root}/${typeOf(set).setName}(${values.Id}L)`);
  return values;
}

/** Creates an entity with a JSON body (for the parents of the set under test); answers its Id. */
async function make(set: string, values: Values): Promise<string> {
  return created('json', await send('json', 'POST', `/${set}`, set, values), set).Id;
}

let counter = 0;
const product = (title = 'Product') => make('Products', { Title: `${title} ${++counter}`, Price: '10', StockAmount: '1' });
const variation = (productId: string, sku: string | null = null) =>
  make('ProductVariations', { ProductId: productId, Price: '5', StockAmount: '1', Sku: sku });
const catalog = (name = 'Catalog') => make('Catalogs', { Name: `${name} ${++counter}` });

/** Inserts a platform row through the real store, as the platform side does; answers its Id. */
async function seed(set: string, values: Record<string, EdmValue>): Promise<string> {
  const app = live.service.app;
  const type = typeOf(set);
  const id = await app.store.write(seller.accountId, async (tx) => {
    const next = await app.store.nextId(tx);
    const now = app.clock.now();
    const row: Record<string, EdmValue> = {};
    for (const p of type.properties) row[p.name] = p.timestamp ? now : defaultOf(p);
    Object.assign(row, values, { Id: next });
    await app.entities.insert(tx, seller.accountId, type, row);
    return next;
  });
  return String(id);
}

/** A buyer with an address and an order with one item of a fresh product. */
async function seedOrder(): Promise<{ buyerId: string; buyerName: string; addressId: string; orderId: string; itemId: string; productId: string }> {
  const productId = await product('Sold');
  const n = ++counter;
  const buyerId = await seed('Buyers', { BuyerName: `buyer-${n}`, Email: `buyer-${n}@example.com` });
  const addressId = await seed('Addresses', {
    BuyerId: BigInt(buyerId), Type: 1, Name: 'Erika', Surname: 'Mustermann', Street: 'Heidestraße 17', PostalCode: '51147', Town: 'Köln', Country: 'DE',
  });
  const orderId = await seed('SalesOrders', {
    BuyerId: BigInt(buyerId), AddressId: BigInt(addressId), ShippingAddressId: BigInt(addressId), PlatformOrderId: `order-${n}`,
    CheckoutCompletionDate: Date.UTC(2024, 0, 2, 3, 4, 5), CurrencyCode: 'EUR', ItemCount: 1, TotalAmount: 1, TotalPrice: '59.9',
    ShippingService: 'DHL Paket', ShippingServiceCost: '4.9', PaymentOption: 'PayPal',
  });
  const itemId = await seed('SalesOrderItems', {
    SalesOrderId: BigInt(orderId), ProductId: BigInt(productId), PlatformItemId: `item-${n}`, TransactionId: `tx-${n}`, Name: 'Sold',
    Amount: 1, Price: '59.9', CurrencyCode: 'EUR', Sku: 'SOLD-1',
  });
  return { buyerId, buyerName: `buyer-${n}`, addressId, orderId, itemId, productId };
}

function assertAllow(res: HttpResponse, allow: string, what: string): void {
  assert.equal(res.status, 405, `${what}: ${res.body}`);
  assert.equal(res.headers.allow, allow, what);
}

// ---------------------------------------------------------------------------------------------
// The catalogue sets: full round trips

interface CatalogueCase {
  readonly set: string;
  /** Creates the parents; answers their ids by name. */
  readonly parents: () => Promise<Record<string, string>>;
  readonly create: (p: Record<string, string>) => Values;
  /** A replacement body: the required properties and some changes, omitting `reset`. */
  readonly put: (p: Record<string, string>) => Values;
  /** Writable properties set on create and omitted from PUT, with the defaults PUT must reset them to. */
  readonly reset: Values;
  readonly merge: (p: Record<string, string>) => Values;
}

const CATALOGUE: readonly CatalogueCase[] = [
  {
    set: 'Catalogs',
    parents: async () => ({}),
    create: () => ({ Name: 'Shoes', ForeignId: 'cat-1', IsRootLevel: 'true' }),
    put: () => ({ Name: 'Boots' }),
    reset: { ForeignId: null, IsRootLevel: 'false' },
    merge: () => ({ ForeignId: 'cat-2' }),
  },
  {
    set: 'Products',
    parents: async () => ({}),
    create: () => ({
      Title: 'Shirt', Price: '19.99', StockAmount: '5', ForeignId: 'p-1', ExternalProductId: '9007199254740993', ProductType: '1',
      Description: '<p>Soft & "warm"</p>', ShortDescription: 'Soft', UnitQuantity: '0.5', UnitType: 'kg', Ean: '4006381333931', Brand: 'Acme',
      ConditionId: '1000', DisableAutomatch: 'true', BestOfferAutoAcceptPrice: '18.5', BestOfferMinimumPrice: '15.000001',
    }),
    put: () => ({ Title: 'Shirt (new)', Price: '21.5', StockAmount: '7' }),
    reset: {
      ForeignId: null, ExternalProductId: null, ProductType: '0', Description: null, ShortDescription: null, UnitQuantity: null, UnitType: null,
      Ean: null, Brand: null, ConditionId: null, DisableAutomatch: 'false', BestOfferAutoAcceptPrice: null, BestOfferMinimumPrice: null,
    },
    merge: () => ({ StockAmount: '0', Mpn: 'MPN-9' }),
  },
  {
    set: 'ProductImages',
    parents: async () => ({ product: await product() }),
    create: (p) => ({ ProductId: p.product!, ImageUrl: 'http://images.example.com/1.jpg', Type: '1' }),
    put: (p) => ({ ProductId: p.product!, ImageUrl: 'https://images.example.com/2.jpg?size=big&v=1', Type: '3' }),
    reset: {},
    // The only further image cannot move to 12 (that would leave a gap from 3): to the offer slot.
    merge: () => ({ Type: '2' }),
  },
  {
    set: 'ProductRelations',
    parents: async () => ({ parent: await product('Bundle'), child: await product('Part'), other: await product('Other part') }),
    create: (p) => ({ ParentProductId: p.parent!, ChildProductId: p.child!, Quantity: '3' }),
    put: (p) => ({ ParentProductId: p.parent!, ChildProductId: p.other! }),
    reset: { Quantity: '1' },
    merge: () => ({ Quantity: '2' }),
  },
  {
    set: 'ProductSpecifics',
    parents: async () => ({ product: await product() }),
    create: (p) => ({ ProductId: p.product!, Name: 'Marke', Value: 'Acme', Type: '2' }),
    put: (p) => ({ ProductId: p.product!, Name: 'Farbe', Value: 'Rot|Blau' }),
    reset: { Type: null },
    merge: () => ({ Value: 'Grün' }),
  },
  {
    set: 'ProductVariations',
    parents: async () => ({ product: await product() }),
    create: (p) => ({
      ProductId: p.product!, Price: '9.5', StockAmount: '4', Sku: 'S-1', ForeignId: 'f-1', ExternalProductId: '77', Ean: '4006381333931',
      Isbn: '9783161484100', Upc: '036000291452', Mpn: 'M-1',
    }),
    put: (p) => ({ ProductId: p.product!, Price: '10', StockAmount: '2' }),
    reset: { Sku: null, ForeignId: null, ExternalProductId: null, Ean: null, Isbn: null, Upc: null, Mpn: null },
    merge: () => ({ StockAmount: '0', Sku: 'S-2' }),
  },
  {
    set: 'ProductVariationSpecifics',
    parents: async () => ({ variation: await variation(await product()) }),
    create: (p) => ({ ProductVariationId: p.variation!, Name: 'Größe', Value: 'M' }),
    put: (p) => ({ ProductVariationId: p.variation!, Name: 'Farbe', Value: 'Rot' }),
    reset: {},
    merge: () => ({ Value: 'Blau' }),
  },
  {
    set: 'ProductVariationImages',
    parents: async () => ({ variation: await variation(await product()) }),
    create: (p) => ({ ProductVariationId: p.variation!, ImageUrl: 'http://images.example.com/v1.jpg', ImagePosition: '2' }),
    put: (p) => ({ ProductVariationId: p.variation!, ImageUrl: 'http://images.example.com/v2.jpg' }),
    reset: { ImagePosition: '0' },
    merge: () => ({ ImagePosition: '11' }),
  },
  {
    set: 'OptionalProductAttributes',
    parents: async () => ({ product: await product() }),
    create: (p) => ({ ProductId: p.product!, Name: 'Material', Value: 'Baumwolle' }),
    put: (p) => ({ ProductId: p.product!, Name: 'Pflege' }),
    reset: { Value: null },
    merge: () => ({ Value: '30 °C' }),
  },
  {
    set: 'DiscountOffers',
    parents: async () => {
      const productId = await product();
      return { product: productId, variation: await variation(productId) };
    },
    create: (p) => ({ ProductId: p.product!, ProductVariationId: p.variation!, Price: '7.5', Type: '1' }),
    put: (p) => ({ ProductId: p.product!, Price: '8', Type: '1' }),
    reset: { ProductVariationId: null },
    merge: () => ({ Price: '6.25' }),
  },
  {
    set: 'CarParts',
    parents: async () => ({ product: await product() }),
    create: (p) => ({ ProductId: p.product!, KType: '12345', HSN: '0603', TSN: 'ABC', Comment: 'fits all' }),
    put: (p) => ({ ProductId: p.product!, KType: '999' }),
    reset: { HSN: null, TSN: null, Comment: null },
    merge: () => ({ Comment: 'front axle' }),
  },
];

describe('catalogue sets: create, read, PUT, MERGE, read, DELETE, 404', () => {
  for (const c of CATALOGUE) {
    for (const format of FORMATS) {
      test(`${c.set} in ${format}`, async () => {
        const parents = await c.parents();
        const createBody = c.create(parents);
        const putBody = c.put(parents);
        const mergeBody = c.merge(parents);
        // The table is meaningful: every reset property was set on create to something else.
        for (const [name, dflt] of Object.entries(c.reset)) {
          assert.ok(name in createBody && !(name in putBody), `${c.set}.${name} is set on create and omitted from PUT`);
          assert.notEqual(norm(edmOf(c.set, name), createBody[name]!), norm(edmOf(c.set, name), dflt), `${c.set}.${name}`);
        }

        // Create: 201 with the entity as stored.
        const res = await send(format, 'POST', `/${c.set}`, c.set, createBody);
        const fromPost = created(format, res, c.set);
        const id = fromPost.Id;
        assertHas(fromPost, c.set, createBody, 'the 201 answer');
        assert.ok(fromPost.CreationDate !== null && fromPost.ModificationDate !== null);

        // Read.
        const first = await read(format, c.set, id);
        assert.deepEqual(first, fromPost, 'GET answers what POST answered');

        // PUT replaces: the sent properties change, omitted writable ones go back to their defaults.
        const put = await send(format, 'PUT', `/${c.set}(${id}L)`, c.set, putBody);
        assertStatus(put, 204, 'PUT');
        assert.equal(put.body, '');
        const afterPut = await read(format, c.set, id);
        assertHas(afterPut, c.set, putBody, 'after PUT');
        assertHas(afterPut, c.set, c.reset, 'PUT reset the omitted writable properties');
        assert.equal(afterPut.CreationDate, first.CreationDate, 'CreationDate is kept');
        assert.ok(Number(afterPut.ModificationDate) >= Number(first.ModificationDate));

        // MERGE changes only what it sends.
        const merge = await send(format, 'MERGE', `/${c.set}(${id}L)`, c.set, mergeBody);
        assertStatus(merge, 204, 'MERGE');
        assert.equal(merge.body, '');
        const afterMerge = await read(format, c.set, id);
        assertHas(afterMerge, c.set, { ...putBody, ...c.reset, ...mergeBody }, 'after MERGE');
        for (const [name, v] of Object.entries(afterPut)) {
          if (!(name in mergeBody) && name !== 'ModificationDate') assert.equal(afterMerge[name], v, `MERGE kept ${name}`);
        }

        // Delete, then it is gone.
        const del = await asSeller(seller, `${live.root}/${c.set}(${id}L)`, { method: 'DELETE', headers: accept(format) });
        assertStatus(del, 204, 'DELETE');
        assert.equal(del.body, '');
        assertStatus(await get(format, `/${c.set}(${id}L)`), 404, 'GET after DELETE');
        assertStatus(await asSeller(seller, `${live.root}/${c.set}(${id}L)`, { method: 'DELETE' }), 404, 'DELETE again');
        assertStatus(await send(format, 'MERGE', `/${c.set}(${id}L)`, c.set, mergeBody), 404, 'MERGE after DELETE');
      });
    }
  }

  test('every catalogue set answers its collection, and 405 with Allow for the wrong verbs', async () => {
    for (const c of CATALOGUE) {
      const id = await make(c.set, c.create(await c.parents()));
      for (const format of FORMATS) {
        const all = feedValues(format, await get(format, `/${c.set}`), c.set);
        assert.ok(all.some((v) => v.Id === id), `${c.set} lists ${id}`);
      }
      assertAllow(await asSeller(seller, `${live.root}/${c.set}`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '{}' }), 'GET, HEAD, POST', `PUT ${c.set}`);
      assertAllow(await asSeller(seller, `${live.root}/${c.set}`, { method: 'DELETE' }), 'GET, HEAD, POST', `DELETE ${c.set}`);
      assertAllow(
        await asSeller(seller, `${live.root}/${c.set}(${id}L)`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }),
        'GET, HEAD, PUT, MERGE, PATCH, DELETE',
        `POST ${c.set}(id)`,
      );
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Orders and order items: seeded by the platform, updated by the seller

describe('SalesOrders and SalesOrderItems: seeded, then PUT and MERGE of the writable properties', () => {
  for (const format of FORMATS) {
    test(`SalesOrders in ${format}`, async () => {
      const { orderId, buyerId, addressId } = await seedOrder();
      const first = await read(format, 'SalesOrders', orderId);
      assertHas(first, 'SalesOrders', {
        BuyerId: buyerId, AddressId: addressId, ShippingAddressId: addressId, PlatformName: 'eBay', CurrencyCode: 'EUR', TotalPrice: '59.9',
        CheckoutCompletionDate: '2024-01-02T03:04:05', ForeignOrderId: null, PaidAmount: null, PaidDate: null, ShippingStatus: '0',
      }, 'as seeded');
      const platform = Object.fromEntries(Object.entries(first).filter(([n]) => !['ForeignOrderId', 'PaidAmount', 'PaidDate', 'ShippingStatus', 'ModificationDate', 'MarkedAsPayed', 'MarkedAsShipped'].includes(n)));

      const putBody: Values = { ForeignOrderId: '100000123', PaidAmount: '59.90', PaidDate: '2024-01-03T10:11:12', ShippingStatus: '1' };
      assertStatus(await send(format, 'PUT', `/SalesOrders(${orderId}L)`, 'SalesOrders', putBody), 204, 'PUT');
      const afterPut = await read(format, 'SalesOrders', orderId);
      assertHas(afterPut, 'SalesOrders', putBody, 'after PUT');
      assertKept(afterPut, platform, 'the platform properties are untouched');

      // A second PUT with ShippingStatus only resets the other writable properties.
      assertStatus(await send(format, 'PUT', `/SalesOrders(${orderId}L)`, 'SalesOrders', { ShippingStatus: '2' }), 204, 'PUT 2');
      const afterPut2 = await read(format, 'SalesOrders', orderId);
      assertHas(afterPut2, 'SalesOrders', { ShippingStatus: '2', ForeignOrderId: null, PaidAmount: null, PaidDate: null }, 'PUT reset');
      assertKept(afterPut2, platform, 'the platform properties are untouched');

      assertStatus(await send(format, 'MERGE', `/SalesOrders(${orderId}L)`, 'SalesOrders', { ForeignOrderId: '_ORDER_IMPORT_FAILED_' }), 204, 'MERGE');
      const afterMerge = await read(format, 'SalesOrders', orderId);
      assertHas(afterMerge, 'SalesOrders', { ForeignOrderId: '_ORDER_IMPORT_FAILED_', ShippingStatus: '2', PaidAmount: null }, 'after MERGE');
      assertKept(afterMerge, platform, 'the platform properties are untouched');

      // Orders come from the platform: no POST, no DELETE.
      assertAllow(await send(format, 'POST', '/SalesOrders', 'SalesOrders', { ForeignOrderId: 'x' }), 'GET, HEAD', 'POST SalesOrders');
      assertAllow(await asSeller(seller, `${live.root}/SalesOrders(${orderId}L)`, { method: 'DELETE' }), 'GET, HEAD, PUT, MERGE, PATCH', 'DELETE SalesOrders(id)');
      await read(format, 'SalesOrders', orderId);
    });

    test(`SalesOrderItems in ${format}`, async () => {
      const { itemId, orderId, productId } = await seedOrder();
      const first = await read(format, 'SalesOrderItems', itemId);
      assertHas(first, 'SalesOrderItems', { SalesOrderId: orderId, ProductId: productId, Sku: 'SOLD-1', ShippingStatus: '0', CarrierUsed: null, TrackingNumbers: null }, 'as seeded');
      const platform = Object.fromEntries(Object.entries(first).filter(([n]) => !['ShippingStatus', 'CarrierUsed', 'TrackingNumbers', 'ModificationDate'].includes(n)));

      const putBody: Values = { ShippingStatus: '1', CarrierUsed: 'dhl', TrackingNumbers: '00340434161094042557;00340434161094042558' };
      assertStatus(await send(format, 'PUT', `/SalesOrderItems(${itemId}L)`, 'SalesOrderItems', putBody), 204, 'PUT');
      const afterPut = await read(format, 'SalesOrderItems', itemId);
      assertHas(afterPut, 'SalesOrderItems', putBody, 'after PUT');
      assertKept(afterPut, platform, 'platform properties untouched');

      assertStatus(await send(format, 'PUT', `/SalesOrderItems(${itemId}L)`, 'SalesOrderItems', { CarrierUsed: 'ups' }), 204, 'PUT 2');
      const afterPut2 = await read(format, 'SalesOrderItems', itemId);
      assertHas(afterPut2, 'SalesOrderItems', { CarrierUsed: 'ups', ShippingStatus: '0', TrackingNumbers: null }, 'PUT reset');

      // TrackingNumbers needs a carrier: the stored one counts.
      assertStatus(await send(format, 'MERGE', `/SalesOrderItems(${itemId}L)`, 'SalesOrderItems', { TrackingNumbers: '1Z999' }), 204, 'MERGE');
      const afterMerge = await read(format, 'SalesOrderItems', itemId);
      assertHas(afterMerge, 'SalesOrderItems', { CarrierUsed: 'ups', ShippingStatus: '0', TrackingNumbers: '1Z999' }, 'after MERGE');
      assertKept(afterMerge, platform, 'platform properties untouched');

      assertAllow(await send(format, 'POST', '/SalesOrderItems', 'SalesOrderItems', { CarrierUsed: 'x' }), 'GET, HEAD', 'POST SalesOrderItems');
      assertAllow(await asSeller(seller, `${live.root}/SalesOrderItems(${itemId}L)`, { method: 'DELETE' }), 'GET, HEAD, PUT, MERGE, PATCH', 'DELETE SalesOrderItems(id)');
      assertAllow(await send(format, 'POST', `/SalesOrders(${orderId}L)/SalesOrderItems`, 'SalesOrderItems', { CarrierUsed: 'x' }), 'GET, HEAD', 'POST through the order');
      const items = feedValues(format, await get(format, `/SalesOrders(${orderId}L)/SalesOrderItems`), 'SalesOrderItems');
      assert.deepEqual(items.map((i) => i.Id), [itemId]);
    });
  }

  test('read-only order properties sent with another value are ignored: 204, the stored value stays', async () => {
    const { orderId, itemId } = await seedOrder();
    for (const format of FORMATS) {
      const orderBefore = await read(format, 'SalesOrders', orderId);
      const order = await send(format, 'MERGE', `/SalesOrders(${orderId}L)`, 'SalesOrders', { PlatformOrderId: 'forged' });
      assertStatus(order, 204, format);
      assert.equal((await read(format, 'SalesOrders', orderId)).PlatformOrderId, orderBefore.PlatformOrderId);
      const itemBefore = await read(format, 'SalesOrderItems', itemId);
      const item = await send(format, 'MERGE', `/SalesOrderItems(${itemId}L)`, 'SalesOrderItems', { Price: '0.01' });
      assertStatus(item, 204, format);
      assert.equal((await read(format, 'SalesOrderItems', itemId)).Price, itemBefore.Price);
    }
    const tracking = await send('json', 'MERGE', `/SalesOrderItems(${itemId}L)`, 'SalesOrderItems', { TrackingNumbers: 'a;b' });
    assertStatus(tracking, 400, 'TrackingNumbers without a carrier');
    assert.match(tracking.body, /CarrierUsed/);
  });
});

// ---------------------------------------------------------------------------------------------
// Buyers, Addresses, Listings, ListingItems: read only

describe('Buyers, Addresses, Listings, ListingItems: seeded, read, every write is a 405', () => {
  test('in Atom and JSON', async () => {
    const { buyerId, buyerName, addressId, productId } = await seedOrder();
    const listingId = await seed('Listings', {
      ProductId: BigInt(productId), PlatformItemId: `listing-${++counter}`, Title: 'Listed', Status: 1, StartDate: Date.UTC(2024, 1, 1), Price: '12.5', Quantity: 3, CategoryId: 9355n,
    });
    const listingItemId = await seed('ListingItems', { ListingId: BigInt(listingId), ProductId: BigInt(productId), Sku: 'L-1', Price: '12.5', Quantity: 3, QuantitySold: 1 });
    const rows: [string, string, Values][] = [
      ['Buyers', buyerId, { BuyerName: buyerName, Email: `${buyerName}@example.com` }],
      ['Addresses', addressId, { BuyerId: buyerId, Type: '1', Surname: 'Mustermann', Street: 'Heidestraße 17', Town: 'Köln', Country: 'DE', Company: null }],
      ['Listings', listingId, { ProductId: productId, Title: 'Listed', Status: '1', StartDate: '2024-02-01T00:00:00', EndDate: null, Price: '12.5', Quantity: '3', CategoryId: '9355' }],
      ['ListingItems', listingItemId, { ListingId: listingId, ProductId: productId, ProductVariationId: null, Sku: 'L-1', Price: '12.5', QuantitySold: '1' }],
    ];
    for (const [set, id, expected] of rows) {
      for (const format of FORMATS) {
        assertHas(await read(format, set, id), set, expected, `${set} in ${format}`);
        const all = feedValues(format, await get(format, `/${set}`), set);
        assert.ok(all.some((v) => v.Id === id), `${set} feed in ${format}`);
        assertAllow(await send(format, 'POST', `/${set}`, set, {}), 'GET, HEAD', `POST ${set}`);
        for (const method of ['PUT', 'MERGE', 'PATCH']) {
          assertAllow(await send(format, method, `/${set}(${id}L)`, set, {}), 'GET, HEAD', `${method} ${set}(id)`);
        }
        assertAllow(await asSeller(seller, `${live.root}/${set}(${id}L)`, { method: 'DELETE' }), 'GET, HEAD', `DELETE ${set}(id)`);
        assertAllow(await send(format, 'POST', `/${set}(${id}L)`, set, {}, { 'X-HTTP-Method': 'MERGE' }), 'GET, HEAD', `tunnelled MERGE ${set}(id)`);
      }
      await read('json', set, id);
    }
    // The navigations between them read too.
    const orders = feedValues('json', await get('json', `/Buyers(${buyerId}L)/SalesOrders`), 'SalesOrders');
    assert.equal(orders.length, 1);
    const addresses = feedValues('atom', await get('atom', `/Buyers(${buyerId}L)/Addresses`), 'Addresses');
    assert.deepEqual(addresses.map((a) => a.Id), [addressId]);
    const listingItems = feedValues('json', await get('json', `/Listings(${listingId}L)/ListingItems`), 'ListingItems');
    assert.deepEqual(listingItems.map((a) => a.Id), [listingItemId]);
  });
});

// ---------------------------------------------------------------------------------------------
// Verb variants

describe('PATCH and POST with X-HTTP-Method: MERGE behave like MERGE', () => {
  for (const format of FORMATS) {
    test(`on Products and SalesOrders, in ${format}`, async () => {
      const id = await make('Products', { Title: 'Verbs', Price: '10', StockAmount: '4', Brand: 'Acme' });
      assertStatus(await send(format, 'PATCH', `/Products(${id}L)`, 'Products', { StockAmount: '9' }), 204, 'PATCH');
      assertHas(await read(format, 'Products', id), 'Products', { Title: 'Verbs', Price: '10', StockAmount: '9', Brand: 'Acme' }, 'after PATCH');
      const tunnelled = await send(format, 'POST', `/Products(${id}L)`, 'Products', { Brand: 'Other' }, { 'X-HTTP-Method': 'MERGE' });
      assertStatus(tunnelled, 204, 'X-HTTP-Method: MERGE');
      assertHas(await read(format, 'Products', id), 'Products', { Title: 'Verbs', Price: '10', StockAmount: '9', Brand: 'Other' }, 'after tunnelled MERGE');

      const { orderId } = await seedOrder();
      assertStatus(await send(format, 'MERGE', `/SalesOrders(${orderId}L)`, 'SalesOrders', { PaidAmount: '59.90' }), 204);
      assertStatus(await send(format, 'PATCH', `/SalesOrders(${orderId}L)`, 'SalesOrders', { ForeignOrderId: '100000124' }), 204, 'PATCH order');
      assertStatus(await send(format, 'POST', `/SalesOrders(${orderId}L)`, 'SalesOrders', { ShippingStatus: '1' }, { 'X-HTTP-Method': 'MERGE' }), 204, 'tunnelled order');
      assertHas(await read(format, 'SalesOrders', orderId), 'SalesOrders', { PaidAmount: '59.9', ForeignOrderId: '100000124', ShippingStatus: '1' }, 'order after PATCH and tunnelled MERGE');
    });
  }

  test('X-HTTP-Method: PUT replaces and X-HTTP-Method: DELETE deletes', async () => {
    const id = await make('Products', { Title: 'Tunnel', Price: '10', StockAmount: '4', Brand: 'Acme' });
    assertStatus(await send('json', 'POST', `/Products(${id}L)`, 'Products', { Title: 'Tunnel 2', Price: '11', StockAmount: '1' }, { 'X-HTTP-Method': 'PUT' }), 204);
    assertHas(await read('json', 'Products', id), 'Products', { Title: 'Tunnel 2', Brand: null }, 'after tunnelled PUT');
    const del = await asSeller(seller, `${live.root}/Products(${id}L)`, { method: 'POST', headers: { 'X-HTTP-Method': 'DELETE', 'Content-Type': 'application/json' } });
    assertStatus(del, 204);
    assertStatus(await get('json', `/Products(${id}L)`), 404);
  });
});

// ---------------------------------------------------------------------------------------------
// ProductVariationPictures

describe('ProductVariationPictures answers like ProductVariationImages', () => {
  for (const format of FORMATS) {
    test(`set alias and navigation alias, in ${format}`, async () => {
      const variationId = await variation(await product());
      const body = { ProductVariationId: variationId, ImageUrl: 'http://images.example.com/pic.jpg', ImagePosition: '1' };
      const viaAlias = await send(format, 'POST', '/ProductVariationPictures', 'ProductVariationPictures', body);
      const createdValues = created(format, viaAlias, 'ProductVariationImages');
      const id = createdValues.Id;
      assertHas(createdValues, 'ProductVariationImages', body, 'created through the alias');

      const canonical = await get(format, `/ProductVariationImages(${id}L)`);
      const aliased = await get(format, `/ProductVariationPictures(${id}L)`);
      assertStatus(aliased, 200);
      assert.deepEqual(entityValues(format, aliased, 'ProductVariationImages', id), entityValues(format, canonical, 'ProductVariationImages', id));

      // Through the navigation alias: POST, read, and the same entities as the canonical navigation.
      const second = await send(format, 'POST', `/ProductVariations(${variationId}L)/ProductVariationPictures`, 'ProductVariationImages', {
        ImageUrl: 'http://images.example.com/pic2.jpg', ImagePosition: '2',
      });
      const secondId = created(format, second, 'ProductVariationImages').Id;
      const viaNavAlias = feedValues(format, await get(format, `/ProductVariations(${variationId}L)/ProductVariationPictures`), 'ProductVariationImages');
      const viaNav = feedValues(format, await get(format, `/ProductVariations(${variationId}L)/ProductVariationImages`), 'ProductVariationImages');
      assert.deepEqual(viaNavAlias, viaNav);
      assert.deepEqual(viaNav.map((v) => v.Id), [id, secondId]);
      assert.equal(viaNav[1]!.ProductVariationId, variationId);
      const one = await get(format, `/ProductVariations(${variationId}L)/ProductVariationPictures(${secondId}L)`);
      assertStatus(one, 200);
      entityValues(format, one, 'ProductVariationImages', secondId);

      // Every feed of the alias set lists the same entities as the canonical set.
      assert.deepEqual(
        feedValues(format, await get(format, '/ProductVariationPictures'), 'ProductVariationImages').map((v) => v.Id),
        feedValues(format, await get(format, '/ProductVariationImages'), 'ProductVariationImages').map((v) => v.Id),
      );

      // Updates and deletes through the alias.
      assertStatus(await send(format, 'PUT', `/ProductVariationPictures(${id}L)`, 'ProductVariationImages', { ProductVariationId: variationId, ImageUrl: 'http://images.example.com/pic3.jpg' }), 204, 'PUT');
      assertHas(await read(format, 'ProductVariationImages', id), 'ProductVariationImages', { ImageUrl: 'http://images.example.com/pic3.jpg', ImagePosition: '0' }, 'after PUT via alias');
      assertStatus(await send(format, 'MERGE', `/ProductVariationPictures(${id}L)`, 'ProductVariationImages', { ImagePosition: '5' }), 204, 'MERGE');
      assertHas(await read(format, 'ProductVariationImages', id), 'ProductVariationImages', { ImageUrl: 'http://images.example.com/pic3.jpg', ImagePosition: '5' }, 'after MERGE via alias');
      assertStatus(await asSeller(seller, `${live.root}/ProductVariationPictures(${id}L)`, { method: 'DELETE' }), 204, 'DELETE');
      assertStatus(await get(format, `/ProductVariationImages(${id}L)`), 404);
      assertStatus(await get(format, `/ProductVariationPictures(${id}L)`), 404);
    });
  }

  test('the JSON entity shows both navigations, deferred', async () => {
    const variationId = await variation(await product());
    const d = obj(jsonOf(await get('json', `/ProductVariations(${variationId}L)`)).d);
    assert.deepEqual(d.ProductVariationImages, { __deferred: { uri: `${live.root}/ProductVariations(${variationId}L)/ProductVariationImages` } });
    assert.deepEqual(d.ProductVariationPictures, { __deferred: { uri: `${live.root}/ProductVariations(${variationId}L)/ProductVariationPictures` } });
  });
});

// ---------------------------------------------------------------------------------------------
// Properties and $value

describe('Set(id)/Property and Set(id)/Property/$value', () => {
  let productId: string;
  before(async () => {
    productId = await make('Products', { Title: 'Ä & <b>', Price: '19.990000', StockAmount: '5', ExternalProductId: '9223372036854775807', DisableAutomatch: 'true' });
  });

  test('XML: a root element in the data-services namespace, typed with m:type, m:null for null', async () => {
    const cases: [string, string | null, string | null][] = [
      ['Title', 'Ä & <b>', null],
      ['Price', '19.99', 'Edm.Decimal'],
      ['StockAmount', '5', 'Edm.Int32'],
      ['ExternalProductId', '9223372036854775807', 'Edm.Int64'],
      ['DisableAutomatch', 'true', 'Edm.Boolean'],
      ['Id', productId, 'Edm.Int64'],
      ['Brand', null, null],
      ['EbayCategoryId1', null, 'Edm.Int64'],
    ];
    for (const [name, value, type] of cases) {
      const res = await get('atom', `/Products(${productId}L)/${name}`);
      assertStatus(res, 200, name);
      assert.equal(res.headers['content-type'], 'application/xml;charset=utf-8');
      assert.equal(res.headers['dataserviceversion'], '1.0;');
      const root = parseXml(res.body).documentElement;
      assert.equal(root.localName, name);
      assert.equal(root.namespaceURI, D);
      assert.equal(root.getAttributeNS(M, 'type'), type, `m:type of ${name}`);
      if (value === null) assert.equal(root.getAttributeNS(M, 'null'), 'true', name);
      else assert.equal(norm(edmOf('Products', name), root.textContent ?? ''), value, name);
    }
    const date = parseXml((await get('atom', `/Products(${productId}L)/CreationDate`)).body).documentElement;
    assert.equal(date.getAttributeNS(M, 'type'), 'Edm.DateTime');
    assert.match(date.textContent ?? '', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?$/);
  });

  test('JSON: {"d":{"<Name>":<value>}} with the JSON type of each Edm type', async () => {
    const cases: [string, unknown][] = [
      ['Title', 'Ä & <b>'],
      ['StockAmount', 5],
      ['ExternalProductId', '9223372036854775807'],
      ['DisableAutomatch', true],
      ['Id', productId],
      ['Brand', null],
    ];
    for (const [name, value] of cases) {
      const res = await get('json', `/Products(${productId}L)/${name}`);
      assertStatus(res, 200, name);
      assert.equal(res.headers['content-type'], 'application/json;charset=utf-8');
      assert.deepEqual(jsonOf(res), { d: { [name]: value } }, name);
    }
    const price = obj(jsonOf(await get('json', `/Products(${productId}L)/Price`)).d).Price;
    assert.equal(typeof price, 'string');
    assert.equal(norm('Edm.Decimal', price as string), '19.99');
    const date = obj(jsonOf(await get('json', `/Products(${productId}L)/CreationDate`)).d).CreationDate;
    assert.match(String(date), /^\/Date\(\d+\)\/$/);
  });

  test('$value: the bare value as text/plain; null is a 404', async () => {
    const cases: [string, string][] = [
      ['Title', 'Ä & <b>'],
      ['StockAmount', '5'],
      ['ExternalProductId', '9223372036854775807'],
      ['DisableAutomatch', 'true'],
      ['Id', productId],
    ];
    for (const [name, value] of cases) {
      for (const format of FORMATS) {
        const res = await get(format, `/Products(${productId}L)/${name}/$value`);
        assertStatus(res, 200, name);
        assert.equal(res.headers['content-type'], 'text/plain;charset=utf-8');
        assert.equal(res.body, value, name);
      }
    }
    const price = await get('atom', `/Products(${productId}L)/Price/$value`);
    assert.equal(norm('Edm.Decimal', price.body), '19.99');
    assertStatus(await get('atom', `/Products(${productId}L)/Brand/$value`), 404, 'null $value');
    assertStatus(await get('json', `/Products(${productId}L)/NoSuchProperty`), 404, 'unknown property');
  });

  test('through a navigation, and of other sets', async () => {
    const variationId = await variation(productId, 'PROP-1');
    const title = await get('json', `/ProductVariations(${variationId}L)/Product/Title`);
    assert.deepEqual(jsonOf(title), { d: { Title: 'Ä & <b>' } });
    const sku = await get('atom', `/ProductVariations(${variationId}L)/Sku/$value`);
    assert.equal(sku.body, 'PROP-1');
    assertStatus(await get('atom', `/ProductVariations(${variationId}L)/Upc/$value`), 404);
  });
});

// ---------------------------------------------------------------------------------------------
// $links

describe('$links: Products–Catalogs and Catalogs–ParentCatalogs/ChildCatalogs', () => {
  const uriOf = (set: string, id: string) => `${live.root}/${set}(${id}L)`;

  async function linksJson(path: string): Promise<string[]> {
    const res = await get('json', path);
    assertStatus(res, 200, path);
    assert.equal(res.headers['content-type'], 'application/json;charset=utf-8');
    const d = jsonOf(res).d;
    assert.ok(Array.isArray(d), 'V1 links are {"d":[{"uri":…}]}');
    return (d as { uri: string }[]).map((l) => {
      assert.deepEqual(Object.keys(l), ['uri']);
      return l.uri;
    });
  }

  async function linksXml(path: string): Promise<string[]> {
    const res = await get('atom', path);
    assertStatus(res, 200, path);
    assert.equal(res.headers['content-type'], 'application/xml;charset=utf-8');
    const root = parseXml(res.body).documentElement;
    assert.equal(root.localName, 'links');
    assert.equal(root.namespaceURI, D);
    return childElements(root, D, 'uri').map((u) => u.textContent ?? '');
  }

  const postLinkJson = (path: string, uri: string) =>
    asSeller(seller, live.root + path, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ uri }) });
  const postLinkXml = (path: string, uri: string) =>
    asSeller(seller, live.root + path, { method: 'POST', headers: { 'Content-Type': 'application/xml' }, body: `<?xml version="1.0" encoding="utf-8"?><uri xmlns="${D}">${uri}</uri>` });
  const del = (path: string) => asSeller(seller, live.root + path, { method: 'DELETE', headers: { 'Content-Type': 'application/json' } });

  test('Products(id)/$links/Catalogs: create (JSON and XML bodies), read (JSON and XML), delete', async () => {
    const p = await product();
    const c1 = await catalog();
    const c2 = await catalog();
    assert.deepEqual(await linksJson(`/Products(${p}L)/$links/Catalogs`), []);

    const json = await postLinkJson(`/Products(${p}L)/$links/Catalogs`, uriOf('Catalogs', c1));
    assertStatus(json, 204, 'POST link JSON');
    assert.equal(json.body, '');
    assertStatus(await postLinkXml(`/Products(${p}L)/$links/Catalogs`, uriOf('Catalogs', c2)), 204, 'POST link XML');
    // Adding an existing link again changes nothing.
    assertStatus(await postLinkJson(`/Products(${p}L)/$links/Catalogs`, `Catalogs(${c1}L)`), 204, 'POST the same link, relative');

    const expected = [uriOf('Catalogs', c1), uriOf('Catalogs', c2)];
    assert.deepEqual(await linksJson(`/Products(${p}L)/$links/Catalogs`), expected);
    assert.deepEqual(await linksXml(`/Products(${p}L)/$links/Catalogs`), expected);
    assert.deepEqual(await linksJson(`/Catalogs(${c1}L)/$links/Products`), [uriOf('Products', p)]);
    const single = await get('json', `/Products(${p}L)/$links/Catalogs(${c2}L)`);
    assert.deepEqual(jsonOf(single), { d: { uri: uriOf('Catalogs', c2) } });
    const singleXml = parseXml((await get('atom', `/Products(${p}L)/$links/Catalogs(${c2}L)`)).body).documentElement;
    assert.equal(singleXml.localName, 'uri');
    assert.equal(singleXml.namespaceURI, D);
    assert.equal(singleXml.textContent, uriOf('Catalogs', c2));
    // The navigation shows the same.
    assert.deepEqual(feedValues('atom', await get('atom', `/Products(${p}L)/Catalogs`), 'Catalogs').map((v) => v.Id), [c1, c2]);

    assertStatus(await del(`/Products(${p}L)/$links/Catalogs(${c1}L)`), 204, 'DELETE link');
    assert.deepEqual(await linksXml(`/Products(${p}L)/$links/Catalogs`), [uriOf('Catalogs', c2)]);
    assertStatus(await del(`/Products(${p}L)/$links/Catalogs(${c1}L)`), 404, 'DELETE a missing link');
    assertStatus(await get('json', `/Products(${p}L)/$links/Catalogs(${c1}L)`), 404, 'GET a missing link');
    // The catalogs themselves stay.
    await read('json', 'Catalogs', c1);

    // Bad targets: a missing catalog, a URI of another set, a malformed body.
    assertStatus(await postLinkJson(`/Products(${p}L)/$links/Catalogs`, uriOf('Catalogs', '999999999')), 404, 'missing target');
    assertStatus(await postLinkJson(`/Products(${p}L)/$links/Catalogs`, uriOf('Products', p)), 400, 'wrong set');
    const bad = await asSeller(seller, `${live.root}/Products(${p}L)/$links/Catalogs`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"url":"x"}' });
    assertStatus(bad, 400, 'malformed link body');
  });

  test('Catalogs parent and child links, and a catalog cannot become its own ancestor (400)', async () => {
    const [c1, c2, c3] = [await catalog('Root'), await catalog('Child'), await catalog('Grandchild')];
    // c1 > c2 (XML body on ParentCatalogs), c2 > c3 (JSON body on ChildCatalogs).
    assertStatus(await postLinkXml(`/Catalogs(${c2}L)/$links/ParentCatalogs`, uriOf('Catalogs', c1)), 204);
    assertStatus(await postLinkJson(`/Catalogs(${c2}L)/$links/ChildCatalogs`, uriOf('Catalogs', c3)), 204);
    assert.deepEqual(await linksJson(`/Catalogs(${c1}L)/$links/ChildCatalogs`), [uriOf('Catalogs', c2)]);
    assert.deepEqual(await linksXml(`/Catalogs(${c3}L)/$links/ParentCatalogs`), [uriOf('Catalogs', c2)]);
    assert.deepEqual(await linksXml(`/Catalogs(${c2}L)/$links/ParentCatalogs`), [uriOf('Catalogs', c1)]);

    const cycles: [string, string][] = [
      [`/Catalogs(${c1}L)/$links/ParentCatalogs`, c1], // itself
      [`/Catalogs(${c1}L)/$links/ChildCatalogs`, c1],
      [`/Catalogs(${c1}L)/$links/ParentCatalogs`, c3], // its grandchild as parent
      [`/Catalogs(${c3}L)/$links/ChildCatalogs`, c1], // the root below its grandchild
      [`/Catalogs(${c2}L)/$links/ChildCatalogs`, c1], // its parent as child
    ];
    for (const [path, target] of cycles) {
      for (const post of [postLinkJson, postLinkXml]) {
        const res = await post(path, uriOf('Catalogs', target));
        assertStatus(res, 400, `${path} <- ${target}`);
        assert.match(res.body, /ancestor/);
      }
    }
    // Nothing changed.
    assert.deepEqual(await linksJson(`/Catalogs(${c1}L)/$links/ParentCatalogs`), []);
    assert.deepEqual(await linksJson(`/Catalogs(${c1}L)/$links/ChildCatalogs`), [uriOf('Catalogs', c2)]);
    assert.deepEqual(await linksJson(`/Catalogs(${c3}L)/$links/ChildCatalogs`), []);

    // A root catalog may still be a child; a second parent is fine (no cycle).
    const other = await catalog('Other root');
    assertStatus(await postLinkJson(`/Catalogs(${c3}L)/$links/ParentCatalogs`, uriOf('Catalogs', other)), 204);
    assert.deepEqual(await linksJson(`/Catalogs(${c3}L)/$links/ParentCatalogs`), [uriOf('Catalogs', c2), uriOf('Catalogs', other)]);

    // Removing a link, from either side.
    assertStatus(await del(`/Catalogs(${c1}L)/$links/ChildCatalogs(${c2}L)`), 204);
    assert.deepEqual(await linksXml(`/Catalogs(${c2}L)/$links/ParentCatalogs`), []);
    assertStatus(await del(`/Catalogs(${c3}L)/$links/ParentCatalogs(${c2}L)`), 204);
    assert.deepEqual(await linksJson(`/Catalogs(${c2}L)/$links/ChildCatalogs`), []);
    // Now c1 may go below c3.
    assertStatus(await postLinkJson(`/Catalogs(${c1}L)/$links/ParentCatalogs`, uriOf('Catalogs', c3)), 204);
  });

  test('deleting a catalog unlinks its products and child catalogs and deletes none of them', async () => {
    const [parent, c, child] = [await catalog(), await catalog(), await catalog()];
    const p = await product();
    assertStatus(await postLinkJson(`/Catalogs(${c}L)/$links/ParentCatalogs`, uriOf('Catalogs', parent)), 204);
    assertStatus(await postLinkJson(`/Catalogs(${c}L)/$links/ChildCatalogs`, uriOf('Catalogs', child)), 204);
    assertStatus(await postLinkJson(`/Products(${p}L)/$links/Catalogs`, uriOf('Catalogs', c)), 204);
    assertStatus(await del(`/Catalogs(${c}L)`), 204);
    await read('json', 'Products', p);
    await read('json', 'Catalogs', parent);
    await read('json', 'Catalogs', child);
    assert.deepEqual(await linksJson(`/Products(${p}L)/$links/Catalogs`), []);
    assert.deepEqual(await linksJson(`/Catalogs(${parent}L)/$links/ChildCatalogs`), []);
    assert.deepEqual(await linksJson(`/Catalogs(${child}L)/$links/ParentCatalogs`), []);
  });

  test('links the platform sets are read-only, and a required link cannot be removed (405)', async () => {
    const p = await product();
    const image = await make('ProductImages', { ProductId: p, ImageUrl: 'http://images.example.com/l.jpg', Type: '1' });
    assert.equal((await linksJson(`/Products(${p}L)/$links/ProductImages`)).length, 1);
    assertAllow(await postLinkJson(`/Products(${p}L)/$links/SalesOrderItems`, uriOf('SalesOrderItems', '1')), 'GET, HEAD', 'POST $links/SalesOrderItems');
    assertAllow(await del(`/Products(${p}L)/$links/ProductImages(${image}L)`), 'GET, HEAD', 'DELETE $links/ProductImages(key)');
  });
});

// ---------------------------------------------------------------------------------------------
// Cascading delete

describe('deleting a product', () => {
  test('takes its images, specifics, variations (with their specifics and images), attributes, offers, car parts, relations and catalog links; the catalog stays', async () => {
    const p = await product('Doomed');
    const kept = await product('Kept');
    const keptParent = await product('Kept parent');
    const c = await catalog();
    const v = await variation(p, 'D-1');
    const children: [string, string][] = [
      ['ProductImages', await make('ProductImages', { ProductId: p, ImageUrl: 'http://images.example.com/d.jpg', Type: '1' })],
      ['ProductSpecifics', await make('ProductSpecifics', { ProductId: p, Name: 'Marke', Value: 'Acme' })],
      ['ProductVariations', v],
      ['ProductVariationSpecifics', await make('ProductVariationSpecifics', { ProductVariationId: v, Name: 'Farbe', Value: 'Rot' })],
      ['ProductVariationImages', await make('ProductVariationImages', { ProductVariationId: v, ImageUrl: 'http://images.example.com/dv.jpg' })],
      ['OptionalProductAttributes', await make('OptionalProductAttributes', { ProductId: p, Name: 'Material', Value: 'Holz' })],
      ['DiscountOffers', await make('DiscountOffers', { ProductId: p, Price: '5', Type: '1' })],
      ['DiscountOffers', await make('DiscountOffers', { ProductId: p, ProductVariationId: v, Price: '4', Type: '1' })],
      ['CarParts', await make('CarParts', { ProductId: p, KType: '1234' })],
      ['ProductRelations', await make('ProductRelations', { ParentProductId: p, ChildProductId: kept })],
      ['ProductRelations', await make('ProductRelations', { ParentProductId: keptParent, ChildProductId: p })],
    ];
    const keptImage = await make('ProductImages', { ProductId: kept, ImageUrl: 'http://images.example.com/k.jpg', Type: '1' });
    const link = await asSeller(seller, `${live.root}/Products(${p}L)/$links/Catalogs`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ uri: `${live.root}/Catalogs(${c}L)` }),
    });
    assertStatus(link, 204);
    // A sale of the product: the platform's record keeps the item, without the pointer.
    const { itemId } = await seedOrder();
    await live.service.app.store.write(seller.accountId, async (tx) => {
      await tx.run('UPDATE "sales_order_items" SET "product_id" = ?, "product_variation_id" = ? WHERE account_id = ? AND id = ?', [BigInt(p), BigInt(v), seller.accountId, BigInt(itemId)]);
    });

    const res = await asSeller(seller, `${live.root}/Products(${p}L)`, { method: 'DELETE', headers: { 'Content-Type': 'application/json' } });
    assertStatus(res, 204, 'DELETE product');
    assertStatus(await get('json', `/Products(${p}L)`), 404);
    for (const [set, id] of children) assertStatus(await get('json', `/${set}(${id}L)`), 404, `${set}(${id}) went with the product`);
    await read('json', 'Catalogs', c);
    await read('json', 'Products', kept);
    await read('json', 'ProductImages', keptImage);
    assert.deepEqual(feedValues('json', await get('json', `/Catalogs(${c}L)/Products`), 'Products'), []);
    const item = await read('json', 'SalesOrderItems', itemId);
    assert.equal(item.ProductId, null);
    assert.equal(item.ProductVariationId, null);
  });
});

// ---------------------------------------------------------------------------------------------
// CarParts are idempotent

describe('CarParts', () => {
  for (const format of FORMATS) {
    test(`a second identical POST creates nothing and answers the same Id (${format})`, async () => {
      const p = await product();
      const body: Values = { ProductId: p, KType: '4711', HSN: '0005', TSN: '123', Comment: null };
      const first = await send(format, 'POST', '/CarParts', 'CarParts', body);
      assert.ok(first.status === 201, first.body);
      const id = entityValues(format, first, 'CarParts').Id;
      const second = await send(format, 'POST', '/CarParts', 'CarParts', body);
      assert.ok(second.status === 200 || second.status === 201, `${second.status} ${second.body}`);
      assert.equal(entityValues(format, second, 'CarParts').Id, id);
      assert.equal(second.headers.location, `${live.root}/CarParts(${id}L)`);
      assert.deepEqual(feedValues(format, await get(format, `/Products(${p}L)/CarParts`), 'CarParts').map((v) => v.Id), [id]);
      // A different one is a new entity; the same one for another product too.
      const other = await send(format, 'POST', '/CarParts', 'CarParts', { ...body, TSN: '124' });
      assert.notEqual(created(format, other, 'CarParts').Id, id);
      const q = await product();
      const elsewhere = await send(format, 'POST', '/CarParts', 'CarParts', { ...body, ProductId: q });
      assert.notEqual(created(format, elsewhere, 'CarParts').Id, id);
      assert.equal(feedValues(format, await get(format, `/Products(${p}L)/CarParts`), 'CarParts').length, 2);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Read-only properties

describe('read-only properties', () => {
  for (const format of FORMATS) {
    test(`CreationDate, EbayCategoryId1 and the key: another value is ignored, the stored value stays (${format})`, async () => {
      const id = await make('Products', { Title: 'Read-only', Price: '1', StockAmount: '1' });
      const stored = await read(format, 'Products', id);
      const otherDate = '2001-02-03T04:05:06';

      for (const method of ['PUT', 'MERGE']) {
        const base: Values = method === 'PUT' ? { Title: 'Read-only', Price: '1' } : {};
        const stock = method === 'PUT' ? '2' : '3';
        const res = await send(format, method, `/Products(${id}L)`, 'Products', { ...base, CreationDate: otherDate, EbayCategoryId1: '9355', Id: '1', StockAmount: stock });
        assertStatus(res, 204, `${method} with read-only values`);
        const after = await read(format, 'Products', id);
        assert.equal(after.CreationDate, stored.CreationDate);
        assert.equal(after.EbayCategoryId1, null);
        assert.equal(after.Id, stored.Id, 'the key is the one of the URI');
        assert.equal(after.StockAmount, stock, 'the writable property is applied');
      }

      const post = await send(format, 'POST', '/Products', 'Products', { Title: 'x', Price: '1', StockAmount: '1', EbayCategoryId1: '9355', Id: String(id) });
      const values = created(format, post, 'Products');
      assert.equal(values.EbayCategoryId1, null, 'POST ignores EbayCategoryId1');
      assert.notEqual(values.Id, String(id), 'POST ignores the key: the service assigns a new one');
    });
  }
});

describe('an entity sent back as it was read (datajs read-modify-write)', () => {
  for (const format of FORMATS) {
    test(`PUT and MERGE of the whole entity, read-only properties included, in ${format}`, async () => {
      const OData = loadDatajs();
      const handler = format === 'json' ? OData.jsonHandler : OData.atomHandler;
      const variationId = await variation(await product(), 'RMW-1');
      for (const [set, id] of [['ProductVariations', variationId], ['Products', (await read('json', 'ProductVariations', variationId)).ProductId!]] as const) {
        const uri = `${live.root}/${set}(${id}L)`;
        const { data } = await odataRequest({ requestUri: uri, headers: { ...seller.auth } }, handler);
        const entity = data as Record<string, unknown>;
        const before = await read(format, set, id);
        entity.StockAmount = 7;
        const put = await odataRequest({ requestUri: uri, method: 'PUT', headers: { ...seller.auth }, data: entity }, handler);
        assert.equal(put.response.statusCode, 204, `PUT ${set}`);
        // The same object again: its ModificationDate is now older than the stored one.
        entity.StockAmount = 8;
        const merge = await odataRequest({ requestUri: uri, method: 'MERGE', headers: { ...seller.auth }, data: entity }, handler);
        assert.equal(merge.response.statusCode, 204, `MERGE ${set}`);
        const after = await read(format, set, id);
        assert.equal(after.StockAmount, '8');
        assertKept(after, Object.fromEntries(Object.entries(before).filter(([n]) => n !== 'StockAmount' && n !== 'ModificationDate')), `${set} otherwise unchanged`);
      }
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Loosely typed JSON, as real clients send it (docs/protocol.md, "Formats")

describe('loosely typed JSON values', () => {
  const raw = (method: string, path: string, body: string) =>
    asSeller(seller, live.root + path, { method, headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body });

  test('Decimals as "99.9" and "80.000000", ForeignId as a number, Int32 as a string, a trailing "\\n\\r\\r\\n"', async () => {
    const res = await raw('POST', '/Products', '{"Title":"Loose","Price":"99.9","StockAmount":"3","ForeignId":1234,"UnitQuantity":"80.000000","BestOfferMinimumPrice":null}\n\r\r\n');
    const values = created('json', res, 'Products');
    assert.deepEqual(
      [values.Price, values.StockAmount, values.ForeignId, values.UnitQuantity, values.BestOfferMinimumPrice],
      ['99.9', '3', '1234', '80', null],
    );
    const d = obj(jsonOf(res).d);
    assert.equal(d.ForeignId, '1234', 'a number sent for a String is stored as its text');
    assert.equal(Number(d.Price), 99.9);
    assert.equal(Number(d.UnitQuantity), 80);

    const merge = await raw('MERGE', `/Products(${values.Id}L)`, '{"Price":"80.000000","StockAmount":"12"}\n\r\r\n');
    assertStatus(merge, 204);
    const after = await read('json', 'Products', values.Id);
    assert.equal(after.Price, '80');
    assert.equal(after.StockAmount, '12');
  });

  test('"ProductId":"2" (the Int64 the service returned), as a string, with \\/ and \\u escapes', async () => {
    const p = await product();
    const res = await raw('POST', '/ProductImages', `{"ProductId":"${p}","ImageUrl":"http:\\/\\/images.example.com\\/gr\\u00fcn.jpg","Type":"1"}\n\r\r\n`);
    const values = created('json', res, 'ProductImages');
    assert.equal(values.ProductId, p);
    assert.equal(values.ImageUrl, 'http://images.example.com/grün.jpg');
    assert.equal(values.Type, '1');
    const spec = await raw('POST', '/ProductSpecifics', `{"ProductId":${p},"Name":"Gr\\u00f6\\u00dfe","Value":"XL"}`);
    assert.equal(created('json', spec, 'ProductSpecifics').Name, 'Größe');
  });

  test('"ShippingStatus":"1" on an order item, PaidAmount "59.90" on an order', async () => {
    const { orderId, itemId } = await seedOrder();
    assertStatus(await raw('MERGE', `/SalesOrderItems(${itemId}L)`, '{"ShippingStatus":"1"}\n\r\r\n'), 204);
    assert.equal((await read('json', 'SalesOrderItems', itemId)).ShippingStatus, '1');
    assertStatus(await raw('MERGE', `/SalesOrderItems(${itemId}L)`, '{"CarrierUsed":"dhl","TrackingNumbers":"a;b"}'), 204);
    assertHas(await read('json', 'SalesOrderItems', itemId), 'SalesOrderItems', { CarrierUsed: 'dhl', TrackingNumbers: 'a;b', ShippingStatus: '1' }, 'item');
    assertStatus(await raw('MERGE', `/SalesOrders(${orderId}L)`, '{"PaidAmount":"59.90","ForeignOrderId":"100000123"}\n\r\r\n'), 204);
    assertHas(await read('json', 'SalesOrders', orderId), 'SalesOrders', { PaidAmount: '59.9', ForeignOrderId: '100000123' }, 'order');
  });

  test('what is ambiguous is a 400 naming the property', async () => {
    const cases: [string, string, RegExp][] = [
      ['/Products', '{"Title":"x","Price":"12,50","StockAmount":1}', /Price/],
      ['/Products', '{"Title":"x","Price":"1","StockAmount":"1.5"}', /StockAmount/],
      ['/Products', '{"Title":"x","Price":"1","StockAmount":1,"DisableAutomatch":"yes"}', /DisableAutomatch/],
      ['/Products', '{"Title":"x","Price":"1.0000001","StockAmount":1}', /Price/],
      ['/Products', '{"Title":"x","Price":"1","StockAmount":1,"ForeignId":{"a":1}}', /ForeignId/],
      ['/Products', '{"Title":"x","Price":"1","StockAmount":1,"Colour":"red"}', /Colour/],
    ];
    for (const [path, body, property] of cases) {
      const res = await raw('POST', path, body);
      assertStatus(res, 400, body);
      assert.match(res.body, property, body);
      assert.match(res.body, /^\{"error":/);
    }
  });
});
