/**
 * GET /metrics against a live `catalogue serve` (a child process, as an operator runs it), read
 * with a Prometheus text-format parser: off unless configured; behind the bearer token; moving
 * when requests, logins and a $batch are made; no label holding anything of a caller; and with
 * `--workers 2` on METRICS_PORT, one scrape is the sum over both workers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pg from 'pg';
import { createAccount, type CreatedAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { openStore } from '../../src/store/open';
import { request } from '../support/http-client';
import { freePort } from '../support/postgres-cluster';
import { scrape } from '../support/prometheus';
import { loginAt, serveProcess, type ServeProcess } from '../support/serve-process';
import { freshDatabase, testEngine, type TestDatabase } from '../support/test-database';

const SERVICE = '/publicapi/v1/api.svc';
const TOKEN = 'metrics-token-0123456789abcdef';

/** An account whose id is `id` (ids are handed out in order; the ones before it are left unused). */
async function account(database: TestDatabase, userName: string, id: number): Promise<CreatedAccount & { password: string }> {
  const store = openStore(database.url, { ownerUrl: database.ownerUrl });
  try {
    await store.migrate();
    await store.writeDirectory((tx) => tx.run(`INSERT INTO accounts (id, user_name, password_hash, created_at) VALUES (?, 'placeholder', 'x', 0)`, [id - 1]));
    if (store.engine === 'postgres') {
      // The sequence belongs to the owner role.
      const owner = new pg.Client({ connectionString: database.ownerUrl ?? database.url });
      await owner.connect();
      await owner.query(`SELECT setval(pg_get_serial_sequence('accounts', 'id'), $1)`, [id - 1]).finally(() => owner.end());
    }
    const password = `${userName}-password`;
    return { ...(await createAccount(store, systemClock, { userName, password })), password };
  } finally {
    await store.close();
  }
}

function batchOfTwoCreates(): string {
  const create = (title: string) =>
    ['--cs', 'Content-Type: application/http', 'Content-Transfer-Encoding: binary', '', 'POST Products HTTP/1.1', 'Content-Type: application/json', '', JSON.stringify({ Title: title, Price: '5', StockAmount: 1 })].join('\r\n');
  return ['--b', 'Content-Type: multipart/mixed; boundary=cs', '', create('one'), create('two'), '--cs--', '--b--', ''].join('\r\n');
}

