/**
 * The PostgreSQL adapter's own guarantees, against a real server: exact values both ways, named
 * statements bounded per connection, streamed reads that let other statements run between pages,
 * one account's writes serialised (and other accounts' not), the id sequence, the statement
 * timeout, a lookup by many values that probes its index without statistics, a read of one statement in one implicit transaction with its tenant, a read whose end rides
 * with the connection's next statements, and close() draining what is in flight.
 *
 * PostgreSQL only: the SQLite adapter's counterparts are its single writer and its own tests.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { openStore } from '../../src/store/open';
import type { Store } from '../../src/store/store';
import { FETCH_ROWS } from '../../src/store/postgres/executor';
import { formatTimestamp, parseTimestamp } from '../../src/store/postgres/values';
import { freshDatabase, testEngine, type TestDatabase } from '../support/test-database';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the PostgreSQL store', { skip: testEngine !== 'postgres' && 'PostgreSQL only' }, () => {
  let database: TestDatabase;
  let store: Store;

  before(async () => {
    database = await freshDatabase();
    store = openStore(database.url, { ownerUrl: database.ownerUrl, poolSize: 4 });
    await store.migrate();
  });
  after(() => store?.close());

  test('Int64, Decimal and DateTime come back exactly, at their limits', async () => {
    const { codec } = store;
    const roundTrip = (type: 'Edm.Int64' | 'Edm.Decimal' | 'Edm.DateTime', cast: string, value: bigint | string | number) =>
      store.read(1, async (tx) => codec.decode(type, (await tx.get<{ v: unknown }>(`SELECT CAST(? AS ${cast}) AS v`, [codec.encode(type, value)]))!.v));
    for (const v of [9223372036854775807n, -9223372036854775808n, 9007199254740993n, 0n]) assert.equal(await roundTrip('Edm.Int64', 'bigint', v), v);
    for (const v of ['999999999999.999999', '-999999999999.999999', '0.000001', '-0.5', '80', '0']) assert.equal(await roundTrip('Edm.Decimal', 'numeric(18,6)', v), v);
    const times = [0, -1, 1768467600123, -62135596800000 /* 0001-01-01 */, -62198755200000 /* 1 BC */, 253402300799999, 999999999999999, -8640000000000];
    for (const ms of times) {
      assert.equal(await roundTrip('Edm.DateTime', 'timestamp(3)', ms), ms, `${ms} (${formatTimestamp(ms)})`);
      assert.equal(parseTimestamp(formatTimestamp(ms)), ms);
    }
  });

  test('named statements: one per SQL text, at most a bounded number per connection, evicted ones deallocated', async () => {
    const one = openStore(database.url, { poolSize: 1 });
    try {
      // More distinct texts than a connection keeps, as $filter produces them.
      for (let i = 0; i < 400; i++) {
        const row = await one.directory.get<{ v: number }>(`SELECT ${i} + CAST(? AS integer) AS v`, [1]);
        assert.equal(row!.v, i + 1);
      }
      const kept = await one.directory.get<{ n: bigint }>(`SELECT count(*) AS n FROM pg_prepared_statements`);
      assert.ok(kept!.n <= 301n && kept!.n >= 250n, `prepared on the connection: ${kept!.n}`);
      // An evicted text prepares again; a kept one is reused.
      assert.equal((await one.directory.get<{ v: number }>(`SELECT 0 + CAST(? AS integer) AS v`, [5]))!.v, 5);
      assert.equal((await one.directory.get<{ v: number }>(`SELECT 399 + CAST(? AS integer) AS v`, [5]))!.v, 404);
      const names = await one.directory.all<{ name: string; statement: string }>(`SELECT name, statement FROM pg_prepared_statements WHERE statement LIKE 'SELECT 399 + %'`);
      assert.equal(names.length, 1);
      assert.match(names[0]!.name, /^s[0-9a-f]{30}$/);
      assert.equal(names[0]!.statement, 'SELECT 399 + CAST($1 AS integer) AS v');
    } finally {
      await one.close();
    }
  });

  test('a streamed read lets other statements run between rows, and ends cleanly when left early', async () => {
    const total = FETCH_ROWS * 3 + 7;
    const seen = await store.read(1, async (tx) => {
      let n = 0;
      for await (const row of tx.iterate<{ g: number }>(`SELECT g FROM generate_series(1, CAST(? AS integer)) g ORDER BY g`, [total])) {
        n++;
        assert.equal(row.g, n);
        // An "expansion" query on the same transaction, between two rows of the stream.
        if (row.g % 97 === 0) assert.equal((await tx.get<{ d: number }>(`SELECT CAST(? AS integer) * 2 AS d`, [row.g]))!.d, row.g * 2);
      }
      // Two streams at once, and one left after its first row.
      const outer = tx.iterate<{ g: number }>(`SELECT g FROM generate_series(1, 3) g ORDER BY g`)[Symbol.asyncIterator]();
      const first = await outer.next();
      for await (const inner of tx.iterate<{ g: number }>(`SELECT g FROM generate_series(1, 2) g`)) assert.ok(inner.g >= 1);
      assert.equal((await outer.next()).value?.g, 2);
      await outer.return?.();
      assert.equal(first.value?.g, 1);
      const open = await tx.get<{ n: bigint }>(`SELECT count(*) AS n FROM pg_cursors WHERE name LIKE 'cursor%'`);
      assert.equal(open!.n, 0n, 'no cursor left open');
      return n;
    });
    assert.equal(seen, total);
  });

  test("one account's writes take turns; another account's do not wait", async () => {
    const events: string[] = [];
    const slow = store.write(101, async (tx) => {
      events.push('A1 start');
      await tx.get(`SELECT pg_sleep(0.3)`);
      events.push('A1 end');
    });
    await sleep(50);
    const second = store.write(101, async () => {
      events.push('A2 start');
    });
    const other = store.write(202, async () => {
      events.push('B start');
    });
    await Promise.all([slow, second, other]);
    assert.deepEqual(events, ['A1 start', 'B start', 'A1 end', 'A2 start']);
  });

  test('ids come from one sequence: unique and increasing across concurrent writes', async () => {
    const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => store.write(i % 5, (tx) => store.nextId(tx))));
    assert.equal(new Set(ids.map(String)).size, 40);
    const later = await store.write(1, (tx) => store.nextId(tx));
    assert.ok(ids.every((id) => id < later));
  });

  test('a failed write keeps nothing; a read is read-only', async () => {
    const epoch = store.codec.encode('Edm.DateTime', 0);
    await assert.rejects(
      store.write(7, async (tx) => {
        await tx.run(`INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`, [7, 1n, 'gone', 'true', epoch, epoch]);
        throw new Error('rule broken');
      }),
      /rule broken/,
    );
    const count = await store.read(7, (tx) => tx.get<{ n: bigint }>(`SELECT count(*) AS n FROM catalogs WHERE account_id = ?`, [7]));
    assert.equal(count!.n, 0n);
    await assert.rejects(
      store.read(7, (tx) => tx.run(`INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`, [7, 2n, 'no', 'true', epoch, epoch])),
      { code: '25006' },
    );
  });

  test('a statement that runs longer than its budget is cancelled: a write at DATABASE_STATEMENT_TIMEOUT_MS, a read at READ_STATEMENT_TIMEOUT_MS', async () => {
    const limited = openStore(database.url, { statementTimeoutMs: 200, readStatementTimeoutMs: 300 });
    try {
      let started = Date.now();
      await assert.rejects(limited.write(1, (tx) => tx.get(`SELECT pg_sleep(5)`)), { code: '57014' });
      assert.ok(Date.now() - started < 3000);
      started = Date.now();
      await assert.rejects(limited.read(1, (tx) => tx.get(`SELECT pg_sleep(5)`)), { code: '57014' });
      assert.ok(Date.now() - started < 3000);
      // The read's budget ends with its transaction: a write on the same connections has its own.
      await assert.rejects(limited.write(1, (tx) => tx.get(`SELECT pg_sleep(0.25)`)), { code: '57014' });
      assert.equal(await limited.write(1, (tx) => tx.get<{ one: number }>(`SELECT 1 AS one FROM pg_sleep(0.1)`)).then((r) => r?.one), 1);
      assert.ok(await limited.read(1, (tx) => tx.get(`SELECT 1 AS one`)), 'the pool still works');
    } finally {
      await limited.close();
    }
  });

  test('a read of one statement runs with its tenant and no transaction of its own: the connection is idle once it answered, a second statement is refused', async () => {
    const single = openStore(database.url, { poolSize: 1 });
    const observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
    try {
      const backend = await single.read(7, (tx) => tx.get<{ pid: number; tenant: string }>("SELECT pg_backend_pid() AS pid, current_setting('app.account_id', true) AS tenant"), undefined, 'one');
      assert.equal(backend!.tenant, '7', 'the statement runs with the tenant set');
      const state = async () => (await observer.query<{ state: string }>('SELECT state FROM pg_stat_activity WHERE pid = $1', [backend!.pid])).rows[0]?.state;
      assert.equal(await state(), 'idle', 'no transaction is left open on the connection');
      const answered = await single.read(8, async () => (await observer.query("SELECT 1")).rowCount, undefined, 'one');
      assert.equal(answered, 1, 'a read that runs no statement still answers');
      await assert.rejects(
        single.read(7, async (tx) => {
          await tx.get('SELECT 1 AS one');
          return tx.get('SELECT 2 AS two');
        }, undefined, 'one'),
        /declared one statement/,
      );
      // A statement that fails: the Sync that went along ends the aborted implicit transaction.
      await assert.rejects(single.read(7, (tx) => tx.get('SELECT 1 / 0 AS x'), undefined, 'one'), { code: '22012' });
      assert.equal(await state(), 'idle');
      // Its Parse had succeeded: the statement is prepared, and runs again without a second Parse.
      await assert.rejects(single.read(7, (tx) => tx.get('SELECT 1 / 0 AS x'), undefined, 'one'), { code: '22012' });
      // The pool's one connection serves on, a read of many statements as well.
      const again = await single.read(7, async (tx) => [await tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'), await tx.get<{ n: number }>('SELECT 2 AS n')]);
      assert.deepEqual(again.map((r) => Object.values(r!)[0]), [backend!.pid, 2]);
    } finally {
      await observer.end();
      await single.close();
    }
  });

  test('a read of one statement whose check fails or refuses: the statement behind it never runs, and is parsed again next time', async () => {
    const single = openStore(database.url, { poolSize: 1 });
    const admitting = (account: number) => ({ sql: `SELECT CAST(${account} AS bigint) AS account_id`, params: [], check: () => undefined });
    try {
      // First use of this connection: the check fails (both statements were parsed before it ran).
      const failing = { sql: 'SELECT CAST(1 / 0 AS bigint) AS account_id', params: [], check: () => undefined };
      await assert.rejects(single.read(9, (tx) => tx.get('SELECT 42 AS answer'), failing, 'one'), { code: '22012' });
      // node-pg must not take the skipped statement for prepared ("prepared statement … does not exist").
      assert.deepEqual(await single.read(9, (tx) => tx.get('SELECT 42 AS answer'), admitting(9), 'one'), { answer: 42 });
      // A refused check is the error reported, and the statement that went along saw no tenant.
      const refusal = new Error('refused');
      const seen: unknown[] = [];
      const refusing = { sql: 'SELECT CAST(NULL AS bigint) AS account_id', params: [], check: () => { throw refusal; } };
      await assert.rejects(
        single.read(9, async (tx) => seen.push(await tx.get("SELECT current_setting('app.account_id', true) AS tenant").catch((e: unknown) => e)), refusing, 'one'),
        (error) => error === refusal,
      );
      assert.deepEqual(seen, [refusal], 'the statement answered nothing to a refused read');
      // fn failing before any statement: the check still runs, and its refusal is what is reported.
      await assert.rejects(single.read(9, async () => { throw new Error('fn failed'); }, refusing, 'one'), (error) => error === refusal);
      await assert.rejects(single.read(9, async () => { throw new Error('fn failed'); }, admitting(9), 'one'), /fn failed/);
    } finally {
      await single.close();
    }
  });

  test('reads of one statement share connections: each sees its own tenant, and one that fails or is refused fails alone', async () => {
    // A pool of 8: two connections are shared by reads of one statement.
    const shared = openStore(database.url, { poolSize: 8 });
    const epoch = store.codec.encode('Edm.DateTime', 0);
    const admitting = (account: number) => ({ sql: `SELECT CAST(${account} AS bigint) AS account_id`, params: [], check: () => undefined });
    const refusal = new Error('refused');
    const refusing = { sql: 'SELECT CAST(NULL AS bigint) AS account_id', params: [], check: () => { throw refusal; } };
    const failingCheck = { sql: 'SELECT CAST(1 / 0 AS bigint) AS account_id', params: [], check: () => undefined };
    // Row-level security shows a read its tenant's rows alone: account 21 has 2 catalogs, 22 has 3.
    for (const [account, count] of [[21, 2], [22, 3]] as const) {
      await store.write(account, async (tx) => {
        for (let i = 0; i < count; i++) {
          await tx.run(`INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`, [account, BigInt(account * 100 + i), `c${i}`, 'true', epoch, epoch]);
        }
      });
    }
    const statement = "SELECT current_setting('app.account_id', true) AS tenant, (SELECT count(*) FROM catalogs) AS catalogs, pg_backend_pid() AS pid";
    try {
      // The first read sent on each fresh connection fails its check: the statement behind it,
      // which every other read binds to without parsing it again, must still have been parsed.
      const reads = Array.from({ length: 96 }, (_, i) => {
        if (i < 2) return { kind: 'failing check', run: shared.read(21, (tx) => tx.get(statement), failingCheck, 'one') };
        if (i % 10 === 3) return { kind: 'refused', run: shared.read(21, (tx) => tx.get(statement), refusing, 'one') };
        if (i % 10 === 7) return { kind: 'failing statement', run: shared.read(22, (tx) => tx.get('SELECT CAST(1 / 0 AS int) AS x'), admitting(22), 'one') };
        const account = i % 2 === 0 ? 21 : 22;
        return { kind: `account ${account}`, run: shared.read(account, (tx) => tx.get<{ tenant: string; catalogs: bigint; pid: number }>(statement), admitting(account), 'one') };
      });
      const outcomes = await Promise.allSettled(reads.map((r) => r.run));
      const pids = new Set<number>();
      for (const [i, outcome] of outcomes.entries()) {
        const { kind } = reads[i]!;
        if (kind === 'failing check' || kind === 'failing statement') {
          assert.equal(outcome.status === 'rejected' && (outcome.reason as { code?: string }).code, '22012', `read ${i} (${kind})`);
        } else if (kind === 'refused') {
          assert.ok(outcome.status === 'rejected' && outcome.reason === refusal, `read ${i} (${kind})`);
        } else {
          assert.equal(outcome.status, 'fulfilled', `read ${i} (${kind}): ${outcome.status === 'rejected' ? String(outcome.reason) : ''}`);
          const row = (outcome as PromiseFulfilledResult<{ tenant: string; catalogs: bigint; pid: number } | undefined>).value!;
          const account = Number(kind.slice('account '.length));
          assert.deepEqual({ tenant: row.tenant, catalogs: BigInt(row.catalogs) }, { tenant: String(account), catalogs: account === 21 ? 2n : 3n }, `read ${i}`);
          pids.add(row.pid);
        }
      }
      assert.ok(pids.size >= 1 && pids.size <= 2, `the reads ran on the two shared connections, not on one each: ${pids.size} server processes`);
    } finally {
      await shared.close();
    }
  });

  test('a shared read connection that the server ends is replaced: the reads after it are answered', async () => {
    const shared = openStore(database.url, { poolSize: 8 });
    const admitting = { sql: 'SELECT CAST(23 AS bigint) AS account_id', params: [], check: () => undefined };
    const backendOf = () => shared.read(23, (tx) => tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'), admitting, 'one');
    const observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
    try {
      const before = new Set((await Promise.all(Array.from({ length: 8 }, backendOf))).map((row) => row!.pid));
      assert.ok(before.size >= 1 && before.size <= 2, `reads ran on the shared connections: ${[...before].join(', ')}`);
      for (const pid of before) await observer.query('SELECT pg_terminate_backend($1)', [pid]);
      await sleep(200);
      const after = new Set((await Promise.all(Array.from({ length: 8 }, backendOf))).map((row) => row!.pid));
      for (const pid of after) assert.ok(!before.has(pid), `read on a connection the server ended (${pid})`);
    } finally {
      await observer.end();
      await shared.close();
    }
  });

  test("a read's COMMIT rides with the connection's next statements: the next transaction sees what committed in between", async () => {
    // A wait far beyond the test: only the connection's next use can end the read.
    const single = openStore(database.url, { poolSize: 1, readEndWaitMs: 60_000 });
    const epoch = store.codec.encode('Edm.DateTime', 0);
    const count = () => single.read(11, async (tx) => (await tx.get<{ n: bigint }>('SELECT count(*) AS n FROM catalogs WHERE account_id = ?', [11]))!.n);
    try {
      assert.equal(await count(), 0n);
      await store.write(11, (tx) => tx.run(`INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`, [11, 1n, 'between', 'true', epoch, epoch]));
      assert.equal(await count(), 1n, 'the second read runs in a snapshot of its own, taken after the write');
      // A streamed read: its cursor's CLOSE rides along too, and the same cursor name is free again.
      const streamed = async () => {
        let rows = 0;
        await single.read(11, async (tx) => {
          for await (const _ of tx.iterateRows('SELECT id FROM catalogs WHERE account_id = ?', [11])) rows++;
        });
        return rows;
      };
      assert.equal(await streamed(), 1);
      assert.equal(await streamed(), 1);
      // A directory statement (outside a transaction) after a read does not run in the read's
      // transaction either (that one is read-only and repeatable read; the statement's own is neither).
      await count();
      const direct = await single.directory.get<{ isolation: string; readOnly: string }>(
        `SELECT current_setting('transaction_isolation') AS isolation, current_setting('transaction_read_only') AS "readOnly"`,
      );
      assert.deepEqual({ ...direct }, { isolation: 'read committed', readOnly: 'off' });
    } finally {
      await single.close();
    }
  });

  test('a read left open is ended by its timer when the connection is not used again', async () => {
    const single = openStore(database.url, { poolSize: 1, readEndWaitMs: 20 });
    const observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
    try {
      const backend = await single.read(7, async (tx) => {
        await tx.get('SELECT 1 AS one');
        return tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      });
      const state = async () => (await observer.query<{ state: string }>('SELECT state FROM pg_stat_activity WHERE pid = $1', [backend!.pid])).rows[0]?.state;
      let seen = await state();
      for (let i = 0; i < 100 && seen !== 'idle'; i++) {
        await sleep(20);
        seen = await state();
      }
      assert.equal(seen, 'idle', 'the timer ended the transaction');
    } finally {
      await observer.end();
      await single.close();
    }
  });

  test('a lookup by many values probes the index on its column, in a table the planner has no statistics of', async () => {
    // A new database's table, as an import fills it: never analyzed, and kept so here.
    const owner = new pg.Client({ connectionString: database.ownerUrl ?? database.url });
    await owner.connect();
    try {
      await owner.query('ALTER TABLE buyers SET (autovacuum_enabled = false)');
    } finally {
      await owner.end();
    }
    const names = Array.from({ length: 200 }, (_, i) => `buyer ${i * 7}`);
    await store.write(12, (tx) => tx.run(`INSERT INTO buyers (account_id, id, buyer_name) SELECT 12, g, 'buyer ' || g FROM generate_series(1, 3000) g`));
    const { dialect } = store;
    const plan = async (sql: string, params: unknown[]) =>
      JSON.stringify(await store.read(12, (tx) => tx.all(dialect.plannedPerExecution(`EXPLAIN (FORMAT JSON) ${sql}`), params as never[])));
    const lookup = dialect.rowsWithAnyOf('t.id', 'buyers', 'buyer_name', 'Edm.String', names.length);
    const lookupPlan = await plan(lookup, dialect.lookupParams(12, names));
    assert.match(lookupPlan, /"Index Name":"buyers_by_buyer_name_and_id"/, lookupPlan);
    assert.doesNotMatch(lookupPlan, /buyers_pkey/, lookupPlan);
    // The form it replaced: the planner takes the list to match every row, and scans the account.
    const listPlan = await plan(`SELECT t.id FROM buyers t WHERE t.account_id = ? AND t.buyer_name = ANY(CAST(? AS text[]))`, [12, `{${names.map((n) => `"${n}"`).join(',')}}`]);
    assert.match(listPlan, /"Index Name":"buyers_pkey"/, listPlan);
    // And the lookup finds exactly the rows named, each once.
    const found = await store.read(12, (tx) => tx.all<{ id: bigint }>(lookup, dialect.lookupParams(12, names)));
    assert.deepEqual(found.map((r) => BigInt(r.id)).sort((a, b) => (a < b ? -1 : 1)), names.map((_, i) => BigInt(i * 7)).filter((id) => id >= 1n));
  });

  test('close() waits for the transactions in flight, then refuses new ones', async () => {
    const closing = openStore(database.url, {});
    let committed = false;
    const inFlight = closing.write(9, async (tx) => {
      await tx.get(`SELECT pg_sleep(0.3)`);
      committed = true;
      return 'done';
    });
    await sleep(50);
    await closing.close();
    assert.equal(committed, true, 'close() returned only after the write');
    assert.equal(await inFlight, 'done');
    await assert.rejects(closing.read(9, async () => 1), /closed/);
  });
});
