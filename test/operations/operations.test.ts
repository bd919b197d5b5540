/**
 * The seven service operations against the live service (README "Service operations"): every
 * operation in both formats for success, every invalid parameter, the wrong methods and another
 * account's ids (answered exactly like missing ones); literals with and without their suffixes;
 * unknown parameters ignored; system query options refused; and each operation's effect, read
 * back through the entity sets. DeleteAccountData's effects are in delete-account-data.test.ts,
 * the history's lines in order-history.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { deliver, orderDocument, startWithPlatform } from '../platform/platform-client';
import { callOperation, operationValue, type Format } from './operation-client';
import { getCollection, getEntity, createEntity } from '../support/live-client';
import { errorMessage } from '../support/odata-error';

/** An id no entity ever had. */
const MISSING = '870000000123';
const FORMATS: readonly Format[] = ['json', 'xml'];

let live: LiveService;
let a: Seller;
let b: Seller;

interface Ids {
  product: string;
  automatchOff: string;
  variation: string;
  otherVariation: string;
  catalog: string;
  listedProduct: string;
  order: string;
}
let aIds: Ids;
let bIds: Ids;

const create = (s: Seller, set: string, body: Record<string, unknown>) => createEntity(live, s, set, body);

async function fixtures(s: Seller, tag: string): Promise<Ids> {
  const product = await create(s, 'Products', { Title: `${tag} shoe`, Price: '59.9', StockAmount: 5, ForeignId: `${tag}-SHOE` });
  const automatchOff = await create(s, 'Products', { Title: `${tag} manual`, Price: '10', StockAmount: 1, DisableAutomatch: true });
  const variation = await create(s, 'ProductVariations', { ProductId: product, Price: '61', StockAmount: 2, Sku: `${tag}-SHOE-42` });
  const otherVariation = await create(s, 'ProductVariations', { ProductId: automatchOff, Price: '11', StockAmount: 1, Sku: `${tag}-MANUAL-1` });
  const catalog = await create(s, 'Catalogs', { Name: `${tag} shoes` });
  for (const id of [product, automatchOff]) {
    const res = await asSeller(s, `${live.root}/Products(${id}L)/$links/Catalogs`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ uri: `${live.root}/Catalogs(${catalog}L)` }) });
    assert.equal(res.status, 204, res.body);
  }
  const listedProduct = await create(s, 'Products', { Title: `${tag} listed`, Price: '1', StockAmount: 1, ForeignId: `${tag}-LISTED` });
  await deliver(live, s.userName, { kind: 'listing', PlatformItemId: `${tag}-L1`, Title: `${tag} listed`, Status: 1, Price: '1', Quantity: 1, Product: { ForeignId: `${tag}-LISTED` } });
  const order = (await deliver(live, s.userName, orderDocument(`${tag}-ORDER`))).id;
  return { product, automatchOff, variation, otherVariation, catalog, listedProduct, order };
}

before(async () => {
  live = await startWithPlatform();
  a = await newSeller(live, 'ops-a');
  b = await newSeller(live, 'ops-b');
  aIds = await fixtures(a, 'A');
  bIds = await fixtures(b, 'B');
});
after(() => live.close());

const call = (method: string, name: string, query: string, format: Format = 'json', as: Seller = a) => callOperation(live, as, method, name, query, format);

/** What must be identical between another account's id and an id that never existed. */
function shape(res: HttpResponse, id: string, format: Format) {
  return { status: res.status, contentType: res.headers['content-type'], message: errorMessage(res, format).replaceAll(id, '<id>') };
}

// ---------------------------------------------------------------------------------------------
// The table: for every operation, a valid call, its invalid parameters, and its entity parameters.

interface OperationCase {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  /** A valid query for account A, and the result it answers. */
  readonly valid: () => { query: string; result: boolean | string };
  /** Queries that are a 400, and the parameter each must name. */
  readonly invalid: () => readonly (readonly [string, string])[];
  /** Queries naming one entity by `id`, for each entity parameter. */
  readonly entities: () => readonly ((id: string) => string)[];
}

