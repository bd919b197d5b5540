import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import { createAccount } from '../../src/auth/accounts';
import { SessionService } from '../../src/auth/sessions';
import { deleteAccount } from '../../src/auth/lifecycle';
import { DEFAULT_THROTTLE_OPTIONS, addressScopeKey, pairScopeKey, userScopeKey } from '../../src/auth/throttle';
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

const PAIR = (name: string, address: string) => pairScopeKey(name, address);
const throttledFor = (seconds: number) => ({ ok: false, throttled: true, retryAfterSeconds: seconds });

test('the defaults: 5 per user name and address, 20 per address, 10 per user name from everywhere, per 15 minutes; blocks from 30 s doubling to 15 min', () => {
  assert.deepEqual(DEFAULT_THROTTLE_OPTIONS, {
    windowMs: 15 * MINUTE,
    maxFailuresPerUserAndAddress: 5,
    maxFailuresPerAddress: 20,
    maxFailuresPerUserName: 10,
    firstBlockMs: 30_000,
    maxBlockMs: 15 * MINUTE,
  });
});

test('per user name and address: the 6th attempt from that address is throttled, even with the right password, until the block ends', () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    for (let i = 1; i <= 5; i++) {
      assert.deepEqual(await sessions.login('victim', `guess-${i}`, '192.0.2.1'), { ok: false }, `failure ${i}`);
    }
    assert.deepEqual(await throttleRow(store, PAIR('victim', '192.0.2.1')), { failures: 5, windowStartedAt: T0, blockedUntil: T0 + 30_000 });
    assert.deepEqual(await sessions.login('victim', 'guess-6', '192.0.2.1'), throttledFor(30));
    assert.deepEqual(await sessions.login('victim', 'right-password', '192.0.2.1'), throttledFor(30));
    clock.advance(20_000);
    assert.deepEqual(await sessions.login('victim', 'right-password', '192.0.2.1'), throttledFor(10));
    // Another account from the same address is not affected.
    assert.equal((await sessions.login('bystander', 'bystander-password', '192.0.2.1')).ok, true);
    // The block ends with the clock; the right password then works and clears the pair's count.
    clock.advance(10_000);
    assert.equal((await sessions.login('victim', 'right-password', '192.0.2.1')).ok, true);
    assert.equal(await throttleRow(store, PAIR('victim', '192.0.2.1')), undefined);
    assert.deepEqual(await sessions.login('victim', 'guess-7', '192.0.2.1'), { ok: false });
  }));

test("a user name's failures from other addresses never refuse the right password from the seller's clean address", () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    // An outsider who knows the name: 5 wrong passwords from each of 8 addresses, over and over.
    for (let round = 0; round < 3; round++) {
      for (let a = 1; a <= 8; a++) for (let i = 0; i < 6; i++) await sessions.login('victim', `guess-${round}-${a}-${i}`, `203.0.113.${a}`);
      // The seller's own connector, from its own address, is let in every time.
      assert.equal((await sessions.login('victim', 'right-password', '198.51.100.9')).ok, true, `round ${round}`);
      // So is an address the seller has never used, e.g. its console from another network.
      assert.equal((await sessions.login('victim', 'right-password', `2001:db8:5:${round}::1`)).ok, true);
      // The name is over its ceiling: every guessing address is refused it, also with the right password.
      const user = await throttleRow(store, 'user:victim');
      assert.ok(user && user.blockedUntil !== null && user.blockedUntil > clock.now(), JSON.stringify(user));
      for (let a = 1; a <= 8; a++) assert.ok('throttled' in (await sessions.login('victim', 'right-password', `203.0.113.${a}`)), `address ${a}`);
      clock.advance(5 * MINUTE);
    }
  }));

