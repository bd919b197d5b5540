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

/**
 * How far a request got when its database connection failed (a failover, a restart, a network
 * cut): the answer it gets (service/error-reply.ts) says what became of its work.
 * - 'connect': no server took a connection within the failover wait (DATABASE_FAILOVER_WAIT_MS);
 *   nothing was sent.
 * - 'transaction': the connection broke before the transaction's COMMIT was sent: nothing of it
 *   was kept.
 * - 'commit': the connection broke after the COMMIT was sent and before its answer came: the
 *   write may or may not be stored. Never answered as a success.
 */
export type ConnectionLostAt = 'connect' | 'transaction' | 'commit';

/**
 * The database could not be reached, or the connection a request ran on was lost. Not the
 * client's fault and not a fault of ours either: answered 503 with Retry-After, so that the
 * client sends the request again once the database (or its new primary) answers.
 */
export class DatabaseUnreachableError extends Error {
  override readonly name = 'DatabaseUnreachableError';
  constructor(
    readonly at: ConnectionLostAt,
    /** When a retry has a fair chance: about as long as a request waits for a server. */
    readonly retryAfterSeconds: number,
    /** What the driver or the server said (logged, never answered). */
    readonly reason: string,
  ) {
    super(`The database connection was lost (${at}): ${reason}`);
  }
}
