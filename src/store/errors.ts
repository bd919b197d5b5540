/** Errors the operator can act on: the command prints them plainly, without a stack trace. */
export class ConfigurationError extends Error {}

/** The database server cannot be reached, or refuses the configured role or database. */
export class DatabaseUnavailableError extends ConfigurationError {}