const CASES: readonly OperationCase[] = [
  {
    name: 'GetSalesOrderHistory',
    method: 'GET',
    valid: () => ({ query: `salesOrderId=${aIds.order}L`, result: '' }),
    invalid: () => [['', 'salesOrderId'], ['salesOrderId=', 'salesOrderId'], ['salesOrderId=abc', 'salesOrderId'], ['salesOrderId=12.5', 'salesOrderId'], ['salesOrderId=9223372036854775808L', 'salesOrderId'], ['salesOrderId=5LL', 'salesOrderId']],
    entities: () => [(id) => `salesOrderId=${id}L`],
  },
  {
    name: 'ProductIsListed',
    method: 'GET',
    valid: () => ({ query: `productId=${aIds.listedProduct}L`, result: true }),
    invalid: () => [['', 'productId'], ['productId=x1', 'productId'], ['productId=1M', 'productId'], ['productId=true', 'productId']],
    entities: () => [(id) => `productId=${id}L`],
  },
  {
    name: 'SetEbayCategory',
    method: 'POST',
    valid: () => ({ query: `productId=${aIds.automatchOff}L&categoryId1=11450L&categoryId2=63861&autoMatched=false`, result: true }),
    invalid: () => [
      [`categoryId1=1`, 'productId'],
      [`productId=${aIds.automatchOff}L`, 'categoryId1'],
      [`productId=${aIds.automatchOff}L&categoryId1=abc`, 'categoryId1'],
      [`productId=${aIds.automatchOff}L&categoryId1=1&categoryId2=1.5`, 'categoryId2'],
      [`productId=${aIds.automatchOff}L&categoryId1=1&autoMatched=yes`, 'autoMatched'],
    ],
    entities: () => [(id) => `productId=${id}L&categoryId1=1`],
  },
  {
    name: 'SetProductProfile',
    method: 'POST',
    valid: () => ({ query: `productId=${aIds.product}L&type=3&profileId=456L`, result: true }),
    invalid: () => [
      [`type=1`, 'productId'],
      [`productId=${aIds.product}L`, 'type'],
      [`productId=${aIds.product}L&type=0`, 'type'],
      [`productId=${aIds.product}L&type=4`, 'type'],
      [`productId=${aIds.product}L&type=1L`, 'type'],
      [`productId=${aIds.product}L&type=2147483648`, 'type'],
      [`productId=${aIds.product}L&type=1&profileId=x`, 'profileId'],
    ],
    entities: () => [(id) => `productId=${id}L&type=1&profileId=7L`],
  },
  {
    name: 'SetCatalogProfile',
    method: 'POST',
    valid: () => ({ query: `catalogId=${aIds.catalog}L&type=1&profileId=900L`, result: true }),
    invalid: () => [
      ['type=1', 'catalogId'],
      [`catalogId=${aIds.catalog}L`, 'type'],
      [`catalogId=${aIds.catalog}L&type=5`, 'type'],
      [`catalogId=${aIds.catalog}L&type=one`, 'type'],
      [`catalogId=${aIds.catalog}L&type=2&profileId=1.0`, 'profileId'],
    ],
    entities: () => [(id) => `catalogId=${id}L&type=2&profileId=7L`],
  },
  {
    name: 'ReviseInventoryStatus',
    method: 'POST',
    valid: () => ({ query: `productId=${aIds.product}L&stockAmount=7`, result: true }),
    invalid: () => [
      ['stockAmount=1', 'productId'],
      [`productId=${aIds.product}L`, 'stockAmount, price and discountOfferPrice'],
      [`productId=${aIds.product}L&stockAmount=1.5`, 'stockAmount'],
      [`productId=${aIds.product}L&stockAmount=5L`, 'stockAmount'],
      [`productId=${aIds.product}L&price=abc`, 'price'],
      [`productId=${aIds.product}L&price=1.1234567m`, 'price'],
      [`productId=${aIds.product}L&discountOfferPrice=1e5`, 'discountOfferPrice'],
      [`productId=${aIds.product}L&productVariationId=v&stockAmount=1`, 'productVariationId'],
      [`productId=${aIds.product}L&productVariationId=${aIds.otherVariation}L&stockAmount=1`, 'productVariationId'],
      [`productId=${aIds.product}L&stockAmount=-1`, 'StockAmount'],
      [`productId=${aIds.product}L&price=-0.01m`, 'Price'],
      [`productId=${aIds.product}L&discountOfferPrice=-1m`, 'Price'],
    ],
    entities: () => [(id) => `productId=${id}L&stockAmount=1`, (id) => `productId=${aIds.product}L&productVariationId=${id}L&price=1m`],
  },
  {
    name: 'DeleteAccountData',
    method: 'POST',
    // Success empties the account: delete-account-data.test.ts proves each type on its own accounts.
    valid: () => ({ query: '', result: true }),
    invalid: () => [['', 'type'], ['type=1', 'type'], ['type=3', 'type'], ['type=14', 'type'], ['type=16', 'type'], ['type=-2', 'type'], ['type=x', 'type'], ['type=2L', 'type']],
    entities: () => [],
  },
];

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'MERGE', 'PATCH', 'DELETE'];

