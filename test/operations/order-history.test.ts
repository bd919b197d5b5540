/**
 * Order history (README "Order history") against the live service with a clock the test
 * moves: GetSalesOrderHistory after a platform payment event, a seller MERGE of PaidAmount and a
 * MERGE of an item's ShippingStatus answers exactly the expected lines, oldest first, CR LF
 * separated, in both formats; the order's flags and dates follow each event; withdrawals,
 * order-level shipping, redeliveries and refused updates behave as documented.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import { login, newSeller, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { deliver, orderDocument, orderItem, paymentEvent, shipmentEvent, startWithPlatform } from '../platform/platform-client';
import { callOperation, operationValue, type Format } from './operation-client';
import { getCollection, getEntity, jsonDate, mergeEntity } from '../support/live-client';

const clock = new ManualClock(Date.UTC(2024, 4, 2, 8, 0, 0));
/**
 * Moves the service clock, and logs the seller in again: sessions follow the same clock, and a
 * jump of hours ends them.
 */
async function setClock(ms: number): Promise<void> {
  clock.advance(ms - clock.now());
  await relogin();
}

async function relogin(): Promise<void> {
  const cookie = await login(live, seller.userName, seller.password);
  assert.ok(cookie);
  seller = { ...seller, cookie, auth: { ...seller.auth, Cookie: `.ASPXAUTH=${cookie}` } };
}
let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startWithPlatform({ clock });
  seller = await newSeller(live, 'history');
});
after(() => live.close());

async function history(orderId: string, format: Format = 'json'): Promise<string> {
  return operationValue(await callOperation(live, seller, 'GET', 'GetSalesOrderHistory', `salesOrderId=${orderId}L`, format), 'GetSalesOrderHistory', format) as string;
}

/** Both formats answer the same history; the string itself. */
async function historyBoth(orderId: string): Promise<string> {
  const json = await history(orderId, 'json');
  assert.equal(await history(orderId, 'xml'), json, 'Atom/XML and JSON carry the same history');
  return json;
}

async function itemsOf(orderId: string): Promise<Record<string, unknown>[]> {
  return getCollection(live, seller, `SalesOrders(${orderId}L)/SalesOrderItems`);
}

const at = (h: number, m: number, s: number) => Date.UTC(2024, 4, 2, h, m, s);

