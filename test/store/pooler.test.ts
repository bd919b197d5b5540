/**
 * The service through a real pgbouncer in transaction pooling mode (DATABASE_PREPARED_STATEMENTS
 * =false): login, reads (by key, filtered, a streamed export whose cursor pages interleave with
 * its expansions), writes, `$batch` changesets, and the tenant fence, with the pooler holding
 * fewer server connections than the service's pool, so one client's consecutive transactions
 * run on different server connections.
 *
 * PostgreSQL half only; skipped, saying why, when pgbouncer is not installed (`.ci/run` installs
 * Debian's package, so CI runs it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { asSeller, login, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { freshDatabase, testEngine } from '../support/test-database';
import { findPgbouncer, PGBOUNCER_INSTALL, startPgbouncer, type Pgbouncer } from '../support/pgbouncer';
import { requireProgram } from '../support/requirements';
import { seedCatalogue } from '../support/catalogue-seed';
import { batchBody, changesetAnswers, changesetPart, client, jsonOperation, postBatch, readBatchAnswer } from '../batch/support';
import { FETCH_ROWS } from '../../src/store/postgres/executor';
import { openStore } from '../../src/store/open';

// Under REQUIRE_ALL=1 or REQUIRE_POSTGRES=1 (CI) a missing pgbouncer fails the suite instead of skipping it.
const skip =
  testEngine !== 'postgres'
    ? 'PostgreSQL only: pgbouncer pools PostgreSQL connections'
    : requireProgram('pgbouncer', findPgbouncer(), PGBOUNCER_INSTALL, { postgres: true });

describe('through pgbouncer in transaction pooling mode', { skip }, () => {
  let bouncer: Pgbouncer;
  let live: LiveService;
  let appUrlThroughPooler: string;
  let a: Seller;
  let b: Seller;
  const SEEDED = FETCH_ROWS + 50;

  before(async () => {
    const database = await freshDatabase();
    bouncer = await startPgbouncer({ serverPort: Number(new URL(database.url).port), poolSize: 3 });
    appUrlThroughPooler = bouncer.through(database.url);
    live = await startLive({
      database,
      env: {
        // Both roles through the pooler: the migration runs as one transaction too.
        DATABASE_URL: appUrlThroughPooler,
        DATABASE_OWNER_URL: bouncer.through(database.ownerUrl ?? database.url),
        DATABASE_PREPARED_STATEMENTS: 'false',
        // More client connections than the pooler's 3 server connections.
        DATABASE_POOL_SIZE: '8',
      },
    });
    a = await newSeller(live, 'pooled-a');
    b = await newSeller(live, 'pooled-b');
    const { app } = live.service;
    await seedCatalogue(app.model, app.store, app.entities, a.accountId, SEEDED);
  });
  after(async () => {
    await live?.close();
    await bouncer?.stop();
  });

  test('login: a right password gets a session cookie, a wrong one none, and a request needs both credentials', async () => {
    assert.ok(await login(live, a.userName, a.password));
    assert.equal(await login(live, a.userName, 'wrong-password'), undefined);
    const ok = await asSeller(a, `${live.root}/`, { headers: { Accept: 'application/json' } });
    assert.equal(ok.status, 200, ok.body);
    const noCookie = await asSeller(a, `${live.root}/`, { headers: { Accept: 'application/json', Cookie: '' } });
    assert.equal(noCookie.status, 401);
  });

  test('reads: by key, filtered, and a streamed export with expansions past one cursor page', async () => {
    const api = client(live, a);
    const products = await api.feed('Products?$orderby=Id&$expand=ProductSpecifics,ProductVariations/ProductVariationSpecifics');
    assert.equal(products.length, SEEDED);
    const many = (value: unknown) => (Array.isArray(value) ? value : (value as { results: unknown[] }).results);
    for (const p of products) {
      assert.equal(many(p.ProductSpecifics).length, 5);
      assert.equal(many(p.ProductVariations).length, 10);
    }
    const first = products[0]!;
    const one = await api.get(`Products(${String(first.Id)}L)`);
    assert.equal(one?.Title, first.Title);
    const filtered = await api.feed(`Products?$filter=ForeignId eq 'F-7'`);
    assert.deepEqual(filtered.map((p) => p.Title), ['Produkt 7 – Größe']);
  });

  test('writes from 40 concurrent requests: every create, update and delete answers 2xx and reads back', async () => {
    const api = client(live, a);
    const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => api.create('Catalogs', { Name: `Gepoolt ${i}` })));
    const json = { Accept: 'application/json', 'Content-Type': 'application/json', DataServiceVersion: '1.0' };
    const merges = await Promise.all(
      ids.map((id, i) => asSeller(a, `${live.root}/Catalogs(${id}L)`, { method: 'MERGE', headers: json, body: JSON.stringify({ Name: `Geändert ${i}` }) })),
    );
    for (const res of merges) assert.equal(res.status, 204, res.body);
    const deleted = await asSeller(a, `${live.root}/Catalogs(${ids[0]}L)`, { method: 'DELETE', headers: json });
    assert.equal(deleted.status, 204, deleted.body);
    const names = (await api.feed(`Catalogs?$filter=startswith(Name,'Geändert')`)).map((c) => c.Name).sort();
    assert.deepEqual(names, ids.slice(1).map((_, i) => `Geändert ${i + 1}`).sort());
  });

  test('$batch: a changeset commits whole, and one that fails leaves nothing', async () => {
    const ok = readBatchAnswer(
      await postBatch(live, a, batchBody([changesetPart([jsonOperation('POST', 'Catalogs', 1, { Name: 'Batch 1' }), jsonOperation('POST', 'Catalogs', 2, { Name: 'Batch 2' })])])),
    );
    assert.deepEqual(changesetAnswers(ok[0]).map((r) => r.status), [201, 201]);
    readBatchAnswer(
      await postBatch(
        live,
        a,
        batchBody([changesetPart([jsonOperation('POST', 'Catalogs', 1, { Name: 'Batch 3' }), jsonOperation('MERGE', 'Catalogs(999999999L)', 2, { Name: 'x' })])]),
      ),
    );
    const names = (await client(live, a).feed(`Catalogs?$filter=startswith(Name,'Batch')`)).map((c) => c.Name).sort();
    assert.deepEqual(names, ['Batch 1', 'Batch 2']);
  });

  test("the tenant fence: another account sees none of a's rows, and no tenant setting outlives its transaction on a pooled connection", async () => {
    const [product] = await client(live, a).feed('Products?$top=1');
    const foreign = await asSeller(b, `${live.root}/Products(${String(product!.Id)}L)`, { headers: { Accept: 'application/json' } });
    assert.equal(foreign.status, 404);
    assert.deepEqual(await client(live, b).feed('Products'), []);
    // Straight through the pooler as the app role, after all the transactions above: whichever
    // server connection answers, it carries no tenant, so row-level security shows no row.
    const raw = new pg.Client({ connectionString: appUrlThroughPooler });
    await raw.connect();
    try {
      for (let i = 0; i < 6; i++) {
        const row = (await raw.query<{ tenant: string | null; n: string }>(`SELECT current_setting('app.account_id', true) AS tenant, (SELECT count(*) FROM products) AS n`)).rows[0]!;
        assert.ok(row.tenant === null || row.tenant === '', `tenant left set: ${row.tenant}`);
        assert.equal(Number(row.n), 0);
      }
    } finally {
      await raw.end();
    }
  });

  test("a server whose DateStyle the timestamp parser cannot read is refused at start, saying what to set", async () => {
    const database = await freshDatabase();
    const owner = new pg.Client({ connectionString: database.ownerUrl ?? database.url });
    await owner.connect();
    try {
      await owner.query(`ALTER DATABASE "${new URL(database.url).pathname.slice(1)}" SET DateStyle = 'SQL, DMY'`);
    } finally {
      await owner.end();
    }
    const store = openStore(bouncer.through(database.url), { ownerUrl: bouncer.through(database.ownerUrl ?? database.url), preparedStatements: false });
    try {
      await assert.rejects(store.migrate(), /DateStyle to be ISO, not 'SQL, DMY'.*ALTER ROLE/s);
    } finally {
      await store.close();
    }
  });
});
