/** A Responder that writes to the socket of a node:http response, compressed where negotiated. */
import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { odataHeaders, type BodyStream, type Reply, type Responder, type StreamHead } from '../service/responder';
import type { ProtocolVersion } from '../odata/negotiate';
import { answerStarted, codingOf, compressor, compressWhole, negotiatedFor, setCompressing, type Coding, type Compressor, type Negotiated } from './compression';

/**
 * The header lines of a whole answer as the flat list writeHead() takes: the OData headers, the
 * reply's own, then the body's type and length, then `extra` (the coding's). A name given again
 * (in any case) replaces the earlier line, as setHeader() would. writeHead() with a list stores
 * nothing per header before the head is written; setHeader() per header showed as 3% of a GET's
 * CPU profile.
 */
function headerLines(reply: Reply, bodyLength: number | undefined, extra?: Readonly<Record<string, string>>): string[] {
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
  if (extra) for (const name in extra) put(name, extra[name]!);
  return lines;
}

/**
 * The headers that say how an answer was coded. Vary goes on every answer to a request that
 * sent Accept-Encoding, identity ones too: another Accept-Encoding could have got another body.
 * (Answers to requests without one carry no Vary: they are what they always were, and a cache
 * that keeps one serves identity, which every client accepts unless it said identity;q=0.)
 */
function codingHeaders(coding: Coding): Record<string, string> {
  return coding === 'identity' ? { Vary: 'Accept-Encoding' } : { 'Content-Encoding': coding, Vary: 'Accept-Encoding' };
}

/** odataHeaders() of each version as header lines, worked out once. */
const odataLinesByVersion = new Map<ProtocolVersion, readonly string[]>();
function odataHeaderLines(version: ProtocolVersion): readonly string[] {
  let lines = odataLinesByVersion.get(version);
  if (lines === undefined) odataLinesByVersion.set(version, (lines = Object.entries(odataHeaders(version)).flat()));
  return lines;
}

/**
 * Writes to the socket; a streamed body waits for 'drain' when the socket buffer is full. With a
 * coding negotiated (server/compression.ts) a whole body is compressed on the thread pool before
 * its head goes out, and a streamed one passes through a zlib stream flushed at each piece.
 */
export class HttpResponder implements Responder {
  private readonly negotiated: Negotiated | undefined;

  /**
   * Whether the client is gone: a stream must then end at once, not wait for a 'drain' that never
   * comes, holding its database connection for good. Read from the response itself, which also
   * tells a responder made after 'close' fired (the client hung up while the request waited for
   * its credentials or a connection), and needs no listener on every response.
   */
  private get gone(): boolean {
    return this.res.closed || this.res.destroyed;
  }

  /** @param sendTimeoutMs how long a streamed write may wait for the client to take it (see Limits). */
  constructor(
    private readonly res: ServerResponse,
    private readonly sendTimeoutMs = 30_000,
  ) {
    this.negotiated = negotiatedFor(res);
  }

  get started(): boolean {
    return answerStarted(this.res);
  }