for (const c of CASES) {
  describe(c.name, () => {
    if (c.name !== 'DeleteAccountData') {
      test('succeeds in both formats with the result the specification shows', async () => {
        const { query, result } = c.valid();
        for (const format of FORMATS) {
          const res = await call(c.method, c.name, query, format);
          assert.equal(operationValue(res, c.name, format), result, `${c.name} in ${format}`);
          if (format === 'xml') assert.equal(parseRootType(res.body), c.name === 'GetSalesOrderHistory' ? null : 'Edm.Boolean');
        }
      });
    }

    test('every invalid parameter is a 400 that names it, in the format asked for, and changes nothing', async () => {
      const rows = await tenantRows(live, a.accountId);
      for (const [query, parameter] of c.invalid()) {
        for (const format of FORMATS) {
          const res = await call(c.method, c.name, query, format);
          assert.equal(res.status, 400, `${c.name}?${query}: ${res.body}`);
          assert.ok(errorMessage(res, format).includes(`'${parameter}'`) || errorMessage(res, format).includes(parameter), `${c.name}?${query} names ${parameter}: ${errorMessage(res, format)}`);
        }
      }
      assert.deepEqual(await tenantRows(live, a.accountId), rows);
    });

    test('the wrong method is a 405 with Allow, and changes nothing', async () => {
      const rows = await tenantRows(live, a.accountId);
      const allow = c.method === 'GET' ? 'GET, HEAD' : 'POST';
      const query = c.name === 'DeleteAccountData' ? 'type=0' : c.valid().query;
      for (const method of OTHER_METHODS.filter((m) => m !== c.method)) {
        for (const format of FORMATS) {
          const res = await call(method, c.name, query, format);
          assert.equal(res.status, 405, `${method} ${c.name}: ${res.body}`);
          assert.equal(res.headers.allow, allow);
          assert.ok(errorMessage(res, format).includes(method));
        }
      }
      assert.deepEqual(await tenantRows(live, a.accountId), rows, `no ${c.name} ran`);
    });

    test('system query options other than $format are refused; $format=json is honoured', async () => {
      const query = c.name === 'DeleteAccountData' ? 'type=1' : c.valid().query;
      for (const option of ['$top=1', '$filter=Id%20eq%201', '$expand=Product', '$select=Id', '$orderby=Id']) {
        const res = await call(c.method, c.name, `${query}&${option}`);
        assert.equal(res.status, 400, `${c.name} with ${option}`);
        assert.match(errorMessage(res, 'json'), /cannot be applied to the service operation/);
      }
      if (c.name === 'DeleteAccountData') return;
      const res = await call(c.method, c.name, `${query}&$format=json`, 'xml');
      assert.equal(operationValue(res, c.name, 'json'), c.valid().result);
    });

    for (const [i, named] of c.entities().entries()) {
      test(`another account's id is answered exactly like a missing one (entity parameter ${i + 1})`, async () => {
        const aRows = await tenantRows(live, a.accountId);
        const bRows = await tenantRows(live, b.accountId);
        const foreignIds = new Set<string>(Object.values(bIds));
        for (const foreign of foreignIds) {
          for (const format of FORMATS) {
            const forB = await call(c.method, c.name, named(foreign), format);
            const missing = await call(c.method, c.name, named(MISSING), format);
            assert.equal(missing.status, 404, `${c.name}?${named(MISSING)}: ${missing.body}`);
            assert.deepEqual(shape(forB, foreign, format), shape(missing, MISSING, format), `${c.name}?${named(foreign)}`);
          }
        }
        assert.deepEqual(await tenantRows(live, a.accountId), aRows);
        assert.deepEqual(await tenantRows(live, b.accountId), bRows);
      });
    }
  });
}

function parseRootType(xml: string): string | null {
  const m = / m:type="([^"]+)"/.exec(xml.slice(0, 400));
  return m ? m[1]! : null;
}

// ---------------------------------------------------------------------------------------------
// Literals as connectors write them

