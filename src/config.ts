/**
 * Configuration from environment variables, each with a safe default, so `npm start` needs none.
 * The README's configuration table lists the same names; keep them in step.
 */
import { DEFAULT_DATABASE_URL, type DatabaseOptions } from './store/open';

export interface Limits {
  readonly maxBodyBytes: number;
  readonly maxBatchBodyBytes: number;
  readonly maxUrlBytes: number;
  readonly maxHeaderBytes: number;
  /** Time allowed for the request headers to arrive. */
  readonly headersTimeoutMs: number;
  /** Time allowed for the whole request (headers and body) to arrive. */
  readonly requestTimeoutMs: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  /** PostgreSQL only: owner role for migrations, pool size, statement timeout. */
  readonly database: DatabaseOptions;
  readonly logLevel: string;
  /** Create and print a demo account when the database has no account. */
  readonly demoAccount: boolean;
  /** Absolute URL clients reach the service under (behind a proxy); derived from Host otherwise. */
  readonly publicUrl: string | undefined;
  /** Mark the session cookie Secure (the service is reached over TLS). */
  readonly secureCookies: boolean;
  readonly limits: Limits;
}

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

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, not '${raw}'`);
}

export function loadConfig(env: Env = process.env): Config {
  const publicUrl = env.PUBLIC_URL?.replace(/\/+$/, '') || undefined;
  if (publicUrl !== undefined && !/^https?:\/\/[^\s/]+(\/[^\s]*)?$/i.test(publicUrl)) {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, not '${publicUrl}'`);
  }
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    database: {
      ownerUrl: env.DATABASE_OWNER_URL || undefined,
      poolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
      statementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
    },
    logLevel: env.LOG_LEVEL || 'info',
    demoAccount: flag(env, 'DEMO_ACCOUNT', true),
    publicUrl,
    secureCookies: flag(env, 'SECURE_COOKIES', publicUrl?.startsWith('https:') ?? false),
    limits: {
      maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 1024 * 1024, 1024, 1024 ** 3),
      maxBatchBodyBytes: integer(env, 'MAX_BATCH_BODY_BYTES', 4 * 1024 * 1024, 1024, 1024 ** 3),
      maxUrlBytes: integer(env, 'MAX_URL_BYTES', 4096, 256, 1024 * 1024),
      maxHeaderBytes: integer(env, 'MAX_HEADER_BYTES', 16 * 1024, 1024, 1024 * 1024),
      headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 3_600_000),
      requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    },
  };
}
