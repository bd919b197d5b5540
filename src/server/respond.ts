/** Whole responses on a ServerResponse, and the one way an error becomes an answer. */
import type { ServerResponse } from 'node:http';
import { renderError, ODataError, type ErrorFormat } from '../odata/errors';
import { HttpResponder, type Reply } from './responder';
import { StoreBusyError } from '../store/errors';

export type { Reply } from './responder';

export function send(res: ServerResponse, reply: Reply): void {
  new HttpResponder(res).send(reply);
}

/** An OData error in the requested format; faults are answered with their request id only. */
export function errorReply(thrown: unknown, format: ErrorFormat, requestId: string): Reply {
  const error = thrown instanceof StoreBusyError ? busy(thrown) : thrown;
  const known = error instanceof ODataError;
  const status = known ? error.status : 500;
  const message = known ? error.message : `An internal error occurred. Quote request id ${requestId} when reporting it.`;
  const rendered = renderError(format, known ? error.code : '', message);
  return { status, contentType: rendered.contentType, body: rendered.body, headers: known ? error.headers : {} };
}

export function sendError(res: ServerResponse, error: unknown, format: ErrorFormat, requestId: string): void {
  send(res, errorReply(error, format, requestId));
}

/** Overload is the client's to retry, not a fault: 503 with Retry-After, in the request's format. */
function busy(error: StoreBusyError): ODataError {
  return new ODataError(503, 'The service is busy: every database connection is in use. Try again shortly.', '', {
    'Retry-After': String(error.retryAfterSeconds),
  });
}
