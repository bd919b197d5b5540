/** Whole responses on a ServerResponse, and the one way an error becomes an answer. */
import type { ServerResponse } from 'node:http';
import type { ErrorFormat } from '../odata/errors';
import { errorReply } from '../service/error-reply';
import type { Reply } from '../service/responder';
import { HttpResponder } from './http-responder';

export function send(res: ServerResponse, reply: Reply): void {
  new HttpResponder(res).send(reply);
}

export function sendError(res: ServerResponse, error: unknown, format: ErrorFormat, requestId: string): void {
  send(res, errorReply(error, format, requestId));
}
