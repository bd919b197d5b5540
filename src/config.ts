/**
 * Configuration from environment variables, each with a safe default, so `npm start` needs none.
 * The README's configuration table lists the same names; keep them in step.
 */
import { DEFAULT_DATABASE_URL, isPostgresUrl, type DatabaseOptions } from './store/open';
import { DEFAULT_SQLITE_READ_BUDGET_MS } from './store/sqlite/sqlite-store';
import { DEFAULT_READ_STATEMENT_TIMEOUT_MS } from './store/postgres/pg-store';
import type { ReadLimits } from './odata/read-options';
import { DEFAULT_EXPR_LIMITS } from './odata/expr/ast';
import { DEFAULT_BATCH_LIMITS } from './odata/batch/parse';
import type { ResponseVersionPolicy } from './odata/negotiate';
import { DEFAULT_WEBHOOK_SETTINGS as WH, type WebhookSettings } from './webhooks/settings';

/** Days the change log keeps a change (CHANGE_RETENTION_DAYS). */
export const DEFAULT_CHANGE_RETENTION_DAYS = 30;

export interface Limits {
  readonly maxBodyBytes: number;
  readonly maxBatchBodyBytes: number;
  /** Top-level parts (query parts and changesets) in one $batch. */
  readonly maxBatchParts: number;
  /** Operations in one $batch changeset. */
  readonly maxChangesetOperations: number;
  /** All query-part answers of one $batch together: they are held in memory until the batch is answered. */
  readonly maxBatchResponseBytes: number;
  readonly maxUrlBytes: number;
  readonly maxHeaderBytes: number;
  /** Time allowed for the request headers to arrive. */
  readonly headersTimeoutMs: number;
  /** Time allowed for the whole request (headers and body) to arrive. */
  readonly requestTimeoutMs: number;
  /**
   * Time a streamed answer may wait for a client that takes none of it: the stream holds a
   * database snapshot (on PostgreSQL a pool connection) while it waits, so a client that stops
   * reading is cut off rather than allowed to hold it for ever.
   */
  readonly sendTimeoutMs: number;
}

/** Limits of query options, and server-driven paging. */
export interface QueryConfig extends ReadLimits {
  /** Server paging: at most this many entities per feed, then a next link. Off when undefined. */
  readonly pageSize: number | undefined;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  /** PostgreSQL only: owner role for migrations, pool size, statement timeout, prepared statements. */
  readonly database: DatabaseOptions;
  readonly logLevel: string;
  /** Create and print a demo account when the database has no account. */
  readonly demoAccount: boolean;
  /** Absolute URL clients reach the service under (behind a proxy); derived from Host otherwise. */
  readonly publicUrl: string | undefined;
  /** Mark the session cookie Secure (the service is reached over TLS). */
  readonly secureCookies: boolean;
  /** The marketplace connector's credential for /platform/v1; the platform API is off without it. */
  readonly platformToken: string | undefined;
  readonly limits: Limits;
  readonly query: QueryConfig;
  /**
   * The version of an answer the request allows more than one for: the lowest that expresses it
   * (1.0 arrays, what the existing connectors read) or the highest the client reads (2.0
   * `results` objects, for V2-only client libraries that send no version headers); by default
   * (`auto`) the highest for a request that declares no version and the lowest for one that does.
   */
  readonly responseVersion: ResponseVersionPolicy;
  readonly metrics: MetricsConfig;
  /** Requests of one account at once per process, and its queue (service/admission.ts). */
  readonly admission: AdmissionLimits;
  /** Compression of answers (server/compression.ts). */
  readonly compression: CompressionConfig;
  /** How often the service removes expired sessions, stale throttle rows and old idempotency keys. */
  readonly housekeepingIntervalMs: number;
  /**
   * How long the change log keeps its rows, in days: a delta link older than this answers 410 Gone,
   * and the housekeeping deletes the rows once they are older still (store/change-log.ts).
   */
  readonly changeRetentionDays: number;
  /** The webhook worker (src/webhooks/). */
  readonly webhooks: WebhookSettings;
}

/**
 * Response compression: on by default for clients that send Accept-Encoding; off behind a proxy
 * that compresses itself. Request bodies sent with Content-Encoding are decoded either way.
 */
export interface CompressionConfig {
  readonly enabled: boolean;
  /** zlib's level for gzip and deflate, 1 (fastest) to 9 (smallest); brotli has its own (server/compression.ts). */
  readonly level: number;
  /** Whole answers shorter than this go out uncompressed (streamed answers are always compressed). */
  readonly minBytes: number;
}

/** GET /metrics: off unless a token or a port of its own is configured. */
export interface MetricsConfig {
  /** Bearer token a scraper must send; /metrics is then served on the main port too. */
  readonly token: string | undefined;
  /** A port of its own for /metrics (on HOST), apart from the service's. */
  readonly port: number | undefined;
}

/** A metrics token must be long enough that it cannot be guessed. */
export const METRICS_TOKEN_MIN_LENGTH = 16;

