/**
 * The Store: the only way the service reaches its database. It is asynchronous so that the
 * embedded SQLite adapter and a PostgreSQL adapter are interchangeable. SQL is written with `?`
 * placeholders and bound parameters only; no value is ever spliced into SQL text.
 */

import type { EdmType } from '../model/types';
import type { EdmValue } from '../odata/edm';

export type SqlValue = string | number | bigint | null | Buffer;

export interface RunResult {
  readonly changes: number;
}

/** Runs statements on one connection (inside a transaction when given by write()). */
export interface SqlExecutor {
  all<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<Row[]>;
  get<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined>;
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult>;
  /**
   * Streams the rows of a query as they are read, so a whole collection never sits in memory.
   * The connection stays with the iteration until it ends (or the loop breaks).
   */
  iterate<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): AsyncIterable<Row>;
}

/** How an engine stores each Edm type: model values in, database values out. */
export interface ValueCodec {
  encode(type: EdmType, value: EdmValue): SqlValue;
  decode(type: EdmType, raw: unknown): EdmValue;
}

export interface MigrationReport {
  readonly createdTables: readonly string[];
  readonly addedColumns: readonly string[];
  readonly createdIndexes: readonly string[];
}

export interface Store {
  readonly engine: 'sqlite' | 'postgres';
  readonly codec: ValueCodec;
  /** Creates whatever the model needs and the database lacks; safe to run again. */
  migrate(): Promise<MigrationReport>;
  /** Reads outside any write transaction (a consistent snapshot per statement). */
  readonly reader: SqlExecutor;
  /**
   * Runs fn in one transaction and resolves only after COMMIT is durable. If fn throws, nothing
   * it did is kept and the error is rethrown.
   */
  write<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Next value of the service-wide entity id sequence, inside a write transaction. */
  nextId(tx: SqlExecutor): Promise<bigint>;
  close(): Promise<void>;
}
