import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import {
  AccountExistsError,
  InvalidAccountInputError,
  UnknownAccountError,
  countAccounts,
  createAccount,
  createToken,
  revokeToken,
} from '../../src/auth/accounts';
import { hashCredential } from '../../src/auth/credentials';
import { verifyPassword } from '../../src/auth/passwords';
import { SessionService } from '../../src/auth/sessions';
import { T0, tableText, withStore } from './fixture';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('createAccount returns the id, the name and a first token; the password is stored hashed', () =>
  withStore(async (store) => {
    const clock = new ManualClock(T0);
    assert.equal(await countAccounts(store), 0);
    const a = await createAccount(store, clock, { userName: 'alice', password: 'alice-password' });
    const b = await createAccount(store, clock, { userName: 'bob', password: 'bob-password' });
    assert.equal(typeof a.accountId, 'number');
    assert.ok(a.accountId > 0);
    assert.notEqual(a.accountId, b.accountId);
    assert.equal(a.userName, 'alice');
    assert.match(a.subscriptionToken, GUID);
    assert.notEqual(a.subscriptionToken, b.subscriptionToken);
    assert.equal(await countAccounts(store), 2);

    const row = await store.directory.get<{ id: bigint; password_hash: string; created_at: bigint }>(
      `SELECT id, password_hash, created_at FROM accounts WHERE user_name = ?`,
      ['alice'],
    );
    assert.ok(row);
    assert.equal(Number(row.id), a.accountId);
    assert.equal(Number(row.created_at), T0);
    assert.match(row.password_hash, /^scrypt\$/);
    assert.equal(await verifyPassword('alice-password', row.password_hash), true);

    const token = await store.directory.get<{ account_id: bigint; revoked_at: unknown }>(
      `SELECT account_id, revoked_at FROM subscription_tokens WHERE token_hash = ?`,
      [hashCredential(a.subscriptionToken)],
    );
    assert.deepEqual(token, { account_id: BigInt(a.accountId), revoked_at: null });
  }));

test('a duplicate user name is an AccountExistsError and changes nothing', () =>
  withStore(async (store) => {
    const clock = new ManualClock(T0);
    const first = await createAccount(store, clock, { userName: 'carol', password: 'password-1' });
    await assert.rejects(createAccount(store, clock, { userName: 'carol', password: 'password-2' }), (error: unknown) => {
      assert.ok(error instanceof AccountExistsError);
      assert.equal(error.message, "An account with the user name 'carol' already exists");
      return true;
    });
    assert.equal(await countAccounts(store), 1);
    const tokens = await store.directory.all(`SELECT token_hash FROM subscription_tokens`);
    assert.equal(tokens.length, 1);
    const row = await store.directory.get<{ password_hash: string }>(`SELECT password_hash FROM accounts WHERE user_name = ?`, ['carol']);
    assert.equal(await verifyPassword('password-1', row!.password_hash), true);
    // User names are case-sensitive: another case is another account.
    const other = await createAccount(store, clock, { userName: 'Carol', password: 'password-3' });
    assert.notEqual(other.accountId, first.accountId);
  }));

test('invalid user names and passwords are InvalidAccountInputErrors with a clear message', () =>
  withStore(async (store) => {
    const clock = new ManualClock(T0);
    const cases: [string, string, string][] = [
      ['', 'long-enough', 'The user name must not be empty'],
      ['x'.repeat(101), 'long-enough', 'The user name must be at most 100 characters'],
      ['tab\there', 'long-enough', 'The user name must not contain control characters'],
      ['nul\u0000', 'long-enough', 'The user name must not contain control characters'],
      ['del\u007f', 'long-enough', 'The user name must not contain control characters'],
      ['lone\ud800', 'long-enough', 'The user name must be valid Unicode text'],
      [' padded', 'long-enough', 'The user name must not begin or end with white space'],
      ['dave', 'short77', 'The password must be at least 8 characters'],
      ['dave', '', 'The password must be at least 8 characters'],
      ['dave', 'p'.repeat(1025), 'The password must be at most 1024 characters'],
      ['dave', 'password\u0000', 'The password must not contain NUL characters'],
    ];
    for (const [userName, password, message] of cases) {
      await assert.rejects(createAccount(store, clock, { userName, password }), (error: unknown) => {
        assert.ok(error instanceof InvalidAccountInputError, `${JSON.stringify(userName)}: ${String(error)}`);
        assert.equal(error.message, message);
        return true;
      });
    }
    assert.equal(await countAccounts(store), 0);
    // The limits themselves are allowed.
    await createAccount(store, clock, { userName: 'x'.repeat(100), password: '8 chars!' });
    await createAccount(store, clock, { userName: 'Zoë Müller-Łukasz', password: 'p'.repeat(1024) });
    assert.equal(await countAccounts(store), 2);
  }));

