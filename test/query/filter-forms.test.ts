/**
 * Every $filter form the existing connector sends (its reads of orders and variations), against a
 * live server with orders, buyers, addresses and items seeded through the store: the exact Ids
 * each form answers, with spaces sent as %20 and as '+', in JSON (as the connector asks) and in
 * Atom; and the order import query's expansions, entity by entity.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { childElements, parseXml, type XmlElement } from '../clients/datajs';
import { request, type HttpResponse } from '../support/http-client';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { ATOM, M, RELATED } from '../support/spec';
import { atomIds, filterUrl, jsonEntities, jsonIds, KeepAliveClient, seedRow, sellerHeaders, sortIds, type SpaceEncoding, type Values } from './fixture';

const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0) => Date.UTC(y, mo - 1, d, h, mi, s, ms);

let live: LiveService;
let seller: Seller;
let other: Seller;
let client: KeepAliveClient;

/** Seeded rows of the seller, by name, with their values and Ids. */
const seeded = new Map<string, { set: string; id: bigint; values: Values }>();
const id = (name: string): string => {
  const row = seeded.get(name);
  if (!row) throw new Error(`nothing seeded as ${name}`);
  return String(row.id);
};

async function seed(owner: Seller, name: string, set: string, values: Values): Promise<bigint> {
  const newId = await seedRow(live, owner.accountId, set, values);
  if (owner === seller) seeded.set(name, { set, id: newId, values });
  return newId;
}

/**
 * The seller's data: orders in every import state (ForeignOrderId null, '', ' ', a number, the
 * failure marker), with and without an address, with items with and without a product and a
 * variation; and another seller whose rows match every filter too (none may be answered).
 */
