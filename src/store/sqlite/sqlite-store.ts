/**
 * The embedded SQLite adapter (better-sqlite3). Two connections: readers use their own, so they
 * never see a write transaction that is still open; writes go through one queue on the writer
 * connection. Writes that arrive together share one COMMIT (group commit): each runs inside its
 * own SAVEPOINT, so one failing job rolls back alone, and every job is answered only after the
 * shared COMMIT is on disk (synchronous=FULL).
 */
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { MigrationReport, ReadCost, ReadExtent, ReadGuard, RunResult, SqlExecutor, SqlValue, Store, StoreStats, WriteOptions } from '../store';
import { schemaGaps, type TableDef } from '../schema';
import { migrateSqlite } from './ddl';
import { sqliteCodec } from './codec';
import { sqliteDialect } from './dialect';
import { BoundedPool } from './bounded-pool';
import { WorkerReads } from './worker-reads';
import { BUSY_TIMEOUT_MS, control, isBusy, openExecutor, type ConnectionExecutor } from './connection';
import { WriterBusyError } from '../errors';

interface WriteJob {
  run(tx: SqlExecutor): Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** Jobs per shared commit: bounds the latency one commit adds to the first job in it. */
const MAX_JOBS_PER_COMMIT = 64;

/**
 * Reader connections. A one-shot directory statement runs on any connection that no snapshot
 * holds; a snapshot (read()) holds its connection inside one read transaction until it ends, so
 * a streamed collection and its expansions see one committed state. Connections are opened on
 * demand up to a bound; beyond it, callers wait their turn.
 */
class ReaderPool {
  private readonly pool: BoundedPool<{ db: Database.Database; executor: ConnectionExecutor }>;

  constructor(open: () => { db: Database.Database; executor: ConnectionExecutor }, max: number) {
    this.pool = new BoundedPool(open, max);
  }

  with<T>(fn: (c: ConnectionExecutor) => Promise<T>): Promise<T> {
    return this.pool.with((connection) => fn(connection.executor));
  }

  /**
   * fn inside one read transaction on one connection, after the guard's check when one is given
   * (ReadGuard): run here, as one step with BEGIN, rather than wrapped around fn as an async
   * function of its own, which cost a GET by key several turns of the microtask queue.
   */
  snapshot<T>(fn: (c: ConnectionExecutor) => Promise<T>, guard?: ReadGuard): Promise<T> {
    return this.with(async (c) => {
      control(c.db, 'BEGIN');
      try {
        if (guard) guard.check(c.getNow(guard.sql, guard.params));
        return await fn(c);
      } finally {
        // A read transaction has nothing to keep: ending it releases the snapshot.
        if (c.db.inTransaction) control(c.db, 'COMMIT');
      }
    });
  }

  close(): void {
    for (const { db } of this.pool.made) db.close();
  }
}

/** Directory statements, each on any free reader connection. */
class DirectoryExecutor implements SqlExecutor {
  constructor(private readonly pool: ReaderPool) {}
  all<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    return this.pool.with((c) => c.all<Row>(sql, params));
  }
  get<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined> {
    return this.pool.with((c) => c.get<Row>(sql, params));
  }
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult> {
    return this.pool.with((c) => c.run(sql, params));
  }
  async *iterate<Row>(sql: string, params?: readonly SqlValue[]): AsyncIterable<Row> {
    const rows = await this.all<Row>(sql, params);
    yield* rows;
  }
  rows(sql: string, params?: readonly SqlValue[]): Promise<unknown[][]> {
    return this.pool.with((c) => c.rows(sql, params));
  }
  async *iterateRows(sql: string, params?: readonly SqlValue[]): AsyncIterable<unknown[]> {
    const rows = await this.rows(sql, params);
    yield* rows;
  }
  async *iterateRowBatches(sql: string, params: readonly SqlValue[], batchRows: number): AsyncIterable<unknown[][]> {
    const rows = await this.rows(sql, params);
    for (let i = 0; i < rows.length; i += batchRows) yield rows.slice(i, i + batchRows);
  }
}

/** Reader connections at most: more concurrent streams than this wait for one to end. */
const MAX_READERS = 8;

