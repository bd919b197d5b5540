import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import { createAccount } from '../../src/auth/accounts';
import { SessionService } from '../../src/auth/sessions';
import { DEFAULT_THROTTLE_OPTIONS, addressScopeKey, userScopeKey } from '../../src/auth/throttle';
import type { Store } from '../../src/store/store';
import { MINUTE, T0, withStore } from './fixture';

interface ThrottleRowText {
  failures: number;
  windowStartedAt: number;
  blockedUntil: number | null;
}

async function throttleRow(store: Store, key: string): Promise<ThrottleRowText | undefined> {
  const row = await store.directory.get<{ failures: bigint; window_started_at: bigint; blocked_until: bigint | null }>(
    `SELECT failures, window_started_at, blocked_until FROM login_throttle WHERE scope_key = ?`,
    [key],
  );
  return (
    row && {
      failures: Number(row.failures),
      windowStartedAt: Number(row.window_started_at),
      blockedUntil: row.blocked_until === null ? null : Number(row.blocked_until),
    }
  );
}

async function setUp(store: Store) {
  const clock = new ManualClock(T0);
  const sessions = new SessionService(store, clock);
  await createAccount(store, clock, { userName: 'victim', password: 'right-password' });
  await createAccount(store, clock, { userName: 'bystander', password: 'bystander-password' });
  return { clock, sessions };
}

test('the defaults are 5 per user and 20 per address per 15 minutes, blocks from 30 s doubling to 15 min', () => {
  assert.deepEqual(DEFAULT_THROTTLE_OPTIONS, {
    windowMs: 15 * MINUTE,
    maxFailuresPerUser: 5,
    maxFailuresPerAddress: 20,
    firstBlockMs: 30_000,
    maxBlockMs: 15 * MINUTE,
  });
});

test('per user: the 6th attempt after 5 failures is throttled, even with the right password, until the block ends', () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    for (let i = 1; i <= 5; i++) {
      assert.deepEqual(await sessions.login('victim', `guess-${i}`, `192.0.2.${i}`), { ok: false }, `failure ${i}`);
    }
    assert.deepEqual(await throttleRow(store, 'user:victim'), { failures: 5, windowStartedAt: T0, blockedUntil: T0 + 30_000 });
    assert.deepEqual(await sessions.login('victim', 'guess-6', '192.0.2.6'), { ok: false, throttled: true, retryAfterSeconds: 30 });
    assert.deepEqual(await sessions.login('victim', 'right-password', '192.0.2.7'), { ok: false, throttled: true, retryAfterSeconds: 30 });
    clock.advance(20_000);
    assert.deepEqual(await sessions.login('victim', 'right-password', '192.0.2.7'), { ok: false, throttled: true, retryAfterSeconds: 10 });
    // Another account is not affected.
    assert.equal((await sessions.login('bystander', 'bystander-password', '192.0.2.8')).ok, true);
    // The block ends with the clock; the right password then works and clears the user's count.
    clock.advance(10_000);
    const result = await sessions.login('victim', 'right-password', '192.0.2.7');
    assert.equal(result.ok, true);
    assert.equal(await throttleRow(store, 'user:victim'), undefined);
    assert.deepEqual(await sessions.login('victim', 'guess-7', '192.0.2.9'), { ok: false });
  }));

test('an unknown user name is throttled exactly like an existing one', () =>
  withStore(async (store) => {
    const { sessions } = await setUp(store);
    const answers = [];
    for (let i = 1; i <= 6; i++) answers.push(await sessions.login('ghost', `guess-${i}`, `192.0.2.${i}`));
    assert.deepEqual(answers, [
      { ok: false },
      { ok: false },
      { ok: false },
      { ok: false },
      { ok: false },
      { ok: false, throttled: true, retryAfterSeconds: 30 },
    ]);
  }));

test('blocks double with each further failure and stop at 15 minutes', () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    for (let i = 1; i <= 5; i++) await sessions.login('victim', 'wrong-password', `203.0.113.${i}`);
    const blocks: number[] = [];
    for (let round = 0; round < 7; round++) {
      const r = await sessions.login('victim', 'wrong-password', `203.0.113.${10 + round}`);
      assert.ok('throttled' in r, `round ${round}: ${JSON.stringify(r)}`);
      blocks.push(r.retryAfterSeconds);
      clock.advance(r.retryAfterSeconds * 1000);
      assert.deepEqual(await sessions.login('victim', 'wrong-password', `203.0.113.${50 + round}`), { ok: false });
    }
    assert.deepEqual(blocks, [30, 60, 120, 240, 480, 900, 900]);
  }));

test('failures in an old window are forgotten', () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    for (let i = 0; i < 4; i++) assert.deepEqual(await sessions.login('victim', 'wrong-password', '192.0.2.1'), { ok: false });
    clock.advance(15 * MINUTE);
    for (let i = 0; i < 4; i++) assert.deepEqual(await sessions.login('victim', 'wrong-password', '192.0.2.1'), { ok: false });
    assert.deepEqual(await throttleRow(store, 'user:victim'), { failures: 4, windowStartedAt: T0 + 15 * MINUTE, blockedUntil: null });
    assert.deepEqual(await sessions.login('victim', 'wrong-password', '192.0.2.1'), { ok: false });
    assert.deepEqual(await sessions.login('victim', 'wrong-password', '192.0.2.1'), { ok: false, throttled: true, retryAfterSeconds: 30 });
  }));