before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'forms');
  other = await newSeller(live, 'forms-other');
  client = new KeepAliveClient(4);

  const b0 = await seed(seller, 'b0', 'Buyers', { BuyerName: 'Erika Mustermann', Email: 'erika@example.com' });
  const b1 = await seed(seller, 'b1', 'Buyers', { BuyerName: 'John Doe', Email: null });
  const a0 = await seed(seller, 'a0', 'Addresses', { BuyerId: b0, Name: 'Erika', Surname: 'Mustermann', Street: 'Heidestraße 17', Town: 'Köln', PostalCode: '51147', Country: 'DE' });
  const a1 = await seed(seller, 'a1', 'Addresses', { BuyerId: b1, Name: 'John', Surname: 'Doe', Street: '1 Main St', Town: 'Springfield', Country: 'US' });
  const p0 = await seed(seller, 'p0', 'Products', { Title: 'Shirt', Price: '19.99', StockAmount: 10 });
  const p1 = await seed(seller, 'p1', 'Products', { Title: 'Mug', Price: '7.5', StockAmount: 3 });
  const v0 = await seed(seller, 'v0', 'ProductVariations', { ProductId: p0, Price: '19.99', StockAmount: 4, Sku: 'SHIRT-M' });
  const v1 = await seed(seller, 'v1', 'ProductVariations', { ProductId: p0, Price: '21.99', StockAmount: 6, Sku: 'SHIRT-L' });
  await seed(seller, 'v2', 'ProductVariations', { ProductId: p1, Price: '7.5', StockAmount: 3, Sku: 'MUG-1' });

  const order = (name: string, values: Values) => seed(seller, name, 'SalesOrders', { PlatformOrderId: `PO-${name}`, ...values });
  const o0 = await order('o0', { BuyerId: b0, AddressId: a0, ForeignOrderId: null, EbayModificationDate: utc(2013, 9, 16, 7, 21, 12), TotalPrice: '27.49' });
  const o1 = await order('o1', { BuyerId: b1, AddressId: null, ForeignOrderId: '', EbayModificationDate: utc(2013, 9, 16, 7, 21, 13), TotalPrice: '5' });
  const o2 = await order('o2', { BuyerId: b1, AddressId: a1, ForeignOrderId: '100000123', EbayModificationDate: null, TotalPrice: '21.99' });
  await order('o3', { BuyerId: b0, AddressId: a0, ForeignOrderId: '_ORDER_IMPORT_FAILED_', EbayModificationDate: utc(2014, 1, 1) });
  await order('o4', { BuyerId: b0, AddressId: a0, ForeignOrderId: null, EbayModificationDate: utc(2013, 9, 16, 7, 21, 12, 1) });
  await order('o5', { BuyerId: b1, AddressId: null, ForeignOrderId: ' ', EbayModificationDate: utc(2013, 9, 16, 7, 21, 11) });
  await order('o6', { BuyerId: b1, AddressId: a1, ForeignOrderId: '1000001234', EbayModificationDate: utc(2012, 12, 31) });
  const o7 = await order('o7', { BuyerId: b0, AddressId: null, ForeignOrderId: null, EbayModificationDate: null });

  const item = (name: string, values: Values) => seed(seller, name, 'SalesOrderItems', { PlatformItemId: `PI-${name}`, TransactionId: `T-${name}`, ...values });
  await item('i0', { SalesOrderId: o0, ProductId: p0, ProductVariationId: v0, Name: 'Shirt M', Amount: 1, Price: '19.99' });
  await item('i1', { SalesOrderId: o0, ProductId: p1, ProductVariationId: null, Name: 'Mug', Amount: 1, Price: '7.5' });
  await item('i2', { SalesOrderId: o1, ProductId: null, ProductVariationId: null, Name: 'Gift card', Amount: 1, Price: '5' });
  await item('i3', { SalesOrderId: o2, ProductId: p0, ProductVariationId: v1, Name: 'Shirt L', Amount: 1, Price: '21.99' });
  await item('i4', { SalesOrderId: o7, ProductId: p0, ProductVariationId: v1, Name: 'Shirt L', Amount: 2, Price: '21.99' });

  // The other seller: rows that every form would select if scoping failed.
  const ob = await seed(other, '', 'Buyers', { BuyerName: 'Other' });
  const op = await seed(other, '', 'Products', { Title: 'Other', Price: '1', StockAmount: 1 });
  seeded.set('otherProduct', { set: 'Products', id: op, values: {} });
  await seed(other, '', 'ProductVariations', { ProductId: op, Price: '1', StockAmount: 1, Sku: 'SHIRT-M' });
  for (const [n, foreign] of [['x0', null], ['x1', ''], ['x2', '100000123']] as const) {
    const oo = await seed(other, '', 'SalesOrders', { BuyerId: ob, PlatformOrderId: `OTHER-${n}`, ForeignOrderId: foreign, EbayModificationDate: utc(2020, 1, 1) });
    await seed(other, '', 'SalesOrderItems', { SalesOrderId: oo, ProductId: op, PlatformItemId: `OTHER-${n}` });
  }
});

after(async () => {
  client?.close();
  await live?.close();
});

const IMPORT_EXPAND = 'Address,Buyer,SalesOrderItems/Product,SalesOrderItems/ProductVariation';
const IMPORT_FILTER = "(ForeignOrderId eq null) or (ForeignOrderId eq '')";

/** GET as the connector does: JSON, version headers, and a Content-Type even on a GET. */
function getJson(url: string): Promise<HttpResponse> {
  return client.get(url, { ...sellerHeaders(seller, 'json'), 'Content-Type': 'application/json' });
}

function getAtom(url: string): Promise<HttpResponse> {
  return client.get(url, sellerHeaders(seller, 'atom'));
}

/** A request without 2.0 features is answered as 1.0: the connector then reads `d` as the array. */
function assertVersion1(res: HttpResponse): void {
  assert.match(String(res.headers.dataserviceversion), /^1\.0/, `DataServiceVersion ${String(res.headers.dataserviceversion)}`);
}

