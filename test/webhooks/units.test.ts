/**
 * The webhook worker's pure parts: which events a change stands for, the Standard Webhooks
 * signature (checked with the specification's own verifier, the `standardwebhooks` package, as a
 * receiver would), the address guard's ranges, and the retry schedule.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { eventsOf } from '../../src/webhooks/event-types';
import type { ChangeRow } from '../../src/store/change-log';
import { newSecret, signedHeaders, verify } from '../../src/webhooks/signing';
import { checkEndpoint, refusedAddress } from '../../src/webhooks/address-guard';
import { retryDelay } from '../../src/webhooks/deliveries';

const change = (entitySet: string, kind: ChangeRow['kind'], properties: string[] = []): ChangeRow => ({ seq: 1n, entitySet, entityId: 7n, kind, changedProperties: properties, changedAt: 0 });

test('each change stands for the events its set, kind and changed properties name', () => {
  assert.deepEqual(eventsOf(change('SalesOrders', 'created')), ['order.created']);
  assert.deepEqual(eventsOf(change('SalesOrders', 'deleted')), ['order.deleted']);
  assert.deepEqual(eventsOf(change('SalesOrders', 'changed', ['PaymentStatus'])), ['order.paid']);
  assert.deepEqual(eventsOf(change('SalesOrders', 'changed', ['MarkedAsPayed', 'MarkedAsShipped'])), ['order.paid', 'order.shipping_status_changed']);
  assert.deepEqual(eventsOf(change('SalesOrders', 'changed', [])), []);
  assert.deepEqual(eventsOf(change('SalesOrderItems', 'changed', ['ShippingStatus'])), ['order.shipping_status_changed']);
  assert.deepEqual(eventsOf(change('SalesOrderItems', 'created')), []);
  assert.deepEqual(eventsOf(change('Products', 'created')), ['product.changed']);
  assert.deepEqual(eventsOf(change('Products', 'changed', ['Price'])), ['product.changed']);
  assert.deepEqual(eventsOf(change('Products', 'changed', ['StockAmount'])), ['product.changed', 'stock.changed']);
  assert.deepEqual(eventsOf(change('Products', 'deleted')), ['product.deleted']);
  assert.deepEqual(eventsOf(change('ProductVariations', 'changed', ['StockAmount'])), ['stock.changed']);
  assert.deepEqual(eventsOf(change('ProductVariations', 'changed', ['Price'])), []);
  assert.deepEqual(eventsOf(change('ListingItems', 'changed', ['Quantity'])), ['listing_item.changed']);
  assert.deepEqual(eventsOf(change('Listings', 'created')), ['listing.changed']);
  assert.deepEqual(eventsOf(change('Categories', 'created')), []);
});

test('a signed delivery verifies with the Standard Webhooks reference verifier, with either secret during a rotation', () => {
  const current = newSecret();
  const previous = newSecret();
  const body = JSON.stringify({ id: 'e1', type: 'order.created', version: 1 });
  const now = Math.floor(Date.now() / 1000);
  const headers = signedHeaders([current, previous], 'e1', now, body);
  assert.match(headers['webhook-signature']!, /^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
  for (const secret of [current, previous]) {
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.equal(verify(secret, { id: headers['webhook-id']!, timestamp: headers['webhook-timestamp']!, signature: headers['webhook-signature']! }, body, now), true);
  }
  // Another secret, another body, or an old timestamp: refused.
  assert.throws(() => new Webhook(newSecret()).verify(body, headers));
  assert.throws(() => new Webhook(current).verify(body.replace('e1', 'e2'), headers));
  const old = signedHeaders([current], 'e1', now - 3600, body);
  assert.throws(() => new Webhook(current).verify(body, old));
  assert.equal(verify(current, { id: 'e1', timestamp: old['webhook-timestamp']!, signature: old['webhook-signature']! }, body, now), false);
});

test('loopback, private, link-local, CGNAT, multicast and metadata addresses are refused, in IPv4-mapped form too', () => {
  for (const address of ['127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', 'ff02::1']) {
    assert.ok(refusedAddress(address), `${address} was allowed`);
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '172.32.0.1', '100.128.0.1']) {
    assert.equal(refusedAddress(address), undefined, `${address} was refused`);
  }
});

test('registration refuses http without the setting, literal private hosts, and names resolving to loopback', async () => {
  const strict = { allowHttp: false, allowPrivateAddresses: false };
  await assert.rejects(checkEndpoint('http://93.184.216.34/hook', strict), /https/);
  await assert.rejects(checkEndpoint('https://127.0.0.1/hook', strict), /127\.0\.0\.1/);
  await assert.rejects(checkEndpoint('https://10.0.0.1/hook', strict), /10\.0\.0\.1/);
  await assert.rejects(checkEndpoint('https://[::ffff:127.0.0.1]/hook', strict), /loopback/);
  await assert.rejects(checkEndpoint('https://localhost/hook', strict), /resolves to/);
  await assert.rejects(checkEndpoint('https://user:pw@93.184.216.34/hook', strict), /user name/);
  assert.equal((await checkEndpoint('https://93.184.216.34/hook', strict)).hostname, '93.184.216.34');
  assert.equal((await checkEndpoint('http://127.0.0.1:9/hook', { allowHttp: true, allowPrivateAddresses: true })).port, '9');
});

test('retries back off exponentially, with jitter, up to the longest delay', () => {
  const settings = { retryBaseMs: 1_000, retryMaxMs: 60_000 };
  assert.equal(retryDelay(1, settings, () => 1), 1_000);
  assert.equal(retryDelay(1, settings, () => 0), 500);
  assert.equal(retryDelay(4, settings, () => 1), 8_000);
  assert.equal(retryDelay(30, settings, () => 1), 60_000);
  assert.equal(retryDelay(300, settings, () => 0.5), 45_000);
});
