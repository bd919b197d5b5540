/** Chooses the store adapter from DATABASE_URL. */
import { model } from '../model/catalogue-model';
import { buildSchema } from './schema';
import type { Store } from './store';
import { SqliteStore } from './sqlite/sqlite-store';
import { PostgresStore } from './postgres/pg-store';
import { ConfigurationError } from './errors';

export const DEFAULT_DATABASE_URL = 'sqlite:./data/catalogue.db';

export { ConfigurationError } from './errors';

/** Settings of the adapters (all but sqliteMmapBytes are PostgreSQL's). */
export interface DatabaseOptions {
  /** SQLite: bytes of the file read through a memory map (SQLITE_MMAP_MB), 0 for none. */
  readonly sqliteMmapBytes?: number;
  /** SQLite: the longest a read with $filter or $orderby holds the event loop at one stretch (SQLITE_READ_BUDGET_MS). */
  readonly sqliteReadBudgetMs?: number;
  /** The limit on one read statement (READ_STATEMENT_TIMEOUT_MS), 0 for none: PostgreSQL's statement_timeout for reads, and SQLite's budget for heavy reads on worker threads. */
  readonly readStatementTimeoutMs?: number;
  /** The owner role's URL, for migrations (DATABASE_OWNER_URL). */
  readonly ownerUrl?: string | undefined;
  /** Connections at most per process (DATABASE_POOL_SIZE). */
  readonly poolSize?: number;
  /** Longest a request waits for a pooled connection before it is answered 503 (DATABASE_POOL_WAIT_MS). */
  readonly poolWaitMs?: number;
  /** Longest a request waits for a database server to take a connection (a failover) before it is answered 503 (DATABASE_FAILOVER_WAIT_MS). */
  readonly failoverWaitMs?: number;
  /** Server-side limit on one statement, 0 for none (DATABASE_STATEMENT_TIMEOUT_MS). */
  readonly statementTimeoutMs?: number;
  /** Named prepared statements per connection; false behind a transaction-mode pooler (DATABASE_PREPARED_STATEMENTS). */
  readonly preparedStatements?: boolean;
  /** How long a finished read's COMMIT may wait for its connection's next use (tests set it). */
  readonly readEndWaitMs?: number;
  /** How long a batch of one account's writes runs before it leaves the rest to the next (tests set it). */
  readonly batchTimeBudgetMs?: number;
}

export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url);

/** The SQLite file named by a `sqlite:` URL, a `file:` URL, or a plain path. */
export function sqliteFileOf(databaseUrl: string): string {
  const m = /^(?:sqlite|file):(?:\/\/)?(.*)$/i.exec(databaseUrl);
  const file = m ? m[1]! : databaseUrl;
  if (!file) throw new ConfigurationError(`DATABASE_URL '${databaseUrl}' names no SQLite file`);
  return file;
}

export function openStore(databaseUrl: string = DEFAULT_DATABASE_URL, options: DatabaseOptions = {}): Store {
  const tables = buildSchema(model);
  const { sqliteMmapBytes, sqliteReadBudgetMs, ...postgres } = options;
  if (isPostgresUrl(databaseUrl)) return new PostgresStore({ url: databaseUrl, tables, ...postgres });
  if (options.ownerUrl) throw new ConfigurationError('DATABASE_OWNER_URL is for PostgreSQL; DATABASE_URL names a SQLite database');
  return new SqliteStore({
    file: sqliteFileOf(databaseUrl),
    tables,
    mmapBytes: sqliteMmapBytes ?? 0,
    ...(sqliteReadBudgetMs !== undefined ? { readBudgetMs: sqliteReadBudgetMs } : {}),
    ...(postgres.readStatementTimeoutMs !== undefined ? { heavyReadBudgetMs: postgres.readStatementTimeoutMs } : {}),
  });
}
