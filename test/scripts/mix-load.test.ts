/**
 * The connector mix's load generator (bench/lib/mix-load.ts): its schedule sends each seller's
 * kinds at their rates, and its latencies count from the scheduled send time, so a server that
 * stalls shows the queueing delay of every request that was due during the stall (coordinated
 * omission corrected), not only of those already in flight.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mixSchedule, runOpenMix } from '../../bench/lib/mix-load';
import { MIX_KINDS, MIX_PER_HOUR, type MixSeller } from '../../bench/lib/mix-kinds';

test('the schedule sends every seller each kind at its rate, S sellers together at the rate asked for', () => {
  const sellers = 40;
  const rate = 500;
  const seconds = 30;
  const { plan, compression } = mixSchedule(sellers, rate, seconds);
  assert.ok(Math.abs(compression - (rate * 3600) / (sellers * MIX_PER_HOUR)) < 1e-9);
  // Each (seller, kind) is periodic from a phase in its first period: within one request of rate × time.
  assert.ok(Math.abs(plan.length - rate * seconds) <= sellers * MIX_KINDS.length, `${plan.length} requests planned`);
  for (let i = 1; i < plan.length; i++) assert.ok(plan[i - 1]!.at <= plan[i]!.at, 'in time order');
  MIX_KINDS.forEach((kind, k) => {
    const expected = (kind.perHour / MIX_PER_HOUR) * rate * seconds;
    const planned = plan.filter((p) => p.kind === k).length;
    assert.ok(Math.abs(planned - expected) <= sellers, `${kind.id}: ${planned} planned, ${expected} expected`);
  });
  const perSeller = new Set(plan.map((p) => p.seller));
  assert.equal(perSeller.size, sellers);
  // Sellers on schedules of their own: not all of them poll at the same moment.
  const firstPolls = new Set(plan.filter((p) => p.kind === 0).slice(0, sellers).map((p) => Math.round(p.at)));
  assert.ok(firstPolls.size > sellers / 2, 'the sellers\' first polls are spread over the period');
});

// A stand-in server in this process: when it stalls, the generator's timers stall with it, as a
// load generator that waits for the server would. Only the correction can show those requests' delay.
const STALL_MS = 600;
let server: http.Server;
let origin: string;
let answered = 0;

before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (++answered === 100) {
        const until = performance.now() + STALL_MS;
        while (performance.now() < until);
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('latency counts from the scheduled send: a stall delays every request that was due during it', async () => {
  const sellers: MixSeller[] = Array.from({ length: 10 }, (_, index) => ({
    index,
    credentials: { subscriptionToken: 'token', cookie: 'cookie' },
    productIds: ['1', '2'],
    variationsByProduct: [['11', '12'], ['21', '22']],
    acknowledgedOrderIds: ['5'],
    pendingOrders: 3,
  }));
  const run = await runOpenMix({ origin, sellers }, 200, 2);
  assert.ok(answered > 100, 'the server stalled during the run');
  // About a quarter of each kind's requests were due during the stall, a tenth in its first third: p99 shows it for every
  // kind with enough requests. Timed from the actual send, only the one or two requests already
  // on their way would.
  const delayed = run.kinds.filter((k) => k.count >= 15 && k.p99Ms >= (2 * STALL_MS) / 3);
  assert.ok(delayed.length >= 4, `p99 per kind: ${run.kinds.map((k) => `${k.id} ${k.p99Ms.toFixed(1)} ms of ${k.count}`).join(', ')}`);
  assert.ok(run.lag!.maxMs >= STALL_MS / 2, `the generator reports that it fell behind (max lag ${run.lag!.maxMs.toFixed(1)} ms)`);
});