export interface SqliteOptions {
  readonly file: string;
  readonly tables: readonly TableDef[];
  /**
   * Bytes of the database file each connection reads through a memory map (SQLITE_MMAP_MB; 0,
   * the default: none). Reads then cost no system call per page and every connection shares the
   * operating system's cache instead of warming its own: a GET by key took about a quarter less
   * CPU in the bench. But the mapped pages count in the process's resident set (the export's peak
   * rose from about 130 to 164 MB), and an I/O error on the file becomes a signal rather than an
   * error, so it is the operator's choice.
   */
  readonly mmapBytes?: number;
  /**
   * The longest a read statement with a $filter or $orderby may run at one stretch, holding the
   * event loop (SQLITE_READ_BUDGET_MS; 0: no budget): then it stops and the request is answered
   * 400 naming the budget (StatementBudget).
   */
  readonly readBudgetMs?: number;
  /** The same for a heavy read on a worker thread (READ_STATEMENT_TIMEOUT_MS; 0: no budget). */
  readonly heavyReadBudgetMs?: number;
}

/** A heavy read's budget by default: it holds only its worker, so it may run as long as a PostgreSQL read statement. */
export const DEFAULT_HEAVY_READ_BUDGET_MS = 5_000;

/**
 * Worker threads for heavy reads: two, so that one account's heavy read (its admission lets it
 * run one at a time: service/admission.ts) leaves a worker to every other account's, on a
 * machine whose other core answers everything else.
 */
const READ_WORKERS = 2;

export const DEFAULT_SQLITE_READ_BUDGET_MS = 500;

/** fn, with the guard's check as the first statement of its transaction (ReadGuard, WriteOptions.guard). */
function checkedFirst<T>(guard: ReadGuard, fn: (tx: SqlExecutor) => Promise<T>): (tx: SqlExecutor) => Promise<T> {
  return async (tx) => {
    guard.check(await tx.get(guard.sql, guard.params));
    // Awaited: an async function that returns a promise adopts it two turns later.
    return await fn(tx);
  };
}

export class SqliteStore implements Store {
  readonly engine = 'sqlite' as const;
  readonly codec = sqliteCodec;
  readonly dialect = sqliteDialect;
  readonly readBudgetMs: number;
  readonly directory: SqlExecutor;
  private readonly readers: ReaderPool;
  /** Heavy reads (ReadCost), each on a worker thread's connection. */
  private readonly workerReads: WorkerReads;
  private readonly writerDb: Database.Database;
  private readonly writer: ConnectionExecutor;
  private readonly queue: WriteJob[] = [];
  private draining = false;
  private closed = false;
  /** Told after every COMMIT of queued writes (the metrics, the webhook worker). */
  private readonly commitListeners: ((writes: number) => void)[] = [];