describe('parameter literals', () => {
  test('Int64 with L, l or no suffix; Decimal with M, m or none; six decimals are the same value', async () => {
    for (const productId of [`${aIds.product}L`, `${aIds.product}l`, aIds.product]) {
      assert.equal(operationValue(await call('GET', 'ProductIsListed', `productId=${productId}`), 'ProductIsListed', 'json'), false);
    }
    for (const [price, stored] of [['109.900000m', '109.9'], ['12.5M', '12.5'], ['13', '13'], ['0.000001m', '0.000001']] as const) {
      operationValue(await call('POST', 'ReviseInventoryStatus', `productId=${aIds.product}L&price=${price}`), 'ReviseInventoryStatus', 'json');
      assert.equal((await getEntity(live, a, 'Products', aIds.product)).Price, stored);
    }
  });

  test('unknown parameters are ignored (DiscountOffer=9.99m), a repeated declared one is a 400', async () => {
    const res = await call('POST', 'ReviseInventoryStatus', `productId=${aIds.product}L&stockAmount=5&DiscountOffer=9.99m&Vendor=shop&Vendor=erp`);
    assert.equal(operationValue(res, 'ReviseInventoryStatus', 'json'), true);
    assert.equal((await getEntity(live, a, 'Products', aIds.product)).StockAmount, 5);
    const repeated = await call('POST', 'ReviseInventoryStatus', `productId=${aIds.product}L&stockAmount=6&stockAmount=9`);
    assert.equal(repeated.status, 400, repeated.body);
    assert.match(errorMessage(repeated, 'json'), /'stockAmount' of ReviseInventoryStatus is given more than once/);
    assert.equal((await getEntity(live, a, 'Products', aIds.product)).StockAmount, 5);
  });

  test('parameter names are case-sensitive: productid is not productId', async () => {
    const res = await call('GET', 'ProductIsListed', `productid=${aIds.product}L`);
    assert.equal(res.status, 400);
    assert.match(errorMessage(res, 'json'), /'productId'/);
  });

  test('an empty or null optional parameter counts as not sent', async () => {
    assert.equal(operationValue(await call('POST', 'SetProductProfile', `productId=${aIds.product}L&type=2&profileId=55L`), 'SetProductProfile', 'json'), true);
    assert.equal((await getEntity(live, a, 'Products', aIds.product)).ReturnProfileId, '55');
    assert.equal(operationValue(await call('POST', 'SetProductProfile', `productId=${aIds.product}L&type=2&profileId=`), 'SetProductProfile', 'json'), true);
    assert.equal((await getEntity(live, a, 'Products', aIds.product)).ReturnProfileId, null);
    assert.equal(operationValue(await call('POST', 'SetProductProfile', `productId=${aIds.product}L&type=2&profileId=55L`), 'SetProductProfile', 'json'), true);
    assert.equal(operationValue(await call('POST', 'SetProductProfile', `productId=${aIds.product}L&type=2&profileId=null`), 'SetProductProfile', 'json'), true);
    assert.equal((await getEntity(live, a, 'Products', aIds.product)).ReturnProfileId, null);
  });

  test('the operations are the ones $metadata declares, and every one answers', async () => {
    assert.deepEqual(model.operations.map((o) => o.name).sort(), CASES.map((c) => c.name).sort());
  });
});

// ---------------------------------------------------------------------------------------------
// Effects

describe('ProductIsListed', () => {
  test('true while an active listing is of the product; false without one and after the listing ended', async () => {
    const s = await newSeller(live, 'listed');
    const product = await create(s, 'Products', { Title: 'Boot', Price: '80', StockAmount: 3, ForeignId: 'BOOT' });
    const variation = await create(s, 'ProductVariations', { ProductId: product, Price: '80', StockAmount: 1, Sku: 'BOOT-41' });
    const listed = async () => operationValue(await callOperation(live, s, 'GET', 'ProductIsListed', `productId=${product}L`, 'xml'), 'ProductIsListed', 'xml');
    assert.equal(await listed(), false);
    await deliver(live, s.userName, { kind: 'listing', PlatformItemId: 'L-BOOT', Status: 0, Product: { Id: product } });
    assert.equal(await listed(), false, 'an ended listing does not count');
    await deliver(live, s.userName, { kind: 'listing', PlatformItemId: 'L-BOOT', Status: 1, Product: { Id: product } });
    assert.equal(await listed(), true);
    await deliver(live, s.userName, { kind: 'listing', PlatformItemId: 'L-BOOT', Status: 0 });
    assert.equal(await listed(), false);
    // A multi-variation listing that names the product only through its items counts too.
    await deliver(live, s.userName, { kind: 'listing', PlatformItemId: 'L-VARIANTS', Status: 1, ListingItems: [{ Sku: 'BOOT-41', ProductVariation: { Id: variation } }] });
    assert.equal(await listed(), true);
  });
});

