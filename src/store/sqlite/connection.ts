/**
 * One SQLite connection as the store's asynchronous executor: opened and checked (WAL,
 * synchronous=FULL, foreign keys), with the service's SQL functions, a bounded cache of prepared
 * statements, and (for readers) the time budget of each synchronous pull of rows. Used by the
 * store on the main thread and by the read workers (./read-worker.ts) alike.
 */
import Database from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { RunResult, SqlExecutor, SqlValue } from '../store';
import { BUDGET_MESSAGE, registerFunctions, StatementBudget } from './functions';
import { StatementBudgetExceeded } from '../errors';

/** Prepared statements kept per connection. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * How long a connection waits for a lock another process holds. better-sqlite3 waits
 * synchronously, so this also bounds how long the event loop stands still; a write that still
 * finds the lock held fails with WriterBusyError (answered 503 with Retry-After).
 */
export const BUSY_TIMEOUT_MS = 5000;

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT, …). */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Transaction control (BEGIN, COMMIT, SAVEPOINT...) as prepared statements of each connection:
 * exec() parses its text every time, and every request begins and ends at least one transaction.
 */
const controlStatements = new WeakMap<Database.Database, Map<string, Database.Statement>>();

export function control(db: Database.Database, sql: string): void {
  let statements = controlStatements.get(db);
  if (!statements) controlStatements.set(db, (statements = new Map()));
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, (statement = db.prepare(sql)));
  statement.run();
}

/**
 * A statement prepared once, and how its parameters bind: in order (`?`), or by number (`?1`,
 * see ../sql/params.ts), which better-sqlite3 binds by name, so the text is rewritten to `@p1`.
 */
interface Prepared {
  readonly statement: Database.Statement;
  readonly numbered: boolean;
  /** The same statement returning rows as arrays (prepared on first use). */
  rawStatement?: Database.Statement;
}

const NUMBERED = /\?(\d+)/g;

function bindings(prepared: Prepared, params: readonly SqlValue[]): unknown[] {
  if (!prepared.numbered) return params as unknown[];
  const named: Record<string, SqlValue> = {};
  for (let i = 0; i < params.length; i++) named[`p${i + 1}`] = params[i]!;
  return [named];
}

/** A prepared-statement cache over one connection, exposed as the async executor interface. */
export class ConnectionExecutor implements SqlExecutor {
  /**
   * Bounded: the statements of the model are few, but $filter and $orderby make new SQL texts,
   * and a cache that kept them all would grow with every distinct query a client sends.
   */
  private readonly statements = new LRUCache<string, Prepared>({ max: STATEMENT_CACHE_SIZE });
  constructor(
    readonly db: Database.Database,
    /** Readers only: the time one synchronous pull of rows may take (see StatementBudget). */
    private readonly budget?: StatementBudget,
  ) {}

  /** One synchronous pull of rows, stopped with StatementBudgetExceeded past the budget. */
  private timed<T>(pull: () => T): T {
    const budget = this.budget;
    if (!budget) return pull();
    budget.arm();
    try {
      return pull();
    } catch (error) {
      if (error instanceof Error && error.message.includes(BUDGET_MESSAGE)) throw new StatementBudgetExceeded(budget.armedMs);
      throw error;
    } finally {
      budget.disarm();
    }
  }

  /** The rows of `rows`, each step of it a pull of its own (the consumer takes turns between them). */
  private *stepped<Row>(rows: IterableIterator<unknown>): Generator<Row> {
    try {
      for (;;) {
        const next = this.timed(() => rows.next());
        if (next.done) return;
        yield next.value as Row;
      }
    } finally {
      rows.return?.();
    }
  }

