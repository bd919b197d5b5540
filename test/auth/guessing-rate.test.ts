/**
 * How many passwords an attacker gets verified per hour against one user name, under the
 * default throttle, from one address and from many: simulated on a manual clock against the
 * real throttle and a real database (the password check itself is left out: every guess is
 * wrong, and a refused guess is never verified). Each attacker address follows one of two
 * strategies:
 * - eager: try again as soon as Retry-After allows;
 * - patient: after a refusal, wait until the address's failures are forgotten (a window plus
 *   the first block), which avoids the doubling blocks and gets a fresh allowance each time.
 * The figures go to the documentation (README, docs/operating.md); the assertions hold the
 * throttle to them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import { DEFAULT_THROTTLE_OPTIONS, LoginThrottle, type ThrottleOptions } from '../../src/auth/throttle';
import type { Store } from '../../src/store/store';
import { reportFigures } from '../support/figures';
import { HOUR, T0, withStore } from './fixture';

const { windowMs, firstBlockMs } = DEFAULT_THROTTLE_OPTIONS;
const PATIENT_PAUSE_MS = windowMs + firstBlockMs;

interface Run {
  /** Verified guesses in each hour. */
  readonly perHour: number[];
}

/** Attackers at `addresses`, all guessing one user name for `hours`; one guess per second at most. */
async function attack(store: Store, addresses: readonly string[], hours: number, pauseMs: number, options: Partial<ThrottleOptions> = {}): Promise<Run> {
  const clock = new ManualClock(T0);
  const throttle = new LoginThrottle(store, clock, options);
  const next = new Map(addresses.map((a, i) => [a, T0 + i] as const));
  const perHour = Array<number>(hours).fill(0);
  for (;;) {
    const [address, at] = [...next].reduce((a, b) => (b[1] < a[1] ? b : a));
    if (at >= T0 + hours * HOUR) break;
    clock.advance(at - clock.now());
    const scopes = throttle.scopesFor('victim', address);
    let refusedFor = await throttle.retryAfter(scopes);
    if (refusedFor === undefined) {
      const reserved = await throttle.reserve(scopes);
      if (!reserved.ok) refusedFor = reserved.retryAfterSeconds;
    }
    if (refusedFor === undefined) {
      perHour[Math.floor((at - T0) / HOUR)]!++;
      next.set(address, at + 1000);
    } else {
      next.set(address, at + Math.max(refusedFor * 1000, pauseMs));
    }
  }
  return { perHour };
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
/** Guesses per hour once the first hour is over (the throttle's steady state). */
const steady = (run: Run) => Math.round((sum(run.perHour.slice(1)) / (run.perHour.length - 1)) * 10) / 10;

const HOURS = 6;
const MANY = 20;
const many = Array.from({ length: MANY }, (_, i) => `198.51.100.${i + 1}`);

test(`guessing one user name: from one address, and from ${MANY} addresses, over ${HOURS} hours`, { timeout: 300_000 }, async (t) => {
  const figures: Record<string, number> = {};
  const run = (addresses: readonly string[], pauseMs: number, options?: Partial<ThrottleOptions>) => withStore((store) => attack(store, addresses, HOURS, pauseMs, options));

  const oneEager = await run(['203.0.113.1'], 0);
  const onePatient = await run(['203.0.113.1'], PATIENT_PAUSE_MS);
  figures.oneAddressEagerFirstHour = oneEager.perHour[0]!;
  figures.oneAddressEagerPerHourAfter = steady(oneEager);
  figures.oneAddressPatientFirstHour = onePatient.perHour[0]!;
  figures.oneAddressPatientPerHourAfter = steady(onePatient);
  // One address: at most 5 per 15½ minutes, about 19 an hour, however it times its guesses.
  for (const r of [oneEager, onePatient]) for (const n of r.perHour) assert.ok(n <= 20, JSON.stringify(r.perHour));

  const manyEager = await run(many, 0);
  const manyPatient = await run(many, PATIENT_PAUSE_MS);
  const manyNoCeiling = await run(many, PATIENT_PAUSE_MS, { maxFailuresPerUserName: Number.MAX_SAFE_INTEGER });
  figures.manyAddressesEagerFirstHour = manyEager.perHour[0]!;
  figures.manyAddressesEagerPerHourAfter = steady(manyEager);
  figures.manyAddressesPatientFirstHour = manyPatient.perHour[0]!;
  figures.manyAddressesPatientPerHourAfter = steady(manyPatient);
  figures.manyAddressesWithoutCeilingPerHourAfter = steady(manyNoCeiling);
  figures.manyAddressesPerAddressPerHourAfter = Math.round((Math.max(steady(manyEager), steady(manyPatient)) / MANY) * 10) / 10;
  // Beyond the name's ceiling each address gets about one guess per window (4 an hour), far
  // below what it would get without the ceiling (about 19 an hour each).
  for (const r of [manyEager, manyPatient]) assert.ok(steady(r) <= MANY * 5, JSON.stringify(r.perHour));
  assert.ok(steady(manyPatient) * 3 < steady(manyNoCeiling), `${steady(manyPatient)} vs ${steady(manyNoCeiling)} without the ceiling`);
  reportFigures('login-guessing', figures, t);
});
