/**
 * The Store: the only way the service reaches its database. It is asynchronous so that the
 * embedded SQLite adapter and the PostgreSQL adapter are interchangeable. SQL is written with `?`
 * placeholders and bound parameters only; no value is ever spliced into SQL text.
 *
 * Work is scoped in two ways:
 * - the directory (accounts, tokens, sessions, login throttle) is looked up by what a request
 *   presents, before any account is known: `directory` and `writeDirectory`;
 * - everything else belongs to one account: `read(accountId, …)` and `write(accountId, …)` run
 *   in one transaction for that account (on PostgreSQL the tenant is also set for row-level
 *   security, as a second fence behind the account_id in every statement).
 */

import type { EdmType } from '../model/types';
import type { EdmValue } from '../odata/edm';
import type { SqlDialect, SqlValue } from './sql/dialect';

export type { SqlValue };

export interface RunResult {
  readonly changes: number;
}

/** Runs statements on one connection (inside a transaction when given by read() or write()). */
export interface SqlExecutor {
  all<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<Row[]>;
  get<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined>;
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult>;
  /**
   * Streams the rows of a query as they are read, so a whole collection never sits in memory.
   * Other statements may run on the same executor while an iteration is open (the expansions of
   * a streamed feed are read that way); the iteration must end before the transaction does.
   */
  iterate<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): AsyncIterable<Row>;
  /**
   * Rows as arrays of column values in select order: no object per row, for the reads that
   * move many rows (collections and their expansions).
   */
  rows(sql: string, params?: readonly SqlValue[]): Promise<unknown[][]>;
  /** iterate() with rows as arrays. */
  iterateRows(sql: string, params?: readonly SqlValue[]): AsyncIterable<unknown[]>;
  /**
   * iterateRows() handed over in batches of at most `batchRows` rows: one await per batch, not
   * per row (a streamed feed takes its rows a page at a time anyway).
   */
  iterateRowBatches(sql: string, params: readonly SqlValue[], batchRows: number): AsyncIterable<unknown[][]>;
  /**
   * The ids drawn for this write transaction before its statements (WriteOptions.newIds), for
   * Store.nextId to take; absent where none were. An executor that wraps a transaction's passes
   * its own on.
   */
  readonly idsAhead?: IdsAhead;
  /**
   * Takes over the wait for a statement already sent whose answer the write does not need to go
   * on (see sentBehind): true when it did, and then the transaction waits for it before it
   * commits and the write fails with its error should it fail. Absent, or false, where the
   * engine cannot.
   */
  writeBehind?(sent: Promise<unknown>): boolean;
  /**
   * Whether writeBehind() takes statements now: a write may then send one whose answer it can
   * tell beforehand, provided the statement itself fails should that answer be wrong (as
   * EntityStore.update's UPDATE verified against the version it read).
   */
  writesBehind?(): boolean;
}

/**
 * A statement a write sent whose answer it does not need to go on, as the INSERT of rows whose
 * rules were checked before it: left to the executor where it takes it (SqlExecutor.writeBehind,
 * PostgreSQL within a batch of writes that may run again), else waited for here.
 */
export async function sentBehind(tx: SqlExecutor, sent: Promise<unknown>): Promise<void> {
  if (tx.writeBehind?.(sent)) return;
  await sent;
}

/** Entity ids drawn ahead for one transaction, taken in ascending order. */
export class IdsAhead {
  private next = 0;

  constructor(private readonly ids: readonly bigint[]) {}

  /** The next id drawn ahead, or undefined when none is left. */
  take(): bigint | undefined {
    return this.next < this.ids.length ? this.ids[this.next++] : undefined;
  }

  /** The next ids drawn ahead, at most `count`: fewer, or none, when fewer are left. */
  takeUpTo(count: number): bigint[] {
    const taken = this.ids.slice(this.next, this.next + count);
    this.next += taken.length;
    return taken;
  }
}

/**
 * A statement that decides whether a read may go on (a credential check), run first in the
 * read's own transaction: the check and the read cost one transaction, and on PostgreSQL one
 * round trip, since the read's first statement goes out right behind it and its answer is used
 * only if check() accepted. The statement selects `account_id`, the account the read is for: on
 * PostgreSQL the tenant is set from that row, so a refused check also leaves the tenant unset.
 */
export interface ReadGuard {
  /** Directory tables only (no tenant is set yet); at most one row. */
  readonly sql: string;
  readonly params: readonly SqlValue[];
  /** Throws, and the read fails with that error, unless the row admits the read. */
  check(row: Record<string, unknown> | undefined): void;
}

/**
 * How many statements a read runs. 'one': fn runs exactly one statement (a GET by key, or a
 * collection page of at most 255 rows tried so first), so an engine needs no explicit
 * transaction for it: PostgreSQL sends it with the statement that sets the tenant in one
 * implicit transaction (no BEGIN, no COMMIT, one query of the driver), and
 * refuses a second statement (an error, never a statement run outside that transaction). SQLite
 * has nothing to save and ignores it. 'any' (the default): as many statements as fn needs.
 */
export type ReadExtent = 'one' | 'any';

