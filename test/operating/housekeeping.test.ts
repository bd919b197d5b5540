/**
 * Housekeeping: the service itself removes expired sessions, login-throttle rows quiet for a
 * window, and idempotency keys older than a day, so these tables stay bounded under a load of
 * logins and keyed POSTs while a fast (manual) clock moves hours at a time. And it deletes in
 * small batches, one transaction each, so it never holds the writer for long.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import { SessionService } from '../../src/auth/sessions';
import { createAccount } from '../../src/auth/accounts';
import { insertSession } from '../../src/auth/directory';
import type { SqlExecutor, Store } from '../../src/store/store';
import { withStore } from '../auth/fixture';
import { request } from '../support/http-client';
import { reportFigures } from '../support/figures';
import { asSeller, login, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';

const HOUR = 60 * 60_000;
const ROUNDS = 12;
const KEYED_POSTS = 10;
const FAILED_LOGINS = 3;

describe('tables stay bounded under load with a fast clock', { timeout: 180_000 }, () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 8, 0, 0));
  let live: LiveService;
  before(async () => {
    live = await startLive({ clock, env: { HOUSEKEEPING_INTERVAL_MS: '50' } });
  });
  after(() => live.close());

  const count = async (table: 'sessions' | 'login_throttle') => Number((await live.service.app.store.directory.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n);
  const keysOf = async (s: Seller) =>
    Number((await live.service.app.store.read(s.accountId, (tx) => tx.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM idempotency_keys WHERE account_id = ?', [s.accountId])))!.n);
  const housekeepingRuns = () => live.logLines.filter((l) => l.msg === 'housekeeping removed expired rows').length;

  test(`${ROUNDS} rounds of logins, failed logins and keyed POSTs, the clock moving 3 hours after each`, async (t) => {
    const sellers: Seller[] = [];
    const peaks = { sessions: 0, throttle: 0, keys: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      // Each round a new seller posts with keys and then goes quiet: only housekeeping forgets them.
      const s = await newSeller(live, `hk${round}`);
      sellers.push(s);
      for (let i = 0; i < 2; i++) assert.ok(await login(live, s.userName, s.password));
      for (let i = 0; i < FAILED_LOGINS; i++) {
        const res = await request(live.origin + '/Authentication_JSON_AppService.axd/Login', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ userName: `nobody-${round}-${i}`, password: 'wrong-password' }),
          localAddress: `127.0.${round + 1}.${i + 1}`,
        });
        assert.equal(res.body, '{"d":false}');
      }
      for (let i = 0; i < KEYED_POSTS; i++) {
        const res = await asSeller(s, `${live.root}/Products`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `r${round}-${i}` }, body: JSON.stringify({ Title: `p${i}`, Price: '1', StockAmount: 1 }) });
        assert.equal(res.status, 201, res.body);
      }
      peaks.sessions = Math.max(peaks.sessions, await count('sessions'));
      peaks.throttle = Math.max(peaks.throttle, await count('login_throttle'));

      const runs = housekeepingRuns();
      clock.advance(3 * HOUR);
      // The service's own timer runs next with the new time; its report is logged when it removed rows.
      const deadline = Date.now() + 15_000;
      while (housekeepingRuns() === runs && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(housekeepingRuns() > runs, `housekeeping ran after round ${round}`);

      assert.equal(await count('sessions'), 0, 'every session has been idle for 3 hours: none is left');
      assert.equal(await count('login_throttle'), 0, 'every throttle row has been quiet for longer than its window');
      const keys = (await Promise.all(sellers.map(keysOf))).reduce((a, b) => a + b, 0);
      peaks.keys = Math.max(peaks.keys, keys);
      // Keys live a day: at most the last 8 rounds' (3 h apart) are left, whatever the number of rounds.
      assert.ok(keys <= 8 * KEYED_POSTS, `after round ${round}: ${keys} idempotency keys`);
    }
    assert.equal(await keysOf(sellers[0]!), 0, "the first round's keys are forgotten");
    assert.equal(await keysOf(sellers[ROUNDS - 1]!), KEYED_POSTS, "the last round's keys are kept (younger than a day)");
    reportFigures('housekeeping', { rounds: ROUNDS, peakSessions: peaks.sessions, peakThrottleRows: peaks.throttle, peakKeysAfterHousekeeping: peaks.keys, keysWithout: ROUNDS * KEYED_POSTS }, t);
  });
});

test('housekeeping deletes in batches, one transaction each, until nothing is left', () =>
  withStore(async (raw) => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const account = await createAccount(raw, clock, { userName: 'batched', password: 'batched-password' });
    const expired = 450;
    await raw.writeDirectory(async (tx) => {
      for (let i = 0; i < expired; i++) {
        await insertSession(tx, { sessionHash: `h${i}`, accountId: account.accountId, createdAt: clock.now(), expiresAt: clock.now() + HOUR });
      }
    });
    clock.advance(2 * HOUR);
    let transactions = 0;
    const store: Store = Object.create(raw, {
      writeDirectory: { value: <T>(fn: (tx: SqlExecutor) => Promise<T>) => (transactions++, raw.writeDirectory(fn)) },
    }) as Store;
    const sessions = new SessionService(store, clock);
    const started = performance.now();
    assert.deepEqual(await sessions.pruneExpired(200), { sessions: expired, throttleRows: 0 });
    const ms = performance.now() - started;
    // 200 + 200 + 50 sessions, then one (empty) batch of throttle rows: four transactions.
    assert.equal(transactions, 4);
    assert.deepEqual(await sessions.pruneExpired(200), { sessions: 0, throttleRows: 0 });
    reportFigures('housekeeping batches', { sessionsDeleted: expired, batchSize: 200, totalMs: Math.round(ms) });
  }));
