/**
 * An account's lifecycle from the command line, against a live service on the engine under test:
 * `account list`, `account password` (new password from standard input, every session ended),
 * `account disable` / `enable` (a disabled account's token and session answer 401 at once, its
 * logins fail), and `account delete` (one transaction: afterwards no row in any table holds the
 * account's id, and another account's rows are identical byte for byte). Each change is an audit
 * line on standard error with the account id and never the password.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import { ACCOUNT_COLUMN, buildSchema } from '../../src/store/schema';
import { request } from '../support/http-client';
import { asSeller, login, newSeller, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { runCli } from '../support/cli-process';
import { fullAccount } from '../support/full-account';
import { startWithPlatform } from '../platform/platform-client';

let live: LiveService;
before(async () => {
  live = await startWithPlatform();
});
after(() => live.close());

const cli = (args: string[], input = '') => runCli(live.database.env, args, input);
const serviceDocument = (s: Seller, auth = s.auth) => request(live.root + '/', { headers: { ...auth, Accept: 'application/json' } });

function auditLines(stderr: string): Record<string, unknown>[] {
  return stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => 'audit' in l);
}

describe('account password, disable, enable and list', { timeout: 120_000 }, () => {
  test('account password reads the new password from standard input and ends every session', async () => {
    const s = await newSeller(live, 'pw');
    const otherSession = await login(live, s.userName, s.password);
    assert.equal((await serviceDocument(s)).status, 200);
    const newPassword = 'a-brand-new-password';
    const r = await cli(['account', 'password', '--user', s.userName], newPassword + '\n');
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.lines(), [{ accountId: s.accountId, sessionsEnded: 2 }]);
    assert.equal((await serviceDocument(s)).status, 401, 'the session of before is over');
    assert.equal((await serviceDocument(s, { ...s.auth, Cookie: `.ASPXAUTH=${otherSession}` })).status, 401);
    assert.equal(await login(live, s.userName, s.password), undefined, 'the old password no longer logs in');
    const cookie = await login(live, s.userName, newPassword);
    assert.ok(cookie, 'the new one does (the trailing line break is not part of it)');
    assert.equal((await serviceDocument(s, { ...s.auth, Cookie: `.ASPXAUTH=${cookie}` })).status, 200);
    const events = auditLines(r.stderr);
    assert.deepEqual(events.map((e) => [e.audit, e.accountId]), [['account password changed', s.accountId]]);
    assert.ok(!r.stderr.includes(newPassword), 'the password is never logged');
  });

  test('a password that breaks the rules is refused (exit 2) and changes nothing', async () => {
    const s = await newSeller(live, 'pwshort');
    const r = await cli(['account', 'password', '--user', s.userName], 'short\n');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /at least 8 characters/);
    assert.equal((await serviceDocument(s)).status, 200, 'the session goes on');
    assert.equal((await cli(['account', 'password', '--user', 'nobody-at-all'], 'long-enough-password\n')).status, 2);
  });

  test('a disabled account: its token and session answer 401 at once and it cannot log in; enabled, it works again', async () => {
    const s = await newSeller(live, 'dis');
    const bystander = await newSeller(live, 'bystander');
    const disabled = await cli(['account', 'disable', '--user', s.userName]);
    assert.equal(disabled.status, 0, disabled.stderr);
    assert.deepEqual(disabled.lines(), [{ accountId: s.accountId, changed: true, sessionsEnded: 1 }]);
    assert.equal((await serviceDocument(s)).status, 401);
    assert.equal(await login(live, s.userName, s.password), undefined);
    assert.equal((await serviceDocument(bystander)).status, 200, 'another account is untouched');

    const enabled = await cli(['account', 'enable', '--user', s.userName]);
    assert.deepEqual(enabled.lines(), [{ accountId: s.accountId, changed: true }]);
    const cookie = await login(live, s.userName, s.password);
    assert.ok(cookie);
    assert.equal((await serviceDocument(s, { ...s.auth, Cookie: `.ASPXAUTH=${cookie}` })).status, 200, 'the same token works again');
    assert.deepEqual(auditLines(disabled.stderr).map((e) => [e.audit, e.accountId]), [['account disabled', s.accountId]]);
    assert.deepEqual(auditLines(enabled.stderr).map((e) => [e.audit, e.accountId]), [['account enabled', s.accountId]]);
  });

  test('token create and token revoke are audit events with the account id, never the token', async () => {
    const s = await newSeller(live, 'tokens');
    const created = await cli(['token', 'create', '--user', s.userName]);
    assert.equal(created.status, 0, created.stderr);
    const token = created.stdout.trim();
    const revoked = await cli(['token', 'revoke', '--token', token]);
    assert.equal(revoked.status, 0, revoked.stderr);
    assert.deepEqual(auditLines(created.stderr).map((e) => [e.audit, e.accountId, e.clientAddress]), [['token created', s.accountId, 'command line']]);
    assert.deepEqual(auditLines(revoked.stderr).map((e) => [e.audit, e.accountId]), [['token revoked', s.accountId]]);
    for (const r of [created, revoked]) assert.ok(!r.stderr.includes(token), 'the token is never logged');
  });

  test('account list: name, id, created, last login, disabled and rows per table', async () => {
    const s = await newSeller(live, 'listed');
    for (const title of ['one', 'two']) {
      const res = await asSeller(s, `${live.root}/Products`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ Title: title, Price: '1', StockAmount: 1 }) });
      assert.equal(res.status, 201, res.body);
    }
    const r = await cli(['account', 'list']);
    assert.equal(r.status, 0, r.stderr);
    const entry = r.lines<Record<string, unknown>>().find((l) => l.userName === s.userName);
    assert.ok(entry);
    assert.equal(entry.accountId, s.accountId);
    assert.match(String(entry.created), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(String(entry.lastLogin), /^\d{4}-\d\d-\d\dT/, 'newSeller logged in');
    assert.equal(entry.disabled, null);
    // The change log holds the two creations.
    assert.deepEqual(entry.rows, { entity_changes: 2, products: 2 });
    assert.equal(entry.totalRows, 4);
  });
});

/** Every table with an account column (the model's and the service's own), and accounts itself. */
const ACCOUNT_TABLES = buildSchema(model).filter((t) => t.columns.some((c) => c.name === ACCOUNT_COLUMN)).map((t) => t.name);

