/** A Responder that writes to the socket of a node:http response. */
import type { ServerResponse } from 'node:http';
import { odataHeaders, type BodyStream, type Reply, type Responder, type StreamHead } from '../service/responder';
import type { ProtocolVersion } from '../odata/negotiate';

/**
 * The header lines of a whole answer as the flat list writeHead() takes: the OData headers, the
 * reply's own, then the body's type and length. A name given again (in any case) replaces the
 * earlier line, as setHeader() would. writeHead() with a list stores nothing per header before
 * the head is written; setHeader() per header showed as 3% of a GET's CPU profile.
 */
function headerLines(reply: Reply, bodyLength: number | undefined): string[] {
  const lines = [...odataHeaderLines(reply.version ?? 1)];
  const put = (name: string, value: string): void => {
    for (let i = 0; i < lines.length; i += 2) {
      const held = lines[i]!;
      if (held.length === name.length && (held === name || held.toLowerCase() === name.toLowerCase())) {
        lines.splice(i, 2);
        break;
      }
    }
    lines.push(name, value);
  };
  if (reply.headers) for (const name in reply.headers) put(name, reply.headers[name]!);
  if (bodyLength !== undefined) {
    if (reply.contentType) put('Content-Type', reply.contentType);
    put('Content-Length', String(bodyLength));
  }
  return lines;
}

/** odataHeaders() of each version as header lines, worked out once. */
const odataLinesByVersion = new Map<ProtocolVersion, readonly string[]>();
function odataHeaderLines(version: ProtocolVersion): readonly string[] {
  let lines = odataLinesByVersion.get(version);
  if (lines === undefined) odataLinesByVersion.set(version, (lines = Object.entries(odataHeaders(version)).flat()));
  return lines;
}

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
    if (reply.body === undefined) {
      // Without a body node:http frames the answer (no length on a 204 or 304, a length of 0
      // otherwise) only when it writes the head itself, at end().
      const lines = headerLines(reply, undefined);
      res.statusCode = reply.status;
      for (let i = 0; i < lines.length; i += 2) res.setHeader(lines[i]!, lines[i + 1]!);
      res.end();
      return;
    }
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : reply.body;
    res.writeHead(reply.status, headerLines(reply, body.length));
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
