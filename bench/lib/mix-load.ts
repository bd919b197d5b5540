/**
 * The connector mix's load generator (issue 39): S sellers' connectors, each request kind of
 * mix-kinds.ts at its rate, as
 *
 * - a closed loop (`runClosedMix`): N workers, each sending its next request of the mix as soon as
 *   the previous one was answered. What it completes per second is the mix's capacity; and
 * - an open loop (`runOpenMix`) at a fixed rate: every seller has its own schedule (each kind
 *   periodic at its rate, at a phase of its own), the connector's hour compressed so that all
 *   sellers together send `rate` requests per second. A request is sent at its scheduled time
 *   whatever the answers before it do, and its latency counts FROM THAT SCHEDULED TIME, not from
 *   when it left (the coordinated-omission correction of wrk2): a server that falls behind shows
 *   its queueing delay instead of slowing the generator down. How late the generator itself sent
 *   (timer granularity, its own CPU) is reported as `lag`.
 *
 * Each seller has its own keep-alive agent with no socket limit, as each connector has its own
 * connections: no request waits in the client for a free socket. Latencies are kept exactly
 * (sorted arrays; tens of thousands per run).
 */
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { RequestShape } from './load';
import { MIX_KINDS, MIX_PER_HOUR, type MixKind, type MixSeller } from './mix-kinds';

/** A request that took longer than this counts as a timeout (an error) and is abandoned. */
const TIMEOUT_MS = 30_000;

export interface KindSummary {
  readonly id: string;
  readonly title: string;
  readonly goalMs?: number;
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  /**
   * p99 of the time from the actual send to the answer. Open loop: the scheduled latency less
   * the generator's own lateness; far below p99Ms when the generator, not the server, fell behind.
   */
  readonly p99FromSendMs: number;
  /** Answers with another status than the kind's, bodies that failed its check, connection errors and timeouts. */
  readonly errors: number;
  readonly timeouts: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly responseBytes: number;
}

export interface MixRun {
  readonly mode: 'closed' | 'open';
  /** Open loop: the rate asked for (requests/s). */
  readonly targetRate?: number;
  /** Open loop: how many times faster than the connector's day the schedule runs. */
  readonly compression?: number;
  /** From the first send to the last answer. */
  readonly seconds: number;
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly errors: number;
  readonly kinds: readonly KindSummary[];
  /** Open loop: how late the generator sent after the scheduled time (ms): p50, p99, max. */
  readonly lag?: { readonly p50Ms: number; readonly p99Ms: number; readonly maxMs: number };
  /**
   * Open loop: the generator's own event-loop delay (ms, sampled every millisecond): how late it
   * may have read an answer that had arrived. Beside `lag`, it tells the generator's share of a
   * latency from the server's.
   */
  readonly loopDelay?: { readonly p99Ms: number; readonly maxMs: number };
  /** CPU time of this (client) process during the run, as a share of one core. */
  readonly clientCpuShare: number;
}

export interface MixTarget {
  readonly origin: string;
  readonly sellers: readonly MixSeller[];
  /**
   * false: the server is the bench's baseline, which answers every request alike, so only
   * connection errors and timeouts count as errors (--mix-baseline-us).
   */
  readonly checkAnswers?: boolean;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

class Samples {
  private values = new Float64Array(1024);
  length = 0;

  add(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }

  sorted(): Float64Array {
    return this.values.slice(0, this.length).sort();
  }
}

/** What one kind's answers were during a run. */
class KindRecord {
  readonly latencies = new Samples();
  readonly fromSend = new Samples();
  errors = 0;
  timeouts = 0;
  bytes = 0;
  n = 0;
  readonly statuses: Record<string, number> = {};

  constructor(readonly kind: MixKind) {}

