/**
 * DeleteAccountData for each of its seven types against the live service: a table of which
 * entity sets are empty afterwards (and which keep every row), the link and history tables read
 * raw, and a second account whose rows are identical byte for byte before and after.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import { asSeller, newSeller, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { SPEC_ENTITY_SETS } from '../support/spec';
import { deliver, orderDocument, orderItem, paymentEvent, shipmentEvent, startWithPlatform } from '../platform/platform-client';
import { callOperation, operationValue, type Format } from './operation-client';
import { getCollection, createEntity } from '../support/live-client';

const PRODUCT_SETS = [
  'Products', 'ProductImages', 'ProductRelations', 'ProductSpecifics', 'ProductVariations', 'ProductVariationSpecifics',
  'ProductVariationImages', 'OptionalProductAttributes', 'DiscountOffers', 'CarParts',
];
const CATALOG_SETS = ['Catalogs'];
const ORDER_SETS = ['SalesOrders', 'SalesOrderItems', 'Buyers', 'Addresses'];
const LISTING_SETS = ['Listings', 'ListingItems'];

/** type -> the entity sets it empties (2 Products, 4 Catalogs, 8 SalesOrders and Buyers, 0 everything). */
const TABLE: readonly (readonly [number, readonly string[]])[] = [
  [0, [...PRODUCT_SETS, ...CATALOG_SETS, ...ORDER_SETS, ...LISTING_SETS]],
  [2, PRODUCT_SETS],
  [4, CATALOG_SETS],
  [6, [...PRODUCT_SETS, ...CATALOG_SETS]],
  [8, ORDER_SETS],
  [10, [...PRODUCT_SETS, ...ORDER_SETS]],
  [12, [...CATALOG_SETS, ...ORDER_SETS]],
];

let live: LiveService;

before(async () => {
  live = await startWithPlatform();
});
after(() => live.close());

const create = (s: Seller, set: string, body: Record<string, unknown>) => createEntity(live, s, set, body);

