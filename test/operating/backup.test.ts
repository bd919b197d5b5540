/**
 * `catalogue backup FILE` while a live `catalogue serve` takes a stream of writes: every write
 * acknowledged (201) before the backup began is in the copy, the copy passes integrity_check and
 * serves; `catalogue restore FILE` refuses while a service has the database open, and afterwards
 * puts the copy in place. On PostgreSQL both commands refuse and point at PostgreSQL's own tools.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createAccount, type CreatedAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { openStore } from '../../src/store/open';
import { request } from '../support/http-client';
import { runCli } from '../support/cli-process';
import { reportFigures } from '../support/figures';
import { loginAt, serveProcess, type ServeProcess } from '../support/serve-process';
import { freshDatabase, testEngine, type TestDatabase } from '../support/test-database';

const SERVICE = '/publicapi/v1/api.svc';

async function seller(database: TestDatabase): Promise<CreatedAccount & { password: string }> {
  const store = openStore(database.url, { ownerUrl: database.ownerUrl });
  try {
    await store.migrate();
    const password = 'backup-seller-password';
    return { ...(await createAccount(store, systemClock, { userName: 'backup-seller', password })), password };
  } finally {
    await store.close();
  }
}

async function authAt(origin: string, account: CreatedAccount & { password: string }): Promise<Record<string, string>> {
  const cookie = await loginAt(origin, account.userName, account.password);
  assert.ok(cookie);
  return { SubscriptionToken: account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}`, Accept: 'application/json' };
}

/** The Ids of every product the service answers with. */
async function productIds(origin: string, auth: Record<string, string>): Promise<Set<string>> {
  const res = await request(`${origin}${SERVICE}/Products?$select=Id`, { headers: auth });
  assert.equal(res.status, 200, res.body);
  const body = JSON.parse(res.body) as { d: { Id: string }[] | { results: { Id: string }[] } };
  const rows = Array.isArray(body.d) ? body.d : body.d.results;
  return new Set(rows.map((r) => String(r.Id)));
}

describe('backup and restore of the SQLite database', { skip: testEngine !== 'sqlite' && 'SQLite only', timeout: 180_000 }, () => {
  let database: TestDatabase;
  let serve: ServeProcess;
  let account: CreatedAccount & { password: string };
  let auth: Record<string, string>;
  let backupFile: string;
  let inCopy: Set<string>;

  before(async () => {
    database = await freshDatabase();
    account = await seller(database);
    serve = await serveProcess(database.env);
    auth = await authAt(serve.origin, account);
    backupFile = path.join(path.dirname(database.file!), 'backup.db');
  });
  after(() => serve?.stop());

  test('a backup under a write load holds every write acknowledged before it began, passes integrity_check and serves', async (t) => {
    const acknowledged: { id: string; at: number }[] = [];
    let writing = true;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; writing; i++) {
        const res = await request(`${serve.origin}${SERVICE}/Products`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({ Title: `w${w}-${i}`, Price: '1', StockAmount: 1 }),
        });
        assert.equal(res.status, 201, res.body);
        acknowledged.push({ id: String((JSON.parse(res.body) as { d: { Id: string } }).d.Id), at: performance.now() });
      }
    });
    // Let the load run before the backup starts, and keep it running while it copies.
    while (acknowledged.length < 200) await new Promise((r) => setTimeout(r, 10));
    const began = performance.now();
    const backup = runCli(database.env, ['backup', backupFile]);
    const result = await backup;
    const ended = performance.now();
    writing = false;
    await Promise.all(writers);
    assert.equal(result.status, 0, result.stderr);
    const report = result.lines<{ file: string; integrity: string; tables: Record<string, number>; bytes: number }>()[0]!;
    assert.equal(report.integrity, 'ok');
    assert.equal(report.file, backupFile);
    assert.equal(fs.statSync(backupFile).size, report.bytes);
    assert.ok(!fs.existsSync(`${backupFile}-wal`), 'the copy is one file');

    const before = acknowledged.filter((a) => a.at < began);
    const during = acknowledged.filter((a) => a.at >= began && a.at <= ended).length;
    assert.ok(before.length >= 200);
    reportFigures('backup under load', { writesBeforeBackup: before.length, writesWhileCopying: during, backupMs: Math.round(ended - began) }, t);

    // The copy serves: a service on it answers with every product acknowledged before the backup.
    const copy = await serveProcess({ DATABASE_URL: `sqlite:${backupFile}`, DATABASE_OWNER_URL: '' });
    try {
      inCopy = await productIds(copy.origin, await authAt(copy.origin, account));
    } finally {
      await copy.stop();
    }
    for (const a of before) assert.ok(inCopy.has(a.id), `product ${a.id}, acknowledged before the backup began, is in the copy`);
    assert.equal(inCopy.size, report.tables.products, 'the copy holds what the report says');
    assert.ok(inCopy.size <= acknowledged.length);
  });

  test('a backup never overwrites a file', async () => {
    const r = await runCli(database.env, ['backup', backupFile]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /exists already/);
  });

  test('restore refuses a database in use; once the service stopped, it puts the copy in place', async () => {
    const refused = await runCli(database.env, ['restore', backupFile]);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /in use/);
    assert.ok((await productIds(serve.origin, auth)).size >= inCopy.size, 'the live database is untouched');

    assert.equal(await serve.stop(), 0);
    const restored = await runCli(database.env, ['restore', backupFile]);
    assert.equal(restored.status, 0, restored.stderr);
    serve = await serveProcess(database.env);
    assert.deepEqual(await productIds(serve.origin, await authAt(serve.origin, account)), inCopy);
  });

  test('restore refuses a file that is not a catalogue database', async () => {
    const junk = path.join(path.dirname(database.file!), 'junk.db');
    fs.writeFileSync(junk, 'not a database at all'.repeat(100));
    const r = await runCli(database.env, ['restore', junk]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /cannot be read as a SQLite database|integrity_check/);
  });
});

describe('backup on PostgreSQL', { skip: testEngine !== 'postgres' && 'PostgreSQL only' }, () => {
  test('backup and restore refuse and point at pg_dump and docs/operating.md', async () => {
    const database = await freshDatabase();
    for (const command of ['backup', 'restore']) {
      const r = await runCli(database.env, [command, '/tmp/never-written.db']);
      assert.equal(r.status, 2);
      assert.match(r.stderr, /pg_dump.*docs\/operating\.md/);
    }
  });
});