describe('SetEbayCategory', () => {
  test('with DisableAutomatch false it returns false and changes nothing', async () => {
    const before = await tenantRows(live, a.accountId);
    for (const format of FORMATS) {
      const res = await call('POST', 'SetEbayCategory', `productId=${aIds.product}L&categoryId1=11450L&categoryId2=63861L&autoMatched=true`, format);
      assert.equal(operationValue(res, 'SetEbayCategory', format), false);
    }
    assert.deepEqual(await tenantRows(live, a.accountId), before);
    const product = await getEntity(live, a, 'Products', aIds.product);
    assert.equal(product.EbayCategoryId1, null);
    assert.equal(product.AutoMatched, null);
  });

  test('with DisableAutomatch true the categories and AutoMatched are stored and visible on the Product', async () => {
    assert.equal(operationValue(await call('POST', 'SetEbayCategory', `productId=${aIds.automatchOff}L&categoryId1=9223372036854775807L&categoryId2=63861&autoMatched=true`), 'SetEbayCategory', 'json'), true);
    let product = await getEntity(live, a, 'Products', aIds.automatchOff);
    assert.equal(product.EbayCategoryId1, '9223372036854775807');
    assert.equal(product.EbayCategoryId2, '63861');
    assert.equal(product.AutoMatched, true);
    // Atom shows the same, typed.
    const atom = await asSeller(a, `${live.root}/Products(${aIds.automatchOff}L)`);
    assert.match(atom.body, /<d:EbayCategoryId1 m:type="Edm.Int64">9223372036854775807<\/d:EbayCategoryId1>/);
    assert.equal(operationValue(await call('POST', 'SetEbayCategory', `productId=${aIds.automatchOff}L&categoryId1=11450`), 'SetEbayCategory', 'json'), true);
    product = await getEntity(live, a, 'Products', aIds.automatchOff);
    assert.deepEqual([product.EbayCategoryId1, product.EbayCategoryId2, product.AutoMatched], ['11450', null, null], 'the call sets all three');
  });

  test('the categories are read-only for entity writes: only the operation sets them, a sent value is ignored', async () => {
    const before = (await getEntity(live, a, 'Products', aIds.automatchOff)).EbayCategoryId1;
    const res = await asSeller(a, `${live.root}/Products(${aIds.automatchOff}L)`, { method: 'MERGE', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ EbayCategoryId1: '1' }) });
    assert.equal(res.status, 204, res.body);
    assert.equal((await getEntity(live, a, 'Products', aIds.automatchOff)).EbayCategoryId1, before);
    assert.notEqual(before, '1');
  });
});

describe('SetProductProfile and SetCatalogProfile', () => {
  test('each type sets its own profile; omitting profileId clears it; ModificationDate moves', async () => {
    const s = await newSeller(live, 'profiles');
    const product = await create(s, 'Products', { Title: 'P', Price: '1', StockAmount: 1 });
    const before = await getEntity(live, s, 'Products', product);
    for (const [type, property] of [[1, 'PaymentProfileId'], [2, 'ReturnProfileId'], [3, 'ShippingProfileId']] as const) {
      operationValue(await callOperation(live, s, 'POST', 'SetProductProfile', `productId=${product}L&type=${type}&profileId=${100 + type}L`), 'SetProductProfile', 'json');
      assert.equal((await getEntity(live, s, 'Products', product))[property], String(100 + type));
    }
    operationValue(await callOperation(live, s, 'POST', 'SetProductProfile', `productId=${product}L&type=1`), 'SetProductProfile', 'json');
    const after = await getEntity(live, s, 'Products', product);
    assert.deepEqual([after.PaymentProfileId, after.ReturnProfileId, after.ShippingProfileId], [null, '102', '103']);
    assert.ok(String(after.ModificationDate) >= String(before.ModificationDate));
  });

  test('SetCatalogProfile sets the catalog and every product linked to it, and no other product', async () => {
    operationValue(await call('POST', 'SetCatalogProfile', `catalogId=${aIds.catalog}L&type=3&profileId=777L`, 'xml'), 'SetCatalogProfile', 'xml');
    assert.equal((await getEntity(live, a, 'Catalogs', aIds.catalog)).ShippingProfileId, '777');
    for (const id of [aIds.product, aIds.automatchOff]) assert.equal((await getEntity(live, a, 'Products', id)).ShippingProfileId, '777');
    assert.equal((await getEntity(live, a, 'Products', aIds.listedProduct)).ShippingProfileId, null, 'not in the catalog');
    assert.equal((await getEntity(live, b, 'Products', bIds.product)).ShippingProfileId, null, "another account's product in a catalog");
    operationValue(await call('POST', 'SetCatalogProfile', `catalogId=${aIds.catalog}L&type=3`), 'SetCatalogProfile', 'json');
    assert.equal((await getEntity(live, a, 'Catalogs', aIds.catalog)).ShippingProfileId, null);
    assert.equal((await getEntity(live, a, 'Products', aIds.product)).ShippingProfileId, null);
  });
});