test('per address: 20 failures over many user names block the address, for every user name', () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    for (let i = 1; i <= 20; i++) {
      assert.deepEqual(await sessions.login(`user-${i}`, 'password123', '198.51.100.77'), { ok: false }, `failure ${i}`);
    }
    const throttled = { ok: false, throttled: true, retryAfterSeconds: 30 };
    assert.deepEqual(await sessions.login('user-21', 'password123', '198.51.100.77'), throttled);
    assert.deepEqual(await sessions.login('victim', 'right-password', '198.51.100.77'), throttled);
    assert.deepEqual(await sessions.login('victim', 'right-password', '::ffff:198.51.100.77'), throttled, 'IPv4-mapped is the same client');
    // Other addresses are not affected.
    assert.equal((await sessions.login('victim', 'right-password', '198.51.100.78')).ok, true);
    clock.advance(30_000);
    assert.equal((await sessions.login('victim', 'right-password', '198.51.100.77')).ok, true);
    // A successful login does not wipe the address's failures (it only gives back its own attempt).
    assert.equal((await throttleRow(store, 'addr:198.51.100.77'))?.failures, 20);
    assert.deepEqual(await sessions.login('user-22', 'password123', '198.51.100.77'), { ok: false });
    assert.deepEqual(await sessions.login('user-23', 'password123', '198.51.100.77'), { ok: false, throttled: true, retryAfterSeconds: 60 });
  }));

test('IPv6 clients are counted per /64', () =>
  withStore(async (store) => {
    const { sessions } = await setUp(store);
    for (let i = 1; i <= 20; i++) {
      assert.deepEqual(await sessions.login(`user-${i}`, 'password123', `2001:db8:aa:bb::${i.toString(16)}`), { ok: false });
    }
    assert.deepEqual(await sessions.login('victim', 'right-password', '2001:db8:aa:bb:ffff:1:2:3'), {
      ok: false,
      throttled: true,
      retryAfterSeconds: 30,
    });
    assert.equal((await sessions.login('victim', 'right-password', '2001:db8:aa:bc::1')).ok, true);
  }));

test('a success clears the user scope but keeps the address failures; the success itself is not counted', () =>
  withStore(async (store) => {
    const { sessions } = await setUp(store);
    for (let i = 0; i < 3; i++) await sessions.login('victim', 'wrong-password', '192.0.2.50');
    assert.equal((await throttleRow(store, 'user:victim'))?.failures, 3);
    assert.equal((await throttleRow(store, 'addr:192.0.2.50'))?.failures, 3);
    assert.equal((await sessions.login('victim', 'right-password', '192.0.2.50')).ok, true);
    assert.equal(await throttleRow(store, 'user:victim'), undefined);
    assert.deepEqual(await throttleRow(store, 'addr:192.0.2.50'), { failures: 3, windowStartedAt: T0, blockedUntil: null });
  }));

test('a burst of simultaneous guesses gets no more than the limit verified', () =>
  withStore(async (store) => {
    const { sessions } = await setUp(store);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => sessions.login('victim', `guess-${i}`, `192.0.2.${100 + i}`)),
    );
    const verified = results.filter((r) => !('throttled' in r));
    const throttled = results.filter((r) => 'throttled' in r);
    assert.equal(verified.length, 5);
    assert.equal(throttled.length, 25);
    assert.equal((await throttleRow(store, 'user:victim'))?.failures, 5);
  }));

test('pruning removes only rows that have been quiet for a whole window', () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    for (let i = 0; i < 5; i++) await sessions.login('victim', 'wrong-password', '192.0.2.60');
    clock.advance(10 * MINUTE);
    await sessions.login('someone', 'wrong-password', '192.0.2.61');
    clock.advance(5 * MINUTE + 29_999);
    // One millisecond short: victim's block (until T0 + 30 s) ended less than a window ago.
    assert.equal(await sessions.throttle.prune(), 1, 'only the unblocked address row of victim');
    assert.equal((await throttleRow(store, 'user:victim'))?.failures, 5);
    clock.advance(1);
    // Now victim's window and block are both a window old; someone's window is 5 min old.
    assert.equal(await sessions.throttle.prune(), 1);
    assert.equal(await throttleRow(store, 'user:victim'), undefined);
    assert.equal(await throttleRow(store, 'addr:192.0.2.60'), undefined);
    assert.equal((await throttleRow(store, 'user:someone'))?.failures, 1);
  }));

test('limits are options', () =>
  withStore(async (store) => {
    const clock = new ManualClock(T0);
    const sessions = new SessionService(store, clock, { throttle: { maxFailuresPerUser: 2, firstBlockMs: 5000 } });
    await sessions.login('x', 'wrong-password', '192.0.2.1');
    await sessions.login('x', 'wrong-password', '192.0.2.1');
    assert.deepEqual(await sessions.login('x', 'wrong-password', '192.0.2.1'), { ok: false, throttled: true, retryAfterSeconds: 5 });
  }));

test('scope keys', () => {
  assert.equal(userScopeKey('Alice'), 'user:Alice');
  assert.equal(addressScopeKey('192.0.2.1'), 'addr:192.0.2.1');
  assert.equal(addressScopeKey('::ffff:192.0.2.1'), 'addr:192.0.2.1');
  assert.equal(addressScopeKey('2001:0db8:0001:0002:0003:0004:0005:0006'), 'addr:2001:db8:1:2/64');
  assert.equal(addressScopeKey('2001:db8:1:2::9'), 'addr:2001:db8:1:2/64');
  assert.equal(addressScopeKey('2001:DB8::1'), 'addr:2001:db8:0:0/64');
  assert.equal(addressScopeKey('fe80::1%eth0'), 'addr:fe80:0:0:0/64');
  assert.equal(addressScopeKey('::1'), 'addr:0:0:0:0/64');
  assert.equal(addressScopeKey('64:ff9b::192.0.2.1'), 'addr:64:ff9b:0:0/64');
});
