/**
 * The connector's order workflow end to end over HTTP (issue 5): the
 * platform delivers three orders; the client fetches the unimported ones with its expand and
 * filter, MERGEs ForeignOrderId through each order's __metadata.uri, fetches again and gets
 * none, MERGEs PaidAmount, then an item's ShippingStatus and its CarrierUsed and TrackingNumbers;
 * the history shows each event. Requests carry the connector's headers throughout.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import { request, type HttpResponse } from '../support/http-client';
import { asSeller, newSeller, type LiveService, type Seller } from '../support/live-service';
import { deliver, orderDocument, orderItem, paymentEvent, startWithPlatform, type Json } from './platform-client';

const clock = new ManualClock(Date.UTC(2024, 8, 16, 7, 0, 0));
let live: LiveService;
let seller: Seller;

/** The connector's headers on every request. */
function connector(method: string, url: string, body?: Json): Promise<HttpResponse> {
  return request(url, {
    method,
    headers: {
      ...seller.auth,
      Cookie: `.ASPXAUTH=${seller.cookie}; path=/; HttpOnly`,
      Accept: 'application/json',
      'Content-Type': 'application/json',
      DataServiceVersion: '2.0',
      MaxDataServiceVersion: '3.0',
      Vendor: 'shop-connector',
      Version: '4.2.0',
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
}

/** The connector reads d.results when the answer's version starts with 2.0, else d as the array. */
function rowsOf(res: HttpResponse): Json[] {
  assert.equal(res.status, 200, res.body);
  const d = (JSON.parse(res.body) as { d: unknown }).d;
  return String(res.headers.dataserviceversion).startsWith('2.0') ? (d as { results: Json[] }).results : (d as Json[]);
}

/** An expanded collection: an array (1.0) or {results} (2.0). */
const many = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : (value as { results: Json[] }).results);
const uriOf = (entity: Json) => (entity.__metadata as { uri: string }).uri;

const UNIMPORTED =
  'SalesOrders?$expand=Address,Buyer,SalesOrderItems/Product,SalesOrderItems/ProductVariation&$filter=' +
  encodeURIComponent("(ForeignOrderId eq null) or (ForeignOrderId eq '')").replace(/%28/g, '(').replace(/%29/g, ')');

const fetchUnimported = async () => rowsOf(await connector('GET', `${live.root}/${UNIMPORTED}`));

async function history(orderId: unknown): Promise<string[]> {
  const res = await connector('GET', `${live.root}/GetSalesOrderHistory?salesOrderId=${String(orderId)}L`);
  assert.equal(res.status, 200, res.body);
  const text = (JSON.parse(res.body) as { d: { GetSalesOrderHistory: string } }).d.GetSalesOrderHistory;
  return text === '' ? [] : text.split('\r\n');
}

before(async () => {
  live = await startWithPlatform({ clock });
  seller = await newSeller(live, 'connector');
  const create = async (set: string, body: Json) => {
    const res = await connector('POST', `${live.root}/${set}`, body);
    assert.equal(res.status, 201, res.body);
    return String((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
  };
  const jacket = await create('Products', { Title: 'Rain jacket', Price: '129.00', StockAmount: 10, ForeignId: 'SW-100' });
  await create('ProductVariations', { ProductId: jacket, Price: '129.00', StockAmount: 4, Sku: 'SW-100-L' });
  await create('Products', { Title: 'Beanie', Price: '19.90', StockAmount: 50, ForeignId: 'SW-200' });
});
after(() => live.close());

test("the connector's order workflow", async () => {
  // 1. The platform delivers three orders.
  await deliver(live, seller.userName, orderDocument('26-11111-00001', [orderItem('400000000001', { Price: '129.00', Product: { ForeignId: 'SW-100' }, ProductVariation: { Sku: 'SW-100-L' } })]));
  await deliver(live, seller.userName, orderDocument('26-11111-00002', [orderItem('400000000002', { Price: '19.90', Amount: 2, Product: { ForeignId: 'SW-200' } }), orderItem('400000000003', { Price: '129.00', Product: { ForeignId: 'SW-100' } })]));
  await deliver(live, seller.userName, orderDocument('26-11111-00003', [orderItem('400000000004', { Price: '19.90', Product: { ForeignId: 'SW-200' } })], { ShippingAddress: undefined }));

  // 2. The client fetches the unimported orders with its expand and filter.
  const orders = await fetchUnimported();
  assert.deepEqual(orders.map((o) => o.PlatformOrderId), ['26-11111-00001', '26-11111-00002', '26-11111-00003']);
  for (const order of orders) {
    assert.ok((order.Address as Json).Id, 'Address is expanded inline');
    assert.ok((order.Buyer as Json).BuyerName, 'Buyer is expanded inline');
    assert.ok((order.ShippingAddress as Json).__deferred, 'ShippingAddress was not asked for: deferred, so no Id member');
    for (const item of many(order.SalesOrderItems)) {
      assert.equal((item.Product as Json).ForeignId, item.ForeignId, 'the sold product is expanded inline');
      assert.match(uriOf(item), /\/SalesOrderItems\(\d+L\)$/);
    }
  }
  const first = orders[0]!;
  const firstItem = many(first.SalesOrderItems)[0]!;
  assert.equal((firstItem.ProductVariation as Json).Sku, 'SW-100-L');
  assert.equal(many(orders[1]!.SalesOrderItems)[0]!.ProductVariation, null, 'an item without a variation expands to null');

  // 3. The client MERGEs ForeignOrderId through each order's __metadata.uri.
  for (const [i, order] of orders.entries()) {
    clock.advance(1000);
    const res = await connector('MERGE', uriOf(order), { ForeignOrderId: i === 2 ? '_ORDER_IMPORT_FAILED_' : `1000001${i}` });
    assert.equal(res.status, 204, res.body);
  }

  // 4. The same fetch now returns none.
  assert.deepEqual(await fetchUnimported(), []);
  const byForeignId = rowsOf(await connector('GET', `${live.root}/SalesOrders?$filter=ForeignOrderId%20eq%20'10000010'`));
  assert.deepEqual(byForeignId.map((o) => o.Id), [first.Id]);

  // 5. The client MERGEs PaidAmount.
  clock.advance(60_000);
  const paidAt = clock.now();
  assert.equal((await connector('MERGE', uriOf(first), { PaidAmount: '129.00' })).status, 204);

  // 6. The client MERGEs the item's ShippingStatus, then its CarrierUsed and TrackingNumbers.
  clock.advance(60_000);
  const shippedAt = clock.now();
  assert.equal((await connector('MERGE', uriOf(firstItem), { ShippingStatus: '1' })).status, 204);
  clock.advance(1000);
  assert.equal((await connector('MERGE', uriOf(firstItem), { CarrierUsed: 'dhl', TrackingNumbers: '00340434161094042557;00340434161094042558' })).status, 204);

  // 7. The history shows each event, in order.
  assert.deepEqual(await history(first.Id), [
    `16.09.2024 07:01:03 - ItemId 400000000001 - Aktion MarkedAsPaid:1`,
    `16.09.2024 07:02:03 - ItemId 400000000001 - Aktion Versandstatus:1`,
  ]);
  assert.equal(paidAt, Date.UTC(2024, 8, 16, 7, 1, 3));
  assert.equal(shippedAt, Date.UTC(2024, 8, 16, 7, 2, 3));
  const order = (JSON.parse((await connector('GET', uriOf(first))).body) as { d: Json }).d;
  assert.deepEqual([order.ForeignOrderId, order.PaidAmount, order.MarkedAsPayed, order.MarkedAsShipped], ['10000010', '129', true, true]);
  const item = (JSON.parse((await connector('GET', uriOf(firstItem))).body) as { d: Json }).d;
  assert.deepEqual([item.ShippingStatus, item.CarrierUsed, item.TrackingNumbers], [1, 'dhl', '00340434161094042557;00340434161094042558']);

  // The connector polls orders the platform changed since its last run: only the platform moves EbayModificationDate.
  const since = new Date(clock.now()).toISOString().slice(0, 19);
  const changed = async () =>
    rowsOf(await connector('GET', `${live.root}/SalesOrders?$filter=${encodeURIComponent(`(EbayModificationDate gt DateTime'${since}' and EbayModificationDate ne null)`)}`)).map((o) => o.PlatformOrderId);
  clock.advance(1000);
  assert.deepEqual(await changed(), [], "the seller's own updates are not platform changes");
  await deliver(live, seller.userName, paymentEvent('26-11111-00002'));
  assert.deepEqual(await changed(), ['26-11111-00002']);
  assert.deepEqual((await history(orders[1]!.Id)).map((l) => l.slice(20)), ['- ItemId 400000000002 - Aktion MarkedAsPaid:1', '- ItemId 400000000003 - Aktion MarkedAsPaid:1']);
  // The third order's expand above showed no shipping address; by key it answers the same.
  assert.equal((await asSeller(seller, `${uriOf(orders[2]!)}/ShippingAddress`, { headers: { Accept: 'application/json' } })).status, 404);
});
