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
