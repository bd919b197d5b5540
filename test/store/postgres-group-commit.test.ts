/**
 * PostgreSQL's group commit per account: the writes of one account that arrive together share one
 * transaction and one COMMIT, each in its own SAVEPOINT; one that fails is undone alone; a batch
 * whose transaction fails keeps none of its writes and acknowledges none; other accounts' writes
 * do not wait for it. Against a real server.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { openStore } from '../../src/store/open';
import { sentBehind, type SqlExecutor, type Store } from '../../src/store/store';
import { freshDatabase, testEngine, type TestDatabase } from '../support/test-database';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgreSQL group commit', { skip: testEngine !== 'postgres' && 'PostgreSQL only' }, () => {
  let database: TestDatabase;
  let store: Store;
  const commits: number[] = [];

  before(async () => {
    database = await freshDatabase();
    // No time budget to speak of: which writes share a batch is then up to the tests alone, however
    // slow the machine. The budget's own test opens a store with the default one.
    store = openStore(database.url, { ownerUrl: database.ownerUrl, poolSize: 4, batchTimeBudgetMs: 60_000 });
    await store.migrate();
    store.observeCommits((writes) => commits.push(writes));
  });
  after(() => store?.close());

  const epoch = () => store.codec.encode('Edm.DateTime', 0);
  const insertCatalog = (account: number, id: bigint, name: string) =>
    store.write(account, (tx) =>
      tx.run(`INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`, [account, id, name, 'true', epoch(), epoch()]),
    );
  const catalogNames = async (account: number) =>
    (await store.read(account, (tx) => tx.all<{ name: string }>(`SELECT name FROM catalogs WHERE account_id = ? ORDER BY id`, [account]))).map((r) => r.name);
  const committedTransactions = async () =>
    BigInt((await store.directory.get<{ n: bigint | string }>(`SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()`))!.n);

  test('writes of one account that arrive together share one COMMIT, and each sees the writes before it', async () => {
    commits.length = 0;
    const seen: number[] = [];
    const writes = Array.from({ length: 20 }, (_, i) =>
      store.write(11, async (tx) => {
        await tx.run(`INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`, [11, BigInt(i + 1), `c${i}`, 'true', epoch(), epoch()]);
        seen.push(Number((await tx.get<{ n: bigint }>(`SELECT count(*) AS n FROM catalogs WHERE account_id = ?`, [11]))!.n));
        return i;
      }),
    );
    assert.deepEqual(await Promise.all(writes), Array.from({ length: 20 }, (_, i) => i));
    // One after the other inside the batch: the i-th write counts i + 1 rows.
    assert.deepEqual(seen, Array.from({ length: 20 }, (_, i) => i + 1));
    // Queued in one turn, so one batch (this store's time budget never ends one early).
    assert.deepEqual(commits, [20], 'one batch');
    assert.equal((await catalogNames(11)).length, 20);
  });

  test('the server counts fewer commits than writes', async () => {
    const before = await committedTransactions();
    await Promise.all(Array.from({ length: 30 }, (_, i) => insertCatalog(12, BigInt(i + 1), `d${i}`)));
    // pg_stat_database is updated when a backend reports; give it the moment it needs.
    await sleep(600);
    const during = (await committedTransactions()) - before;
    assert.ok(during < 30n, `30 writes took ${during} commits`);
  });

  test('a write that fails is undone alone; the others of its batch commit', async () => {
    commits.length = 0;
    const results = await Promise.allSettled([
      insertCatalog(13, 1n, 'kept 1'),
      store.write(13, async (tx) => {
        await tx.run(`INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`, [13, 2n, 'undone', 'true', epoch(), epoch()]);
        throw new Error('rule broken');
      }),
      // A statement error leaves PostgreSQL's transaction aborted: the savepoint must repair it.
      store.write(13, (tx) => tx.run(`INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`, [13, 1n, 'duplicate key', 'true', epoch(), epoch()])),
      insertCatalog(13, 3n, 'kept 3'),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    assert.match(String((results[1] as PromiseRejectedResult).reason), /rule broken/);
    assert.equal(((results[2] as PromiseRejectedResult).reason as { code?: string }).code, '23505');
    assert.equal(commits.reduce((a, b) => a + b, 0), 4, `writes per COMMIT: ${commits.join(', ')}`);
    assert.deepEqual(await catalogNames(13), ['kept 1', 'kept 3']);
  });

  const insertSql = `INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`;
  /** A write that may run again and leaves its insert behind (sentBehind), counting its runs. */
  const behindWrite = (account: number, id: bigint, name: string, runs: Map<string, number>, before?: (tx: SqlExecutor) => Promise<void>) =>
    store.write(
      account,
      async (tx) => {
        runs.set(name, (runs.get(name) ?? 0) + 1);
        await before?.(tx);
        await sentBehind(tx, tx.run(insertSql, [account, id, name, 'true', epoch(), epoch()]));
        return name;
      },
      { repeatable: true },
    );

  test('writes that may run again leave their inserts behind: the next write starts before their answer', async () => {
    commits.length = 0;
    let firstAnswered = false;
    let answeredWhenSecondRan: boolean | undefined;
    const results = await Promise.all([
      store.write(
        20,
        async (tx) => {
          const sent = tx.run(insertSql, [20, 1n, 'first', 'true', epoch(), epoch()]);
          void sent.then(() => (firstAnswered = true), () => undefined);
          await sentBehind(tx, sent);
          return 'first';
        },
        { repeatable: true },
      ),
      store.write(
        20,
        async (tx) => {
          answeredWhenSecondRan ??= firstAnswered;
          await sentBehind(tx, tx.run(insertSql, [20, 2n, 'second', 'true', epoch(), epoch()]));
          return 'second';
        },
        { repeatable: true },
      ),
    ]);
    assert.deepEqual(results, ['first', 'second']);
    assert.deepEqual(commits, [2], 'one batch');
    assert.equal(answeredWhenSecondRan, false, 'the second write ran while the first insert was unanswered');
    assert.deepEqual(await catalogNames(20), ['first', 'second']);
  });

  test('an insert left behind that fails: its write fails with its error, and it and every write after it run again, waiting', async () => {
    await insertCatalog(21, 1n, 'stored');
    commits.length = 0;
    const runs = new Map<string, number>();
    let countSeenByLater: number | undefined;
    const results = await Promise.allSettled([
      behindWrite(21, 2n, 'kept before', runs),
      // The same id as the stored row: the server refuses the insert after the write returned.
      behindWrite(21, 1n, 'duplicate', runs),
      // Waits for a statement of its own: it ran in a transaction already aborted, then again.
      behindWrite(21, 3n, 'counting', runs, async (tx) => {
        countSeenByLater = Number((await tx.get<{ n: bigint }>(`SELECT count(*) AS n FROM catalogs WHERE account_id = ?`, [21]))!.n);
      }),
      behindWrite(21, 4n, 'kept after', runs),
      // One that may not run again starts only once everything before it is answered.
      store.write(21, async (tx) => {
        runs.set('once', (runs.get('once') ?? 0) + 1);
        await tx.run(insertSql, [21, 5n, 'once', 'true', epoch(), epoch()]);
        return 'once';
      }),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    assert.equal(((results[1] as PromiseRejectedResult).reason as { code?: string }).code, '23505', 'the insert\'s own error');
    assert.deepEqual(commits, [5], 'one batch');
    assert.deepEqual(await catalogNames(21), ['stored', 'kept before', 'counting', 'kept after', 'once']);
    // What the write that counted saw is the state a batch without writes behind gives it.
    assert.equal(countSeenByLater, 2);
    // The counting write met the failure: the batch went back to the duplicate's savepoint then,
    // before the write after it had run.
    assert.deepEqual(Object.fromEntries(runs), { 'kept before': 1, duplicate: 2, counting: 2, 'kept after': 1, once: 1 });
  });

  test('a failure left behind is found before the COMMIT when no write waited since', async () => {
    await insertCatalog(23, 1n, 'stored');
    commits.length = 0;
    const runs = new Map<string, number>();
    const results = await Promise.allSettled([behindWrite(23, 1n, 'duplicate', runs), behindWrite(23, 2n, 'after 1', runs), behindWrite(23, 3n, 'after 2', runs)]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'fulfilled', 'fulfilled']);
    assert.equal(((results[0] as PromiseRejectedResult).reason as { code?: string }).code, '23505');
    assert.deepEqual(commits, [3], 'one batch');
    assert.deepEqual(Object.fromEntries(runs), { duplicate: 2, 'after 1': 2, 'after 2': 2 });
    assert.deepEqual(await catalogNames(23), ['stored', 'after 1', 'after 2']);
  });

  test('a write that may not run again waits for its statements as before (sentBehind answers their outcome)', async () => {
    await insertCatalog(22, 1n, 'stored');
    const refused = store.write(22, (tx) => sentBehind(tx, tx.run(insertSql, [22, 1n, 'duplicate', 'true', epoch(), epoch()])));
    await assert.rejects(refused, (error: { code?: string }) => error.code === '23505');
    assert.deepEqual(await catalogNames(22), ['stored']);
  });

  test('a batch whose connection is lost keeps none of its writes and acknowledges none', async () => {
    const results = await Promise.allSettled([
      insertCatalog(14, 1n, 'lost 1'),
      // The server ends the batch's connection half-way: nothing of the batch may be committed.
      store.write(14, (tx) => tx.get(`SELECT pg_terminate_backend(pg_backend_pid())`)),
      insertCatalog(14, 2n, 'lost 2'),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected', 'rejected']);
    assert.deepEqual(await catalogNames(14), []);
    // The pool replaces the connection: the account writes again.
    await insertCatalog(14, 3n, 'after');
    assert.deepEqual(await catalogNames(14), ['after']);
  });

  test('a batch that draws ids and loses its connection while it waits for the lock: its writes fail, and the process goes on', async () => {
    // Another session holds account 19's lock, so the batch's BEGIN, lock and id draw wait.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(19)');
      const write = store.write(19, async (tx) => store.nextId(tx), { newIds: 2 });
      write.catch(() => undefined);
      let waiting: number | undefined;
      for (let i = 0; i < 100 && waiting === undefined; i++) {
        await sleep(20);
        const { rows } = await holder.query(`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND pid <> pg_backend_pid()`);
        waiting = (rows[0] as { pid: number } | undefined)?.pid;
      }
      assert.ok(waiting !== undefined, 'the batch waits for the lock');
      await holder.query('SELECT pg_terminate_backend($1)', [waiting]);
      await assert.rejects(write);
    } finally {
      await holder.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
      await holder.end();
    }
    // Nothing was left unhandled (node:test would report it), and the account writes again.
    const id = await store.write(19, async (tx) => store.nextId(tx), { newIds: 1 });
    assert.equal(typeof id, 'bigint');
  });

  test('a batch past its time budget commits what ran and leaves the rest to the next batch', async () => {
    const budgeted = openStore(database.url, { ownerUrl: database.ownerUrl, poolSize: 2 });
    const commits: number[] = [];
    budgeted.observeCommits((writes) => commits.push(writes));
    const insertCatalog = (account: number, id: bigint, name: string) =>
      budgeted.write(account, (tx) => tx.run(insertSql, [account, id, name, 'true', epoch(), epoch()]));
    const writes = [
      budgeted.write(17, async (tx) => {
        await tx.get(`SELECT pg_sleep(0.1)`);
        return 'slow';
      }),
      ...Array.from({ length: 5 }, (_, i) => insertCatalog(17, BigInt(i + 1), `e${i}`).then(() => i)),
    ];
    assert.deepEqual(await Promise.all(writes), ['slow', 0, 1, 2, 3, 4]);
    // The slow write used up its batch's budget: the others came in the next COMMIT.
    assert.equal(commits[0], 1, `writes per COMMIT: ${commits.join(', ')}`);
    assert.equal(commits.reduce((a, b) => a + b, 0), 6);
    assert.equal((await catalogNames(17)).length, 5);
    await budgeted.close();
  });

  test('ids drawn ahead (WriteOptions.newIds): taken without a statement, ascending in the order writes run, the rest from the sequence', async () => {
    commits.length = 0;
    const run = (newIds: number, takes: number, bulk = 0) =>
      store.write(
        18,
        async (tx) => {
          // The transaction's executor as a wrapper sees it (a changeset's read-ahead wraps it so),
          // counting the statements that ask the sequence.
          let asked = 0;
          const wrapped = new Proxy(tx, {
            get: (target, name, receiver) => {
              const value = Reflect.get(target, name, receiver) as unknown;
              if (typeof value !== 'function') return value;
              return (sql: string, ...rest: unknown[]) => {
                if (typeof sql === 'string' && sql.includes('nextval')) asked++;
                return (value as (...a: unknown[]) => unknown).call(target, sql, ...rest);
              };
            },
          });
          const ids: bigint[] = [];
          for (let i = 0; i < takes; i++) ids.push(await store.nextId(wrapped));
          const bulkIds = bulk > 0 ? await store.nextIds(wrapped, bulk) : [];
          const after = await store.nextId(wrapped);
          return { ids, bulkIds, after, asked };
        },
        { newIds },
      );
    // Three writes of one batch, drawing 2 + 3 + 1 ids ahead.
    const results = await Promise.all([run(2, 1), run(3, 2, 2), run(1, 0)]);
    assert.deepEqual(commits, [3], 'one batch');
    const [a, b, c] = results;
    const all = [...a.ids, a.after, ...b.ids, ...b.bulkIds, b.after, ...c.ids, c.after];
    assert.equal(new Set(all.map(String)).size, all.length, 'every id once');
    assert.deepEqual([...all].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)), all, `ascending in the order taken: ${all.join(', ')}`);
    assert.equal(a.asked, 0, 'the first write took both its ids from those drawn ahead');
    // The batch's writes share the ids drawn ahead, in the order they run: the second write's bulk
    // takes the last two of them (the third write's share among them), and only then does the
    // sequence give more, higher ones: what the second and third writes take next is asked for.
    assert.equal(b.asked, 1, 'only the id after the bulk was asked for');
    assert.equal(c.asked, 1);
    // Without newIds nothing is drawn ahead.
    assert.equal((await run(0, 1)).asked, 2);
  });

  test("another account's writes do not wait for a long batch", async () => {
    const slow = store.write(15, async (tx) => {
      await tx.get(`SELECT pg_sleep(0.8)`);
      return 'slow';
    });
    await sleep(50);
    const started = Date.now();
    await insertCatalog(16, 1n, 'quick');
    const took = Date.now() - started;
    assert.ok(took < 600, `account 16 waited ${took} ms`);
    assert.equal(await slow, 'slow');
  });
});
