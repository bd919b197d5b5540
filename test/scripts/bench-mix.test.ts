/**
 * `npm run bench -- --only mix` end to end on SQLite with a few sellers for a couple of seconds:
 * the sellers are seeded, log in, and every request kind of the connector mix is answered as the
 * connector expects (status and body check) in the closed loop and in each open loop, with no
 * error, and the JSON results hold each kind's percentiles and the server's CPU per request.
 * The figures themselves are the bench's to report, not this test's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MIX_KINDS } from '../../bench/lib/mix-kinds';
import type { MixResult } from '../../bench/lib/mix-report';
import { testEngine } from '../support/test-database';

const RUN = path.join(__dirname, '..', '..', 'bench', 'run.js');

function bench(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // The bench's PostgreSQL run starts a cluster of its own: the mix is checked on SQLite.
    const env = { ...process.env };
    for (const k of ['DATABASE_URL', 'DATABASE_OWNER_URL', 'BENCH_DATABASE_URL', 'ACCOUNT_MAX_IN_FLIGHT']) delete env[k];
    const child = spawn(process.execPath, [RUN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

test('the connector mix runs every kind without an error, closed and open loop', { skip: testEngine !== 'sqlite' && 'the bench starts its own database; checked in the SQLite half' }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-mix-'));
  try {
    const { code, output } = await bench(['--only', 'mix', '--sellers', '3', '--seller-products', '3', '--duration', '2', '--warmup', '0', '--connections', '4', '--mix-rates', '25,50', '--mix-baseline-us', '50', '--results-dir', dir]);
    assert.equal(code, 0, output.slice(-3000));
    const results = JSON.parse(fs.readFileSync(path.join(dir, 'latest-sqlite.json'), 'utf8')) as { mix: MixResult & { goals: unknown[] }; mixBaseline: MixResult & { workMicros: number } };
    const mix = results.mix;
    assert.equal(mix.result, 'ok', mix.note);
    assert.equal(mix.accountMaxInFlight, 'default', 'the fair share is on, as in production');
    assert.deepEqual(mix.phases.map((p) => [p.mode, p.label]), [['closed', 'capacity'], ['open', '25%'], ['open', '50%']]);
    const capacity = mix.phases[0]!;
    for (const phase of mix.phases) {
      assert.deepEqual(phase.kinds.map((k) => k.id), MIX_KINDS.map((k) => k.id), `${phase.label} reports every kind`);
      for (const k of phase.kinds) {
        assert.equal(k.errors, 0, `${phase.label} ${k.id}: ${JSON.stringify(k.statuses)}`);
        if (k.count > 0) assert.ok(k.p50Ms > 0 && k.p50Ms <= k.p99Ms && k.p99Ms <= k.p999Ms && k.p999Ms <= k.maxMs, `${phase.label} ${k.id}: percentiles in order`);
      }
      assert.ok(phase.requests > 0 && phase.serverCpuMicrosPerRequest > 0, `${phase.label}: ${phase.requests} requests, ${phase.serverCpuMicrosPerRequest} µs each`);
    }
    // The closed loop goes round the kinds in proportion: each is answered at least once.
    for (const k of capacity.kinds) assert.ok(k.count > 0, `capacity: no ${k.id} answered`);
    const half = mix.phases[2]!;
    assert.ok(Math.abs(half.targetRate! - capacity.requestsPerSecond / 2) < 1e-6, 'the open loop runs at half the capacity');
    assert.ok(half.lag !== undefined && Number.isFinite(half.lag.p99Ms));
    assert.ok(half.loopDelay !== undefined && half.loopDelay.p99Ms > 0 && half.loopDelay.p99Ms <= half.loopDelay.maxMs, 'the generator reports its own event-loop delay');
    // The same mix against the bare server computing 50 µs per request, at shares of its own capacity.
    const baseline = results.mixBaseline;
    assert.equal(baseline.result, 'ok', baseline.note);
    assert.equal(baseline.workMicros, 50);
    assert.deepEqual(baseline.phases.map((p) => [p.mode, p.label]), [['closed', 'capacity'], ['open', '25%'], ['open', '50%']]);
    assert.ok(Math.abs(baseline.phases[2]!.targetRate! - baseline.phases[0]!.requestsPerSecond / 2) < 1e-6, "the baseline's open loop runs at half its own capacity");
    for (const phase of baseline.phases) assert.equal(phase.errors, 0, `baseline ${phase.label}`);
    assert.match(output, /The same mix against the baseline computing 50 µs per request/);
    assert.equal(mix.goals.length, MIX_KINDS.filter((k) => k.goalMs !== undefined).length, 'each goal is reported at 50%');
    assert.match(output, /Connector mix \(sqlite; 3 sellers/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
