/**
 * DeleteAccountData for each of its seven types against the live service: a table of which
 * entity sets are empty afterwards (and which keep every row), the link and history tables read
 * raw, and a second account whose rows are identical byte for byte before and after.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import { asSeller, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { fullAccount } from '../support/full-account';
import { SPEC_ENTITY_SETS } from '../support/spec';
import { deliver, orderDocument, startWithPlatform } from '../platform/platform-client';
import { callOperation, operationValue, type Format } from './operation-client';
import { getCollection } from '../support/live-client';

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
      const seller = await fullAccount(live, `del${type}`);
      const bystander = await fullAccount(live, `keep${type}`);
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
    const s = await fullAccount(live, 'again');
    for (let i = 0; i < 2; i++) operationValue(await callOperation(live, s, 'POST', 'DeleteAccountData', 'type=0'), 'DeleteAccountData', 'json');
    assert.ok(Object.values(await counts(s)).every((n) => n === 0));
    await deliver(live, s.userName, orderDocument('again-O1'));
    assert.equal((await counts(s)).SalesOrders, 1);
  });
});
