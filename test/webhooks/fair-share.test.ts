/**
 * One seller's slow endpoints do not hold up another seller's webhooks. Seller A subscribes four
 * endpoints that take every delivery and never answer (each holds its request until the 30 s
 * timeout); with two slots per endpoint they would take all eight slots of the process, and
 * seller B's events would wait for A's timeouts. A's share (WEBHOOK_ACCOUNT_CONCURRENCY, 4 here)
 * leaves B's endpoint slots: B's event arrives while A's requests are still held open.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { client } from '../batch/support';
import { eventually, Receiver } from './receiver';
import { ALL_EVENT_TYPES, TEST_WEBHOOK_ENV, webhooks } from './management';

const SLOW_ENDPOINTS = 4;
const ENDPOINT_SLOTS = 2;
const ACCOUNT_SLOTS = 4;
const PROCESS_SLOTS = SLOW_ENDPOINTS * ENDPOINT_SLOTS;

let live: LiveService;
let slowSeller: Seller;
let otherSeller: Seller;
const slowReceivers = Array.from({ length: SLOW_ENDPOINTS }, () => new Receiver());
const otherReceiver = new Receiver();

before(async () => {
  live = await startLive({
    env: {
      ...TEST_WEBHOOK_ENV,
      // Longer than the wait for B's event below: B cannot have waited for one of A's timeouts.
      WEBHOOK_TIMEOUT_MS: '30000',
      WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_SLOTS),
      WEBHOOK_ACCOUNT_CONCURRENCY: String(ACCOUNT_SLOTS),
      WEBHOOK_CONCURRENCY: String(PROCESS_SLOTS),
    },
  });
  slowSeller = await newSeller(live, 'slowhooks');
  otherSeller = await newSeller(live, 'otherhooks');
  for (const receiver of [...slowReceivers, otherReceiver]) await receiver.start();
});
after(async () => {
  for (const receiver of [...slowReceivers, otherReceiver]) await receiver.stop();
  await live.close();
});

const heldBySlowSeller = () => slowReceivers.reduce((n, r) => n + r.held, 0);

describe('webhooks: a seller\'s share of the process', () => {
  test('four endpoints that never answer hold their seller\'s share of the slots, and another seller\'s event arrives meanwhile', async () => {
    const slowHooks = webhooks(live.origin, slowSeller.auth);
    for (const receiver of slowReceivers) {
      receiver.mode = 'hold';
      receiver.secrets = [(await slowHooks.subscribe(receiver.url, ALL_EVENT_TYPES)).secret!];
    }
    const slowApi = client(live, slowSeller);
    // Ten events for each of the four endpoints: more than all the slots of the process.
    for (let i = 0; i < 10; i++) await slowApi.create('Products', { Title: `Slow ${i}`, Price: '1', StockAmount: 1 });
    const heldByEach = () => slowReceivers.map((r) => r.held).join(', ');
    await eventually(`seller A's endpoints holding ${ACCOUNT_SLOTS} deliveries`, () => heldBySlowSeller() >= ACCOUNT_SLOTS).catch((error: Error) => {
      throw new Error(`${error.message} (held by each: ${heldByEach()})`);
    });

    otherReceiver.secrets = [(await webhooks(live.origin, otherSeller.auth).subscribe(otherReceiver.url, ALL_EVENT_TYPES)).secret!];
    const created = await client(live, otherSeller).create('Products', { Title: 'Not held up', Price: '2', StockAmount: 2 });
    await eventually("seller B's event", () => otherReceiver.distinct().some((e) => e.entity.set === 'Products' && BigInt(e.entity.key) === BigInt(created)));

    // A's requests are all still open (none timed out, none answered), and A never held more
    // than its share: without it, its four endpoints would have taken all eight slots.
    assert.equal(heldBySlowSeller(), ACCOUNT_SLOTS, `seller A holds exactly its share (held by each: ${heldByEach()})`);
    assert.ok(slowReceivers.every((r) => r.accepted.every((a) => !a.answered)));
    assert.equal(otherReceiver.unverified.length, 0);
  });
});
