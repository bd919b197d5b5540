/**
 * Sends fuzz cases to a live service with several in flight, times each answer, and checks
 * what every answer must be whatever the case: no 5xx; an answer before the hang bound; an error is an OData error in
 * the request's format, with no stack trace or SQL text in it; a $batch 202 is a complete
 * multipart answer with no inner 5xx. After each slice of cases a health probe on a fresh
 * connection proves the service still answers. Problems are collected, not thrown, so that one
 * run reports all of them (the first few, with the seed and case to reproduce them).
 */
import http from 'node:http';
import net from 'node:net';
import type { HttpResponse } from '../../support/http-client';
import type { Seller } from '../../support/live-service';
import { isRaw, type FuzzCase, type HttpCase, type RawCase } from './cases';

/**
 * A liveness bound, not a speed claim (speed is the bench's, and the slowest answers are reported
 * as figures): it lies above the longest wait the service allows itself before it answers anyway
 * (3 s for a pooled connection, then 503), so only a request the service lost or stalled crosses
 * it. A bound of 1 s once stood here and failed CI when a PostgreSQL COMMIT on a loaded 2-core
 * machine took 1.1 s.
 */
export const HANG_BOUND_MS = 5000;

const METADATA_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices/metadata';
const XML_ERROR = new RegExp(
  `^<\\?xml version="1\\.0" encoding="utf-8" standalone="yes"\\?><error xmlns="${METADATA_NS.replace(/[./]/g, '\\$&')}"><code>[^<]*</code><message xml:lang="en-US">([^<]*)</message></error>$`,
);
/** What an error message must never carry: a stack frame, a database driver's own words, /etc/passwd. (Echoed request text may hold anything.) */
const LEAK = /\bat [\w.<>]+ \(|node:internal|\.js:\d+|\bFROM "|SQLITE_|sqlite3|better-sqlite|syntax error at or near|\bpg_|relation "|root:x:0:0/;

export class Stats {
  cases = 0;
  status5xx = 0;
  /** Health probes that got no 200: the service stopped answering (in-process, a real crash ends the run itself). */
  crashes = 0;
  slowAnswers = 0;
  /** Raw cases answered by the server's timeout (bounded by their own limit, not by the hang bound). */
  timeoutAnswers = 0;
  readonly durations: number[] = [];
  readonly statuses = new Map<number, number>();
  readonly problems: string[] = [];
  /** The slowest few cases (ms, case), to show where the time goes. */
  readonly slowest: [number, string][] = [];

  noteDuration(ms: number, what: () => string): void {
    this.durations.push(ms);
    if (this.slowest.length < 5 || ms > this.slowest[this.slowest.length - 1]![0]) {
      this.slowest.push([Math.round(ms), what().slice(0, 160)]);
      this.slowest.sort((a, b) => b[0] - a[0]);
      this.slowest.length = Math.min(this.slowest.length, 5);
    }
  }

  count(status: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  problem(text: string): void {
    if (this.problems.length < 200) this.problems.push(text);
  }

  get maxMs(): number {
    return Math.round(this.durations.reduce((a, b) => Math.max(a, b), 0));
  }

  get p99Ms(): number {
    if (this.durations.length === 0) return 0;
    const sorted = [...this.durations].sort((a, b) => a - b);
    return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!);
  }

  /** Adds another area's figures to these. */
  add(other: Stats): void {
    this.cases += other.cases;
    this.status5xx += other.status5xx;
    this.crashes += other.crashes;
    this.slowAnswers += other.slowAnswers;
    this.timeoutAnswers += other.timeoutAnswers;
    for (const ms of other.durations) this.durations.push(ms);
    for (const [status, n] of other.statuses) this.statuses.set(status, (this.statuses.get(status) ?? 0) + n);
    for (const p of other.problems) this.problem(p);
  }

  /** Share of the answers with `status`. */
  share(status: number): number {
    const answers = [...this.statuses.values()].reduce((a, b) => a + b, 0);
    return (this.statuses.get(status) ?? 0) / Math.max(1, answers);
  }

  tally(): string {
    return [...this.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}:${n}`).join(' ');
  }
}

const describeCase = (c: FuzzCase): string =>
  isRaw(c)
    ? `[${c.area}] raw ${c.name}: ${JSON.stringify(Buffer.concat(c.steps.map((s) => s.bytes)).toString('latin1').slice(0, 300))}`
    : `[${c.area}] ${c.method} ${c.target.slice(0, 300)}${c.body === undefined ? '' : ` body ${JSON.stringify(String(c.body).slice(0, 200))}`}`;

/** The problem with an error answer's body, or undefined when it is a proper OData error in `format`. */
export function errorProblem(contentType: string, body: string, format: 'json' | 'xml' | 'any'): string | undefined {
  let message: string;
  if (contentType.startsWith('application/json')) {
    if (format === 'xml') return `a JSON error where XML was asked for`;
    let doc: unknown;
    try {
      doc = JSON.parse(body);
    } catch {
      return 'a JSON error body that does not parse';
    }
    const error = (doc as { error?: { code?: unknown; message?: { lang?: unknown; value?: unknown } } }).error;
    if (Object.keys(doc as object).length !== 1 || typeof error?.code !== 'string' || error.message?.lang !== 'en-US' || typeof error.message.value !== 'string') {
      return 'not an OData JSON error document';
    }
    message = error.message.value;
  } else if (contentType.startsWith('application/xml')) {
    if (format === 'json') return 'an XML error where JSON was asked for';
    const m = XML_ERROR.exec(body);
    if (!m) return 'not an OData XML error document';
    message = m[1]!;
  } else {
    return `an error of Content-Type '${contentType}'`;
  }
  if (message.trim().length < 5) return 'an error without a message';
  if (LEAK.test(message)) return `an error message with internals: ${message.slice(0, 200)}`;
  return undefined;
}

/** The statuses inside a $batch 202 answer; a problem when it is not a complete multipart answer. */
function batchProblem(res: HttpResponse): string | undefined {
  const boundary = /boundary=([^;\s]+)/.exec(String(res.headers['content-type']))?.[1];
  if (!boundary) return 'a 202 without a boundary';
  if (!res.body.endsWith(`--${boundary}--\r\n`)) return 'a 202 that is cut off';
  const inner = [...res.body.matchAll(/\r\nHTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  const fault = inner.find((s) => s >= 500);
  return fault === undefined ? undefined : `an inner ${fault}`;
}

export class FuzzRunner {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

  constructor(
    private readonly origin: string,
    private readonly seller: Seller,
    readonly stats: Stats,
  ) {}

  close(): void {
    this.agent.destroy();
  }

  /** Runs `cases` with `inFlight` at once, probing health after every `probeEvery` cases. */
  async run(cases: readonly FuzzCase[], inFlight: number, probeEvery = 500): Promise<void> {
    for (let start = 0; start < cases.length; start += probeEvery) {
      const slice = cases.slice(start, start + probeEvery);
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(inFlight, slice.length) }, async () => {
          for (let i = next++; i < slice.length; i = next++) await this.one(slice[i]!);
        }),
      );
      await this.probe();
    }
  }

  /** GET /health on a connection of its own: 200 {"status":"alive"} within the bound, or a crash is counted. */
  async probe(): Promise<void> {
    const started = performance.now();
    try {
      const res = await send(this.origin, { method: 'GET', target: '/health', headers: {} }, false);
      const ms = performance.now() - started;
      if (res.status !== 200 || !res.body.includes('"status":"alive"')) {
        this.stats.crashes++;
        this.stats.problem(`health probe: ${res.status}: ${res.body.slice(0, 200)}`);
      } else if (ms > HANG_BOUND_MS) {
        this.stats.slowAnswers++;
        this.stats.problem(`health probe: answered in ${Math.round(ms)} ms`);
      }
    } catch (error) {
      this.stats.crashes++;
      this.stats.problem(`health probe failed: ${(error as Error).message}`);
    }
  }

  private async one(c: FuzzCase): Promise<void> {
    this.stats.cases++;
    if (isRaw(c)) return this.raw(c);
    const started = performance.now();
    let res: HttpResponse;
    try {
      res = await send(this.origin, { ...c, headers: { ...this.seller.auth, ...c.headers } }, this.agent);
    } catch (error) {
      this.stats.problem(`${describeCase(c)}: no answer: ${(error as Error).message}`);
      return;
    }
    const ms = performance.now() - started;
    this.judge(c, ms, res.status, () => this.httpProblem(c, res));
  }

  private judge(c: FuzzCase, ms: number, status: number, problem: () => string | undefined, timedOutByDesign = false): void {
    this.stats.count(status);
    // A 408 to a request that never completed is timed by its own bound, not among the answers.
    if (timedOutByDesign) this.stats.timeoutAnswers++;
    else this.stats.noteDuration(ms, () => `${status} ${describeCase(c)}`);
    if (!timedOutByDesign && ms > HANG_BOUND_MS) {
      this.stats.slowAnswers++;
      this.stats.problem(`${describeCase(c)}: answered in ${Math.round(ms)} ms`);
    }
    if (status >= 500) this.stats.status5xx++;
    const found = status >= 500 ? `status ${status}` : problem();
    if (found) this.stats.problem(`${describeCase(c)}: ${found}`);
  }

  private httpProblem(c: HttpCase, res: HttpResponse): string | undefined {
    const type = String(res.headers['content-type'] ?? '');
    if (c.mustBe !== undefined && res.status !== c.mustBe) return `status ${res.status}, not ${c.mustBe}: ${res.body.slice(0, 200)}`;
    if (res.status >= 400) {
      const problem = errorProblem(type, res.body, c.errorFormat);
      return problem ? `${res.status}: ${problem}: ${res.body.slice(0, 300)}` : undefined;
    }
    if (/root:x:0:0/.test(res.body)) return 'the answer holds /etc/passwd';
    if (c.batch && res.status === 202) return batchProblem(res);
    if (type.startsWith('application/json') && res.body !== '') {
      try {
        JSON.parse(res.body);
      } catch {
        return `${res.status}: a JSON answer that does not parse`;
      }
    }
    return undefined;
  }

  private async raw(c: RawCase): Promise<void> {
    const outcome = await rawExchange(this.origin, c);
    if (outcome.error) {
      this.stats.problem(`${describeCase(c)}: ${outcome.error}`);
      return;
    }
    const answer = outcome.answer;
    if (answer === undefined) {
      if (c.expect === 'answer') this.stats.problem(`${describeCase(c)}: the connection closed without an answer after ${Math.round(outcome.ms)} ms`);
      return;
    }
    const timedOut = c.waitsForTimeout === true && answer.status === 408;
    this.judge(c, outcome.ms, answer.status, () => {
      if (answer.status === 0) return `not an HTTP/1.1 answer: ${JSON.stringify(answer.body.slice(0, 200))}`;
      if (c.waitsForTimeout && outcome.ms > c.boundMs) return `answered after ${Math.round(outcome.ms)} ms, over its bound of ${c.boundMs} ms`;
      // A complete request must be answered at once: a 408 means the server waited for more.
      if (!c.waitsForTimeout && answer.status === 408) return `408 after ${Math.round(outcome.ms)} ms to a request that was complete`;
      if (answer.status >= 400) {
        const problem = errorProblem(answer.contentType, answer.body, 'any');
        return problem ? `${answer.status}: ${problem}: ${answer.body.slice(0, 300)}` : undefined;
      }
      return undefined;
    }, timedOut);
  }
}

/** One request through Node's client (a keep-alive agent, or a connection of its own). */
async function send(origin: string, c: Pick<HttpCase, 'method' | 'target' | 'headers' | 'body'>, agent: http.Agent | false): Promise<HttpResponse> {
  try {
    return await sendOnce(origin, c, agent);
  } catch (error) {
    // A keep-alive connection the server closed as idle just as it was reused: send again, once.
    if ((error as { reusedSocket?: boolean }).reusedSocket) return sendOnce(origin, c, agent);
    throw error;
  }
}

function sendOnce(origin: string, c: Pick<HttpCase, 'method' | 'target' | 'headers' | 'body'>, agent: http.Agent | false): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...c.headers };
    if (c.body !== undefined && !Object.keys(headers).some((h) => /^(content-length|transfer-encoding)$/i.test(h))) headers['Content-Length'] = String(Buffer.byteLength(c.body));
    const req = http.request(origin + c.target, { method: c.method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    // A guard far above the hang bound: a hang shows up as a problem, not as a stuck suite.
    req.setTimeout(15_000, () => req.destroy(new Error('no answer within 15 s')));
    req.on('error', (error: Error & { code?: string; reusedSocket?: boolean }) => {
      if (req.reusedSocket && error.code === 'ECONNRESET') error.reusedSocket = true;
      reject(error);
    });
    req.end(c.body);
  });
}

interface RawAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

interface RawOutcome {
  readonly answer?: RawAnswer;
  /** From the last write to the end of the answer (or the close). */
  readonly ms: number;
  readonly error?: string;
}

/** The first HTTP answer in `text`, once it is complete (by Content-Length), else undefined. */
function firstAnswer(text: string): RawAnswer | undefined {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = text.slice(0, headEnd);
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(head);
  if (!status) return { status: 0, contentType: '', body: head };
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  const body = Buffer.from(text.slice(headEnd + 4), 'latin1');
  if (length && body.length < Number(length[1])) return undefined;
  const contentType = /\r\ncontent-type: *([^\r]*)/i.exec(head)?.[1] ?? '';
  return { status: Number(status[1]), contentType, body: body.subarray(0, length ? Number(length[1]) : body.length).toString('utf8') };
}

function rawExchange(origin: string, c: RawCase): Promise<RawOutcome> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let received = '';
    // A case answered by the server's timeout is timed from the connection; others from their last byte.
    const connectedAt = performance.now();
    let lastWrite = connectedAt;
    const since = () => performance.now() - (c.waitsForTimeout ? connectedAt : lastWrite);
    let settled = false;
    const settle = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      socket.destroy();
      resolve(outcome);
    };
    const guard = setTimeout(() => settle(c.expect === 'answer' ? { ms: since(), error: `no answer within ${c.boundMs + 5000} ms` } : { ms: 0 }), c.boundMs + 5000);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const answer = firstAnswer(received);
      if (answer) settle({ answer, ms: since() });
    });
    socket.on('close', () => {
      const answer = firstAnswer(received);
      if (answer) settle({ answer, ms: since() });
      else if (received !== '') settle({ ms: 0, error: `a partial answer: ${JSON.stringify(received.slice(0, 300))}` });
      else settle({ ms: since() });
    });
    socket.on('error', () => {
      // A reset after the server answered or gave up is fine; 'close' follows and decides.
    });
    socket.on('connect', async () => {
      for (const step of c.steps) {
        if (step.delayMs) await new Promise((r) => setTimeout(r, step.delayMs));
        if (settled || socket.destroyed) return;
        socket.write(step.bytes);
        lastWrite = performance.now();
      }
      if (c.finish === 'end') socket.end();
      else if (c.finish === 'destroy') {
        // Give the server a moment to read what was sent, then drop the connection.
        setTimeout(() => settle({ ms: 0 }), 20);
      }
    });
  });
}
