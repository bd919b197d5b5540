/**
 * Several processes and kill -9. `catalogue serve` child processes on one database of the engine
 * under test:
 * - with --workers 2, every event is delivered once: one process leases each delivery;
 * - killed with SIGKILL while the receiver holds deliveries open (it has them, but never
 *   answered), then restarted: every committed change's event arrives, and the ones sent again
 *   carry the event id they had;
 * - the operator's `catalogue webhook` commands list the subscription and its deliveries and
 *   redeliver one event, which arrives again with its id.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../support/http-client';
import { runCli } from '../support/cli-process';
import { deploymentAccount, serveProcess, type ServeProcess } from '../support/serve-process';
import { freshDatabase, type TestDatabase } from '../support/test-database';
import { eventually, Receiver } from './receiver';
import { TEST_WEBHOOK_ENV, webhooks } from './management';

const ROOT = '/publicapi/v1/api.svc';
// A short attempt timeout: a lease (ten attempts' worth) then ends 6 s after a killed process took it.
const ENV = { ...TEST_WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: '500' };

async function createProduct(origin: string, auth: Record<string, string>, title: string): Promise<number> {
  const res = await request(`${origin}${ROOT}/Products`, {
    method: 'POST',
    headers: { ...auth, Accept: 'application/json', 'Content-Type': 'application/json', DataServiceVersion: '1.0' },
    body: JSON.stringify({ Title: title, Price: '1', StockAmount: 1 }),
  });
  assert.equal(res.status, 201, res.body);
  return Number((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
}

/** The product.changed event ids the receiver got, by product. */
function eventIdsByProduct(receiver: Receiver): Map<number, Set<string>> {
  const ids = new Map<number, Set<string>>();
  for (const { event } of receiver.accepted) {
    if (event.type !== 'product.changed') continue;
    ids.set(event.entity.key, (ids.get(event.entity.key) ?? new Set()).add(event.id));
  }
  return ids;
}

describe('webhooks across processes', () => {
  let database: TestDatabase;
  const receiver = new Receiver();
  let running: ServeProcess | undefined;
  before(async () => {
    database = await freshDatabase();
    await receiver.start();
  });
  after(async () => {
    await running?.stop();
    await receiver.stop();
  });

  test('with two worker processes each event arrives once', async () => {
    running = await serveProcess({ ...database.env, ...ENV }, ['--workers', '2']);
    const { auth } = await deploymentAccount(running.origin, database.env, 'hook-workers');
    const created = await webhooks(running.origin, auth).subscribe(receiver.url, ['product.changed']);
    receiver.secrets = [created.secret!];
    const products = await Promise.all(Array.from({ length: 20 }, (_, i) => createProduct(running!.origin, auth, `Workers ${i}`)));
    await eventually('every product event', () => products.every((p) => eventIdsByProduct(receiver).has(p)));
    // A moment for a duplicate, had two processes sent one delivery, to arrive too.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = receiver.accepted.filter((a) => products.includes(a.event.entity.key));
    assert.equal(events.length, products.length, 'an event arrived twice');
    await running.stop();
    running = undefined;
  });

  test('killed with SIGKILL mid-delivery and restarted: no committed change is missing, and duplicates carry the same event id', async () => {
    running = await serveProcess({ ...database.env, ...ENV });
    const { auth } = await deploymentAccount(running.origin, database.env, 'hook-killed');
    const created = await webhooks(running.origin, auth).subscribe(receiver.url, ['product.changed']);
    receiver.secrets = [created.secret!];
    const before = receiver.accepted.length;
    receiver.mode = 'hold';
    const products: number[] = [];
    for (let i = 0; i < 6; i++) products.push(await createProduct(running.origin, auth, `Before kill ${i}`));
    // The receiver has deliveries it never answered: they are leased, in flight, when the process dies.
    await eventually('deliveries held open', () => receiver.held >= 2);
    await running.kill();
    receiver.mode = 'ok';
    running = await serveProcess({ ...database.env, ...ENV });
    for (let i = 0; i < 2; i++) products.push(await createProduct(running.origin, auth, `After restart ${i}`));
    const answered = () => new Set(receiver.accepted.filter((a) => a.answered).map((a) => a.event.entity.key));
    await eventually("every committed change's event, answered", () => products.every((p) => answered().has(p)), 30_000);
    const ids = eventIdsByProduct(receiver);
    for (const p of products) assert.equal(ids.get(p)!.size, 1, `product ${p} arrived with more than one event id`);
    // The held ones were sent again after the lease ran out: duplicates, with their first id.
    const received = receiver.accepted.slice(before).filter((a) => products.includes(a.event.entity.key));
    assert.ok(received.length > products.length, `no delivery was sent again (${received.length} for ${products.length} products)`);
  });

  test('the operator lists subscriptions and deliveries and redelivers an event from the command line', async () => {
    const env = { ...database.env, LOG_LEVEL: 'silent' };
    const list = await runCli(env, ['webhook', 'list', '--user', 'hook-killed']);
    assert.equal(list.status, 0, list.stderr);
    const [subscription] = list.lines<{ id: string; url: string; enabled: boolean; secret?: string }>();
    assert.equal(subscription!.url, receiver.url);
    assert.equal(subscription!.enabled, true);
    assert.equal(subscription!.secret, undefined);
    const deliveries = await runCli(env, ['webhook', 'deliveries', '--user', 'hook-killed', '--id', subscription!.id]);
    assert.equal(deliveries.status, 0, deliveries.stderr);
    const delivered = deliveries.lines<{ eventId: string; state: string }>().find((d) => d.state === 'delivered')!;
    const before = receiver.accepted.filter((a) => a.event.id === delivered.eventId).length;
    const again = await runCli(env, ['webhook', 'redeliver', '--user', 'hook-killed', '--id', subscription!.id, '--event', delivered.eventId]);
    assert.equal(again.status, 0, again.stderr);
    await eventually('the redelivered event', () => receiver.accepted.filter((a) => a.event.id === delivered.eventId && a.answered).length > before);
    const unknown = await runCli(env, ['webhook', 'redeliver', '--user', 'hook-killed', '--id', subscription!.id, '--event', 'no-such-event']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /no delivery 'no-such-event'/);
  });
});