  constructor(private readonly options: SqliteOptions) {
    if (options.file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(options.file)), { recursive: true });
    const writer = openExecutor(options.file, options.mmapBytes ?? 0);
    this.writerDb = writer.db;
    this.writer = writer.executor;
    this.readBudgetMs = options.readBudgetMs ?? DEFAULT_SQLITE_READ_BUDGET_MS;
    this.workerReads = new WorkerReads(
      { file: options.file, mmapBytes: options.mmapBytes ?? 0, budgetMs: options.heavyReadBudgetMs ?? DEFAULT_HEAVY_READ_BUDGET_MS },
      READ_WORKERS,
    );
    this.readers = new ReaderPool(() => openExecutor(options.file, options.mmapBytes ?? 0, this.readBudgetMs), MAX_READERS);
    this.directory = new DirectoryExecutor(this.readers);
  }

  async migrate(): Promise<MigrationReport> {
    return migrateSqlite(this.writerDb, this.options.tables);
  }

  read<T>(_accountId: number, fn: (tx: SqlExecutor) => Promise<T>, guard?: ReadGuard, _extent?: ReadExtent, cost: ReadCost = 'light'): Promise<T> {
    // Every statement is scoped by account_id itself; SQLite has no second fence to set.
    if (cost === 'heavy') return this.workerReads.snapshot(guard ? checkedFirst(guard, fn) : fn);
    return this.readers.snapshot(fn, guard);
  }

  /** WriteOptions.newIds: SQLite's id sequence is a row of its own database, as cheap to ask as to keep. */
  write<T>(_accountId: number, fn: (tx: SqlExecutor) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    // In the job's own savepoint: a refused check fails this write alone.
    return this.enqueue(options.guard ? checkedFirst(options.guard, fn) : fn);
  }

  writeDirectory<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.enqueue(fn);
  }

  private enqueue<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('The store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run: fn, resolve: resolve as (value: unknown) => void, reject });
      if (this.draining) return;
      // The first write of a turn waits for the check phase: the requests that the same poll phase
      // read are queued by then and share its COMMIT. Started at once, every write would commit
      // (and fsync) alone, since a job runs to its COMMIT without giving the event loop a turn.
      this.draining = true;
      setImmediate(() => void this.drain());
    });
  }

  async missingSchema(): Promise<string[]> {
    const rows = await this.directory.all<{ name: string }>(
      `SELECT m.name || '.' || p.name AS name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'`,
    );
    return schemaGaps(this.options.tables, new Set(rows.map((r) => r.name)));
  }

  /** One file, one writer: SQLite has no standby to be reached by mistake. */
  acceptsWrites(): Promise<boolean> {
    return Promise.resolve(true);
  }

  stats(): StoreStats {
    return { writeQueueDepth: this.queue.length };
  }

  observeCommits(listener: (writes: number) => void): void {
    this.commitListeners.push(listener);
  }

  async nextId(tx: SqlExecutor): Promise<bigint> {
    const row = await tx.get<{ last_value: bigint }>(
      `UPDATE id_sequence SET last_value = last_value + 1 WHERE name = 'entity' RETURNING last_value`,
    );
    if (!row) throw new Error('The id sequence is missing: run the migrations');
    return row.last_value;
  }

  async nextIds(tx: SqlExecutor, count: number): Promise<bigint[]> {
    if (count <= 0) return [];
    // One writer at a time: the range below the new last value is this transaction's alone.
    const row = await tx.get<{ last_value: bigint }>(
      `UPDATE id_sequence SET last_value = last_value + ? WHERE name = 'entity' RETURNING last_value`,
      [count],
    );
    if (!row) throw new Error('The id sequence is missing: run the migrations');
    const first = BigInt(row.last_value) - BigInt(count) + 1n;
    return Array.from({ length: count }, (_, i) => first + BigInt(i));
  }

  /**
   * Commits one batch of the queue, then gives the event loop a turn before the next: a batch
   * runs its jobs without yielding, so back-to-back batches would keep reads waiting.
   */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      await this.commitBatch(this.queue.splice(0, MAX_JOBS_PER_COMMIT));
    } finally {
      if (this.queue.length > 0) setImmediate(() => void this.drain());
      else this.draining = false;
    }
  }

  private async commitBatch(batch: WriteJob[]): Promise<void> {
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      control(this.writerDb, 'BEGIN IMMEDIATE');
    } catch (error) {
      const reason = isBusy(error) ? new WriterBusyError(BUSY_TIMEOUT_MS) : error;
      for (const job of batch) job.reject(reason);
      return;
    }
    for (const job of batch) {
      control(this.writerDb, 'SAVEPOINT job');
      try {
        const value = await job.run(this.writer);
        control(this.writerDb, 'RELEASE job');
        outcomes.push({ ok: true, value });
      } catch (error) {
        control(this.writerDb, 'ROLLBACK TO job');
        control(this.writerDb, 'RELEASE job');
        outcomes.push({ ok: false, value: error });
      }
    }
    try {
      control(this.writerDb, 'COMMIT');
    } catch (error) {
      if (this.writerDb.inTransaction) control(this.writerDb, 'ROLLBACK');
      const reason = isBusy(error) ? new WriterBusyError(BUSY_TIMEOUT_MS) : error;
      for (const job of batch) job.reject(reason);
      return;
    }
    for (const listener of this.commitListeners) listener(batch.length);
    batch.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.value);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.draining) await new Promise((r) => setTimeout(r, 5));
    this.readers.close();
    await this.workerReads.close();
    this.writerDb.close();
  }
}