test("beyond the name's ceiling only addresses with no failures of their own may try it: one guess each per window", () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    // 10 failures for the name from 10 addresses (2 each from 5): the ceiling is reached.
    for (let a = 1; a <= 5; a++) for (let i = 0; i < 2; i++) assert.deepEqual(await sessions.login('victim', 'wrong', `203.0.113.${a}`), { ok: false });
    assert.deepEqual(await throttleRow(store, 'user:victim'), { failures: 10, windowStartedAt: T0, blockedUntil: T0 + 30_000 });
    // An address with failures of its own is refused the name, until the name's block ends.
    assert.deepEqual(await sessions.login('victim', 'wrong', '203.0.113.1'), throttledFor(30));
    // A clean address gets its guess (not counted against the name while it is blocked)...
    assert.deepEqual(await sessions.login('victim', 'wrong', '203.0.113.50'), { ok: false });
    assert.equal((await throttleRow(store, 'user:victim'))?.failures, 10);
    // ...and is refused the next one, having a failure of its own now.
    assert.deepEqual(await sessions.login('victim', 'wrong', '203.0.113.50'), throttledFor(30));
    // Another name from that address is not the name under attack.
    assert.deepEqual(await sessions.login('bystander', 'wrong', '203.0.113.50'), { ok: false });
    // The refusal lasts until the name's block ends (or the address's failures are forgotten, if sooner).
    clock.advance(30_000);
    assert.deepEqual(await sessions.login('victim', 'wrong', '203.0.113.1'), { ok: false }, 'the block ended');
    assert.deepEqual(await sessions.login('victim', 'wrong', '203.0.113.2'), throttledFor(60), 'the 11th failure blocked the name again, twice as long');
  }));

test('an unknown user name is throttled exactly like an existing one', () =>
  withStore(async (store) => {
    const { sessions } = await setUp(store);
    const answers = [];
    for (let i = 1; i <= 6; i++) answers.push(await sessions.login('ghost', `guess-${i}`, '192.0.2.1'));
    assert.deepEqual(answers, [{ ok: false }, { ok: false }, { ok: false }, { ok: false }, { ok: false }, throttledFor(30)]);
  }));

test('blocks double with each further failure and stop at 15 minutes', () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    for (let i = 1; i <= 5; i++) await sessions.login('victim', 'wrong-password', '203.0.113.1');
    const blocks: number[] = [];
    for (let round = 0; round < 7; round++) {
      const r = await sessions.login('victim', 'wrong-password', '203.0.113.1');
      assert.ok('throttled' in r, `round ${round}: ${JSON.stringify(r)}`);
      blocks.push(r.retryAfterSeconds);
      clock.advance(r.retryAfterSeconds * 1000);
      assert.deepEqual(await sessions.login('victim', 'wrong-password', '203.0.113.1'), { ok: false });
    }
    assert.deepEqual(blocks, [30, 60, 120, 240, 480, 900, 900]);
  }));

test('failures in an old window are forgotten', () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    for (let i = 0; i < 4; i++) assert.deepEqual(await sessions.login('victim', 'wrong-password', '192.0.2.1'), { ok: false });
    clock.advance(15 * MINUTE);
    for (let i = 0; i < 4; i++) assert.deepEqual(await sessions.login('victim', 'wrong-password', '192.0.2.1'), { ok: false });
    for (const key of [PAIR('victim', '192.0.2.1'), 'user:victim', 'addr:192.0.2.1']) {
      assert.deepEqual(await throttleRow(store, key), { failures: 4, windowStartedAt: T0 + 15 * MINUTE, blockedUntil: null }, key);
    }
    assert.deepEqual(await sessions.login('victim', 'wrong-password', '192.0.2.1'), { ok: false });
    assert.deepEqual(await sessions.login('victim', 'wrong-password', '192.0.2.1'), throttledFor(30));
  }));

test('per address: 20 failures over many user names block the address, for every user name', () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    for (let i = 1; i <= 20; i++) {
      assert.deepEqual(await sessions.login(`user-${i}`, 'password123', '198.51.100.77'), { ok: false }, `failure ${i}`);
    }
    const throttled = throttledFor(30);
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
    assert.deepEqual(await sessions.login('user-23', 'password123', '198.51.100.77'), throttledFor(60));
  }));

