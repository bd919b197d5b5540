/**
 * The service's metrics in a prom-client registry (one per running service, so several services
 * in one process never share counters), scraped in the Prometheus text format at /metrics
 * (./metrics-endpoint.ts).
 *
 * No label carries anything of a caller: requests are labelled by the kind of URI (never the
 * path itself, which holds keys), the method (a fixed list) and the status; logins by outcome.
 * Every label therefore has a small, fixed set of values, as Prometheus needs.
 */
import client from 'prom-client';
import type { Activity, LoginOutcome } from '../auth/activity';
import type { Model } from '../model/types';
import type { Store } from '../store/store';
import { sqliteBuild } from '../store/sqlite/driver-build';
import { SERVICE_PATH } from '../service/request';
import { OPENAPI_PATH } from './openapi-endpoint';
import type { RequestObserver } from './http';

/** Methods kept as they are in the method label; anything else counts as OTHER. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'MERGE', 'PATCH', 'DELETE', 'OPTIONS']);

/** Seconds; from a cached read (a few ms) to a large export or a long $batch. */
const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const COUNT_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500];

/**
 * The kind of a request's URI, from its path alone: which part of the service it addresses and,
 * under the OData service, what sort of resource (a collection, one entity, a navigation…).
 */
export function uriKind(model: Model, platformPath: string, path: string): string {
  // The service's own paths as connectors write them (every request but a few): no lower-case
  // copy of the path and no prefix strings built to compare it with, which cost more than the
  // rest of this function (a metrics profile of GET by key).
  if (path.startsWith(SERVICE_PATH)) {
    const next = path.charCodeAt(SERVICE_PATH.length);
    if (Number.isNaN(next) || next === SLASH || next === OPEN_PARENTHESIS) return serviceUriKind(model, path);
  }
  const lower = path.toLowerCase();
  const under = (prefix: string) => lower === prefix || lower.startsWith(prefix + '/') || lower.startsWith(prefix + '(');
  if (under('/health')) return 'health';
  if (lower === '/metrics') return 'metrics';
  if (lower === OPENAPI_PATH) return 'openapi';
  if (under('/authentication_json_appservice.axd')) return 'login';
  if (under(platformPath)) return 'platform';
  if (!under(SERVICE_PATH)) return 'unknown';
  return serviceUriKind(model, path);
}

const SLASH = 0x2f;
const OPEN_PARENTHESIS = 0x28;

/** uriKind() of a path under the service root (in any case). */
function serviceUriKind(model: Model, path: string): string {
  const segments = path.slice(SERVICE_PATH.length).split('/').filter((s) => s !== '');
  const first = segments[0];
  if (first === undefined) return 'service_document';
  if (first === '$metadata') return 'metadata';
  if (first === '$batch') return 'batch';
  const open = first.indexOf('(');
  const encoded = open < 0 ? first : first.slice(0, open);
  let name = encoded;
  // Only a name with a percent sign can decode to another one, or fail to.
  if (encoded.includes('%')) {
    try {
      name = decodeURIComponent(encoded);
    } catch {
      // Not valid percent-encoded UTF-8: no set or operation has such a name.
      return 'unknown';
    }
  }
  if (model.operationByName.has(name)) return 'operation';
  if (!model.typeBySetName.has(name)) return 'unknown';
  if (segments.includes('$links')) return 'links';
  const last = segments[segments.length - 1]!;
  if (last === '$count') return 'count';
  if (last === '$value') return 'value';
  if (segments.length === 1) return first.includes('(') ? 'entity' : 'collection';
  return 'navigation';
}

/** Called once a request is answered (its status) or cut off ('aborted'). */
export type RequestEnded = ReturnType<RequestObserver>;