interface Form {
  readonly name: string;
  readonly set: string;
  readonly filter: () => string;
  readonly extra?: string;
  readonly expected: () => string[];
}

const FORMS: Form[] = [
  {
    name: 'the order import query: ForeignOrderId null or empty, with its four expansions',
    set: 'SalesOrders',
    filter: () => IMPORT_FILTER,
    extra: `$expand=${IMPORT_EXPAND}`,
    expected: () => [id('o0'), id('o1'), id('o4'), id('o7')],
  },
  {
    name: 'orders by an id list of plain integers (Int64 key compared with Int32 literals)',
    set: 'SalesOrders',
    filter: () => `(Id eq ${id('o0')}) or (Id eq ${id('o2')})`,
    expected: () => [id('o0'), id('o2')],
  },
  {
    name: 'an order by ForeignOrderId',
    set: 'SalesOrders',
    filter: () => "ForeignOrderId eq '100000123'",
    expected: () => [id('o2')],
  },
  {
    name: 'changed orders: EbayModificationDate after a DateTime literal and not null',
    set: 'SalesOrders',
    filter: () => "(EbayModificationDate gt DateTime'2013-09-16T07:21:12' and EbayModificationDate ne null)",
    expected: () => [id('o1'), id('o3'), id('o4')],
  },
  {
    name: 'the variations of a product',
    set: 'ProductVariations',
    filter: () => `ProductId eq ${id('p0')}`,
    expected: () => [id('v0'), id('v1')],
  },
];