  summary(): KindSummary {
    const sorted = this.latencies.sorted();
    return {
      id: this.kind.id,
      title: this.kind.title,
      ...(this.kind.goalMs !== undefined ? { goalMs: this.kind.goalMs } : {}),
      count: sorted.length,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      p999Ms: percentile(sorted, 99.9),
      maxMs: sorted.length ? sorted[sorted.length - 1]! : NaN,
      p99FromSendMs: percentile(this.fromSend.sorted(), 99),
      errors: this.errors,
      timeouts: this.timeouts,
      statuses: this.statuses,
      responseBytes: this.bytes,
    };
  }
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly bytes: number;
}

/** One request on the seller's agent; the body is kept only when the kind checks it. */
function send(origin: string, agent: http.Agent, shape: RequestShape, keepBody: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = shape.body === undefined ? undefined : Buffer.isBuffer(shape.body) ? shape.body : Buffer.from(shape.body);
    const req = http.request(
      origin + shape.path,
      { method: shape.method, agent, headers: { ...shape.headers, ...(body ? { 'Content-Length': String(body.length) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (keepBody) chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: keepBody ? Buffer.concat(chunks).toString('utf8') : '', bytes }));
        res.on('error', reject);
      },
    );
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new TimeoutError()));
    req.on('error', reject);
    req.end(body);
  });
}

class TimeoutError extends Error {
  constructor() {
    super(`no answer within ${TIMEOUT_MS} ms`);
  }
}

/** The sellers' agents and the per-kind records of one run. */
class MixClient {
  private readonly agents: http.Agent[];
  readonly records = MIX_KINDS.map((k) => new KindRecord(k));

  constructor(private readonly target: MixTarget) {
    // With a timeout of its own the agent also honours the server's `Keep-Alive: timeout=5` and
    // drops an idle socket a second before the server would: without one it would reuse sockets
    // the server is closing (ECONNRESET) once a seller's pause is longer than that.
    this.agents = target.sellers.map(() => new http.Agent({ keepAlive: true, timeout: TIMEOUT_MS }));
  }

  /** Sends one request of `kind` for `seller`; its latency counts from `since` (performance.now() ms). */
  async fire(seller: number, kind: number, since: number): Promise<void> {
    const record = this.records[kind]!;
    const s = this.target.sellers[seller]!;
    const shape = record.kind.request(s, record.n++, this.target.origin);
    const sent = performance.now();
    try {
      const checked = this.target.checkAnswers !== false;
      const answer = await send(this.target.origin, this.agents[seller]!, shape, checked && record.kind.verify !== undefined);
      record.bytes += answer.bytes;
      record.statuses[answer.status] = (record.statuses[answer.status] ?? 0) + 1;
      if (checked && (answer.status !== record.kind.expectStatus || (record.kind.verify && !record.kind.verify(answer.body, s)))) record.errors++;
    } catch (error) {
      record.errors++;
      if (error instanceof TimeoutError) record.timeouts++;
      const name = error instanceof TimeoutError ? 'timeout' : ((error as NodeJS.ErrnoException).code ?? 'error');
      record.statuses[name] = (record.statuses[name] ?? 0) + 1;
    }
    const answered = performance.now();
    record.latencies.add(answered - since);
    record.fromSend.add(answered - sent);
  }

  close(): void {
    for (const agent of this.agents) agent.destroy();
  }

  result(mode: MixRun['mode'], seconds: number, clientCpuShare: number, extra: Partial<MixRun> = {}): MixRun {
    const kinds = this.records.map((r) => r.summary());
    const requests = kinds.reduce((n, k) => n + k.count, 0);
    return { mode, seconds, requests, requestsPerSecond: requests / seconds, errors: kinds.reduce((n, k) => n + k.errors, 0), kinds, clientCpuShare, ...extra };
  }
}

