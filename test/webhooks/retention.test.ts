/**
 * The housekeeping forgets webhook deliveries that ended (delivered) longer ago than the
 * retention (CHANGE_RETENTION_DAYS), and keeps younger ones and any that are still pending.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { createEntity } from '../support/live-client';
import { runHousekeeping } from '../../src/server/housekeeping';
import { eventually, Receiver } from './receiver';
import { TEST_WEBHOOK_ENV, webhooks } from './management';

let live: LiveService;
let seller: Seller;
const receiver = new Receiver();

before(async () => {
  live = await startLive({ env: TEST_WEBHOOK_ENV });
  seller = await newSeller(live, 'hook-retention');
  await receiver.start();
});
after(async () => {
  await receiver.stop();
  await live.close();
});

test('ended deliveries older than the retention are deleted; younger and pending ones stay', async () => {
  const hooks = webhooks(live.origin, seller.auth);
  const answered = await hooks.subscribe(receiver.url, ['product.changed']);
  receiver.secrets = [answered.secret!];
  // A documentation address (TEST-NET-2): nothing answers, its delivery stays pending.
  const unanswered = await hooks.subscribe('http://198.51.100.1/hooks', ['product.changed']);
  await createEntity(live, seller, 'Products', { Title: 'Kept a while', Price: '3', StockAmount: 1 });
  await eventually('the delivery to the receiver', async () => (await hooks.deliveries(answered.id)).some((d) => d.state === 'delivered'));
  await eventually('the pending delivery', async () => (await hooks.deliveries(unanswered.id)).length > 0);
  assert.equal((await hooks.deliveries(unanswered.id))[0]!.state, 'pending');

  const { store, sessions } = live.service.app;
  const day = 86_400_000;
  // Read through the store: the housekeeping's later clock also ends the seller's session.
  const rowsOf = async (subscriptionId: string) =>
    (await store.read(seller.accountId, (tx) => tx.all<{ state: string }>('SELECT state FROM webhook_deliveries WHERE account_id = ? AND subscription_id = ?', [seller.accountId, subscriptionId]))).map((r) => r.state);
  const young = await runHousekeeping(store, sessions, { now: () => Date.now() + 29 * day }, 30);
  assert.equal(young.webhookDeliveries, 0);
  assert.deepEqual(await rowsOf(answered.id), ['delivered']);

  const old = await runHousekeeping(store, sessions, { now: () => Date.now() + 31 * day }, 30);
  assert.equal(old.webhookDeliveries, 1);
  assert.deepEqual(await rowsOf(answered.id), []);
  assert.deepEqual(await rowsOf(unanswered.id), ['pending'], 'a pending delivery is never pruned');
});
