/** The one way an error becomes an answer, over HTTP and inside a $batch alike. */
import { renderError, ODataError, type ErrorFormat } from '../odata/errors';
import type { Reply } from './responder';

/** An OData error in the requested format; faults are answered with their request id only. */
export function errorReply(error: unknown, format: ErrorFormat, requestId: string): Reply {
  const known = error instanceof ODataError;
  const status = known ? error.status : 500;
  const message = known ? error.message : `An internal error occurred. Quote request id ${requestId} when reporting it.`;
  const rendered = renderError(format, known ? error.code : '', message);
  return { status, contentType: rendered.contentType, body: rendered.body, headers: known ? error.headers : {} };
}
