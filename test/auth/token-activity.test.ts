/**
 * A token's activity as the integrations page shows it: requests and errors of the last 24 hours
 * in hourly buckets (older ones drop out), the last errors newest first (ten at most), the
 * client of the last request; and the bound on how many tokens are followed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/clock';
import { RECENT_ERRORS, TokenActivity } from '../../src/auth/token-activity';

const HOUR = 3600_000;
const call = (status: number, requestId: string, userAgent = 'Connector/1') => ({ userAgent, status, requestId, method: 'GET', path: `/publicapi/v1/api.svc/Products?r=${requestId}` });

test('requests and errors of the last 24 hours, the last errors newest first, the last client', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 1, 10, 30));
  const activity = new TokenActivity(undefined, clock);
  assert.equal(activity.useOf('a'), undefined);
  activity.record('a', call(200, 'r1'));
  activity.record('a', call(400, 'r2'));
  clock.advance(5 * HOUR);
  activity.record('a', call(200, 'r3', 'Connector/2'));
  let use = activity.useOf('a')!;
  assert.deepEqual([use.requests24h, use.errors24h, use.userAgent, use.lastUsedAt], [3, 1, 'Connector/2', clock.now()]);
  assert.deepEqual(use.recentErrors.map((e) => [e.requestId, e.status]), [['r2', 400]]);
  // 20 hours later the first hour has left the window; the later one has not.
  clock.advance(20 * HOUR);
  use = activity.useOf('a')!;
  assert.deepEqual([use.requests24h, use.errors24h], [1, 0]);
  // 24 hours after r3 its bucket is reused: it starts from zero.
  clock.advance(4 * HOUR);
  activity.record('a', call(500, 'r4'));
  use = activity.useOf('a')!;
  assert.deepEqual([use.requests24h, use.errors24h], [1, 1]);
  assert.deepEqual(use.recentErrors.map((e) => e.requestId), ['r4', 'r2'], 'errors are kept beyond the window, newest first');
});

test('only the last ten errors are kept; tokens are followed separately', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 1));
  const activity = new TokenActivity(undefined, clock);
  for (let i = 1; i <= 25; i++) {
    clock.advance(1000);
    activity.record('a', call(404, `e${i}`));
  }
  activity.record('b', call(200, 'b1'));
  const use = activity.useOf('a')!;
  assert.equal(use.recentErrors.length, RECENT_ERRORS);
  assert.deepEqual(use.recentErrors.map((e) => e.requestId), Array.from({ length: 10 }, (_, i) => `e${25 - i}`));
  assert.equal(use.errors24h, 25);
  assert.deepEqual([activity.useOf('b')!.requests24h, activity.useOf('b')!.errors24h], [1, 0]);
});

test('a long User-Agent and path are cut short', () => {
  const activity = new TokenActivity(undefined, new ManualClock());
  activity.record('a', { userAgent: 'x'.repeat(5000), status: 400, requestId: 'r', method: 'GET', path: '/p'.repeat(1000) });
  const use = activity.useOf('a')!;
  assert.equal(use.userAgent!.length, 200);
  assert.equal(use.recentErrors[0]!.path.length, 200);
});
