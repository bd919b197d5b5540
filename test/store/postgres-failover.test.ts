/**
 * What a failover of PostgreSQL looks like from the service, made to happen on a throwaway
 * cluster of the test's own, with a TCP proxy of the test's own between a real `catalogue serve`
 * process and the server (./../support/tcp-proxy.ts, standing in for HAProxy):
 * - the server's backends terminated (pg_terminate_backend), as a demoted primary ends them;
 * - the server crashed (pg_ctl stop -m immediate) and started again;
 * - the proxy accepting and closing every connection, as HAProxy does while no node is primary;
 * - a COMMIT cut off before it reached the server, and one whose answer was cut off after the
 *   server committed it.
 * Checked: no answer is a 500 or wrong; a request that lost its transaction, or arrived while
 * no server took connections (after DATABASE_FAILOVER_WAIT_MS), is answered 503 with Retry-After
 * in the request's format; a COMMIT of unknown outcome is never answered 201, and the POST sent
 * again with its Idempotency-Key stores the product exactly once; /health/ready says 503 while
 * no server is reachable; afterwards everything works without a restart, and every write that
 * was acknowledged is in the database exactly once (read as the superuser).
 *
 * PostgreSQL only, on a cluster of its own (crashing the shared one would fail other tests).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { openStore } from '../../src/store/open';
import type { Store } from '../../src/store/store';
import { FailoverLoad, type LoadAccount } from '../support/failover-load';
import { reportFigures } from '../support/figures';
import { request, type HttpResponse } from '../support/http-client';
import { APP_ROLE, findPostgresBin, POSTGRES_INSTALL, startCluster, type Cluster } from '../support/postgres-cluster';
import { requireProgram } from '../support/requirements';
import { loginAt, serveProcess, type ServeProcess } from '../support/serve-process';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { testEngine } from '../support/test-database';

const SERVICE = '/publicapi/v1/api.svc';
/**
 * How long the service waits for a server to take a connection: far longer than the test's own
 * short switch back (SWITCH_BACK_MS), so that a request waiting through it succeeds on a busy machine too.
 */
const FAILOVER_WAIT_MS = 4_000;
const SWITCH_BACK_MS = 300;
const ACCOUNTS = 2;
const CLIENTS = 8;

