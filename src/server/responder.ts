/**
 * Where a resource handler writes its answer. Over HTTP that is the socket; inside a $batch it
 * is one part of the multipart answer. Handlers write through this interface only, so the same
 * handler serves both. OData headers (DataServiceVersion, Cache-Control) are added here so that
 * no answer can miss them.
 */
import type { ServerResponse } from 'node:http';
import { versionHeader, type ProtocolVersion } from '../odata/negotiate';

export interface Reply {
  readonly status: number;
  readonly contentType?: string;
  readonly body?: string | Buffer;
  readonly version?: ProtocolVersion;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface StreamHead {
  readonly status: number;
  readonly contentType: string;
  readonly version: ProtocolVersion;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A response body written in pieces. */
export interface BodyStream {
  /** Resolves when the receiver can take more (back-pressure); rejects when it went away. */
  write(chunk: Buffer): Promise<void>;
  end(chunk?: Buffer): void;
}

export interface Responder {
  /** A whole response at once. */
  send(reply: Reply): void;
  /** Starts a streamed response; its headers are final. */
  stream(head: StreamHead): BodyStream;
  /** Whether the head has gone out (an error after it cannot be answered with a status). */
  readonly started: boolean;
}

/** Headers every OData answer carries. */
export function odataHeaders(version: ProtocolVersion | undefined): Record<string, string> {
  return { DataServiceVersion: versionHeader(version ?? 1), 'Cache-Control': 'no-cache' };
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

/** Collects a whole response in memory: one part of a $batch answer. */
export class BufferedResponder implements Responder {
  status = 0;
  headers: Record<string, string> = {};
  private chunks: Buffer[] = [];
  private done = false;

  get started(): boolean {
    return this.status !== 0;
  }

  get finished(): boolean {
    return this.done;
  }

  get body(): Buffer {
    return Buffer.concat(this.chunks);
  }

  send(reply: Reply): void {
    if (this.started) return;
    this.status = reply.status;
    this.headers = { ...odataHeaders(reply.version), ...(reply.headers ?? {}) };
    if (reply.body !== undefined) {
      if (reply.contentType) this.headers['Content-Type'] = reply.contentType;
      this.chunks.push(typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : reply.body);
    }
    this.done = true;
  }

  stream(head: StreamHead): BodyStream {
    this.status = head.status;
    this.headers = { ...odataHeaders(head.version), ...(head.headers ?? {}), 'Content-Type': head.contentType };
    return {
      write: async (chunk: Buffer) => {
        this.chunks.push(chunk);
      },
      end: (chunk?: Buffer) => {
        if (chunk) this.chunks.push(chunk);
        this.done = true;
      },
    };
  }
}