/** The kinds in the proportions of their rates, interleaved (each kind spread evenly over the wheel). */
function kindWheel(): number[] {
  const slots: { kind: number; at: number }[] = [];
  MIX_KINDS.forEach((k, kind) => {
    for (let j = 0; j < k.perHour; j++) slots.push({ kind, at: (j + 0.5) / k.perHour });
  });
  return slots.sort((a, b) => a.at - b.at || a.kind - b.kind).map((s) => s.kind);
}

/** `workers` closed loops over the mix for `seconds`: each sends its next request when its last one is answered. */
export async function runClosedMix(target: MixTarget, workers: number, seconds: number): Promise<MixRun> {
  const client = new MixClient(target);
  const wheel = kindWheel();
  const sellers = target.sellers.length;
  let next = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const g = next++;
      // Sellers in turn, and the kinds of the wheel in turn, shifted on each round of the sellers
      // so that every seller sends every kind whatever the two counts have in common.
      await client.fire(g % sellers, wheel[(g + Math.floor(g / sellers)) % wheel.length]!, performance.now());
    }
  };
  try {
    await Promise.all(Array.from({ length: workers }, worker));
  } finally {
    client.close();
  }
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return client.result('closed', elapsed, (cpu.user + cpu.system) / 1e6 / elapsed);
}

/** A deterministic stream of numbers in [0, 1) (the sellers' phases: the same on every run). */
function phases(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    // xorshift32
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

interface Planned {
  readonly at: number;
  readonly seller: number;
  readonly kind: number;
}

/**
 * The schedule of a run of `seconds` at `rate` requests/s: the connector's hour runs `compression`
 * times faster, so that S sellers × MIX_PER_HOUR requests an hour come to `rate` a second. Each
 * seller sends each kind periodically from a phase of its own.
 */
export function mixSchedule(sellers: number, rate: number, seconds: number): { plan: Planned[]; compression: number } {
  const compression = (rate * 3600) / (sellers * MIX_PER_HOUR);
  const random = phases(sellers * 7919 + Math.round(rate));
  const plan: Planned[] = [];
  const horizon = seconds * 1000;
  for (let seller = 0; seller < sellers; seller++) {
    MIX_KINDS.forEach((k, kind) => {
      const period = 3_600_000 / k.perHour / compression;
      for (let at = random() * period; at < horizon; at += period) plan.push({ at, seller, kind });
    });
  }
  plan.sort((a, b) => a.at - b.at);
  return { plan, compression };
}

/** The open loop at `rate` requests/s for `seconds`; ends when the last scheduled request is answered. */
export async function runOpenMix(target: MixTarget, rate: number, seconds: number): Promise<MixRun> {
  const { plan, compression } = mixSchedule(target.sellers.length, rate, seconds);
  const client = new MixClient(target);
  const lag = new Samples();
  const pending: Promise<void>[] = [];
  const cpuBefore = process.cpuUsage();
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const started = performance.now();
  await new Promise<void>((resolve) => {
    let i = 0;
    const dispatch = () => {
      const now = performance.now() - started;
      while (i < plan.length && plan[i]!.at <= now) {
        const p = plan[i++]!;
        lag.add(now - p.at);
        pending.push(client.fire(p.seller, p.kind, started + p.at));
      }
      if (i === plan.length) return resolve();
      // Timers fire at 1 ms granularity or later: what that costs shows in lag and in the latencies.
      setTimeout(dispatch, Math.max(0, Math.floor(plan[i]!.at - (performance.now() - started))));
    };
    dispatch();
  });
  await Promise.all(pending);
  loopDelay.disable();
  client.close();
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const lags = lag.sorted();
  return client.result('open', elapsed, (cpu.user + cpu.system) / 1e6 / elapsed, {
    targetRate: rate,
    compression,
    lag: { p50Ms: percentile(lags, 50), p99Ms: percentile(lags, 99), maxMs: lags.length ? lags[lags.length - 1]! : NaN },
    loopDelay: { p99Ms: loopDelay.percentile(99) / 1e6, maxMs: loopDelay.max / 1e6 },
  });
}