  private prepare(sql: string): Prepared {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      const numbered = NUMBERED.test(sql);
      NUMBERED.lastIndex = 0;
      const statement = this.db.prepare(numbered ? sql.replace(NUMBERED, '@p$1') : sql);
      if (statement.reader) statement.safeIntegers(true);
      prepared = { statement, numbered };
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  /** A statement whose rows come as arrays; a statement object has one mode, so it is a second one. */
  private prepareRaw(sql: string): Prepared & { rawStatement: Database.Statement } {
    const prepared = this.prepare(sql);
    if (!prepared.rawStatement) {
      prepared.rawStatement = this.db.prepare(prepared.statement.source);
      prepared.rawStatement.safeIntegers(true).raw(true);
    }
    return prepared as Prepared & { rawStatement: Database.Statement };
  }

  async rows(sql: string, params: readonly SqlValue[] = []): Promise<unknown[][]> {
    const p = this.prepareRaw(sql);
    return this.timed(() => p.rawStatement.all(...bindings(p, params)) as unknown[][]);
  }

  async *iterateRows(sql: string, params: readonly SqlValue[] = []): AsyncIterable<unknown[]> {
    const p = this.prepareRaw(sql);
    yield* this.stepped<unknown[]>(p.rawStatement.iterate(...bindings(p, params)));
  }

  async *iterateRowBatches(sql: string, params: readonly SqlValue[], batchRows: number): AsyncIterable<unknown[][]> {
    const p = this.prepareRaw(sql);
    const rows = p.rawStatement.iterate(...bindings(p, params)) as IterableIterator<unknown[]>;
    // Read synchronously up to a batch, one budgeted pull: a consumer that stops early ends this
    // loop at a yield, and the finally block then ends the statement.
    let done = false;
    try {
      while (!done) {
        const batch = this.timed(() => {
          const pulled: unknown[][] = [];
          while (pulled.length < batchRows) {
            const next = rows.next();
            if (next.done) {
              done = true;
              break;
            }
            pulled.push(next.value);
          }
          return pulled;
        });
        if (batch.length > 0) yield batch;
      }
    } finally {
      rows.return?.();
    }
  }

  async all<Row>(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    const p = this.prepare(sql);
    return this.timed(() => p.statement.all(...bindings(p, params)) as Row[]);
  }

  async get<Row>(sql: string, params: readonly SqlValue[] = []): Promise<Row | undefined> {
    return this.getNow<Row>(sql, params);
  }

  /** get(), answered at once: for the store's own steps that run synchronously anyway. */
  getNow<Row>(sql: string, params: readonly SqlValue[] = []): Row | undefined {
    const p = this.prepare(sql);
    return this.timed(() => p.statement.get(...bindings(p, params)) as Row | undefined);
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<RunResult> {
    const p = this.prepare(sql);
    // A statement that returns rows (INSERT … RETURNING) cannot use run(); step it instead.
    if (p.statement.reader) return { changes: p.statement.all(...bindings(p, params)).length };
    return { changes: p.statement.run(...bindings(p, params)).changes };
  }

  async *iterate<Row>(sql: string, params: readonly SqlValue[] = []): AsyncIterable<Row> {
    const p = this.prepare(sql);
    yield* this.stepped<Row>(p.statement.iterate(...bindings(p, params)));
  }
}

export function openConnection(file: string, mmapBytes: number): Database.Database {
  // Callers get the executor from openExecutor(); this only opens and checks the connection.
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // Pages read through a memory map instead of a read() each: see SqliteOptions.mmapBytes.
  if (mmapBytes > 0) db.pragma(`mmap_size = ${Math.floor(mmapBytes)}`);
  // Read the settings back: a build or file system that silently ignores them must not start.
  const journal = String(db.pragma('journal_mode', { simple: true }));
  const synchronous = Number(db.pragma('synchronous', { simple: true }));
  const foreignKeys = Number(db.pragma('foreign_keys', { simple: true }));
  if (journal.toLowerCase() !== 'wal') throw new Error(`SQLite journal_mode is ${journal}, expected wal`);
  if (synchronous !== 2) throw new Error(`SQLite synchronous is ${synchronous}, expected 2 (FULL)`);
  if (foreignKeys !== 1) throw new Error('SQLite foreign_keys could not be switched on');
  return db;
}

/** A connection and its executor; a reader's statements are held to `readBudgetMs` (0: no budget). */
export function openExecutor(file: string, mmapBytes: number, readBudgetMs?: number): { db: Database.Database; executor: ConnectionExecutor } {
  const db = openConnection(file, mmapBytes);
  const budget = readBudgetMs === undefined ? undefined : new StatementBudget(readBudgetMs);
  registerFunctions(db, budget);
  return { db, executor: new ConnectionExecutor(db, budget) };
}

