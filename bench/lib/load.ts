/**
 * One closed-loop load run with autocannon: a fixed number of keep-alive connections, each sending
 * its next request as soon as the previous answer arrived (no pipelining), for a fixed time.
 * Requests come from a pool of prepared requests, so keys and bodies rotate. Latency is taken from every response
 * at microsecond resolution (autocannon's own histogram keeps whole milliseconds); every response
 * whose status is not the expected one, every body that fails verification, and every connection
 * error or timeout is counted.
 */
import autocannon from 'autocannon';

// autocannon builds requests only for the methods in its list; the connector sends real MERGE
// requests, which node:http parses like any other method.
const METHODS = require('autocannon/lib/httpMethods') as string[];
if (!METHODS.includes('MERGE')) METHODS.push('MERGE');

export interface RequestShape {
  readonly method: string;
  /** Path and query, e.g. /publicapi/v1/api.svc/Products(12L) */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
}

export interface LoadSpec {
  readonly origin: string;
  readonly connections: number;
  readonly seconds: number;
  /**
   * The requests to send, built into buffers once: each connection cycles through all of them,
   * starting at its own offset, so that connections do not hit the same key at the same moment
   * and the client spends no time building requests while it measures.
   */
  readonly pool: readonly RequestShape[];
  readonly expectStatus: number;
  /**
   * A status that is no failure either: the service shedding load (503 with Retry-After) when
   * more clients than pooled connections wait too long. Counted apart, as `shed`.
   */
  readonly shedStatus?: number;
  /** Called with every response body (autocannon cannot pass the status); false counts as a mismatch. */
  readonly verifyBody?: (body: string) => boolean;
}

export interface LoadResult {
  /** Responses received (any status). */
  readonly requests: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  /** Responses whose status was neither the expected one nor the shed one. */
  readonly unexpectedStatus: number;
  /** Responses with the shed status (see LoadSpec.shedStatus). */
  readonly shed: number;
  /** Responses whose body failed verification (an unexpected status usually fails it too). */
  readonly mismatches: number;
  /** Connection errors and timeouts. */
  readonly errors: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly responseBytes: number;
  /** CPU time of this (client) process during the run, as a share of one core. */
  readonly clientCpuShare: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

const toRequest = (r: RequestShape): autocannon.Request => ({
  method: r.method as autocannon.Request['method'],
  path: r.path,
  // A fresh headers object for each: autocannon writes Content-Length into the one it gets.
  headers: { ...r.headers },
  ...(r.body !== undefined ? { body: r.body } : {}),
});

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  if (spec.pool.length === 0) throw new Error('runLoad needs at least one request');
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let bytes = 0;
  let clients = 0;
  const statuses: Record<string, number> = {};
  const verify = spec.verifyBody;
  const pool = spec.pool;
  return new Promise((resolve, reject) => {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const instance = autocannon(
      {
        url: spec.origin,
        connections: spec.connections,
        pipelining: 1,
        duration: spec.seconds,
        timeout: 30,
        requests: [toRequest(pool[0]!)],
        setupClient: (client: autocannon.Client) => {
          const offset = Math.floor((clients++ * pool.length) / spec.connections);
          client.setRequests([...pool.slice(offset), ...pool.slice(0, offset)].map(toRequest));
        },
        ...(verify ? { verifyBody: (body: unknown) => verify(String(body)) } : {}),
      },
      (error, result) => {
        const seconds = (performance.now() - started) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        if (error) return reject(error);
        const sorted = latencies.subarray(0, count).sort();
        let sum = 0;
        for (let i = 0; i < count; i++) sum += sorted[i]!;
        const expected = statuses[String(spec.expectStatus)] ?? 0;
        const shed = spec.shedStatus === undefined ? 0 : (statuses[String(spec.shedStatus)] ?? 0);
        resolve({
          requests: count,
          seconds,
          requestsPerSecond: count / seconds,
          p50Ms: percentile(sorted, 50),
          p99Ms: percentile(sorted, 99),
          meanMs: count ? sum / count : NaN,
          unexpectedStatus: count - expected - shed,
          shed,
          mismatches: result.mismatches,
          errors: result.errors,
          statuses,
          responseBytes: bytes,
          clientCpuShare: (cpu.user + cpu.system) / 1000 / (seconds * 1000),
        });
      },
    );
    instance.on('response', (_client, statusCode, resBytes, responseTime) => {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = responseTime;
      bytes += resBytes;
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
  });
}