describe('GetSalesOrderHistory after a platform payment, a seller PaidAmount and an item ShippingStatus', () => {
  let orderId: string;
  let items: Record<string, unknown>[];

  test('a new order has no history: the empty string, in both formats', async () => {
    await setClock(at(8, 0, 0));
    orderId = (await deliver(live, seller.userName, orderDocument('ORD-1', [orderItem('110000000001'), orderItem('110000000002', { Amount: 2, Price: '5.5' })]))).id;
    items = await itemsOf(orderId);
    assert.equal(items.length, 2);
    assert.equal(await historyBoth(orderId), '');
    const order = await getEntity(live, seller, 'SalesOrders', orderId);
    assert.equal(order.MarkedAsPayed, false);
    assert.equal(jsonDate(order.EbayModificationDate), at(8, 0, 0), 'a delivered order is a platform change');
    assert.equal(order.ItemCount, 2);
    assert.equal(order.TotalAmount, 3);
    assert.equal(order.TotalPrice, '30.99');
  });

  test('1. the platform reports payment: MarkedAsPaid:1 for each item', async () => {
    await setClock(at(8, 0, 5));
    assert.equal((await deliver(live, seller.userName, paymentEvent('ORD-1'))).outcome, 'updated');
    assert.equal(
      await historyBoth(orderId),
      '02.05.2024 08:00:05 - ItemId 110000000001 - Aktion MarkedAsPaid:1\r\n' + '02.05.2024 08:00:05 - ItemId 110000000002 - Aktion MarkedAsPaid:1',
    );
    const order = await getEntity(live, seller, 'SalesOrders', orderId);
    assert.equal(order.MarkedAsPayed, true);
    assert.equal(order.PaymentStatus, 'Paid');
    assert.equal(order.PaymentTransactionId, 'pay-ORD-1');
    assert.equal(jsonDate(order.EbayModificationDate), at(8, 0, 5));
    assert.equal(jsonDate(order.ModificationDate), at(8, 0, 5));
  });

  test('the same payment event again changes nothing, not even a date', async () => {
    const before = await tenantRows(live, seller.accountId);
    await setClock(at(8, 30, 0));
    assert.equal((await deliver(live, seller.userName, paymentEvent('ORD-1'))).outcome, 'unchanged');
    assert.deepEqual(await tenantRows(live, seller.accountId), before);
  });

  test('2. the seller MERGEs PaidAmount: MarkedAsPaid:1 for each item again, EbayModificationDate stays', async () => {
    await setClock(at(9, 30, 0));
    const res = await mergeEntity(live, seller, 'SalesOrders', orderId, { PaidAmount: '59.90' });
    assert.equal(res.status, 204, res.body);
    const lines = (await historyBoth(orderId)).split('\r\n');
    assert.deepEqual(lines.slice(2), ['02.05.2024 09:30:00 - ItemId 110000000001 - Aktion MarkedAsPaid:1', '02.05.2024 09:30:00 - ItemId 110000000002 - Aktion MarkedAsPaid:1']);
    const order = await getEntity(live, seller, 'SalesOrders', orderId);
    assert.equal(order.PaidAmount, '59.9');
    assert.equal(jsonDate(order.ModificationDate), at(9, 30, 0));
    assert.equal(jsonDate(order.EbayModificationDate), at(8, 0, 5), 'only the platform moves EbayModificationDate');
  });

  test('3. the seller MERGEs an item ShippingStatus to "1": Versandstatus:1 for that item', async () => {
    await setClock(at(14, 45, 59));
    const res = await mergeEntity(live, seller, 'SalesOrderItems', String(items[0]!.Id), { ShippingStatus: '1' });
    assert.equal(res.status, 204, res.body);
    assert.equal(
      await historyBoth(orderId),
      [
        '02.05.2024 08:00:05 - ItemId 110000000001 - Aktion MarkedAsPaid:1',
        '02.05.2024 08:00:05 - ItemId 110000000002 - Aktion MarkedAsPaid:1',
        '02.05.2024 09:30:00 - ItemId 110000000001 - Aktion MarkedAsPaid:1',
        '02.05.2024 09:30:00 - ItemId 110000000002 - Aktion MarkedAsPaid:1',
        '02.05.2024 14:45:59 - ItemId 110000000001 - Aktion Versandstatus:1',
      ].join('\r\n'),
    );
    const order = await getEntity(live, seller, 'SalesOrders', orderId);
    assert.equal(order.MarkedAsShipped, false, 'one of two items is shipped');
    assert.equal(jsonDate(order.ModificationDate), at(14, 45, 59), "an item's change is a change of its order");
  });

  test('every line has the exact format, CR LF between lines and none at the end', async () => {
    const text = await history(orderId);
    assert.ok(!text.endsWith('\r\n'));
    assert.equal(text.split('\n').length, text.split('\r\n').length, 'no bare LF');
    for (const line of text.split('\r\n')) assert.match(line, /^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}:\d{2} - ItemId \d+ - Aktion (MarkedAsPaid|Versandstatus):\d$/);
  });

  test('the second item shipped by the platform: Versandstatus:1, MarkedAsShipped, EbayModificationDate', async () => {
    await setClock(at(16, 0, 0));
    const delivered = await deliver(live, seller.userName, shipmentEvent('ORD-1', { SalesOrderItems: [{ PlatformItemId: '110000000002' }], CarrierUsed: 'DHL', TrackingNumbers: '00340434161094042557' }));
    assert.equal(delivered.outcome, 'updated');
    assert.ok((await history(orderId)).endsWith('\r\n02.05.2024 16:00:00 - ItemId 110000000002 - Aktion Versandstatus:1'));
    const order = await getEntity(live, seller, 'SalesOrders', orderId);
    assert.equal(order.MarkedAsShipped, true);
    assert.equal(jsonDate(order.EbayModificationDate), at(16, 0, 0));
    const item = await getEntity(live, seller, 'SalesOrderItems', String(items[1]!.Id));
    assert.equal(item.CarrierUsed, 'DHL');
    assert.equal(item.TrackingNumbers, '00340434161094042557');
    const rows = await tenantRows(live, seller.accountId);
    await setClock(at(16, 5, 0));
    assert.equal((await deliver(live, seller.userName, shipmentEvent('ORD-1', { SalesOrderItems: [{ PlatformItemId: '110000000002' }], CarrierUsed: 'DHL', TrackingNumbers: '00340434161094042557' }))).outcome, 'unchanged');
    assert.deepEqual(await tenantRows(live, seller.accountId), rows, 'the same shipping event again changes nothing');
  });
});