  send(reply: Reply): void {
    const res = this.res;
    if (answerStarted(res)) return;
    const negotiated = this.negotiated;
    if (reply.body === undefined) {
      // Without a body node:http frames the answer (no length on a 204 or 304, a length of 0
      // otherwise) only when it writes the head itself, at end().
      const lines = headerLines(reply, undefined, negotiated ? codingHeaders('identity') : undefined);
      res.statusCode = reply.status;
      for (let i = 0; i < lines.length; i += 2) res.setHeader(lines[i]!, lines[i + 1]!);
      res.end();
      return;
    }
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body, 'utf8') : reply.body;
    const coding = negotiated ? codingOf(negotiated, reply.contentType, body.length) : 'identity';
    if (coding === 'identity') {
      res.writeHead(reply.status, headerLines(reply, body.length, negotiated ? codingHeaders('identity') : undefined));
      res.end(body);
      return;
    }
    setCompressing(res, true);
    compressWhole(coding, body, negotiated!.level, (error, compressed) => {
      setCompressing(res, false);
      if (this.gone || res.headersSent) return;
      // zlib fails on a whole buffer only when it cannot allocate: nothing can be answered then.
      if (error) return void res.destroy(error);
      res.writeHead(reply.status, headerLines(reply, compressed.length, codingHeaders(coding)));
      res.end(compressed);
    });
  }

  stream(head: StreamHead): BodyStream {
    const res = this.res;
    res.statusCode = head.status;
    for (const [name, value] of Object.entries(odataHeaders(head.version))) res.setHeader(name, value);
    if (head.headers) for (const [name, value] of Object.entries(head.headers)) res.setHeader(name, value);
    res.setHeader('Content-Type', head.contentType);
    const negotiated = this.negotiated;
    const coding = negotiated ? codingOf(negotiated, head.contentType, undefined) : 'identity';
    if (negotiated) for (const [name, value] of Object.entries(codingHeaders(coding))) res.setHeader(name, value);
    if (coding === 'identity') return this.plainStream();
    return this.compressedStream(compressor(coding, negotiated!.level));
  }

  /** The body as written: each piece to the socket. */
  private plainStream(): BodyStream {
    const res = this.res;
    return {
      write: (chunk: Buffer): Promise<void> => {
        if (this.gone) return Promise.reject(goneError());
        if (res.write(chunk)) return Promise.resolve();
        return this.whenTaken((taken) => {
          res.once('drain', taken);
          return () => res.off('drain', taken);
        });
      },
      end(chunk?: Buffer): void {
        res.end(chunk);
      },
    };
  }

  /**
   * The body through `zlib` to the socket. Each piece the writer hands over (ChunkedOutput's
   * buffers of 128 KiB: about one page of a connector's products) is compressed with a sync flush, so
   * the client can decode all of it as soon as zlib has passed it on, not only when the answer
   * ends. zlib works on the thread pool while the writer makes the next pieces: a write resolves
   * at once while fewer than PIECES_AHEAD pieces wait in zlib, and otherwise when the oldest of
   * them is through. zlib takes a piece only while the socket takes its output (pipeline's
   * back-pressure), so a slow client holds the writer back as it does without compression, and
   * memory stays bounded by those few pieces.
   */
  private compressedStream(z: Compressor): BodyStream {
    const res = this.res;
    // Ends the response when zlib ends; destroys zlib when the client goes away.
    pipeline(z, res, () => {});
    const waiting: Promise<void>[] = [];
    return {
      write: (chunk: Buffer): Promise<void> => {
        if (this.gone) return Promise.reject(goneError());
        // Compressed and flushed in one call (the compressor's default flush, see compressor()).
        waiting.push(new Promise<void>((through) => z.write(chunk, () => through())));
        // A turn of the event loop (not a resolved promise) lets zlib's callback for the previous
        // piece run, which starts its next piece on the thread pool: the writer makes its pages
        // synchronously, so without the turn zlib waited idle until the writer was held back.
        if (waiting.length <= PIECES_AHEAD) return new Promise<void>((next) => setImmediate(next));
        const oldest = waiting.shift()!;
        return this.whenTaken((taken) => {
          let wanted = true;
          void oldest.then(() => {
            if (wanted) taken();
          });
          return () => {
            wanted = false;
          };
        });
      },
      end(chunk?: Buffer): void {
        z.end(chunk);
      },
    };
  }

  /**
   * Waits until `subscribe` reports the piece taken. A client that took nothing for sendTimeoutMs
   * is cut off and the stream ended, which frees what it holds (not through 'close', which may
   * have fired already); a client that goes away ends it at once.
   */
  private whenTaken(subscribe: (taken: () => void) => () => void): Promise<void> {
    const res = this.res;
    return new Promise<void>((resolve, reject) => {
      if (this.gone) return reject(goneError());
      let unsubscribe = (): void => {};
      const stalled = setTimeout(() => {
        unsubscribe();
        res.off('close', onClose);
        res.destroy();
        reject(goneError());
      }, this.sendTimeoutMs);
      const onClose = () => {
        clearTimeout(stalled);
        unsubscribe();
        reject(goneError());
      };
      res.once('close', onClose);
      unsubscribe = subscribe(() => {
        clearTimeout(stalled);
        res.off('close', onClose);
        resolve();
      });
    });
  }
}

const goneError = () => new Error('the client went away');

/**
 * Pieces a compressed stream's writer may be ahead of zlib. Two let the writer make the next
 * page while zlib compresses the last, so the two overlap; more would only hold more memory.
 */
const PIECES_AHEAD = 2;