/**
 * What a read may cost. 'heavy': its statements call text functions over the account's rows
 * (a $filter or $orderby with them), so their time grows with the account's data: SQLite runs
 * such a read on a worker thread, off the event loop every other request needs. 'light' (the
 * default): everything else, run where it is cheapest. PostgreSQL runs every statement in a
 * server process anyway and ignores it.
 */
export type ReadCost = 'light' | 'heavy';

/** What a write tells the engine beforehand. */
export interface WriteOptions {
  /**
   * How many entity ids the write expects to take with nextId() (the entities a POST or a
   * changeset creates): PostgreSQL draws them from the sequence with the transaction's first
   * statements, so that each create saves a round trip inside the account's write lock. A write
   * that takes more asks the sequence for the rest; ids it leaves untaken are skipped, as a
   * rolled-back transaction's are.
   */
  readonly newIds?: number;
  /**
   * A credential check to run first inside the write (as a read runs its ReadGuard): fn's
   * statements take effect only if it accepts its row. A refused check fails the write alone,
   * with the check's error. On PostgreSQL the checks of a batch's writes travel with its BEGIN
   * (one statement per distinct check), so they cost no round trip of their own, and a write
   * whose check refuses never runs.
   */
  readonly guard?: ReadGuard;
  /**
   * fn changes nothing but its transaction (no state of its own outside it), so it may run again
   * from the start: PostgreSQL then lets its statements be written behind (sentBehind) and runs
   * it again, alone, should one of them fail.
   */
  readonly repeatable?: boolean;
}

/** How an engine stores each Edm type: model values in, database values out. */
export interface ValueCodec {
  encode(type: EdmType, value: EdmValue): SqlValue;
  decode(type: EdmType, raw: unknown): EdmValue;
  /** decode() of one type, chosen once: a row decoder calls it for every column of every row. */
  decoderOf(type: EdmType): (raw: unknown) => EdmValue;
}

export interface MigrationReport {
  readonly createdTables: readonly string[];
  readonly addedColumns: readonly string[];
  readonly createdIndexes: readonly string[];
}

/** What the engine is doing at this moment (for the metrics). */
export interface StoreStats {
  /** Writes waiting for the single writer (SQLite); 0 where every write has its own connection. */
  readonly writeQueueDepth: number;
  /** The connection pool (PostgreSQL): connections serving a caller, idle ones, callers waiting. */
  readonly pool?: { readonly inUse: number; readonly idle: number; readonly waiting: number };
}

export interface Store {
  readonly engine: 'sqlite' | 'postgres';
  readonly codec: ValueCodec;
  /** How this engine spells what SQL does not standardise (lists, functions, null ordering). */
  readonly dialect: SqlDialect;
  /** The time budget of a read statement, in ms (0: none), for the error that names it. */
  readonly readBudgetMs: number;
  /** Creates whatever the model needs and the database lacks; safe to run again. */
  migrate(): Promise<MigrationReport>;
  /** Directory statements (auth tables), each on its own outside any transaction. */
  readonly directory: SqlExecutor;
  /** One transaction over the directory tables, resolved only after COMMIT is durable. */
  writeDirectory<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * One account's rows as one consistent snapshot: every statement fn runs sees the same
   * committed state. Keep fn short unless it streams a response (it holds a connection).
   * With a guard, the guard's statement runs first in the same transaction, and fn's statements
   * are answered only once the guard accepted its row. `extent`: see ReadExtent; `cost`: see ReadCost.
   */
  read<T>(accountId: number, fn: (tx: SqlExecutor) => Promise<T>, guard?: ReadGuard, extent?: ReadExtent, cost?: ReadCost): Promise<T>;
  /**
   * Runs fn in one transaction for one account and resolves only after COMMIT is durable. If fn
   * throws, nothing it did is kept and the error is rethrown.
   */
  write<T>(accountId: number, fn: (tx: SqlExecutor) => Promise<T>, options?: WriteOptions): Promise<T>;
  /** Next value of the service-wide entity id sequence, inside a write transaction. */
  nextId(tx: SqlExecutor): Promise<bigint>;
  /**
   * The tables and columns the model needs that the database lacks ("table" or "table.column"):
   * empty when the migrations are current (a readiness check; it changes nothing).
   */
  missingSchema(): Promise<string[]>;
  /**
   * Whether the database takes writes now (a readiness check): false where the process reaches
   * a PostgreSQL standby, as it may for a moment after a failover. One attempt, no waiting:
   * throws when the database cannot be reached.
   */
  acceptsWrites(): Promise<boolean>;
  /** What the engine is doing now: queued writes, pool use. */
  stats(): StoreStats;
  /**
   * Calls `listener` (each one given, in turn) after every COMMIT of queued writes with the number of writes it held
   * (group commit: SQLite's single writer, and PostgreSQL's batch per account).
   */
  observeCommits(listener: (writes: number) => void): void;
  /** `count` values of the id sequence at once (bulk writes), in ascending order. */
  nextIds(tx: SqlExecutor, count: number): Promise<bigint[]>;
  close(): Promise<void>;
}
