/** Errors the operator can act on: the command prints them plainly, without a stack trace. */
export class ConfigurationError extends Error {}

/** The database server cannot be reached, or refuses the configured role or database. */
export class DatabaseUnavailableError extends ConfigurationError {}

/**
 * Another process (an operator's sqlite3, a backup tool) held SQLite's write lock for longer than
 * the busy timeout: the write was not attempted. Nothing is wrong with the request; it may be sent
 * again later.
 */
export class WriterBusyError extends Error {
  constructor(readonly waitedMs: number) {
    super(`the database's write lock stayed held by another connection for ${waitedMs} ms`);
  }
}

/**
 * Every pooled connection stayed busy for as long as a request may wait for one
 * (DATABASE_POOL_WAIT_MS): the service is overloaded, not broken. Answered 503 with Retry-After,
 * so that the client tries again later instead of every request queueing without bound.
 */
export class StoreBusyError extends Error {
  constructor(
    readonly waitedMs: number,
    /** When a retry has a fair chance: about as long as the wait that failed. */
    readonly retryAfterSeconds: number = Math.max(1, Math.ceil(waitedMs / 1000)),
  ) {
    super(`No database connection became free within ${waitedMs} ms`);
  }
}

/**
 * A read statement ran past its time budget (SQLITE_READ_BUDGET_MS on SQLite, the read's
 * statement_timeout on PostgreSQL) and was stopped: its cost is the request's own (the expression
 * over the account's rows), so it is answered 400 naming the budget, not retried.
 */
export class StatementBudgetExceeded extends Error {
  /** Named, so that an error rebuilt from a worker thread's report (sqlite/worker-reads.ts) is told apart. */
  override readonly name = 'StatementBudgetExceeded';
  constructor(readonly budgetMs: number) {
    super(`A read statement ran past its time budget of ${budgetMs} ms`);
  }
}