/** Rows that hold the account id anywhere, per table (read in the account's own scope). */
async function rowsHolding(accountId: number): Promise<Record<string, number>> {
  const { store } = live.service.app;
  const out: Record<string, number> = {};
  await store.read(accountId, async (tx) => {
    for (const table of ACCOUNT_TABLES) out[table] = Number((await tx.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM "${table}" WHERE ${ACCOUNT_COLUMN} = ?`, [accountId]))!.n);
  });
  out.accounts = Number((await store.directory.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM accounts WHERE id = ?', [accountId]))!.n);
  return out;
}

/** The directory rows of an account (its account row, tokens and sessions), as text. */
async function directoryRows(accountId: number): Promise<string[]> {
  const { store } = live.service.app;
  const rows: unknown[] = [];
  for (const [table, column] of [['accounts', 'id'], ['subscription_tokens', ACCOUNT_COLUMN], ['sessions', ACCOUNT_COLUMN]] as const) {
    rows.push(...(await store.directory.all(`SELECT * FROM ${table} WHERE ${column} = ? ORDER BY 1`, [accountId])));
  }
  return rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)));
}

describe('account delete', { timeout: 180_000 }, () => {
  test('erases every row of the account in every table and prints the counts; the other account is byte-identical', async () => {
    const leaving = await fullAccount(live, 'leaving');
    const staying = await fullAccount(live, 'staying');
    // An idempotency key and a second token belong to the account too.
    const keyed = await asSeller(leaving, `${live.root}/Products`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k-1' }, body: JSON.stringify({ Title: 'kept key', Price: '1', StockAmount: 1 }) });
    assert.equal(keyed.status, 201, keyed.body);
    assert.equal((await cli(['token', 'create', '--user', leaving.userName])).status, 0);
    const held = await rowsHolding(leaving.accountId);
    for (const table of ACCOUNT_TABLES) assert.ok(held[table]! > 0, `before: the account has rows in ${table}`);
    const stayingRows = await tenantRows(live, staying.accountId);
    const stayingDirectory = await directoryRows(staying.accountId);

    const r = await cli(['account', 'delete', '--user', leaving.userName]);
    assert.equal(r.status, 0, r.stderr);
    const [printed] = r.lines<{ accountId: number; deleted: Record<string, number> }>();
    assert.equal(printed!.accountId, leaving.accountId);
    for (const table of ACCOUNT_TABLES) assert.equal(printed!.deleted[table], held[table], `printed count of ${table}`);
    assert.equal(printed!.deleted.accounts, 1);

    assert.ok(Object.values(await rowsHolding(leaving.accountId)).every((n) => n === 0), JSON.stringify(await rowsHolding(leaving.accountId)));
    assert.equal((await serviceDocument(leaving)).status, 401);
    assert.equal(await login(live, leaving.userName, leaving.password), undefined);
    assert.deepEqual(await tenantRows(live, staying.accountId), stayingRows, "the other account's data is identical byte for byte");
    assert.deepEqual(await directoryRows(staying.accountId), stayingDirectory);
    assert.equal((await serviceDocument(staying)).status, 200);
    assert.deepEqual(auditLines(r.stderr).map((e) => [e.audit, e.accountId, e.clientAddress]), [['account deleted', leaving.accountId, 'command line']]);
    // The name is free again.
    assert.equal((await cli(['account', 'create', '--user', leaving.userName, '--password', 'another-password'])).status, 0);
  });

  test('an unknown user name is refused with exit 2', async () => {
    const r = await cli(['account', 'delete', '--user', 'never-existed']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /no account with the user name 'never-existed'/);
  });
});
