/** A Responder that writes to the socket of a node:http response. */
import type { ServerResponse } from 'node:http';
import { odataHeaders, type BodyStream, type Reply, type Responder, type StreamHead } from '../service/responder';

/** Writes to the socket; a streamed body waits for 'drain' when the socket buffer is full. */
export class HttpResponder implements Responder {
  /** Set by 'close': a client that went away must end a stream at once, not leave it waiting for 'drain'. */
  private closed = false;

  /**
   * Whether the client is gone. 'close' alone does not tell: a responder made after it fired (the
   * client hung up while the request waited for its credentials or a connection) never hears it,
   * and would wait for a 'drain' that never comes, holding its database connection for good.
   */
  private get gone(): boolean {
    return this.closed || this.res.destroyed;
  }

  /** @param sendTimeoutMs how long a streamed write may wait for the client to take it (see Limits). */
  constructor(
    private readonly res: ServerResponse,
    private readonly sendTimeoutMs = 30_000,
  ) {
    res.once('close', () => {
      this.closed = true;
    });
  }

  get started(): boolean {
    return this.res.headersSent;
  }

  send(reply: Reply): void {
    const res = this.res;
    if (res.headersSent) return;
    res.statusCode = reply.status;
    for (const [name, value] of Object.entries(odataHeaders(reply.version))) res.setHeader(name, value);
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

  stream(head: StreamHead): BodyStream {
    const res = this.res;
    res.statusCode = head.status;
    for (const [name, value] of Object.entries(odataHeaders(head.version))) res.setHeader(name, value);
    if (head.headers) for (const [name, value] of Object.entries(head.headers)) res.setHeader(name, value);
    res.setHeader('Content-Type', head.contentType);
    const gone = () => new Error('the client went away');
    return {
      write: (chunk: Buffer): Promise<void> => {
        if (this.gone) return Promise.reject(gone());
        if (res.write(chunk)) return Promise.resolve();
        return new Promise<void>((resolve, reject) => {
          if (this.gone) return reject(gone());
          const stalled = setTimeout(() => {
            // The client took nothing for sendTimeoutMs: cut it off and end the stream, which
            // frees what it holds (not through 'close', which may have fired already).
            res.off('drain', onDrain);
            res.off('close', onClose);
            res.destroy();
            reject(gone());
          }, this.sendTimeoutMs);
          const onDrain = () => {
            clearTimeout(stalled);
            res.off('close', onClose);
            resolve();
          };
          const onClose = () => {
            clearTimeout(stalled);
            res.off('drain', onDrain);
            reject(gone());
          };
          res.once('drain', onDrain);
          res.once('close', onClose);
        });
      },
      end(chunk?: Buffer): void {
        res.end(chunk);
      },
    };
  }
}
