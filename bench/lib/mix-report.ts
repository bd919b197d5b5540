/** The connector mix's results (mix-load.ts): what the JSON file holds and the tables printed. */
import type { Engine } from './database';
import type { MixRun } from './mix-load';

/** One measured run of the mix, with what the server spent on it. */
export interface MixPhase extends MixRun {
  /** 'capacity' (the closed loop) or the open loop's share of it, e.g. '50%'. */
  readonly label: string;
  /** Open loop: the share of the closed-loop capacity it runs at (0.5 for 50%). */
  readonly share?: number;
  /** Server CPU time during the run divided by the requests answered (µs). */
  readonly serverCpuMicrosPerRequest: number;
  /** The server's CPU during the run, in cores. */
  readonly serverCpuShare: number;
  /** CPU the machine's other processes used during the run, in cores (noise). */
  readonly otherCores: number;
  readonly peakRssMb: number;
}

export interface MixResult {
  readonly result: 'ok' | 'FAILED';
  readonly note?: string;
  readonly sellers: number;
  readonly productsPerSeller: number;
  /** Requests per seller and hour of each kind (mix-kinds.ts). */
  readonly perHour: Readonly<Record<string, number>>;
  /** ACCOUNT_MAX_IN_FLIGHT as the service ran ('default' when not set: the production share). */
  readonly accountMaxInFlight: string;
  readonly closedLoopWorkers: number;
  readonly phases: readonly MixPhase[];
}

const fmt = (value: number | undefined, digits = 0) =>
  value === undefined || !Number.isFinite(value) ? '–' : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function table(lines: string[][]): string {
  const widths = lines[0]!.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  const out = lines.map((l) => l.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd());
  out.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  return out.join('\n');
}

/** One line per phase: rates, the server's CPU, the generator's own lateness. */
export function formatMixPhases(mix: MixResult): string {
  const lines = [['run', 'target req/s', 'req/s', 'requests', 'errors', 'CPU µs/req', 'server CPU', 'client CPU', 'other CPU', 'send lag p99/max ms', 'generator loop delay p99/max ms', 'RSS MB', 'hour compressed']];
  for (const p of mix.phases) {
    lines.push([
      p.mode === 'closed' ? `capacity (closed loop, ${mix.closedLoopWorkers} workers)` : `open loop at ${p.label}`,
      fmt(p.targetRate),
      fmt(p.requestsPerSecond),
      fmt(p.requests),
      fmt(p.errors),
      fmt(p.serverCpuMicrosPerRequest),
      fmt(p.serverCpuShare, 2),
      fmt(p.clientCpuShare, 2),
      fmt(p.otherCores, 2),
      p.lag ? `${fmt(p.lag.p99Ms, 1)} / ${fmt(p.lag.maxMs, 1)}` : '–',
      p.loopDelay ? `${fmt(p.loopDelay.p99Ms, 1)} / ${fmt(p.loopDelay.maxMs, 1)}` : '–',
      fmt(p.peakRssMb),
      p.compression !== undefined ? `${fmt(p.compression, 1)}×` : '–',
    ]);
  }
  const behind = mix.phases.filter((p) => p.lag && p.lag.p99Ms > BEHIND_MS);
  const notes = behind.map(
    (p) =>
      `note: at ${p.label} the generator fell behind its schedule (send lag p99 ${fmt(p.lag!.p99Ms, 1)} ms, max ${fmt(p.lag!.maxMs, 1)} ms; ` +
      `client CPU ${fmt(p.clientCpuShare, 2)}, other processes ${fmt(p.otherCores, 2)} cores): that lateness is in its latencies, compare p99 from send`,
  );
  return [table(lines), ...notes].join('\n');
}

/** Send lag p99 above which the report says the generator fell behind (timers alone make 1–2 ms). */
const BEHIND_MS = 5;

/** Per request kind of one phase: count, p50, p99, p99.9, max, errors and the goal. */
export function formatMixKinds(phase: MixPhase): string {
  const lines = [['kind', 'count', 'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'p99 from send', 'errors', 'p99 goal']];
  for (const k of phase.kinds) {
    const statuses = k.errors > 0 ? ` (${Object.entries(k.statuses).map(([s, c]) => `${c}× ${s}`).join(', ')})` : '';
    lines.push([k.title, fmt(k.count), fmt(k.p50Ms, 2), fmt(k.p99Ms, 2), fmt(k.p999Ms, 2), fmt(k.maxMs, 1), fmt(k.p99FromSendMs, 2), fmt(k.errors) + statuses, k.goalMs !== undefined ? `≤ ${k.goalMs} ms` : '–']);
  }
  return table(lines);
}

export interface MixGoal {
  readonly kind: string;
  readonly goalMs: number;
  readonly p99Ms: number;
  readonly met: boolean;
}

/** The goals at 50% of capacity (issue 39; SQLite's, PostgreSQL's reported beside them): printed, not asserted. */
export function evaluateMixGoals(mix: MixResult): MixGoal[] {
  const half = mix.phases.find((p) => p.share === 0.5);
  if (!half) return [];
  return half.kinds.filter((k) => k.goalMs !== undefined).map((k) => ({ kind: k.title, goalMs: k.goalMs!, p99Ms: k.p99Ms, met: k.errors === 0 && k.p99Ms <= k.goalMs! }));
}

export function formatMixGoals(engine: Engine, goals: readonly MixGoal[]): string {
  if (goals.length === 0) return '  (no run at 50% of capacity)';
  const where = engine === 'sqlite' ? 'SQLite: the goal' : 'PostgreSQL: reported beside SQLite\'s goal';
  return goals.map((g) => `  ${g.met ? 'met   ' : 'MISSED'}  ${g.kind}: p99 ${fmt(g.p99Ms, 2)} ms, goal ≤ ${g.goalMs} ms (${where})`).join('\n');
}