test('IPv6 clients are counted per /64, for the address and for the (user name, address) pair', () =>
  withStore(async (store) => {
    const { sessions } = await setUp(store);
    for (let i = 1; i <= 20; i++) {
      assert.deepEqual(await sessions.login(`user-${i}`, 'password123', `2001:db8:aa:bb::${i.toString(16)}`), { ok: false });
    }
    assert.deepEqual(await sessions.login('victim', 'right-password', '2001:db8:aa:bb:ffff:1:2:3'), throttledFor(30));
    assert.equal((await sessions.login('victim', 'right-password', '2001:db8:aa:bc::1')).ok, true);
    // Five guesses at one name from five addresses of one /64 are five from one client.
    for (let i = 1; i <= 5; i++) assert.deepEqual(await sessions.login('bystander', 'wrong', `2001:db8:cc:dd::${i}`), { ok: false });
    assert.equal((await throttleRow(store, PAIR('bystander', '2001:db8:cc:dd::99')))?.failures, 5);
    assert.deepEqual(await sessions.login('bystander', 'bystander-password', '2001:db8:cc:dd:1:2:3:4'), throttledFor(30));
  }));

test("a success clears its (user name, address) pair but gives back only its own attempt to the address and the name", () =>
  withStore(async (store) => {
    const { sessions } = await setUp(store);
    for (let i = 0; i < 3; i++) await sessions.login('victim', 'wrong-password', '192.0.2.50');
    for (let i = 0; i < 2; i++) await sessions.login('victim', 'wrong-password', '192.0.2.51');
    assert.equal((await throttleRow(store, PAIR('victim', '192.0.2.50')))?.failures, 3);
    assert.equal((await throttleRow(store, 'addr:192.0.2.50'))?.failures, 3);
    assert.equal((await throttleRow(store, 'user:victim'))?.failures, 5);
    assert.equal((await sessions.login('victim', 'right-password', '192.0.2.50')).ok, true);
    assert.equal(await throttleRow(store, PAIR('victim', '192.0.2.50')), undefined);
    assert.deepEqual(await throttleRow(store, 'addr:192.0.2.50'), { failures: 3, windowStartedAt: T0, blockedUntil: null });
    // The failures from elsewhere stay counted against the name: a success does not reset an attack.
    assert.deepEqual(await throttleRow(store, 'user:victim'), { failures: 5, windowStartedAt: T0, blockedUntil: null });
  }));

test('a burst of simultaneous guesses from one address gets no more than the limit verified', () =>
  withStore(async (store) => {
    const { sessions } = await setUp(store);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => sessions.login('victim', `guess-${i}`, '192.0.2.100')));
    const verified = results.filter((r) => !('throttled' in r));
    assert.equal(verified.length, 5);
    assert.equal(results.length - verified.length, 25);
    assert.equal((await throttleRow(store, PAIR('victim', '192.0.2.100')))?.failures, 5);
  }));

test('a burst from many addresses: each clean address gets one guess, then none while the name is over its ceiling', () =>
  withStore(async (store) => {
    const { sessions } = await setUp(store);
    const addresses = Array.from({ length: 30 }, (_, i) => `192.0.2.${100 + i}`);
    const first = await Promise.all(addresses.map((a, i) => sessions.login('victim', `guess-${i}`, a)));
    assert.equal(first.filter((r) => 'throttled' in r).length, 0, 'every address was clean');
    const second = await Promise.all(addresses.map((a, i) => sessions.login('victim', `again-${i}`, a)));
    assert.equal(second.filter((r) => !('throttled' in r)).length, 0, 'every address has a failure of its own now');
    // The name counted its ceiling, not the clean addresses' guesses beyond it.
    assert.equal((await throttleRow(store, 'user:victim'))?.failures, 10);
  }));