/** A platform credential must be long enough that it cannot be guessed. */
export const PLATFORM_TOKEN_MIN_LENGTH = 32;

/** See the README's configuration table for how this level was chosen. */
export const DEFAULT_COMPRESSION_LEVEL = 1;

export class ConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not '${raw}'`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = allowed.find((a) => a === raw.trim().toLowerCase());
  if (value === undefined) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, not '${raw}'`);
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, not '${raw}'`);
}

/** Requests of one account per process (service/admission.ts). */
export interface AdmissionLimits {
  /** Requests of one account that run at once (0: no limit). */
  readonly maxInFlight: number;
  /** Of those, the expensive ones (service/admission.ts isHeavyRequest) that run at once. */
  readonly maxHeavyInFlight: number;
  /** Requests of one account that wait for a slot; one more is refused at once. */
  readonly maxQueued: number;
  /** The longest a request waits in the queue before it is refused. */
  readonly queueWaitMs: number;
}

/** Requests of one account at once: by default 4, and on PostgreSQL at most half the pool. */
export const DEFAULT_ACCOUNT_MAX_IN_FLIGHT = 4;

function admissionLimits(env: Env, poolSize: number | undefined): AdmissionLimits {
  // On PostgreSQL each running request holds at most one pooled connection: half the pool at
  // most leaves the other half to every other account.
  const poolShare = poolSize === undefined ? Infinity : Math.max(1, Math.floor(poolSize / 2));
  const maxInFlight = integer(env, 'ACCOUNT_MAX_IN_FLIGHT', Math.min(DEFAULT_ACCOUNT_MAX_IN_FLIGHT, poolShare), 0, 10_000);
  if (maxInFlight > poolShare) {
    throw new ConfigError(`ACCOUNT_MAX_IN_FLIGHT must be at most half of DATABASE_POOL_SIZE (${poolShare}), not ${maxInFlight}`);
  }
  return {
    maxInFlight,
    maxHeavyInFlight: integer(env, 'ACCOUNT_MAX_HEAVY_IN_FLIGHT', 1, 1, 10_000),
    maxQueued: integer(env, 'ACCOUNT_MAX_QUEUED', 64, 0, 100_000),
    queueWaitMs: integer(env, 'ACCOUNT_QUEUE_WAIT_MS', 10_000, 1, 600_000),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const publicUrl = env.PUBLIC_URL?.replace(/\/+$/, '') || undefined;
  if (publicUrl !== undefined && !/^https?:\/\/[^\s/]+(\/[^\s]*)?$/i.test(publicUrl)) {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, not '${publicUrl}'`);
  }
  const platformToken = env.PLATFORM_TOKEN || undefined;
  if (platformToken !== undefined && (platformToken.length < PLATFORM_TOKEN_MIN_LENGTH || !/^[\x21-\x7e]+$/.test(platformToken))) {
    throw new ConfigError(`PLATFORM_TOKEN must be at least ${PLATFORM_TOKEN_MIN_LENGTH} printable characters without spaces`);
  }
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && (metricsToken.length < METRICS_TOKEN_MIN_LENGTH || !/^[\x21-\x7e]+$/.test(metricsToken))) {
    throw new ConfigError(`METRICS_TOKEN must be at least ${METRICS_TOKEN_MIN_LENGTH} printable characters without spaces`);
  }
  const maxBodyBytes = integer(env, 'MAX_BODY_BYTES', 1024 * 1024, 1024, 1024 ** 3);
  const poolSize = integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000);
  const databaseUrl = env.DATABASE_URL || DEFAULT_DATABASE_URL;
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    database: {
      ownerUrl: env.DATABASE_OWNER_URL || undefined,
      poolSize,
      poolWaitMs: integer(env, 'DATABASE_POOL_WAIT_MS', 3_000, 1, 600_000),
      failoverWaitMs: integer(env, 'DATABASE_FAILOVER_WAIT_MS', 3_000, 0, 600_000),
      statementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
      preparedStatements: flag(env, 'DATABASE_PREPARED_STATEMENTS', true),
      sqliteMmapBytes: integer(env, 'SQLITE_MMAP_MB', 0, 0, 1024 * 1024) * 1024 * 1024,
      sqliteReadBudgetMs: integer(env, 'SQLITE_READ_BUDGET_MS', DEFAULT_SQLITE_READ_BUDGET_MS, 0, 3_600_000),
      readStatementTimeoutMs: integer(env, 'READ_STATEMENT_TIMEOUT_MS', DEFAULT_READ_STATEMENT_TIMEOUT_MS, 0, 3_600_000),
    },
    logLevel: env.LOG_LEVEL || 'info',
    demoAccount: flag(env, 'DEMO_ACCOUNT', true),
    publicUrl,
    secureCookies: flag(env, 'SECURE_COOKIES', publicUrl?.startsWith('https:') ?? false),
    platformToken,
    responseVersion: oneOf<ResponseVersionPolicy>(env, 'RESPONSE_VERSION', 'auto', ['auto', 'lowest', 'highest']),
    metrics: {
      token: metricsToken,
      port: env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? undefined : integer(env, 'METRICS_PORT', 0, 0, 65535),
    },
    admission: admissionLimits(env, isPostgresUrl(databaseUrl) ? poolSize : undefined),
    compression: {
      enabled: flag(env, 'COMPRESSION', true),
      level: integer(env, 'COMPRESSION_LEVEL', DEFAULT_COMPRESSION_LEVEL, 1, 9),
      minBytes: integer(env, 'COMPRESSION_MIN_BYTES', 1024, 0, 1024 ** 3),
    },
    housekeepingIntervalMs: integer(env, 'HOUSEKEEPING_INTERVAL_MS', 60_000, 10, 24 * 3_600_000),
    changeRetentionDays: integer(env, 'CHANGE_RETENTION_DAYS', DEFAULT_CHANGE_RETENTION_DAYS, 1, 3650),
    webhooks: {
      enabled: flag(env, 'WEBHOOKS', WH.enabled),
      pollMs: integer(env, 'WEBHOOK_POLL_MS', WH.pollMs, 10, 60_000),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', WH.timeoutMs, 100, 120_000),
      retryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', WH.retryBaseMs, 10, 3_600_000),
      retryMaxMs: integer(env, 'WEBHOOK_RETRY_MAX_MS', WH.retryMaxMs, 10, 24 * 3_600_000),
      retryHorizonMs: integer(env, 'WEBHOOK_RETRY_HORIZON_MS', WH.retryHorizonMs, 0, 30 * 24 * 3_600_000),
      disableAfterFailures: integer(env, 'WEBHOOK_DISABLE_AFTER_FAILURES', WH.disableAfterFailures, 1, 1_000_000),
      endpointConcurrency: integer(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', WH.endpointConcurrency, 1, 64),
      accountConcurrency: integer(env, 'WEBHOOK_ACCOUNT_CONCURRENCY', WH.accountConcurrency, 1, 10_000),
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', WH.concurrency, 1, 10_000),
      allowHttp: flag(env, 'WEBHOOK_ALLOW_HTTP', WH.allowHttp),
      allowPrivateAddresses: flag(env, 'WEBHOOK_ALLOW_PRIVATE_ADDRESSES', WH.allowPrivateAddresses),
      secretOverlapMs: integer(env, 'WEBHOOK_SECRET_OVERLAP_MS', WH.secretOverlapMs, 0, 30 * 24 * 3_600_000),
    },
    limits: {
      maxBodyBytes,
      maxBatchBodyBytes: integer(env, 'MAX_BATCH_BODY_BYTES', 4 * 1024 * 1024, 1024, 1024 ** 3),
      maxBatchParts: integer(env, 'MAX_BATCH_PARTS', DEFAULT_BATCH_LIMITS.maxParts, 1, 10_000),
      maxChangesetOperations: integer(env, 'MAX_CHANGESET_OPERATIONS', DEFAULT_BATCH_LIMITS.maxOperationsPerChangeset, 1, 10_000),
      maxBatchResponseBytes: integer(env, 'MAX_BATCH_RESPONSE_BYTES', 64 * 1024 * 1024, 1024, 16 * 1024 ** 3),
      maxUrlBytes: integer(env, 'MAX_URL_BYTES', 4096, 256, 1024 * 1024),
      maxHeaderBytes: integer(env, 'MAX_HEADER_BYTES', 16 * 1024, 1024, 1024 * 1024),
      headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 3_600_000),
      requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
      sendTimeoutMs: integer(env, 'SEND_TIMEOUT_MS', 30_000, 100, 3_600_000),
    },
    query: {
      pageSize: integer(env, 'PAGE_SIZE', 0, 0, 1_000_000) || undefined,
      maxTop: integer(env, 'MAX_TOP', 10_000, 1, 1_000_000),
      expr: {
        maxNodes: integer(env, 'MAX_FILTER_NODES', 100, 1, 10_000),
        maxDepth: integer(env, 'MAX_FILTER_DEPTH', 32, 1, 1_000),
        maxLength: integer(env, 'MAX_FILTER_LENGTH', 2048, 16, 1024 * 1024),
        // 0 turns a cost bound off (for a differential test of what expressions mean, or a trusted deployment).
        maxTextLength: integer(env, 'MAX_FILTER_TEXT_CHARS', DEFAULT_EXPR_LIMITS.maxTextLength, 0, 2 ** 50) || Infinity,
        maxWorkPerRow: integer(env, 'MAX_FILTER_ROW_WORK', DEFAULT_EXPR_LIMITS.maxWorkPerRow, 0, 2 ** 50) || Infinity,
        // A text property without a MaxLength holds at most what one request body carries.
        unboundedTextLength: maxBodyBytes,
      },
      expand: {
        maxDepth: integer(env, 'MAX_EXPAND_DEPTH', 3, 1, 10),
        maxPaths: integer(env, 'MAX_EXPAND_PATHS', 12, 1, 100),
      },
    },
  };
}
