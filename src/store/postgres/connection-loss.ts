/**
 * Which failures mean "the database connection is gone, or leads nowhere useful", as opposed to
 * an error of the statement itself. A failover produces all of these: the old primary's
 * backends end (57P01 admin shutdown, 57P02 crash shutdown, or the socket simply closes), a
 * balancer with no primary behind it accepts and closes, a node that is starting or shutting
 * down refuses (57P03), and a connection made just before the balancer noticed the switch may
 * reach a standby that refuses writes (25006: counted only for writes, since the store's own
 * read-only transactions refuse writes with the same code). The store turns them into a
 * DatabaseUnreachableError (a 503 with Retry-After), never into a fault.
 */
import { DatabaseUnreachableError, type ConnectionLostAt } from '../errors';

/**
 * node-pg rejects a statement so when its connection had failed before it was sent: the server
 * never saw it.
 */
const NOT_QUERYABLE = 'Client has encountered a connection error and is not queryable';

/** node-pg's messages for a connection that ended under it (client.js). */
const LOST_MESSAGES = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Connection terminated due to connection timeout',
  NOT_QUERYABLE,
  'Client was closed and is not queryable',
]);

/** Socket errors of connecting or of a connection that broke. */
const LOST_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going away, not there yet, or not the primary:
 * 57P01 admin_shutdown (pg_terminate_backend, a fast shutdown, Patroni demoting the node),
 * 57P02 crash_shutdown (another backend crashed), 57P03 cannot_connect_now (starting up,
 * shutting down, in recovery), 53300 too_many_connections (a node just promoted, flooded by
 * every client at once).
 */
const LOST_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** read_only_sql_transaction: in a read-write transaction, the server is a standby. */
const STANDBY_REFUSES_WRITE = '25006';

/**
 * Whether `error` says the connection is lost or useless, rather than that a statement failed.
 * `writing`: it came from a read-write transaction (or a directory write), where a refusal to
 * write means the server is a standby.
 */
export function isConnectionLoss(error: unknown, writing = false): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof DatabaseUnreachableError || LOST_MESSAGES.has(error.message)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  if (code === STANDBY_REFUSES_WRITE) return writing;
  // Class 08: connection exception (08000, 08003, 08006, 08001…).
  return LOST_SOCKET_CODES.has(code) || LOST_SQLSTATES.has(code) || code.startsWith('08');
}

/** Whether the statement that failed so was never sent (its connection had failed already). */
export function neverSent(error: unknown): boolean {
  return error instanceof Error && error.message === NOT_QUERYABLE;
}

/**
 * The error a caller of the store gets: a connection loss as a DatabaseUnreachableError (one
 * made already is kept, with what it knows of the COMMIT), anything else unchanged.
 */
export function asUnreachable(error: unknown, at: ConnectionLostAt, retryAfterSeconds: number, writing = false): unknown {
  if (error instanceof DatabaseUnreachableError || !isConnectionLoss(error, writing)) return error;
  return new DatabaseUnreachableError(at, retryAfterSeconds, describe(error));
}

export function describe(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  return typeof e.code === 'string' ? `${e.code}: ${String(e.message)}` : String(e.message);
}

/**
 * The error of a COMMIT that went out on a connection which then broke: whether it was applied
 * cannot be known (the server may have committed and died before answering, or a synchronous
 * standby may not have confirmed it), so the write is reported as of unknown outcome, never as
 * done. Undefined for any other failure (the COMMIT was never sent, or the server answered it).
 */
export function lostDuringCommit(error: unknown, retryAfterSeconds: number): DatabaseUnreachableError | undefined {
  if (error instanceof DatabaseUnreachableError) return error.at === 'commit' ? error : undefined;
  if (!isConnectionLoss(error) || neverSent(error)) return undefined;
  return new DatabaseUnreachableError('commit', retryAfterSeconds, describe(error));
}