async function link(s: Seller, path: string, uri: string): Promise<void> {
  const res = await asSeller(s, `${live.root}/${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ uri: `${live.root}/${uri}` }) });
  assert.equal(res.status, 204, res.body);
}

/** A seller with at least one row in every entity set, links, and order history. */
async function fullAccount(tag: string): Promise<Seller> {
  const s = await newSeller(live, tag);
  const product = await create(s, 'Products', { Title: `${tag} jacket`, Price: '99', StockAmount: 4, ForeignId: `${tag}-JACKET` });
  const child = await create(s, 'Products', { Title: `${tag} hood`, Price: '9', StockAmount: 4 });
  await create(s, 'ProductImages', { ProductId: product, ImageUrl: 'https://img.example.com/jacket.jpg', Type: 1 });
  await create(s, 'ProductSpecifics', { ProductId: product, Name: 'Material', Value: 'Wool' });
  await create(s, 'OptionalProductAttributes', { ProductId: product, Name: 'Care', Value: 'Dry clean' });
  await create(s, 'CarParts', { ProductId: product, KType: 1 });
  await create(s, 'ProductRelations', { ParentProductId: product, ChildProductId: child });
  const variation = await create(s, 'ProductVariations', { ProductId: product, Price: '99', StockAmount: 2, Sku: `${tag}-JACKET-M` });
  await create(s, 'ProductVariationSpecifics', { ProductVariationId: variation, Name: 'Size', Value: 'M' });
  await create(s, 'ProductVariationImages', { ProductVariationId: variation, ImageUrl: 'https://img.example.com/jacket-m.jpg', ImagePosition: 0 });
  await create(s, 'DiscountOffers', { ProductId: product, ProductVariationId: variation, Price: '120', Type: 1 });
  const catalog = await create(s, 'Catalogs', { Name: `${tag} outerwear`, IsRootLevel: true });
  const childCatalog = await create(s, 'Catalogs', { Name: `${tag} jackets` });
  await link(s, `Products(${product}L)/$links/Catalogs`, `Catalogs(${catalog}L)`);
  await link(s, `Catalogs(${catalog}L)/$links/ChildCatalogs`, `Catalogs(${childCatalog}L)`);
  await deliver(live, s.userName, { kind: 'listing', PlatformItemId: `${tag}-L`, Status: 1, Product: { Id: product }, ListingItems: [{ Sku: `${tag}-JACKET-M`, ProductVariation: { Sku: `${tag}-JACKET-M` } }] });
  await deliver(live, s.userName, orderDocument(`${tag}-O1`, [orderItem(`${tag}-I1`, { Product: { ForeignId: `${tag}-JACKET` }, ProductVariation: { Sku: `${tag}-JACKET-M` } })]));
  await deliver(live, s.userName, paymentEvent(`${tag}-O1`));
  await deliver(live, s.userName, shipmentEvent(`${tag}-O1`));
  return s;
}

async function counts(s: Seller): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const set of SPEC_ENTITY_SETS) {
    const res = await asSeller(s, `${live.root}/${set}/$count`);
    assert.equal(res.status, 200, res.body);
    out[set] = Number(res.body);
  }
  return out;
}

describe('DeleteAccountData empties exactly the sets its type names', () => {
  test('the table covers every allowed type and names only real sets', () => {
    assert.deepEqual(TABLE.map(([t]) => t), [0, 2, 4, 6, 8, 10, 12]);
    const sets = new Set(model.entityTypes.map((t) => t.setName));
    for (const [, emptied] of TABLE) for (const set of emptied) assert.ok(sets.has(set), set);
  });

  for (const [type, emptied] of TABLE) {
    test(`type ${type}: ${emptied.length === SPEC_ENTITY_SETS.length ? 'everything' : emptied.join(', ')}`, async () => {
      const seller = await fullAccount(`del${type}`);
      const bystander = await fullAccount(`keep${type}`);
      const before = await counts(seller);
      for (const set of SPEC_ENTITY_SETS) assert.ok(before[set]! > 0, `the account has ${set} before`);
      const bystanderRows = await tenantRows(live, bystander.accountId);

      const format: Format = type % 4 === 0 ? 'xml' : 'json';
      const res = await callOperation(live, seller, 'POST', 'DeleteAccountData', `type=${type}`, format);
      assert.equal(operationValue(res, 'DeleteAccountData', format), true);

      const afterCounts = await counts(seller);
      for (const set of SPEC_ENTITY_SETS) {
        if (emptied.includes(set)) assert.equal(afterCounts[set], 0, `type ${type} empties ${set}`);
        else assert.equal(afterCounts[set], before[set], `type ${type} keeps every row of ${set}`);
      }
      const raw = await tenantRows(live, seller.accountId);
      const productsGone = emptied.includes('Products');
      const catalogsGone = emptied.includes('Catalogs');
      const ordersGone = emptied.includes('SalesOrders');
      assert.equal(raw.product_catalogs!.length === 0, productsGone || catalogsGone, 'product–catalog links');
      assert.equal(raw.catalog_links!.length === 0, catalogsGone, 'catalog tree links');
      assert.equal(raw.sales_order_history!.length === 0, ordersGone, 'order history');
      if (productsGone && !ordersGone) {
        // Sold items keep their rows; only the pointer to the deleted product is cleared.
        for (const item of await getCollection(live, seller, 'SalesOrderItems')) {
          assert.deepEqual([item.ProductId, item.ProductVariationId, item.ForeignId], [null, null, `del${type}-JACKET`]);
        }
      }
      if (productsGone && !emptied.includes('Listings')) {
        for (const listing of await getCollection(live, seller, 'Listings')) assert.equal(listing.ProductId, null);
      }

      assert.deepEqual(await tenantRows(live, bystander.accountId), bystanderRows, "the other account's rows are identical byte for byte");
    });
  }

  test('an emptied account can be filled again, and emptying it twice is fine', async () => {
    const s = await fullAccount('again');
    for (let i = 0; i < 2; i++) operationValue(await callOperation(live, s, 'POST', 'DeleteAccountData', 'type=0'), 'DeleteAccountData', 'json');
    assert.ok(Object.values(await counts(s)).every((n) => n === 0));
    await deliver(live, s.userName, orderDocument('again-O1'));
    assert.equal((await counts(s)).SalesOrders, 1);
  });
});
