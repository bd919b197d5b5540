/**
 * The `catalogue` command as a user runs it: separate processes on a real database of the engine
 * under test. Covers the account and token commands, migrate, a plain refusal of a database that
 * cannot be reached, the first start's demo
 * account with its curl sequence (run with the real curl), and restarts that keep every account
 * and session. Prints the cold-start and idle-RSS figures.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { request } from '../support/http-client';
import { freePort } from '../support/postgres-cluster';
import { freshDatabase, type TestDatabase } from '../support/test-database';
import { CATALOGUE_BIN as BIN, serveProcess, type ServeProcess as Served } from '../support/serve-process';


function cli(db: TestDatabase, args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...db.env, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Starts `catalogue serve` on the test database (see ../support/serve-process.ts); the demo account is on, as for a user. */
const serve = (db: TestDatabase, env: Record<string, string> = {}): Promise<Served> => serveProcess({ DEMO_ACCOUNT: 'true', ...db.env, ...env });

async function waitFor(predicate: () => boolean, what: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('account and token commands', () => {
  let db: TestDatabase;
  before(async () => {
    db = await freshDatabase();
  });

  test('account create prints one JSON line with accountId, userName and subscriptionToken', () => {
    const r = cli(db, ['account', 'create', '--user', 'alice', '--password', 'alice-password']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    const created = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.deepEqual(Object.keys(created), ['accountId', 'userName', 'subscriptionToken']);
    assert.equal(typeof created.accountId, 'number');
    assert.equal(created.userName, 'alice');
    assert.match(String(created.subscriptionToken), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  test('a second account of the same name, or a missing option, is refused plainly', () => {
    const dup = cli(db, ['account', 'create', '--user', 'alice', '--password', 'other-password']);
    assert.equal(dup.status, 2);
    assert.match(dup.stderr, /alice/);
    assert.doesNotMatch(dup.stderr, /\bat .*\.js:\d+/);
    const missing = cli(db, ['account', 'create', '--user', 'bob']);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--password is required/);
    const unknown = cli(db, ['frobnicate']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /Unknown command/);
  });

  test('token create issues a new token; token revoke revokes it once', () => {
    const created = cli(db, ['token', 'create', '--user', 'alice']);
    assert.equal(created.status, 0, created.stderr);
    const token = created.stdout.trim();
    assert.match(token, /^[0-9a-f-]{36}$/);
    const revoked = cli(db, ['token', 'revoke', '--token', token]);
    assert.equal(revoked.status, 0, revoked.stderr);
    assert.equal(revoked.stdout.trim(), 'revoked');
    const again = cli(db, ['token', 'revoke', '--token', token]);
    assert.equal(again.status, 2);
    const nobody = cli(db, ['token', 'create', '--user', 'nobody']);
    assert.equal(nobody.status, 2);
    assert.match(nobody.stderr, /nobody/);
  });

  test('migrate creates the schema once and reports nothing the second time', async () => {
    const fresh = await freshDatabase();
    const first = JSON.parse(cli(fresh, ['migrate']).stdout) as { createdTables: string[] };
    assert.ok(first.createdTables.includes('products'));
    assert.ok(first.createdTables.includes('sessions'));
    const second = JSON.parse(cli(fresh, ['migrate']).stdout) as { createdTables: string[]; addedColumns: string[]; createdIndexes: string[] };
    assert.deepEqual(second, { createdTables: [], addedColumns: [], createdIndexes: [] });
  });

  test('a PostgreSQL server that cannot be reached is refused plainly, without a stack trace', async () => {
    const port = await freePort(); // nothing listens there
    const r = spawnSync(process.execPath, [BIN, 'serve'], {
      env: { ...process.env, DATABASE_URL: `postgres://app@127.0.0.1:${port}/catalogue`, DATABASE_OWNER_URL: '', PORT: '0' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(r.status, 2);
    assert.match(r.stderr, new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${port}`));
    assert.doesNotMatch(r.stderr, /\bat .*\.js:\d+/);
  });
});

describe('catalogue serve', () => {
  test('on an empty database it prints a demo account filled with the demonstration data, the console URL and a curl sequence that works as printed', async (t) => {
    const db = await freshDatabase();
    const started = Date.now();
    const served = await serve(db);
    try {
      await waitFor(() => served.output().includes('/publicapi/v1/api.svc/'), 'the demo banner');
      const firstOk = await request(served.origin + '/publicapi/v1/api.svc/');
      assert.equal(firstOk.status, 401); // the service answers; the banner's curl logs in
      const banner = served.output();
      assert.match(banner, /user name: +demo/);
      assert.match(banner, /password: +\S{12,}/);
      assert.match(banner, /SubscriptionToken: +[0-9a-f-]{36}/);
      const curls = banner.split('\n').filter((l) => l.trim().startsWith('curl '));
      assert.equal(curls.length, 2);
      // The cookie jar the banner names (in the temporary folder of whoever runs it).
      const jar = /-c (\S+)/.exec(curls[0]!)![1]!;
      fs.rmSync(jar, { force: true });
      const loginOut = execFileSync('bash', ['-c', curls[0]!], { encoding: 'utf8' });
      assert.equal(loginOut, '{"d":true}');
      const documentOut = execFileSync('bash', ['-c', curls[1]!], { encoding: 'utf8' });
      const doc = JSON.parse(documentOut) as { d: { EntitySets: string[] } };
      assert.equal(doc.d.EntitySets.length, 17);
      // The console URL it prints shows the demonstration data to the printed account.
      const consoleUrl = /^ +(http:\/\/\S+\/console\/)$/m.exec(banner)?.[1];
      assert.equal(consoleUrl, `${served.origin}/console/`);
      const cookie = /\.ASPXAUTH\s+(\S+)/.exec(fs.readFileSync(jar, 'utf8'))![1]!;
      const products = await request(`${consoleUrl}products`, { headers: { Cookie: `.ASPXAUTH=${cookie}` } });
      assert.equal(products.status, 200);
      assert.match(products.body, /54 in all/);
      // Process start, migration, demo account, login and the service document's 200.
      t.diagnostic(`cold start to the first 200 (service document after login): ${Date.now() - started} ms`);
      const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${served.child.pid}/status`, 'utf8'))?.[1];
      t.diagnostic(`idle RSS after start: ${Math.round(Number(rss) / 1024)} MB`);
    } finally {
      assert.equal(await served.stop(), 0, 'graceful shutdown exits 0');
    }
  });

  test('DEMO_ACCOUNT=false starts without creating an account', async () => {
    const db = await freshDatabase();
    const served = await serve(db, { DEMO_ACCOUNT: 'false' });
    await served.stop();
    assert.doesNotMatch(served.output(), /demo account/);
    const r = cli(db, ['token', 'create', '--user', 'demo']);
    assert.equal(r.status, 2);
  });

  test('10 restarts in a row keep every account, token and session', async () => {
    const db = await freshDatabase();
    const accounts = [1, 2, 3].map((i) => JSON.parse(cli(db, ['account', 'create', '--user', `user${i}`, '--password', `password-${i}-x`]).stdout) as { subscriptionToken: string; userName: string });
    let served = await serve(db);
    const cookies: string[] = [];
    for (const [i, a] of accounts.entries()) {
      const res = await request(served.origin + '/Authentication_JSON_AppService.axd/Login', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ userName: a.userName, password: `password-${i + 1}-x`, createPersistentCookie: true }),
      });
      cookies.push(/^\.ASPXAUTH=([^;]+)/.exec(res.headers['set-cookie']![0]!)![1]!);
    }
    for (let restart = 1; restart <= 10; restart++) {
      assert.equal(await served.stop(), 0);
      served = await serve(db);
      for (const [i, a] of accounts.entries()) {
        const res = await request(served.origin + '/publicapi/v1/api.svc/', {
          headers: { SubscriptionToken: a.subscriptionToken, Cookie: `.ASPXAUTH=${cookies[i]}`, Accept: 'application/json' },
        });
        assert.equal(res.status, 200, `restart ${restart}, ${a.userName}`);
      }
    }
    await served.stop();
    assert.doesNotMatch(served.output(), /demo account/, 'no demo account once accounts exist');
  });
});