describe("every $filter form of the connector answers exactly the seller's matching rows", () => {
  for (const form of FORMS) {
    for (const spaces of ['%20', '+'] as SpaceEncoding[]) {
      test(`${form.name} (spaces as ${spaces}), JSON and Atom`, async () => {
        const url = filterUrl(live.root, form.set, form.filter(), spaces, form.extra ?? '');
        assert.ok(!url.includes(' '), url);
        assert.ok(spaces === '+' ? url.includes('+') && !url.includes('%20') : url.includes('%20') && !url.includes('+'), url);
        const json = await getJson(url);
        assertVersion1(json);
        assert.deepEqual(sortIds(jsonIds(json)), sortIds(form.expected()), `JSON ${url}`);
        const atom = await getAtom(url);
        assert.deepEqual(sortIds(atomIds(atom)), sortIds(form.expected()), `Atom ${url}`);
      });
    }
  }

  test("a variation filter naming another seller's product answers an empty collection", async () => {
    const res = await getJson(filterUrl(live.root, 'ProductVariations', `ProductId eq ${id('otherProduct')}`));
    assert.deepEqual(jsonIds(res), []);
  });

  test('the id list also works with Int64 literals and without parentheses', async () => {
    for (const filter of [`Id eq ${id('o0')}L or Id eq ${id('o2')}L`, `Id eq ${id('o2')} or Id eq ${id('o0')}`]) {
      assert.deepEqual(sortIds(jsonIds(await getJson(filterUrl(live.root, 'SalesOrders', filter)))), sortIds([id('o0'), id('o2')]), filter);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The import query's expansions

const obj = (v: unknown) => v as Record<string, unknown>;

function assertUri(entity: Record<string, unknown>, set: string, entityId: string): void {
  const metadata = obj(entity.__metadata);
  assert.equal(metadata.uri, `${live.root}/${set}(${entityId}L)`, `absolute __metadata.uri of ${set} ${entityId}`);
}

function assertDeferred(entity: Record<string, unknown>, nav: string, base: string): void {
  assert.deepEqual(entity[nav], { __deferred: { uri: `${base}/${nav}` } }, nav);
}

/** What the connector reads of one imported order, written out from the seeded rows. */
function expectedOrder(name: string): unknown {
  const order = seeded.get(name)!;
  const items = [...seeded.entries()]
    .filter(([, r]) => r.set === 'SalesOrderItems' && r.values.SalesOrderId === order.id)
    .map(([, r]) => r);
  const ref = (key: Values[string] | undefined, fields: string[]) => {
    const target = [...seeded.values()].find((r) => r.id === key);
    if (!target) return null;
    return Object.fromEntries([['Id', String(target.id)], ...fields.map((f) => [f, target.values[f] ?? null])]);
  };
  return {
    Id: String(order.id),
    ForeignOrderId: order.values.ForeignOrderId ?? null,
    Buyer: ref(order.values.BuyerId, ['BuyerName', 'Email']),
    Address: order.values.AddressId === null ? null : ref(order.values.AddressId, ['Town', 'Street']),
    SalesOrderItems: items.map((it) => ({
      Id: String(it.id),
      Name: it.values.Name,
      Product: it.values.ProductId === null ? null : ref(it.values.ProductId, ['Title', 'Price']),
      ProductVariation: it.values.ProductVariationId === null ? null : ref(it.values.ProductVariationId, ['Sku', 'Price']),
    })),
  };
}

/** The same view of an order in the JSON answer, checking URIs and deferred links on the way. */
function readOrder(o: Record<string, unknown>): unknown {
  const orderId = o.Id as string;
  assertUri(o, 'SalesOrders', orderId);
  assertDeferred(o, 'ShippingAddress', `${live.root}/SalesOrders(${orderId}L)`);
  const pick = (e: unknown, set: string, fields: string[]) => {
    if (e === null) return null;
    const entity = obj(e);
    assert.ok(!('__deferred' in entity), `${set} was expanded`);
    assertUri(entity, set, entity.Id as string);
    return Object.fromEntries([['Id', entity.Id], ...fields.map((f) => [f, entity[f]])]);
  };
  const buyer = obj(o.Buyer);
  assertDeferred(buyer, 'Addresses', `${live.root}/Buyers(${String(buyer.Id)}L)`);
  assert.ok(Array.isArray(o.SalesOrderItems), 'an expanded collection is a plain array in a 1.0 answer');
  return {
    Id: orderId,
    ForeignOrderId: o.ForeignOrderId,
    Buyer: pick(o.Buyer, 'Buyers', ['BuyerName', 'Email']),
    Address: pick(o.Address, 'Addresses', ['Town', 'Street']),
    SalesOrderItems: (o.SalesOrderItems as Record<string, unknown>[]).map((it) => {
      assertUri(it, 'SalesOrderItems', it.Id as string);
      assertDeferred(it, 'SalesOrder', `${live.root}/SalesOrderItems(${String(it.Id)}L)`);
      if (it.Product !== null) assertDeferred(obj(it.Product), 'ProductImages', `${live.root}/Products(${String(obj(it.Product).Id)}L)`);
      return {
        Id: it.Id,
        Name: it.Name,
        Product: pick(it.Product, 'Products', ['Title', 'Price']),
        ProductVariation: pick(it.ProductVariation, 'ProductVariations', ['Sku', 'Price']),
      };
    }),
  };
}

const byId = <T extends { Id: unknown }>(list: T[]) => [...list].sort((a, b) => (BigInt(String(a.Id)) < BigInt(String(b.Id)) ? -1 : 1));

describe('the order import query returns exactly the orders not yet imported, with their expansions', () => {
  test('JSON: every order, buyer, address, item, product and variation as seeded; a missing address or product is null', async () => {
    const res = await getJson(filterUrl(live.root, 'SalesOrders', IMPORT_FILTER, '+', `$expand=${IMPORT_EXPAND}`));
    assertVersion1(res);
    const body = obj(JSON.parse(res.body));
    assert.ok(Array.isArray(body.d), 'a 1.0 answer: d is the array');
    const orders = byId(jsonEntities(res).map((o) => readOrder(o) as { Id: string; SalesOrderItems: { Id: string }[] }));
    const want = byId(['o0', 'o1', 'o4', 'o7'].map((n) => expectedOrder(n) as { Id: string; SalesOrderItems: { Id: string }[] }));
    for (const o of [...orders, ...want]) o.SalesOrderItems = byId(o.SalesOrderItems);
    assert.deepEqual(orders, want);
    // The data is not trivial: an order without an address, an item without a product, an order without items.
    const flat = JSON.stringify(want);
    assert.ok(flat.includes('"Address":null') && flat.includes('"Product":null') && flat.includes('"SalesOrderItems":[]'), flat);
  });

  test('Atom: the same orders, each with m:inline Buyer, Address (empty when missing) and SalesOrderItems with inline Product and ProductVariation', async () => {
    const res = await getAtom(filterUrl(live.root, 'SalesOrders', IMPORT_FILTER, '%20', `$expand=${IMPORT_EXPAND}`));
    assert.deepEqual(sortIds(atomIds(res)), sortIds([id('o0'), id('o1'), id('o4'), id('o7')]));
    const feed = parseXml(res.body).documentElement;
    const inlineOf = (entry: XmlElement, nav: string): XmlElement => {
      const link = childElements(entry, ATOM, 'link').find((l) => l.getAttribute('rel') === RELATED + nav);
      assert.ok(link, `link ${nav}`);
      const inline = childElements(link, M, 'inline')[0];
      assert.ok(inline, `m:inline in ${nav}`);
      return inline;
    };
    const entryId = (entry: XmlElement) => /\((\d+)L\)$/.exec(childElements(entry, ATOM, 'id')[0]?.textContent ?? '')?.[1];
    for (const entry of childElements(feed, ATOM, 'entry')) {
      const want = expectedOrder([...seeded.entries()].find(([, r]) => String(r.id) === entryId(entry))![0]) as {
        Buyer: { Id: string };
        Address: { Id: string } | null;
        SalesOrderItems: { Id: string; Product: { Id: string } | null; ProductVariation: { Id: string } | null }[];
      };
      assert.deepEqual(childElements(inlineOf(entry, 'Buyer'), ATOM, 'entry').map(entryId), [want.Buyer.Id]);
      assert.deepEqual(childElements(inlineOf(entry, 'Address'), ATOM, 'entry').map(entryId), want.Address ? [want.Address.Id] : []);
      const itemFeed = childElements(inlineOf(entry, 'SalesOrderItems'), ATOM, 'feed')[0];
      assert.ok(itemFeed, 'SalesOrderItems inline as a feed');
      const items = childElements(itemFeed, ATOM, 'entry');
      assert.deepEqual(sortIds(items.map((i) => entryId(i)!)), sortIds(want.SalesOrderItems.map((i) => i.Id)));
      for (const item of items) {
        const w = want.SalesOrderItems.find((i) => i.Id === entryId(item))!;
        assert.deepEqual(childElements(inlineOf(item, 'Product'), ATOM, 'entry').map(entryId), w.Product ? [w.Product.Id] : []);
        assert.deepEqual(childElements(inlineOf(item, 'ProductVariation'), ATOM, 'entry').map(entryId), w.ProductVariation ? [w.ProductVariation.Id] : []);
      }
    }
  });

  test('after the connector marks an order imported (MERGE ForeignOrderId), the query no longer returns it', async () => {
    const url = `${live.root}/SalesOrders(${id('o1')}L)`;
    const merge = await request(url, {
      method: 'MERGE',
      headers: { ...sellerHeaders(seller, 'json'), 'Content-Type': 'application/json' },
      body: JSON.stringify({ ForeignOrderId: '100000124' }),
    });
    assert.equal(merge.status, 204, merge.body);
    const res = await getJson(filterUrl(live.root, 'SalesOrders', IMPORT_FILTER, '+', `$expand=${IMPORT_EXPAND}`));
    assert.deepEqual(sortIds(jsonIds(res)), sortIds([id('o0'), id('o4'), id('o7')]));
  });
});
