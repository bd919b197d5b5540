/**
 * A crash of the database server during a write load: `pg_ctl stop -m immediate` (no checkpoint,
 * no clean shutdown: WAL recovery on the next start), then a restart. Afterwards every write
 * that was acknowledged is there, and every multi-row write is all or nothing:
 * - over HTTP, through a real `catalogue serve` process: product creations (acknowledged by
 *   201) and product deletions that take the product's images, specifics and variations along
 *   (acknowledged by 204);
 * - through the store from this process: transactions of ten inserts each, acknowledged when
 *   store.write resolved.
 *
 * PostgreSQL only, on a cluster of its own (crashing the shared one would fail other tests),
 * with the server's durability settings left at their defaults.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { openStore } from '../../src/store/open';
import { request, type HttpResponse } from '../support/http-client';
import { findPostgresBin, POSTGRES_INSTALL, startCluster, type Cluster } from '../support/postgres-cluster';
import { requireProgram } from '../support/requirements';
import { loginAt, serveProcess, type ServeProcess } from '../support/serve-process';
import { testEngine } from '../support/test-database';

const SERVICE = '/publicapi/v1/api.svc';
const IMAGES = 4;
const SPECIFICS = 3;
const VARIATIONS = 2;
const ROWS_PER_TRANSACTION = 10;

// Only with TEST_DATABASE_URL can the half run without the programs, and then this test cannot.
const skip = testEngine !== 'postgres' ? 'PostgreSQL only' : requireProgram("PostgreSQL's initdb and pg_ctl (for a cluster of its own)", findPostgresBin(), POSTGRES_INSTALL);

describe('a database crash during a write load', { skip, timeout: 240_000 }, () => {
  let cluster: Cluster;
  let env: Record<string, string>;
  let server: ServeProcess | undefined;

  before(async () => {
    cluster = await startCluster();
    env = { DATABASE_URL: cluster.appUrl, DATABASE_OWNER_URL: cluster.ownerUrl };
  });
  after(async () => {
    await server?.kill();
    cluster?.destroy();
  });

  test('pg_ctl stop -m immediate, restart: every acknowledged write is there, every multi-row write all or nothing', async (t) => {
    server = await serveProcess(env);
    const store = openStore(cluster.appUrl, { ownerUrl: cluster.ownerUrl });
    const account = await createAccount(store, systemClock, { userName: 'crash-seller', password: 'crash-seller-password' });
    const cookie = await loginAt(server.origin, 'crash-seller', 'crash-seller-password');
    assert.ok(cookie);
    const origin = server.origin;
    const call = (method: string, path: string, body?: unknown): Promise<HttpResponse> =>
      request(origin + SERVICE + path, {
        method,
        headers: { SubscriptionToken: account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}`, Accept: 'application/json', 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const idOf = (res: HttpResponse) => {
      assert.equal(res.status, 201, res.body);
      return String((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
    };

    // Products that own several rows each, to be deleted during the load.
    const owned = await Promise.all(
      Array.from({ length: 24 }, async (_, p) => {
        const id = idOf(await call('POST', '/Products', { Title: `owner ${p}`, Price: '1', StockAmount: 1 }));
        for (let t = 1; t <= IMAGES; t++) idOf(await call('POST', '/ProductImages', { ProductId: id, ImageUrl: `https://img.example.com/${p}-${t}.jpg`, Type: t }));
        for (let s = 0; s < SPECIFICS; s++) idOf(await call('POST', '/ProductSpecifics', { ProductId: id, Name: `n${s}`, Value: 'v' }));
        for (let v = 0; v < VARIATIONS; v++) idOf(await call('POST', '/ProductVariations', { ProductId: id, Price: '1', StockAmount: 1, Sku: `s${v}` }));
        return id;
      }),
    );

    // The load: each loop runs until its first failure after the crash.
    let crashed = false;
    const created = new Map<string, string>(); // id -> title, acknowledged
    const deleted = new Set<string>(); // acknowledged
    const deleteAttempts = new Set<string>();
    const batchesAcknowledged: string[] = [];
    const batchesAttempted: string[] = [];
    let failures = 0;
    const loop = async (step: (i: number) => Promise<void>) => {
      for (let i = 0; ; i++) {
        try {
          await step(i);
        } catch {
          failures++;
          if (crashed) return;
        }
      }
    };
    const httpCreators = Array.from({ length: 6 }, (_, w) =>
      loop(async (i) => {
        const title = `load ${w}-${i}`;
        const res = await call('POST', '/Products', { Title: title, Price: '2.5', StockAmount: i });
        if (res.status !== 201) throw new Error(`status ${res.status}`);
        created.set(idOf(res), title);
      }),
    );
    let nextOwned = 0;
    const httpDeleters = Array.from({ length: 2 }, () =>
      loop(async () => {
        const id = owned[nextOwned++];
        if (id === undefined) {
          if (crashed) throw new Error('done');
          await new Promise((r) => setTimeout(r, 20));
          return;
        }
        // Spread over the whole load, so that deletions are under way when the server stops.
        await new Promise((r) => setTimeout(r, 100));
        deleteAttempts.add(id);
        const res = await call('DELETE', `/Products(${id}L)`);
        if (res.status !== 204) throw new Error(`status ${res.status}`);
        deleted.add(id);
      }),
    );
    const storeWriters = Array.from({ length: 3 }, (_, w) =>
      loop(async (i) => {
        const batch = `batch-${w}-${i}`;
        batchesAttempted.push(batch);
        await store.write(account.accountId, async (tx) => {
          for (let k = 0; k < ROWS_PER_TRANSACTION; k++) {
            const id = await store.nextId(tx);
            const now = store.codec.encode('Edm.DateTime', Date.now());
            await tx.run(`INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`, [account.accountId, id, batch, 'false', now, now]);
          }
        });
        batchesAcknowledged.push(batch);
      }),
    );
    await new Promise((r) => setTimeout(r, 1500));
    crashed = true;
    cluster.stop('immediate');
    await Promise.all([...httpCreators, ...httpDeleters, ...storeWriters]);
    await store.close();
    // The service outlives its database: connections it lost are dropped, not fatal.
    assert.equal(server.child.exitCode, null, 'the server process is still running');
    assert.ok(created.size > 10 && batchesAcknowledged.length > 5 && deleted.size > 0, `a real load ran: ${created.size} products, ${batchesAcknowledged.length} batches, ${deleted.size} deletions acknowledged`);
    assert.ok(failures > 0, 'the crash interrupted the load');

    const interrupted = [...deleteAttempts].filter((id) => !deleted.has(id)).length;
    t.diagnostic(
      `acknowledged before the crash: ${created.size} product creations, ${deleted.size} cascading deletions, ${batchesAcknowledged.length} ten-row transactions; ` +
        `in flight: ${interrupted} deletions, ${batchesAttempted.length - batchesAcknowledged.length} transactions; ${failures} requests failed`,
    );

    // Recovery from the WAL; the same server process serves again once the database is back.
    cluster.start();
    const after = openStore(cluster.appUrl, { ownerUrl: cluster.ownerUrl });
    try {
      assert.ok(await loginAt(server.origin, 'crash-seller', 'crash-seller-password'), 'a new login works');
      for (const [id, title] of created) {
        const res = await request(`${server.origin}${SERVICE}/Products(${id}L)`, {
          headers: { SubscriptionToken: account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}`, Accept: 'application/json' },
        });
        assert.equal(res.status, 200, `acknowledged product ${id} is there`);
        assert.equal((JSON.parse(res.body) as { d: { Title: string } }).d.Title, title);
      }
      const counts = await after.read(account.accountId, async (tx) => {
        const n = async (sql: string, params: (number | bigint | string)[]) => Number((await tx.get<{ n: bigint }>(sql, params))!.n);
        const perProduct = new Map<string, number[]>();
        for (const id of owned) {
          const args = [account.accountId, BigInt(id)];
          perProduct.set(id, [
            await n(`SELECT count(*) AS n FROM products WHERE account_id = ? AND id = ?`, args),
            await n(`SELECT count(*) AS n FROM product_images WHERE account_id = ? AND product_id = ?`, args),
            await n(`SELECT count(*) AS n FROM product_specifics WHERE account_id = ? AND product_id = ?`, args),
            await n(`SELECT count(*) AS n FROM product_variations WHERE account_id = ? AND product_id = ?`, args),
          ]);
        }
        const perBatch = new Map<string, number>();
        for (const batch of batchesAttempted) perBatch.set(batch, await n(`SELECT count(*) AS n FROM catalogs WHERE account_id = ? AND name = ?`, [account.accountId, batch]));
        return { perProduct, perBatch };
      });
      const whole = [1, IMAGES, SPECIFICS, VARIATIONS];
      const none = [0, 0, 0, 0];
      for (const id of owned) {
        const rows = counts.perProduct.get(id)!;
        if (deleted.has(id)) assert.deepEqual(rows, none, `acknowledged deletion of ${id} took everything`);
        else if (deleteAttempts.has(id)) assert.ok(JSON.stringify(rows) === JSON.stringify(whole) || JSON.stringify(rows) === JSON.stringify(none), `interrupted deletion of ${id}: all or nothing, not ${rows.join('/')}`);
        else assert.deepEqual(rows, whole, `untouched product ${id}`);
      }
      for (const batch of batchesAcknowledged) assert.equal(counts.perBatch.get(batch), ROWS_PER_TRANSACTION, `acknowledged ${batch}`);
      for (const [batch, rows] of counts.perBatch) assert.ok(rows === 0 || rows === ROWS_PER_TRANSACTION, `${batch}: ${rows} rows`);
    } finally {
      await after.close();
    }
  });
});