export class ServiceMetrics implements Activity {
  readonly registry = new client.Registry();
  private readonly requests = new client.Counter({
    name: 'catalogue_http_requests_total',
    help: 'HTTP requests answered, by kind of URI, method and status',
    labelNames: ['kind', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new client.Histogram({
    name: 'catalogue_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being handed to the network, by kind of URI and method',
    labelNames: ['kind', 'method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly inFlight = new client.Gauge({
    name: 'catalogue_http_requests_in_flight',
    help: 'Requests being served now',
    registers: [this.registry],
  });
  private readonly batchParts = new client.Histogram({
    name: 'catalogue_batch_parts',
    help: 'Top-level parts (query parts and changesets) per $batch request',
    buckets: COUNT_BUCKETS,
    registers: [this.registry],
  });
  private readonly changesetSizes = new client.Histogram({
    name: 'catalogue_batch_changeset_operations',
    help: 'Operations per $batch changeset',
    buckets: COUNT_BUCKETS,
    registers: [this.registry],
  });
  private readonly logins = new client.Counter({
    name: 'catalogue_logins_total',
    help: 'Login attempts by outcome: success, failure (unknown user or wrong password), throttled (answered 429)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly admissionRefusals = new client.Counter({
    name: 'catalogue_admission_refusals_total',
    help: "Requests answered 429 because their account had too many in flight: queue_full (its queue was full) or queue_timeout (no slot within ACCOUNT_QUEUE_WAIT_MS); no account label",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly groupCommits = new client.Histogram({
    name: 'catalogue_sqlite_group_commit_writes',
    help: 'Writes (transactions of requests) that shared one SQLite COMMIT',
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [this.registry],
  });

  /** `platformPath`: where the platform API is served (passed in: its module depends on the app). */
  constructor(
    private readonly model: Model,
    store: Store,
    private readonly platformPath: string,
  ) {
    for (const outcome of ['success', 'failure', 'throttled'] as const) this.logins.inc({ outcome }, 0);
    for (const reason of ['queue_full', 'queue_timeout'] as const) this.admissionRefusals.inc({ reason }, 0);
    new client.Gauge({
      name: 'catalogue_processes',
      help: 'Server processes in this scrape: 1 for each, so with --workers N the sum says how many answered',
      registers: [this.registry],
    }).set(1);
    new client.Gauge({
      name: 'catalogue_sqlite_write_queue_depth',
      help: 'Writes waiting for the single SQLite writer',
      registers: store.engine === 'sqlite' ? [this.registry] : [],
      collect() {
        this.set(store.stats().writeQueueDepth);
      },
    });
    if (store.engine === 'sqlite') {
      new client.Gauge({
        name: 'catalogue_sqlite_build_info',
        help: 'The better-sqlite3 build this process runs (1 for it): patched (Node 20 with the project\'s patch), upstream (Node 22+, needs none) or unpatched (Node 20 without it: more CPU per row)',
        labelNames: ['build'] as const,
        registers: [this.registry],
      }).set({ build: sqliteBuild() }, 1);
    }
    new client.Gauge({
      name: 'catalogue_postgres_pool_connections',
      help: 'PostgreSQL pool: connections in use, idle, and callers waiting for one',
      labelNames: ['state'] as const,
      registers: store.engine === 'postgres' ? [this.registry] : [],
      collect() {
        const pool = store.stats().pool;
        this.set({ state: 'in_use' }, pool?.inUse ?? 0);
        this.set({ state: 'idle' }, pool?.idle ?? 0);
        this.set({ state: 'waiting' }, pool?.waiting ?? 0);
      },
    });
    store.observeCommits((writes) => this.groupCommits.observe(writes));
    // Process memory, CPU, event-loop delay (nodejs_eventloop_lag_*), heap and handles.
    client.collectDefaultMetrics({ register: this.registry });
  }

  /** A request arrived; the returned function is called once when it is answered or cut off. */
  requestStarted(): RequestEnded {
    this.inFlight.inc();
    let ended = false;
    return (path, method, status, seconds) => {
      if (ended) return;
      ended = true;
      this.inFlight.dec();
      const kind = uriKind(this.model, this.platformPath, path);
      const verb = method !== undefined && METHODS.has(method) ? method : 'OTHER';
      this.requests.inc({ kind, method: verb, status: String(status) });
      this.latency.observe({ kind, method: verb }, seconds);
    };
  }

  login(outcome: LoginOutcome): void {
    this.logins.inc({ outcome });
  }

  admissionRefused(reason: 'queue_full' | 'queue_timeout'): void {
    this.admissionRefusals.inc({ reason });
  }

  batch(parts: number, changesetSizes: readonly number[]): void {
    this.batchParts.observe(parts);
    for (const size of changesetSizes) this.changesetSizes.observe(size);
  }
}
