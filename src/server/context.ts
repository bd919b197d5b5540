/** What every handler knows about the request it serves. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

export interface RequestContext {
  /** Names the request in the log and in 500 answers. */
  readonly id: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The path as sent (not yet percent-decoded), without the query. */
  readonly path: string;
  /** The raw query string without '?', '' when there is none. */
  readonly query: string;
  readonly clientAddress: string;
  readonly log: Logger;
}

export type Handler = (ctx: RequestContext, rest: string) => Promise<void>;

/** A request header's value (the first, when it was sent more than once). */
export function headerOf(ctx: RequestContext, name: string): string | undefined {
  const value = ctx.req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The media type of the request body, lower-case and without parameters ('' when absent). */
export function bodyMediaType(ctx: RequestContext): string {
  return (headerOf(ctx, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}
