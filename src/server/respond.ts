/** Whole responses on a ServerResponse, and the one way an error becomes an answer. */
import type { ServerResponse } from 'node:http';
import { renderError, ODataError, type ErrorFormat } from '../odata/errors';
import { HttpResponder, type Reply } from '../service/responder';

export type { Reply } from '../service/responder';

export function send(res: ServerResponse, reply: Reply): void {
  new HttpResponder(res).send(reply);
}

/** An OData error in the requested format; faults are answered with their request id only. */
export function errorReply(error: unknown, format: ErrorFormat, requestId: string): Reply {
  const known = error instanceof ODataError;
  const status = known ? error.status : 500;
  const message = known ? error.message : `An internal error occurred. Quote request id ${requestId} when reporting it.`;
  const rendered = renderError(format, known ? error.code : '', message);
  return { status, contentType: rendered.contentType, body: rendered.body, headers: known ? error.headers : {} };
}

export function sendError(res: ServerResponse, error: unknown, format: ErrorFormat, requestId: string): void {
  send(res, errorReply(error, format, requestId));
}
