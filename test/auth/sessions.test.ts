import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import { createAccount, type CreatedAccount } from '../../src/auth/accounts';
import { hashCredential, newSessionValue, newSubscriptionToken } from '../../src/auth/credentials';
import { SessionService, type LoginResult } from '../../src/auth/sessions';
import type { Store } from '../../src/store/store';
import { HOUR, MINUTE, T0, countingStore, openTempStore, seededRandom, withStore, type TempStore } from './fixture';

/** Logs in and insists on success, returning the cookie value. */
async function loginOk(sessions: SessionService, userName: string, password: string, address = '192.0.2.1'): Promise<string> {
  const result = await sessions.login(userName, password, address);
  assert.ok(result.ok, `login of ${userName} failed: ${JSON.stringify(result)}`);
  return result.cookieValue;
}

async function lastSeenAt(store: Store, cookie: string): Promise<number | undefined> {
  const row = await store.directory.get<{ last_seen_at: bigint }>(`SELECT last_seen_at FROM sessions WHERE session_hash = ?`, [
    hashCredential(cookie),
  ]);
  return row ? Number(row.last_seen_at) : undefined;
}

describe('login, authenticate, logout', () => {
  let temp: TempStore;
  let clock: ManualClock;
  let sessions: SessionService;
  let alice: CreatedAccount;
  let bob: CreatedAccount;

  before(async () => {
    temp = await openTempStore();
    clock = new ManualClock(T0);
    sessions = new SessionService(temp.store, clock);
    alice = await createAccount(temp.store, clock, { userName: 'alice', password: 'alice-password' });
    bob = await createAccount(temp.store, clock, { userName: 'bob', password: 'bob-password' });
  });
  after(() => temp.close());

  test('a correct login answers ok with a 256-bit cookie value and the account id, and stores the session', async () => {
    const result = await sessions.login('alice', 'alice-password', '192.0.2.1');
    assert.equal(result.ok, true);
    assert.ok(result.ok);
    assert.match(result.cookieValue, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(result.accountId, alice.accountId);
    const row = await temp.store.directory.get<{ account_id: bigint; created_at: bigint; last_seen_at: bigint; expires_at: bigint }>(
      `SELECT account_id, created_at, last_seen_at, expires_at FROM sessions WHERE session_hash = ?`,
      [hashCredential(result.cookieValue)],
    );
    assert.deepEqual(row, {
      account_id: BigInt(alice.accountId),
      created_at: BigInt(T0),
      last_seen_at: BigInt(T0),
      expires_at: BigInt(T0 + 12 * HOUR),
    });
    const again = await sessions.login('alice', 'alice-password', '192.0.2.1');
    assert.ok(again.ok);
    assert.notEqual(again.cookieValue, result.cookieValue, 'each login is a new session');
  });

  test('unknown user and wrong password get the identical answer', async () => {
    const unknown = await sessions.login('mallory', 'alice-password', '192.0.2.2');
    const wrong = await sessions.login('alice', 'not-her-password', '192.0.2.3');
    const empty = await sessions.login('alice', '', '192.0.2.4');
    const invalidName = await sessions.login('x'.repeat(5000), 'alice-password', '192.0.2.5');
    const hugePassword = await sessions.login('alice', 'p'.repeat(1_000_000), '192.0.2.6');
    const expected: LoginResult = { ok: false };
    for (const r of [unknown, wrong, empty, invalidName, hugePassword]) assert.deepEqual(r, expected);
    assert.equal(JSON.stringify(unknown), JSON.stringify(wrong));
  });


  test('authenticate needs both credentials of the same account', async () => {
    const aliceCookie = await loginOk(sessions, 'alice', 'alice-password');
    const bobCookie = await loginOk(sessions, 'bob', 'bob-password');
    assert.equal(await sessions.authenticate(alice.subscriptionToken, aliceCookie), alice.accountId);
    assert.equal(await sessions.authenticate(bob.subscriptionToken, bobCookie), bob.accountId);
    // Cookie alone, token alone.
    assert.equal(await sessions.authenticate('', aliceCookie), undefined);
    assert.equal(await sessions.authenticate(alice.subscriptionToken, ''), undefined);
    // Crossed accounts, both ways.
    assert.equal(await sessions.authenticate(alice.subscriptionToken, bobCookie), undefined);
    assert.equal(await sessions.authenticate(bob.subscriptionToken, aliceCookie), undefined);
    // Well-formed but never issued.
    assert.equal(await sessions.authenticate(newSubscriptionToken(), aliceCookie), undefined);
    assert.equal(await sessions.authenticate(alice.subscriptionToken, newSessionValue()), undefined);
    // The token is not a cookie and the cookie is not a token.
    assert.equal(await sessions.authenticate(aliceCookie, alice.subscriptionToken), undefined);
  });

  test('isLoggedIn follows the session', async () => {
    const cookie = await loginOk(sessions, 'alice', 'alice-password');
    assert.equal(await sessions.isLoggedIn(cookie), true);
    assert.equal(await sessions.isLoggedIn(newSessionValue()), false);
    assert.equal(await sessions.isLoggedIn(''), false);
    assert.equal(await sessions.isLoggedIn(alice.subscriptionToken), false);
  });

  test('logout deletes the session: the cookie stops working, other sessions do not', async () => {
    const cookie = await loginOk(sessions, 'alice', 'alice-password');
    const other = await loginOk(sessions, 'alice', 'alice-password');
    assert.equal(await sessions.authenticate(alice.subscriptionToken, cookie), alice.accountId);
    assert.equal(await sessions.logout(cookie), true);
    assert.equal(await lastSeenAt(temp.store, cookie), undefined, 'the row is gone');
    assert.equal(await sessions.authenticate(alice.subscriptionToken, cookie), undefined);
    assert.equal(await sessions.isLoggedIn(cookie), false);
    assert.equal(await sessions.logout(cookie), false, 'nothing left to end');
    assert.equal(await sessions.logout('garbage'), false);
    assert.equal(await sessions.authenticate(alice.subscriptionToken, other), alice.accountId);
  });

  test('1,000 mutated tokens and 1,000 mutated cookies are all refused', async () => {
    const cookie = await loginOk(sessions, 'alice', 'alice-password');
    const token = alice.subscriptionToken;
    assert.equal(await sessions.authenticate(token, cookie), alice.accountId, 'the originals work');

    const random = seededRandom(20260115);
    const pick = (n: number) => Math.floor(random() * n);
    const hex = '0123456789abcdef';
    const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    /** A mutation that is still the same credential: only the token's case may change. */
    const mutate = (value: string, alphabet: string, same: (m: string) => boolean): string => {
      for (;;) {
        const i = pick(value.length);
        const c = value[i]!;
        let m: string;
        switch (pick(12)) {
          case 0: // replace one character by another of the same alphabet
            m = value.slice(0, i) + alphabet[pick(alphabet.length)] + value.slice(i + 1);
            break;
          case 1: // flip one bit of one character
            m = value.slice(0, i) + String.fromCharCode(c.charCodeAt(0) ^ (1 << pick(7))) + value.slice(i + 1);
            break;
          case 2: // truncate
            m = value.slice(0, pick(value.length));
            break;
          case 3: // append
            m = value + alphabet[pick(alphabet.length)]!.repeat(1 + pick(3));
            break;
          case 4:
            m = '';
            break;
          case 5: // whole value in the other case
            m = random() < 0.5 ? value.toUpperCase() : value.toLowerCase();
            break;
          case 6: // one letter in the other case
            m = value.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + value.slice(i + 1);
            break;
          case 7: // delete one character
            m = value.slice(0, i) + value.slice(i + 1);
            break;
          case 8: // insert one character
            m = value.slice(0, i) + alphabet[pick(alphabet.length)] + value.slice(i);
            break;
          case 9: // non-ASCII look-alike
            m = value.slice(0, i) + ['é', 'ａ', 'а', '\u0000', 'ß', '０'][pick(6)] + value.slice(i + 1);
            break;
          case 10: // surrounding junk, as echoed cookie attributes or blanks
            m = [` ${value}`, `${value} `, `${value}; path=/; HttpOnly`, `"${value}"`][pick(4)]!;
            break;
          default: // huge
            m = value.repeat(10 + pick(100));
            break;
        }
        if (!same(m)) return m;
      }
    };

    let tried = 0;
    for (let i = 0; i < 1000; i++) {
      const badToken = mutate(token, hex, (m) => m.toLowerCase() === token);
      const badCookie = mutate(cookie, b64, (m) => m === cookie);
      assert.equal(await sessions.authenticate(badToken, cookie), undefined, `token accepted: ${JSON.stringify(badToken)}`);
      assert.equal(await sessions.authenticate(token, badCookie), undefined, `cookie accepted: ${JSON.stringify(badCookie)}`);
      assert.equal(await sessions.isLoggedIn(badCookie), false, `isLoggedIn accepted: ${JSON.stringify(badCookie)}`);
      tried++;
    }
    assert.equal(tried, 1000);
    assert.equal(await sessions.authenticate(token, cookie), alice.accountId, 'the originals still work');
    assert.equal(await sessions.authenticate(token.toUpperCase(), cookie), alice.accountId, 'the token in upper case is the same token');
  });
});

describe('malformed credentials never reach the database', () => {
  test('empty, huge, non-ASCII and wrongly shaped values are refused without a statement', () =>
    withStore(async (store) => {
      const counted = countingStore(store);
      const clock = new ManualClock(T0);
      const sessions = new SessionService(counted.store, clock);
      const token = newSubscriptionToken();
      const cookie = newSessionValue();
      const junk = ['', 'x'.repeat(201), 'y'.repeat(1_000_000), 'é'.repeat(43), `{${token.toUpperCase()}}`, `{${token}}`, cookie + '=', '\u0000'];
      for (const j of junk) {
        assert.equal(await sessions.authenticate(j, cookie), undefined);
        assert.equal(await sessions.authenticate(token, j), undefined);
        assert.equal(await sessions.isLoggedIn(j), false);
        assert.equal(await sessions.logout(j), false);
      }
      assert.equal(counted.calls(), 0);
      // Well-formed values are looked up (this is what makes the count above meaningful).
      assert.equal(await sessions.authenticate(token, cookie), undefined);
      assert.equal(counted.calls(), 1);
    }));
});

describe('expiry', () => {
  test('a session ends 20 minutes after its last use', () =>
    withStore(async (store) => {
      const clock = new ManualClock(T0);
      const sessions = new SessionService(store, clock);
      const account = await createAccount(store, clock, { userName: 'ivy', password: 'ivy-password' });
      const idle = await loginOk(sessions, 'ivy', 'ivy-password');
      clock.advance(20 * MINUTE - 1);
      const almost = await loginOk(sessions, 'ivy', 'ivy-password');
      assert.equal(await sessions.authenticate(account.subscriptionToken, idle), account.accountId, 'alive at 19:59.999');
      // (that use moved its last use to now)
      clock.advance(20 * MINUTE);
      assert.equal(await sessions.authenticate(account.subscriptionToken, idle), undefined, 'expired 20 min after last use');
      assert.equal(await sessions.isLoggedIn(idle), false);
      assert.equal(await sessions.isLoggedIn(almost), false, 'unused for exactly 20 min');
    }));

  test('use keeps it alive (sliding): used at 15 min, still alive at 30 min', () =>
    withStore(async (store) => {
      const clock = new ManualClock(T0);
      const sessions = new SessionService(store, clock);
      const account = await createAccount(store, clock, { userName: 'jack', password: 'jack-password' });
      const used = await loginOk(sessions, 'jack', 'jack-password');
      const unused = await loginOk(sessions, 'jack', 'jack-password');
      clock.advance(15 * MINUTE);
      assert.equal(await sessions.authenticate(account.subscriptionToken, used), account.accountId);
      assert.equal(await lastSeenAt(store, used), T0 + 15 * MINUTE);
      clock.advance(15 * MINUTE); // 30 min after login
      assert.equal(await sessions.authenticate(account.subscriptionToken, used), account.accountId, 'alive at 30 min');
      assert.equal(await sessions.authenticate(account.subscriptionToken, unused), undefined, 'the unused one expired');
      clock.advance(20 * MINUTE); // 20 min after the last use at 30 min
      assert.equal(await sessions.authenticate(account.subscriptionToken, used), undefined);
    }));

  test('isLoggedIn counts as a use', () =>
    withStore(async (store) => {
      const clock = new ManualClock(T0);
      const sessions = new SessionService(store, clock);
      await createAccount(store, clock, { userName: 'kim', password: 'kim-password' });
      const cookie = await loginOk(sessions, 'kim', 'kim-password');
      clock.advance(15 * MINUTE);
      assert.equal(await sessions.isLoggedIn(cookie), true);
      clock.advance(15 * MINUTE);
      assert.equal(await sessions.isLoggedIn(cookie), true);
    }));

  test('last use is written at most once per minute, so reads do not each cost a write', () =>
    withStore(async (store) => {
      const clock = new ManualClock(T0);
      const counted = countingStore(store);
      const sessions = new SessionService(counted.store, clock);
      const account = await createAccount(store, clock, { userName: 'lee', password: 'lee-password' });
      const cookie = await loginOk(sessions, 'lee', 'lee-password');
      const before = counted.calls();
      for (let i = 0; i < 10; i++) {
        clock.advance(5000); // 10 uses within 50 s
        assert.equal(await sessions.authenticate(account.subscriptionToken, cookie), account.accountId);
      }
      assert.equal(counted.calls() - before, 10, 'one read each, no writes');
      assert.equal(await lastSeenAt(store, cookie), T0);
      clock.advance(10_000); // 60 s after the last write
      assert.equal(await sessions.authenticate(account.subscriptionToken, cookie), account.accountId);
      assert.equal(await lastSeenAt(store, cookie), T0 + 60_000);
      assert.equal(counted.calls() - before, 13, 'a read, then one write transaction with one statement');
    }));

  test('a session ends 12 hours after login even with continual use', () =>
    withStore(async (store) => {
      const clock = new ManualClock(T0);
      const sessions = new SessionService(store, clock);
      const account = await createAccount(store, clock, { userName: 'max', password: 'max-password' });
      const cookie = await loginOk(sessions, 'max', 'max-password');
      for (let elapsed = 10 * MINUTE; elapsed < 12 * HOUR; elapsed += 10 * MINUTE) {
        clock.advance(10 * MINUTE);
        assert.equal(await sessions.authenticate(account.subscriptionToken, cookie), account.accountId, `alive at ${elapsed / MINUTE} min`);
      }
      clock.advance(10 * MINUTE);
      assert.equal(clock.now(), T0 + 12 * HOUR);
      assert.equal(await sessions.authenticate(account.subscriptionToken, cookie), undefined);
      assert.equal(await sessions.isLoggedIn(cookie), false);
      // A new login starts a new 12 hours.
      const fresh = await loginOk(sessions, 'max', 'max-password');
      assert.equal(await sessions.authenticate(account.subscriptionToken, fresh), account.accountId);
    }));

  test('pruneExpired deletes only sessions that can no longer be used', () =>
    withStore(async (store) => {
      const clock = new ManualClock(T0);
      const sessions = new SessionService(store, clock);
      const account = await createAccount(store, clock, { userName: 'ned', password: 'ned-password' });
      const old = await loginOk(sessions, 'ned', 'ned-password');
      clock.advance(10 * MINUTE);
      const recent = await loginOk(sessions, 'ned', 'ned-password');
      clock.advance(10 * MINUTE);
      // The address's and the user name's throttle rows (their counts back at 0 after the
      // successful logins) are quiet too.
      assert.deepEqual(await sessions.pruneExpired(), { sessions: 1, throttleRows: 2 });
      assert.equal(await lastSeenAt(store, old), undefined);
      assert.equal(await sessions.authenticate(account.subscriptionToken, recent), account.accountId);
    }));

  test('timeouts are options', () =>
    withStore(async (store) => {
      const clock = new ManualClock(T0);
      const sessions = new SessionService(store, clock, { idleTimeoutMs: 5 * MINUTE, absoluteTimeoutMs: HOUR });
      assert.equal(sessions.absoluteTimeoutMs, HOUR);
      const account = await createAccount(store, clock, { userName: 'olga', password: 'olga-password' });
      const cookie = await loginOk(sessions, 'olga', 'olga-password');
      clock.advance(5 * MINUTE);
      assert.equal(await sessions.authenticate(account.subscriptionToken, cookie), undefined);
      assert.throws(() => new SessionService(store, clock, { idleTimeoutMs: 1000, touchIntervalMs: 1000 }), RangeError);
    }));
});
