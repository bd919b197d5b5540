/** Writing whole responses. OData headers are added here so that no answer can miss them. */
import type { ServerResponse } from 'node:http';
import { renderError, ODataError, type ErrorFormat } from '../odata/errors';
import { versionHeader, type ProtocolVersion } from '../odata/negotiate';

export interface Reply {
  readonly status: number;
  readonly contentType?: string;
  readonly body?: string | Buffer;
  readonly version?: ProtocolVersion;
  readonly headers?: Readonly<Record<string, string>>;
}

export function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent) return;
  res.statusCode = reply.status;
  res.setHeader('DataServiceVersion', versionHeader(reply.version ?? 1));
  res.setHeader('Cache-Control', 'no-cache');
  if (reply.headers) for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  if (reply.body === undefined) {
    res.end();
    return;
  }
  const body = typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : reply.body;
  if (reply.contentType) res.setHeader('Content-Type', reply.contentType);
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

/** An OData error in the requested format; faults are answered with their request id only. */
export function sendError(res: ServerResponse, error: unknown, format: ErrorFormat, requestId: string): void {
  const known = error instanceof ODataError;
  const status = known ? error.status : 500;
  const message = known ? error.message : `An internal error occurred. Quote request id ${requestId} when reporting it.`;
  const rendered = renderError(format, known ? error.code : '', message);
  send(res, { status, contentType: rendered.contentType, body: rendered.body, headers: known ? error.headers : {} });
}