describe('metrics of one process, behind METRICS_TOKEN', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let serve: ServeProcess;
  let seller: CreatedAccount & { password: string; cookie: string };

  before(async () => {
    database = await freshDatabase();
    const created = await account(database, 'metrics-seller', 4242);
    serve = await serveProcess({ ...database.env, METRICS_TOKEN: TOKEN });
    const cookie = await loginAt(serve.origin, created.userName, created.password);
    assert.ok(cookie);
    seller = { ...created, cookie };
  });
  after(() => serve?.stop());

  test('the start log line and /metrics name the better-sqlite3 build that serves, as its addon says', { skip: testEngine !== 'sqlite' && 'SQLite only' }, async () => {
    // Asked of the addon file itself: the patch's marker (see src/store/sqlite/driver-build.ts).
    const addon = require(path.join(path.dirname(require.resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node')) as { catalogueRowsInOneCall?: boolean };
    const expected = Number(process.versions.modules) >= 127 ? 'upstream' : addon.catalogueRowsInOneCall === true ? 'patched' : 'unpatched';
    const started = serve.output().split('\n').filter((line) => line.includes('"msg":"catalogue-service listening"')).map((line) => JSON.parse(line) as { sqliteBuild?: string });
    assert.deepEqual(started.map((line) => line.sqliteBuild), [expected], serve.output());
    const metrics = await scrape(serve.origin + '/metrics', TOKEN);
    assert.equal(metrics.value('catalogue_sqlite_build_info', { build: expected }), 1);
    assert.equal(metrics.family('catalogue_sqlite_build_info').metrics.length, 1, 'one build');
  });

  test('without the token, or with another one, /metrics is a 401 that asks for a bearer token', async () => {
    const attempts: Record<string, string>[] = [{}, { Authorization: 'Bearer wrong-token-0123456789abcdef' }, { Authorization: `Basic ${TOKEN}` }, { Authorization: `Bearer ${TOKEN}x` }];
    for (const headers of attempts) {
      const res = await request(serve.origin + '/metrics', { headers });
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="metrics"');
      assert.doesNotMatch(res.body, /catalogue_/);
    }
    assert.equal((await request(serve.origin + '/metrics', { method: 'POST', body: '', headers: { Authorization: `Bearer ${TOKEN}` } })).status, 405);
  });

  test('requests, logins and a $batch move the counters; no label holds a user, token or id', async () => {
    const url = serve.origin + '/metrics';
    const before = await scrape(url, TOKEN);
    const auth = { SubscriptionToken: seller.subscriptionToken, Cookie: `.ASPXAUTH=${seller.cookie}` };
    for (let i = 0; i < 3; i++) assert.equal((await request(`${serve.origin}${SERVICE}/$metadata`, { headers: auth })).status, 200);
    assert.equal((await request(`${serve.origin}${SERVICE}/Products(424242)`, { headers: auth })).status, 404);
    assert.ok(await loginAt(serve.origin, seller.userName, seller.password));
    assert.equal(await loginAt(serve.origin, seller.userName, 'not-the-password'), undefined);
    const batch = await request(`${serve.origin}${SERVICE}/$batch`, { method: 'POST', headers: { ...auth, 'Content-Type': 'multipart/mixed; boundary=b' }, body: batchOfTwoCreates() });
    assert.equal(batch.status, 202, batch.body);
    assert.match(batch.body, /HTTP\/1\.1 201/);
    // A path that is not valid percent-encoded UTF-8 is counted (as an unknown kind), not a fault.
    assert.equal((await request(`${serve.origin}${SERVICE}/Products%E0%A4%A`, { headers: auth })).status, 400);
    const after = await scrape(url, TOKEN);

    const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
    assert.equal(moved('catalogue_http_requests_total', { kind: 'metadata', method: 'GET', status: '200' }), 3);
    assert.equal(moved('catalogue_http_requests_total', { kind: 'entity', method: 'GET', status: '404' }), 1);
    assert.equal(moved('catalogue_http_requests_total', { kind: 'unknown', method: 'GET', status: '400' }), 1);
    assert.equal(moved('catalogue_http_requests_total', { kind: 'batch', method: 'POST', status: '202' }), 1);
    assert.equal(moved('catalogue_http_requests_total', { kind: 'login', method: 'POST', status: '200' }), 2);
    assert.equal(moved('catalogue_logins_total', { outcome: 'success' }), 1);
    assert.equal(moved('catalogue_logins_total', { outcome: 'failure' }), 1);
    const latency = (s: typeof after) => s.histogram('catalogue_http_request_duration_seconds', { kind: 'metadata' }).count;
    assert.equal(latency(after) - latency(before), 3);
    assert.equal(after.histogram('catalogue_batch_parts').count - before.histogram('catalogue_batch_parts').count, 1);
    assert.equal(after.histogram('catalogue_batch_changeset_operations').sum - before.histogram('catalogue_batch_changeset_operations').sum, 2);
    // The scrape itself is in flight while it is answered.
    assert.ok(after.value('catalogue_http_requests_in_flight') >= 1);
    if (testEngine === 'sqlite') {
      assert.ok(after.histogram('catalogue_sqlite_group_commit_writes').sum > before.histogram('catalogue_sqlite_group_commit_writes').sum);
      after.family('catalogue_sqlite_write_queue_depth');
    } else {
      // Which state a connection is in at the scrape's instant is not fixed (a background task, such
      // as the webhooks' poll, may hold the one that was idle), so the test asks that the process
      // holds connections at all, and that every state is reported.
      const pool = (state: string) => after.value('catalogue_postgres_pool_connections', { state });
      assert.ok(pool('in_use') + pool('idle') >= 1, 'the pool holds a connection');
      const states = after.family('catalogue_postgres_pool_connections').metrics.map((m) => m.labels?.['state']);
      assert.deepEqual(states.sort(), ['idle', 'in_use', 'waiting']);
    }
    assert.ok(after.value('process_resident_memory_bytes') > 0);
    assert.equal(after.value('catalogue_processes'), 1);
    after.family('nodejs_eventloop_lag_p99_seconds');

    const labels = after.labelValues();
    for (const secret of [seller.userName, seller.subscriptionToken, seller.cookie, '424242']) {
      assert.ok(!labels.some((v) => v.includes(secret)), `no label holds ${secret}`);
    }
    assert.ok(seller.accountId > 1000, 'an account id that no bucket bound or status could stand for');
    assert.ok(!labels.includes(String(seller.accountId)), 'no label is the account id');
  });
});

describe('metrics are off by default', { timeout: 60_000 }, () => {
  test('without METRICS_TOKEN or METRICS_PORT, /metrics does not exist', async () => {
    const serve = await serveProcess((await freshDatabase()).env);
    try {
      assert.equal((await request(serve.origin + '/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } })).status, 404);
    } finally {
      await serve.stop();
    }
  });
});

describe('metrics of `serve --workers 2` on METRICS_PORT', { timeout: 120_000 }, () => {
  let serve: ServeProcess;
  let metricsPort: number;

  before(async () => {
    const database = await freshDatabase();
    metricsPort = await freePort();
    serve = await serveProcess({ ...database.env, METRICS_PORT: String(metricsPort) }, ['--workers', '2']);
  });
  after(() => serve?.stop());

  test('one scrape is the sum over the workers; the service port has no /metrics', async () => {
    const url = `http://127.0.0.1:${metricsPort}/metrics`;
    const alive = (s: Awaited<ReturnType<typeof scrape>>) => s.value('catalogue_http_requests_total', { kind: 'health', method: 'GET', status: '200' });
    const first = await scrape(url);
    // Separate connections, so that both workers take some of them.
    const count = 40;
    await Promise.all(Array.from({ length: count }, async () => assert.equal((await request(serve.origin + '/health')).status, 200)));
    const second = await scrape(url);
    assert.equal(alive(second) - alive(first), count);
    assert.equal(second.value('catalogue_processes'), 2, 'both workers are in the sum');
    assert.ok(second.value('process_resident_memory_bytes') > 0);
    assert.equal((await request(serve.origin + '/metrics')).status, 404);
    // The metrics port answers /metrics only.
    assert.equal((await request(`http://127.0.0.1:${metricsPort}/health`)).status, 404);
  });
});

describe('metrics of `serve --workers 2` behind METRICS_TOKEN on the shared port', { timeout: 120_000 }, () => {
  test('a scrape that reaches any worker answers with the sum over both', async () => {
    const serve = await serveProcess({ ...(await freshDatabase()).env, METRICS_TOKEN: TOKEN }, ['--workers', '2']);
    try {
      assert.equal((await request(serve.origin + '/metrics')).status, 401);
      // Several scrapes on new connections: whichever worker takes one, it answers for both.
      for (let i = 0; i < 4; i++) assert.equal((await scrape(serve.origin + '/metrics', TOKEN)).value('catalogue_processes'), 2);
      const first = await scrape(serve.origin + '/metrics', TOKEN);
      await Promise.all(Array.from({ length: 20 }, async () => assert.equal((await request(serve.origin + '/health/ready')).status, 200)));
      const second = await scrape(serve.origin + '/metrics', TOKEN);
      const ready = (s: typeof first) => s.value('catalogue_http_requests_total', { kind: 'health', method: 'GET', status: '200' });
      assert.equal(ready(second) - ready(first), 20);
    } finally {
      await serve.stop();
    }
  });
});
