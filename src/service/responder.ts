/**
 * Where a resource handler writes its answer. Over HTTP that is the socket (server/http-responder.ts);
 * inside a $batch it is one part of the multipart answer. Handlers write through this interface only, so the same
 * handler serves both. OData headers (DataServiceVersion, Cache-Control) are added here so that
 * no answer can miss them.
 */
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

  /** Forgets the answer held: a changeset that runs again (WriteOptions.repeatable) renders each anew. */
  clear(): void {
    this.status = 0;
    this.headers = {};
    this.chunks = [];
    this.done = false;
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