test('pruning removes only rows that have been quiet for a whole window', () =>
  withStore(async (store) => {
    const { clock, sessions } = await setUp(store);
    for (let i = 0; i < 5; i++) await sessions.login('victim', 'wrong-password', '192.0.2.60');
    clock.advance(10 * MINUTE);
    await sessions.login('someone', 'wrong-password', '192.0.2.61');
    clock.advance(5 * MINUTE + 29_999);
    // One millisecond short: victim's pair block (until T0 + 30 s) ended less than a window ago.
    assert.equal(await sessions.throttle.prune(), 2, "victim's unblocked address and name rows");
    assert.equal((await throttleRow(store, PAIR('victim', '192.0.2.60')))?.failures, 5);
    clock.advance(1);
    // Now victim's window and block are both a window old; someone's window is 5 min old.
    assert.equal(await sessions.throttle.prune(), 1);
    assert.equal(await throttleRow(store, PAIR('victim', '192.0.2.60')), undefined);
    assert.equal(await throttleRow(store, 'addr:192.0.2.60'), undefined);
    assert.equal((await throttleRow(store, 'user:someone'))?.failures, 1);
    assert.equal((await throttleRow(store, PAIR('someone', '192.0.2.61')))?.failures, 1);
  }));

test('limits are options', () =>
  withStore(async (store) => {
    const clock = new ManualClock(T0);
    const sessions = new SessionService(store, clock, { throttle: { maxFailuresPerUserAndAddress: 2, firstBlockMs: 5000 } });
    await sessions.login('x', 'wrong-password', '192.0.2.1');
    await sessions.login('x', 'wrong-password', '192.0.2.1');
    assert.deepEqual(await sessions.login('x', 'wrong-password', '192.0.2.1'), throttledFor(5));
  }));

test("deleting an account removes its name's throttle rows, from every address, and no other name's", () =>
  withStore(async (store) => {
    const { sessions } = await setUp(store);
    await createAccount(store, new ManualClock(T0), { userName: 'victim two', password: 'victim-two-password' });
    for (const name of ['victim', 'victim two', 'victimx']) {
      for (const address of ['192.0.2.1', '2001:db8::1']) await sessions.login(name, 'wrong-password', address);
    }
    const keys = async () => (await store.directory.all<{ scope_key: string }>('SELECT scope_key FROM login_throttle ORDER BY scope_key')).map((r) => r.scope_key);
    assert.equal((await keys()).length, 2 + 3 * 3);
    const { deleted } = await deleteAccount(store, 'victim');
    assert.equal(deleted.login_throttle, 3);
    assert.deepEqual((await keys()).filter((k) => k.startsWith('user:')).sort(), [
      'user:victim two', PAIR('victim two', '192.0.2.1'), PAIR('victim two', '2001:db8::1'),
      'user:victimx', PAIR('victimx', '192.0.2.1'), PAIR('victimx', '2001:db8::1'),
    ].sort());
  }));

test('scope keys', () => {
  assert.equal(userScopeKey('Alice'), 'user:Alice');
  assert.equal(pairScopeKey('Alice', '192.0.2.1'), 'user:Alice\taddr:192.0.2.1');
  assert.equal(pairScopeKey('Alice', '2001:db8:1:2::9'), 'user:Alice\taddr:2001:db8:1:2/64');
  assert.equal(addressScopeKey('192.0.2.1'), 'addr:192.0.2.1');
  assert.equal(addressScopeKey('::ffff:192.0.2.1'), 'addr:192.0.2.1');
  assert.equal(addressScopeKey('2001:0db8:0001:0002:0003:0004:0005:0006'), 'addr:2001:db8:1:2/64');
  assert.equal(addressScopeKey('2001:db8:1:2::9'), 'addr:2001:db8:1:2/64');
  assert.equal(addressScopeKey('2001:DB8::1'), 'addr:2001:db8:0:0/64');
  assert.equal(addressScopeKey('fe80::1%eth0'), 'addr:fe80:0:0:0/64');
  assert.equal(addressScopeKey('::1'), 'addr:0:0:0:0/64');
  assert.equal(addressScopeKey('64:ff9b::192.0.2.1'), 'addr:64:ff9b:0:0/64');
});