describe('ReviseInventoryStatus', () => {
  let s: Seller;
  let product: string;
  let variation: string;
  before(async () => {
    s = await newSeller(live, 'revise');
    product = await create(s, 'Products', { Title: 'Shirt', Price: '20', StockAmount: 10 });
    variation = await create(s, 'ProductVariations', { ProductId: product, Price: '21', StockAmount: 4, Sku: 'SHIRT-M' });
  });
  const revise = async (query: string) => operationValue(await callOperation(live, s, 'POST', 'ReviseInventoryStatus', query), 'ReviseInventoryStatus', 'json');
  const offers = () => getCollection(live, s, `Products(${product}L)/DiscountOffers`);

  test('stock and price of the product', async () => {
    assert.equal(await revise(`productId=${product}L&stockAmount=3&price=18.5m`), true);
    const p = await getEntity(live, s, 'Products', product);
    assert.deepEqual([p.StockAmount, p.Price], [3, '18.5']);
    assert.equal((await getEntity(live, s, 'ProductVariations', variation)).StockAmount, 4, 'the variation is not touched');
  });

  test('stock and price of the variation when productVariationId is given', async () => {
    assert.equal(await revise(`productId=${product}L&productVariationId=${variation}L&stockAmount=0&price=22m`), true);
    const v = await getEntity(live, s, 'ProductVariations', variation);
    assert.deepEqual([v.StockAmount, v.Price], [0, '22']);
    assert.equal((await getEntity(live, s, 'Products', product)).StockAmount, 3);
  });

  test('discountOfferPrice creates the Type 1 DiscountOffer once, then updates it, at product and at variation level', async () => {
    assert.equal(await revise(`productId=${product}L&discountOfferPrice=25m`), true);
    assert.equal(await revise(`productId=${product}L&discountOfferPrice=26.5m`), true);
    assert.equal(await revise(`productId=${product}L&productVariationId=${variation}L&discountOfferPrice=27m`), true);
    const rows = (await offers()).map((o) => [o.ProductVariationId, o.Type, o.Price]);
    assert.deepEqual(rows, [[null, 1, '26.5'], [variation, 1, '27']]);
  });

  test('a refused value changes nothing, not even the values sent with it', async () => {
    const rows = await tenantRows(live, s.accountId);
    for (const query of [`productId=${product}L&stockAmount=-1&price=1m`, `productId=${product}L&price=1m&discountOfferPrice=-2m`, `productId=${product}L&stockAmount=2147483648`]) {
      const res = await callOperation(live, s, 'POST', 'ReviseInventoryStatus', query);
      assert.equal(res.status, 400, query);
    }
    assert.deepEqual(await tenantRows(live, s.accountId), rows);
  });
});

describe('GetSalesOrderHistory', () => {
  test("a new order's history is empty in both formats", async () => {
    for (const format of FORMATS) {
      const res = await call('GET', 'GetSalesOrderHistory', `salesOrderId=${aIds.order}L`, format);
      assert.equal(operationValue(res, 'GetSalesOrderHistory', format), '');
    }
  });
});

describe('service operations need both credentials', () => {
  test('without the session cookie every operation is a 401', async () => {
    for (const c of CASES) {
      const res = await asSeller({ ...a, auth: { SubscriptionToken: a.token } }, `${live.root}/${c.name}?${c.valid().query}`, { method: c.method });
      assert.equal(res.status, 401, c.name);
    }
  });
});
