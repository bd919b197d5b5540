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
