/**
 * Every event of a scripted sequence of changes reaches a receiver started by the test, signed:
 * API writes, a $batch changeset, a service operation, the platform side's order intake,
 * payment and shipment. A rolled-back changeset yields no event; another account's changes
 * never reach this account's endpoint. Then the receiver fails (500) and is down: the events
 * wait and arrive after it recovers. Then a secret rotation's overlap: both secrets sign.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { asSeller, newSeller, type LiveService, type Seller } from '../support/live-service';
import { batchBody, changesetPart, client, jsonOperation, postBatch } from '../batch/support';
import { deliver, orderDocument, paymentEvent, shipmentEvent, startWithPlatform } from '../platform/platform-client';
import { eventually, Receiver, type ReceivedEvent } from './receiver';
import { ALL_EVENT_TYPES, TEST_WEBHOOK_ENV, webhooks } from './management';

let live: LiveService;
let seller: Seller;
const receiver = new Receiver();

before(async () => {
  live = await startWithPlatform({ env: TEST_WEBHOOK_ENV });
  seller = await newSeller(live, 'hooks');
  await receiver.start();
});
after(async () => {
  await receiver.stop();
  await live.close();
});

const JSON_HEADERS = { Accept: 'application/json', 'Content-Type': 'application/json', DataServiceVersion: '1.0' };

const has = (events: readonly ReceivedEvent[], type: string, set: string, key: bigint) => events.some((e) => e.type === type && e.entity.set === set && BigInt(e.entity.key) === key);

async function merge(path: string, values: Record<string, unknown>): Promise<void> {
  const res = await asSeller(seller, `${live.root}/${path}`, { method: 'MERGE', headers: JSON_HEADERS, body: JSON.stringify(values) });
  assert.equal(res.status, 204, res.body);
}

describe('webhook deliveries', () => {
  let subscriptionId = '';

  test('every event of a scripted sequence arrives signed, once per event id, and a rolled-back changeset yields none', async () => {
    const hooks = webhooks(live.origin, seller.auth);
    const created = await hooks.subscribe(receiver.url, ALL_EVENT_TYPES);
    subscriptionId = created.id;
    assert.match(created.secret!, /^whsec_/);
    receiver.secrets = [created.secret!];
    // The secret is shown once: never again.
    assert.equal((await hooks.get(created.id)).secret, undefined);

    const api = client(live, seller);
    const p1 = await api.create('Products', { Title: 'Hook one', Price: '10', StockAmount: 4 });
    await merge(`Products(${p1}L)`, { Price: '12.5' });
    const revised = await asSeller(seller, `${live.root}/ReviseInventoryStatus?productId=${p1}L&stockAmount=9`, { method: 'POST', headers: { Accept: 'application/json' } });
    assert.equal(revised.status, 200, revised.body);
    // One changeset: a new product and a stock change of the first.
    const batch = await postBatch(
      live,
      seller,
      batchBody([changesetPart([jsonOperation('POST', 'Products', 1, { Title: 'Hook two', Price: '5', StockAmount: 1 }), jsonOperation('MERGE', `Products(${p1}L)`, 2, { StockAmount: 3 })])]),
    );
    assert.equal(batch.status, 202, batch.body);
    assert.doesNotMatch(batch.body, /HTTP\/1\.1 [45]\d\d/);
    const p2 = BigInt((await api.feed(`Products?$filter=Title eq 'Hook two'`))[0]!.Id as string);
    // A changeset whose last operation fails: nothing of it is kept, and no event tells of it.
    const rolledBack = await postBatch(
      live,
      seller,
      batchBody([changesetPart([jsonOperation('POST', 'Products', 1, { Title: 'Rolled back', Price: '1', StockAmount: 1 }), jsonOperation('MERGE', 'Products(999999999L)', 2, { StockAmount: 3 })])]),
    );
    assert.match(rolledBack.body, /HTTP\/1\.1 404/);
    assert.equal((await api.feed(`Products?$filter=Title eq 'Rolled back'`)).length, 0);
    const deleted = await asSeller(seller, `${live.root}/Products(${p2}L)`, { method: 'DELETE', headers: JSON_HEADERS });
    assert.equal(deleted.status, 204, deleted.body);
    // The platform side: an order comes in, is paid and shipped.
    const order = await deliver(live, seller.userName, orderDocument('26-77777-00001'));
    await deliver(live, seller.userName, paymentEvent('26-77777-00001'));
    await deliver(live, seller.userName, shipmentEvent('26-77777-00001'));
    const orderId = BigInt(order.id);
    const items = await api.feed(`SalesOrders(${orderId}L)/SalesOrderItems`);
    // Another account's changes are not this account's events.
    const other = await newSeller(live, 'hooks-other');
    await client(live, other).create('Products', { Title: 'Not yours', Price: '1', StockAmount: 1 });
    const marker = await api.create('Products', { Title: 'Marker', Price: '1', StockAmount: 1 });

    await eventually('the marker product event', () => has(receiver.distinct(), 'product.changed', 'Products', marker));
    const events = receiver.distinct();
    const expected: Array<[string, string, bigint]> = [
      ['product.changed', 'Products', p1],
      ['stock.changed', 'Products', p1],
      ['product.changed', 'Products', p2],
      ['product.deleted', 'Products', p2],
      ['order.created', 'SalesOrders', orderId],
      ['order.paid', 'SalesOrders', orderId],
      ...items.map((item): [string, string, bigint] => ['order.shipping_status_changed', 'SalesOrderItems', BigInt(item.Id as string)]),
    ];
    for (const [type, set, key] of expected) assert.ok(has(events, type, set, key), `no ${type} for ${set}(${key}): got ${JSON.stringify(events.map((e) => [e.type, e.entity.set, e.entity.key]))}`);
    // Only the products this account kept: not the rolled-back one, not the other account's.
    const productKeys = new Set(events.filter((e) => e.entity.set === 'Products').map((e) => BigInt(e.entity.key)));
    assert.deepEqual([...productKeys].sort(), [p1, p2, marker].sort());
    assert.equal(receiver.unverified.length, 0);
    // Each event once (the receiver answered every one), with its own id and sequence number.
    assert.equal(receiver.accepted.length, events.length);
    assert.equal(new Set(events.map((e) => e.sequence)).size, events.length);
    for (const e of events) {
      assert.equal(e.version, 1);
      assert.equal(e.account, seller.accountId);
      assert.equal(e.entity.uri, `${live.root}/${e.entity.set}(${e.entity.key}L)`);
      assert.ok(!Number.isNaN(Date.parse(e.time)));
    }
    const first = receiver.accepted[0]!;
    assert.equal(first.headers['webhook-id'], first.event.id);
    assert.match(String(first.headers['content-type']), /^application\/json/);
  });

  test('while the receiver answers 500 or is down, events wait, and arrive once it recovers', async () => {
    const api = client(live, seller);
    const hooks = webhooks(live.origin, seller.auth);
    receiver.mode = 'fail';
    const failing = await api.create('Products', { Title: 'While failing', Price: '1', StockAmount: 1 });
    await eventually('a few failed attempts', () => receiver.failedAnswers >= 3);
    assert.ok(!has(receiver.distinct(), 'product.changed', 'Products', failing));
    const waiting = (await hooks.deliveries(subscriptionId)).filter((d) => d.state === 'pending');
    assert.ok(waiting.some((d) => d.attempts >= 2 && d.lastStatus === 500 && /HTTP 500/.test(d.lastError ?? '')), JSON.stringify(waiting));
    // Down: nothing listens on the port.
    const port = receiver.port;
    await receiver.stop();
    const whileDown = await api.create('Products', { Title: 'While down', Price: '1', StockAmount: 1 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    receiver.mode = 'ok';
    await receiver.start(port);
    await eventually('the events held back', () => has(receiver.distinct(), 'product.changed', 'Products', failing) && has(receiver.distinct(), 'product.changed', 'Products', whileDown));
    assert.equal((await hooks.get(subscriptionId)).failureCount, 0);
  });

  test('a rotated secret signs beside the previous one during the overlap', async () => {
    const hooks = webhooks(live.origin, seller.auth);
    const [oldSecret] = receiver.secrets;
    const rotated = await hooks.call('POST', `/${subscriptionId}/rotate-secret`);
    assert.equal(rotated.status, 200, rotated.body);
    const newSecret = (JSON.parse(rotated.body) as { secret: string }).secret;
    assert.notEqual(newSecret, oldSecret);
    receiver.secrets = [oldSecret!, newSecret];
    const product = await client(live, seller).create('Products', { Title: 'After rotation', Price: '1', StockAmount: 1 });
    await eventually('the event after the rotation', () => has(receiver.distinct(), 'product.changed', 'Products', product));
    const arrival = receiver.accepted.find((a) => a.event.entity.key === Number(product))!;
    assert.deepEqual(arrival.verifiedWith, [oldSecret, newSecret]);
    assert.equal(String(arrival.headers['webhook-signature']).split(' ').length, 2);
  });
});