describe('withdrawals, order-level shipping and refused updates', () => {
  let orderId: string;
  let itemIds: string[];
  const lineCount = async () => {
    const text = await history(orderId);
    return text === '' ? 0 : text.split('\r\n').length;
  };

  before(async () => {
    await setClock(Date.UTC(2024, 0, 3, 4, 5, 6));
    orderId = (await deliver(live, seller.userName, orderDocument('ORD-2', [orderItem('220000000001'), orderItem('220000000002')]))).id;
    itemIds = (await itemsOf(orderId)).map((i) => String(i.Id));
  });

  test('dates and times are zero-padded: dd.MM.yyyy HH:mm:ss', async () => {
    assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { PaidDate: '/Date(1704254706000)/' })).status, 204);
    assert.equal(await history(orderId), '03.01.2024 04:05:06 - ItemId 220000000001 - Aktion MarkedAsPaid:1\r\n03.01.2024 04:05:06 - ItemId 220000000002 - Aktion MarkedAsPaid:1');
  });

  test('the seller clearing PaidAmount and PaidDate withdraws payment: MarkedAsPaid:0', async () => {
    await setClock(clock.now() + 60_000);
    assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { PaidDate: null, PaidAmount: null })).status, 204);
    assert.ok((await history(orderId)).endsWith('03.01.2024 04:06:06 - ItemId 220000000001 - Aktion MarkedAsPaid:0\r\n03.01.2024 04:06:06 - ItemId 220000000002 - Aktion MarkedAsPaid:0'));
    assert.equal((await getEntity(live, seller, 'SalesOrders', orderId)).MarkedAsPayed, false);
  });

  test('a MERGE that sets PaidAmount to the value it has, or that changes nothing of payment, adds no line', async () => {
    assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { PaidAmount: '10' })).status, 204);
    const n = await lineCount();
    assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { PaidAmount: '10.000000' })).status, 204);
    assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { ForeignOrderId: 'ERP-2' })).status, 204);
    assert.equal(await lineCount(), n);
  });

  test('the platform withdrawing a payment it reported: MarkedAsPaid:0; withdrawing one it never reported changes nothing', async () => {
    const n = await lineCount();
    assert.equal((await deliver(live, seller.userName, paymentEvent('ORD-2', false, { PaymentTransactionId: undefined }))).outcome, 'unchanged', 'the platform never reported payment');
    assert.equal(await lineCount(), n);
    await setClock(clock.now() + 1000);
    await deliver(live, seller.userName, paymentEvent('ORD-2', true));
    await setClock(clock.now() + 1000);
    assert.equal((await deliver(live, seller.userName, paymentEvent('ORD-2', false))).outcome, 'updated');
    const lines = (await history(orderId)).split('\r\n');
    assert.equal(lines.length, n + 4);
    assert.match(lines.at(-1)!, /Aktion MarkedAsPaid:0$/);
    const order = await getEntity(live, seller, 'SalesOrders', orderId);
    assert.equal(order.MarkedAsPayed, false);
    assert.equal(order.PaymentStatus, 'Withdrawn');
  });

  test('an order-level ShippingStatus is recorded for every item, and items take 0 or 1 along', async () => {
    const n = await lineCount();
    await setClock(clock.now() + 1000);
    assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { ShippingStatus: 1 })).status, 204);
    let lines = (await history(orderId)).split('\r\n');
    assert.deepEqual(lines.slice(n).map((l) => l.replace(/^.* - ItemId /, '')), ['220000000001 - Aktion Versandstatus:1', '220000000002 - Aktion Versandstatus:1']);
    assert.equal((await getEntity(live, seller, 'SalesOrders', orderId)).MarkedAsShipped, true);
    for (const id of itemIds) assert.equal((await getEntity(live, seller, 'SalesOrderItems', id)).ShippingStatus, 1);
    assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { ShippingStatus: 2 })).status, 204);
    lines = (await history(orderId)).split('\r\n');
    assert.deepEqual(lines.slice(n + 2).map((l) => l.replace(/^.* - Aktion /, '')), ['Versandstatus:2', 'Versandstatus:2']);
    assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { ShippingStatus: 0 })).status, 204);
    assert.equal((await getEntity(live, seller, 'SalesOrders', orderId)).MarkedAsShipped, false);
    for (const id of itemIds) {
      const item = await getEntity(live, seller, 'SalesOrderItems', id);
      assert.equal(item.ShippingStatus, 0);
    }
  });

  test('a refused update leaves no history behind (one transaction)', async () => {
    const rows = await tenantRows(live, seller.accountId);
    const refused = await mergeEntity(live, seller, 'SalesOrderItems', itemIds[0]!, { ShippingStatus: '1', TrackingNumbers: 'a;b' });
    assert.equal(refused.status, 400, 'TrackingNumbers without CarrierUsed');
    assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { PaidAmount: '-1' })).status, 400);
    assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { ShippingStatus: 3 })).status, 400);
    assert.deepEqual(await tenantRows(live, seller.accountId), rows);
  });

  test('CarrierUsed and TrackingNumbers change the order, not its history', async () => {
    const n = await lineCount();
    await setClock(clock.now() + 5000);
    assert.equal((await mergeEntity(live, seller, 'SalesOrderItems', itemIds[0]!, { CarrierUsed: 'dhl', TrackingNumbers: 'a;b' })).status, 204);
    assert.equal(await lineCount(), n);
    assert.equal(jsonDate((await getEntity(live, seller, 'SalesOrders', orderId)).ModificationDate), clock.now());
  });
});
