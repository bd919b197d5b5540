/**
 * The one way an error becomes an answer, over HTTP and inside a $batch alike. An ODataError is
 * answered as it is; errors of the layers below that are not the client's fault but not ours
 * either are mapped here (KNOWN_ERRORS); anything else is a fault, answered as a 500 that names
 * only the request id.
 */
import { renderError, ODataError, type ErrorFormat } from '../odata/errors';
import { EntityMissing, RuleViolation, type ViolationKind } from '../model/rule-violation';
import { entityNotFound } from '../odata/not-found';
import { DatabaseUnreachableError, StatementBudgetExceeded, StoreBusyError, WriterBusyError, type ConnectionLostAt } from '../store/errors';
import type { Reply } from './responder';

/** Seconds a client should wait before sending a write again that found the writer busy. */
export const BUSY_RETRY_AFTER_S = 5;

/** The status of each kind of broken rule. */
const VIOLATION_STATUS: Readonly<Record<ViolationKind, number>> = { invalid: 400, conflict: 409, notFound: 404 };

/**
 * What a client is told when the database connection failed (a failover, a restart): what
 * became of its request, and what to do. Every one is a 503 with Retry-After.
 */
const CONNECTION_LOST: Readonly<Record<ConnectionLostAt, string>> = {
  connect: 'The database is unavailable (it may be switching to a standby server); nothing was done. Send the request again in a few seconds.',
  transaction: 'The connection to the database was lost before the request completed; no change was committed. Send the request again in a few seconds.',
  commit:
    'The connection to the database was lost while the change was being committed: it may or may not have been stored. ' +
    'Send the request again in a few seconds; a POST sent again with the same Idempotency-Key is stored at most once, and other writes should be checked first.',
};

/** Errors of the layers below, as the answer they get. */
const KNOWN_ERRORS: readonly ((error: unknown) => ODataError | undefined)[] = [
  // WCF's wording for a missing entity, which clients match on.
  (error) => (error instanceof EntityMissing ? entityNotFound(error.type, error.id) : undefined),
  (error) => (error instanceof RuleViolation ? new ODataError(VIOLATION_STATUS[error.kind], error.message) : undefined),
  (error) =>
    error instanceof WriterBusyError
      ? new ODataError(503, `The service could not write for ${error.waitedMs} ms because the database was busy; nothing was written. Send the request again in a few seconds.`, '', {
          'Retry-After': String(BUSY_RETRY_AFTER_S),
        })
      : undefined,
  (error) =>
    error instanceof StatementBudgetExceeded
      ? new ODataError(
          400,
          `The query ran longer than its time budget of ${error.budgetMs} ms and was stopped; nothing was answered. ` +
            'Narrow it: a $filter on keys or dates, fewer text functions, or $top and $skip.',
        )
      : undefined,
  // Overload is the client's to retry, not a fault.
  (error) =>
    error instanceof StoreBusyError
      ? new ODataError(503, 'The service is busy: every database connection is in use. Try again shortly.', '', { 'Retry-After': String(error.retryAfterSeconds) })
      : undefined,
  // A failover or a restart of the database: the client's to retry once a primary answers.
  (error) =>
    error instanceof DatabaseUnreachableError ? new ODataError(503, CONNECTION_LOST[error.at], '', { 'Retry-After': String(error.retryAfterSeconds) }) : undefined,
];

/** The OData error an error is answered with; undefined for a fault. */
export function answerableError(error: unknown): ODataError | undefined {
  if (error instanceof ODataError) return error;
  for (const map of KNOWN_ERRORS) {
    const mapped = map(error);
    if (mapped) return mapped;
  }
  return undefined;
}

/** An OData error in the requested format; faults are answered with their request id only. */
export function errorReply(error: unknown, format: ErrorFormat, requestId: string): Reply {
  const known = answerableError(error);
  const status = known ? known.status : 500;
  const message = known ? known.message : `An internal error occurred. Quote request id ${requestId} when reporting it.`;
  const rendered = renderError(format, known ? known.code : '', message);
  return { status, contentType: rendered.contentType, body: rendered.body, headers: known ? known.headers : {} };
}