test('createToken adds a working token; an unknown user is an UnknownAccountError', () =>
  withStore(async (store) => {
    const clock = new ManualClock(T0);
    const sessions = new SessionService(store, clock);
    const account = await createAccount(store, clock, { userName: 'erin', password: 'erin-password' });
    const second = await createToken(store, clock, 'erin');
    assert.match(second, GUID);
    assert.notEqual(second, account.subscriptionToken);
    const rows = await store.directory.all<{ account_id: bigint }>(`SELECT account_id FROM subscription_tokens WHERE account_id = ?`, [account.accountId]);
    assert.equal(rows.length, 2);

    const login = await sessions.login('erin', 'erin-password', '192.0.2.10');
    assert.ok(login.ok);
    assert.equal(await sessions.authenticate(second, login.cookieValue), account.accountId);
    assert.equal(await sessions.authenticate(account.subscriptionToken, login.cookieValue), account.accountId);

    await assert.rejects(createToken(store, clock, 'nobody'), (error: unknown) => {
      assert.ok(error instanceof UnknownAccountError);
      assert.equal(error.message, "There is no account with the user name 'nobody'");
      return true;
    });
    await assert.rejects(createToken(store, clock, 'ERIN'), UnknownAccountError);
  }));

test('revokeToken revokes a live token once; the account keeps its other tokens', () =>
  withStore(async (store) => {
    const clock = new ManualClock(T0);
    const sessions = new SessionService(store, clock);
    const account = await createAccount(store, clock, { userName: 'frank', password: 'frank-password' });
    const spare = await createToken(store, clock, 'frank');
    const login = await sessions.login('frank', 'frank-password', '192.0.2.11');
    assert.ok(login.ok);

    clock.advance(5000);
    assert.equal(await revokeToken(store, clock, account.subscriptionToken), true);
    assert.equal(await revokeToken(store, clock, account.subscriptionToken), false, 'already revoked');
    const row = await store.directory.get<{ revoked_at: bigint }>(`SELECT revoked_at FROM subscription_tokens WHERE token_hash = ?`, [
      hashCredential(account.subscriptionToken),
    ]);
    assert.equal(Number(row!.revoked_at), T0 + 5000);

    assert.equal(await sessions.authenticate(account.subscriptionToken, login.cookieValue), undefined);
    assert.equal(await sessions.authenticate(spare, login.cookieValue), account.accountId);

    assert.equal(await revokeToken(store, clock, '00000000-0000-0000-0000-000000000000'), false, 'unknown');
    assert.equal(await revokeToken(store, clock, 'not a token'), false, 'malformed');
    // An operator may paste it in upper case with blanks around it.
    assert.equal(await revokeToken(store, clock, `  ${spare.toUpperCase()} `), true);
    assert.equal(await sessions.authenticate(spare, login.cookieValue), undefined);
  }));

test('only hashes are stored: neither the token, the cookie nor the password appears in any table', () =>
  withStore(async (store) => {
    const clock = new ManualClock(T0);
    const sessions = new SessionService(store, clock);
    const account = await createAccount(store, clock, { userName: 'grace', password: 'grace-secret-pw' });
    const extra = await createToken(store, clock, 'grace');
    const login = await sessions.login('grace', 'grace-secret-pw', '192.0.2.12');
    assert.ok(login.ok);
    await sessions.login('grace', 'wrong-password', '192.0.2.12'); // leaves a throttle row

    const all = (
      await Promise.all((['accounts', 'subscription_tokens', 'sessions', 'login_throttle'] as const).map((t) => tableText(store, t)))
    ).join('\n');
    for (const secret of [account.subscriptionToken, extra, login.cookieValue, 'grace-secret-pw']) {
      assert.ok(!all.includes(secret), `a plain secret is stored: ${secret}`);
    }
    // Also not in another common encoding of the same bytes.
    assert.ok(!all.includes(Buffer.from(login.cookieValue, 'base64url').toString('hex')));
    assert.ok(!all.toLowerCase().includes(account.subscriptionToken.replace(/-/g, '')));

    // What is stored is the SHA-256 of each credential.
    const tokens = await tableText(store, 'subscription_tokens');
    assert.ok(tokens.includes(hashCredential(account.subscriptionToken)));
    assert.ok(tokens.includes(hashCredential(extra)));
    assert.ok((await tableText(store, 'sessions')).includes(hashCredential(login.cookieValue)));
  }));