const skip = testEngine !== 'postgres' ? 'PostgreSQL only' : requireProgram("PostgreSQL's initdb and pg_ctl (for a cluster of its own)", findPostgresBin(), POSTGRES_INSTALL);

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a failover of PostgreSQL under the service', { skip, timeout: 240_000 }, () => {
  let cluster: Cluster;
  let proxy: TcpProxy;
  let server: ServeProcess;
  let store: Store;
  const accounts: LoadAccount[] = [];

  /** The superuser's view, on a connection of its own (the server restarts in between). */
  const asAdmin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: cluster.adminUrl });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  const productsWithForeignId = (foreignId: string) =>
    asAdmin(async (c) => Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM products WHERE foreign_id = $1', [foreignId])).rows[0]!.n));
  const post = (account: LoadAccount, foreignId: string, accept = 'application/json'): Promise<HttpResponse> =>
    request(`${server.origin}${SERVICE}/Products`, {
      method: 'POST',
      headers: { ...account.auth, Accept: accept, 'Content-Type': 'application/json', 'Idempotency-Key': `key-${foreignId}` },
      body: JSON.stringify({ Title: `Produkt ${foreignId}`, Price: '1.50', StockAmount: 1, ForeignId: foreignId }),
    });
  const ready = async () => (await request(`${server.origin}/health/ready`)).status;
  const untilReady = async () => {
    for (let i = 0; i < 600 && (await ready()) !== 200; i++) await wait(100);
    assert.equal(await ready(), 200, 'ready again');
  };
  /** A 503 as a client must get it: Retry-After, and an OData error in the format it asked for. */
  const assertUnavailable = (res: HttpResponse, format: 'json' | 'xml', what: string) => {
    assert.equal(res.status, 503, `${what}: ${res.status} ${res.body}`);
    assert.match(String(res.headers['retry-after']), /^[1-9]\d*$/, `${what}: Retry-After`);
    if (format === 'json') assert.match(JSON.parse(res.body).error.message.value as string, /database/, what);
    else assert.match(res.body, /^<\?xml[^]*<error [^]*<message xml:lang="en-US">[^<]*database/, what);
  };

  before(async () => {
    cluster = await startCluster();
    proxy = await startTcpProxy(cluster.port);
    const appUrl = new URL(cluster.appUrl);
    appUrl.port = String(proxy.port);
    server = await serveProcess({
      DATABASE_URL: appUrl.toString(),
      DATABASE_OWNER_URL: cluster.ownerUrl,
      DATABASE_FAILOVER_WAIT_MS: String(FAILOVER_WAIT_MS),
      HOUSEKEEPING_INTERVAL_MS: String(3_600_000),
    });
    store = openStore(cluster.appUrl, { ownerUrl: cluster.ownerUrl });
    for (let a = 0; a < ACCOUNTS; a++) {
      const userName = `failover-seller-${a}`;
      const password = `failover-password-${a}`;
      const account = await createAccount(store, systemClock, { userName, password });
      const cookie = await loginAt(server.origin, userName, password);
      assert.ok(cookie);
      accounts.push({ accountId: account.accountId, auth: { SubscriptionToken: account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}` } });
    }
  });
  after(async () => {
    await server?.kill();
    await store?.close();
    await proxy?.close();
    cluster?.destroy();
  });

  for (const when of ['before', 'after'] as const) {
    test(`a COMMIT cut off ${when} it reached the server is answered 503, and the POST sent again with its Idempotency-Key stores one product`, async () => {
      const account = accounts[0]!;
      for (const format of ['json', 'xml'] as const) {
        const foreignId = `commit-${when}-${format}`;
        const cut = proxy.cutAtCommit(when);
        const first = await post(account, foreignId, format === 'json' ? 'application/json' : 'application/atom+xml');
        await cut;
        assertUnavailable(first, format, `the POST whose COMMIT was cut ${when}`);
        assert.match(first.body, /may or may not have been stored/, 'the answer says the outcome is unknown');
        assert.equal(await productsWithForeignId(foreignId), when === 'after' ? 1 : 0, when === 'after' ? 'the server committed it' : 'nothing was committed');

        const again = await post(account, foreignId);
        assert.equal(again.status, 201, again.body);
        assert.equal(again.headers['idempotent-replayed'], when === 'after' ? 'true' : undefined, 'a replay exactly when the first attempt had committed');
        assert.equal(await productsWithForeignId(foreignId), 1, 'one product, whichever way the COMMIT went');
      }
    });
  }

  test('a request that finds no server waits for one, for up to DATABASE_FAILOVER_WAIT_MS, then is answered 503', async () => {
    const account = accounts[1]!;
    proxy.setMode('close');
    assert.equal(await ready(), 503, 'not ready while no server takes connections');
    const waiting = post(account, 'waited-through');
    await wait(SWITCH_BACK_MS);
    proxy.setMode('forward');
    const res = await waiting;
    assert.equal(res.status, 201, `the request waited for the server: ${res.body}`);
    assert.equal(await ready(), 200);

    proxy.setMode('close');
    try {
      assertUnavailable(await post(account, 'no-server', 'application/atom+xml'), 'xml', 'a POST while no server takes connections');
      const read = await request(`${server.origin}${SERVICE}/Products`, { headers: { ...account.auth, Accept: 'application/json' } });
      assertUnavailable(read, 'json', 'a GET while no server takes connections');
    } finally {
      proxy.setMode('forward');
    }
    assert.equal(await productsWithForeignId('no-server'), 0);
    assert.equal((await post(account, 'after-the-switch')).status, 201, 'served again without a restart');
  });

  test('backends terminated, the server crashed and restarted, no server behind the proxy, under load: 2xx or 503 only, every acknowledged write stored once', async (t) => {
    const load = new FailoverLoad(server.origin, accounts, CLIENTS);
    load.start();
    await wait(1000);

    // A demoted primary ends its sessions: the pool's connections break under the requests.
    const terminatedAt = performance.now();
    for (let i = 0; i < 3; i++) {
      const ended = await asAdmin(async (c) => (await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [APP_ROLE])).rowCount);
      assert.ok((ended ?? 0) > 0, 'the service had connections to end');
      await wait(500);
    }
    await wait(500);

    // The primary crashes; while it is down, requests wait, then get 503; readiness says so.
    const crashedAt = performance.now();
    cluster.stop('immediate');
    assert.equal(await ready(), 503, 'not ready while the server is down');
    await wait(FAILOVER_WAIT_MS + 1000);
    cluster.start();
    const restartedAt = performance.now();
    await untilReady();
    await wait(1000);

    // No primary behind the balancer: it accepts and closes.
    const closedAt = performance.now();
    proxy.setMode('close');
    assert.equal(await ready(), 503, 'not ready while the balancer has no server');
    await wait(FAILOVER_WAIT_MS + 1000);
    proxy.setMode('forward');
    const forwardedAt = performance.now();
    await untilReady();
    await wait(1000);

    await load.stop();
    await load.settle();
    assert.deepEqual(load.wrong, [], 'no answer was a 500 or wrong');
    assert.equal(load.count(500), 0);
    assert.ok(load.count(503) > 0, 'the outages were answered 503');
    assert.equal(load.pending.size, 0, 'every POST got its 201 in the end');
    assert.equal(server.child.exitCode, null, 'the same process served throughout');

    const rows = await asAdmin(async (c) => (await c.query<{ account_id: string; id: string; foreign_id: string }>(`SELECT account_id::text, id::text, foreign_id FROM products WHERE foreign_id LIKE 'load-%'`)).rows);
    const byForeignId = new Map<string, typeof rows>();
    for (const row of rows) byForeignId.set(row.foreign_id, [...(byForeignId.get(row.foreign_id) ?? []), row]);
    const duplicates = [...byForeignId].filter(([, r]) => r.length > 1).map(([f]) => f);
    assert.deepEqual(duplicates, [], 'no product was created twice');
    let lost = 0;
    for (const [foreignId, write] of load.acknowledged) {
      const row = byForeignId.get(foreignId)?.[0];
      if (!row || row.id !== write.id || Number(row.account_id) !== write.accountId) lost++;
    }
    assert.equal(lost, 0, 'no acknowledged write is missing');
    assert.equal(rows.length, load.acknowledged.size, 'nothing was stored that no client was told about');
    reportFigures(
      'postgres-failover',
      {
        acknowledgedWrites: load.acknowledged.size,
        answered503: load.count(503),
        cutConnections: load.count(0),
        answered500: load.count(500),
        acknowledgedLost: lost,
        committedUnacknowledged: load.committedUnacknowledged(),
        duplicates: duplicates.length,
        // From the fault to the first write that succeeded, sent after the first failure it caused.
        writeAfterTerminateMs: Math.round(load.recoveryMs(terminatedAt) ?? -1),
        writeAfterCrashMs: Math.round(load.recoveryMs(crashedAt) ?? -1),
        writeAfterNoServerMs: Math.round(load.recoveryMs(closedAt) ?? -1),
        // From the server's return to the first write sent after it that succeeded.
        writeAfterRestartMs: Math.round(load.firstWriteAfter(restartedAt) ?? -1),
        writeAfterProxyBackMs: Math.round(load.firstWriteAfter(forwardedAt) ?? -1),
      },
      t,
    );
  });
});
