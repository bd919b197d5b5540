/**
 * Response compression: which content coding an answer goes out in, chosen once per request from
 * its Accept-Encoding, and the zlib streams that do the work. The Negotiator library ranks the
 * codings by their q-values (it also treats identity as acceptable unless `identity;q=0` or
 * `*;q=0` says otherwise); this module decides what the service offers and when a body is worth
 * compressing. Answers to a request without Accept-Encoding are left exactly as they were: no
 * choice is recorded for them, and the responder then writes what it always wrote.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import Negotiator from 'negotiator';
import type { CompressionConfig } from '../config';

/** The codings the service can answer in; identity is the body as it is. */
export type Coding = 'br' | 'gzip' | 'deflate' | 'identity';

/**
 * Ties between equal q-values go this way. Brotli first: at its lowest qualities it compresses the
 * connector's JSON better than gzip at level 1 for less CPU (docs/protocol.md, "Compression").
 */
const OFFERED: readonly Coding[] = ['br', 'gzip', 'deflate', 'identity'];

/**
 * Brotli's quality for every answer: 1, the fastest, took about a third less CPU than gzip at
 * level 1 on the export and made it smaller. Its window is 256 KiB (lgwin 18) rather than 4 MiB,
 * so that an answer compressed at once holds little memory.
 */
const BROTLI_QUALITY = 1;
const BROTLI_WINDOW_BITS = 18;
const brotliOptions = (sizeHint?: number): zlib.BrotliOptions => ({
  params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
    [zlib.constants.BROTLI_PARAM_LGWIN]: BROTLI_WINDOW_BITS,
    [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
    ...(sizeHint !== undefined ? { [zlib.constants.BROTLI_PARAM_SIZE_HINT]: sizeHint } : {}),
  },
});

/** What one request's answers may be sent as, best first, and how hard to compress. */
export interface Negotiated {
  /** Acceptable codings, the client's preference first (never empty). */
  readonly codings: readonly Coding[];
  readonly level: number;
  /** A whole answer shorter than this goes out as identity, when the client accepts identity. */
  readonly minBytes: number;
}

const negotiatedByResponse = new WeakMap<ServerResponse, Negotiated>();
/** Answers whose compression is under way: their head goes out when it is done. */
const compressing = new WeakSet<ServerResponse>();

/**
 * The codings the request's Accept-Encoding allows of those offered, best first: undefined when
 * it sent none (its answers stay as they always were), empty when it refuses every one (406).
 */
export function acceptableCodings(acceptEncoding: string | undefined, enabled: boolean): readonly Coding[] | undefined {
  if (acceptEncoding === undefined) return undefined;
  const offered = enabled ? OFFERED : (['identity'] as const);
  // @types/negotiator describes 0.6, whose encodings() took no options; 1.x takes `preferred`.
  const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }) as unknown as {
    encodings(available: readonly string[], options: { preferred: readonly string[] }): string[];
  };
  return negotiator.encodings(offered, { preferred: offered }) as Coding[];
}

/**
 * Negotiates the request's coding and records it for its response. Returns false when the client
 * accepts none of the codings (the caller answers 406); true otherwise, also when it sent no
 * Accept-Encoding (then nothing is recorded).
 */
export function negotiateCoding(req: IncomingMessage, res: ServerResponse, config: CompressionConfig): boolean {
  const header = req.headers['accept-encoding'];
  const codings = acceptableCodings(Array.isArray(header) ? header.join(',') : header, config.enabled);
  if (codings === undefined) return true;
  if (codings.length === 0) return false;
  // Off (a proxy in front compresses): answers stay identity and say nothing about Accept-Encoding.
  if (!config.enabled) return true;
  negotiatedByResponse.set(res, { codings, level: config.level, minBytes: config.minBytes });
  return true;
}

/** The choice recorded for the response; undefined when the request sent no Accept-Encoding. */
export function negotiatedFor(res: ServerResponse): Negotiated | undefined {
  return negotiatedByResponse.get(res);
}

/**
 * Media types worth compressing: every text format the service writes (Atom, XML, JSON verbose,
 * the multipart $batch answer, plain text and HTML). Anything else (an image, a zip) is most
 * likely compressed already.
 */
const COMPRESSIBLE = /^\s*(text\/|multipart\/mixed|application\/(atom\+xml|atomsvc\+xml|xml|json|javascript))/i;

/**
 * The coding of one answer: the client's first choice when the body is worth compressing (a
 * stream always is; a whole body from minBytes up) or when the client refuses identity; identity
 * otherwise.
 */
export function codingOf(negotiated: Negotiated, contentType: string | undefined, bodyBytes: number | undefined): Coding {
  const first = negotiated.codings[0]!;
  if (first === 'identity') return 'identity';
  const identityAllowed = negotiated.codings.includes('identity');
  if (!identityAllowed) return first;
  if (contentType === undefined || !COMPRESSIBLE.test(contentType)) return 'identity';
  if (bodyBytes !== undefined && bodyBytes < negotiated.minBytes) return 'identity';
  return first;
}

/**
 * A compressing stream for a streamed answer (zlib's work runs on libuv's thread pool). Every
 * write is flushed as it is compressed: the flush is the stream's default flag, so a piece and its
 * flush are one zlib call, one trip to the thread pool and one callback on the event loop, where a
 * write followed by flush() made two of each (the main thread's CPU for the export fell by 0.1 to
 * 0.2 s, docs/operating.md "Compression"). Output comes in buffers of STREAM_CHUNK_BYTES rather than
 * zlib's 16 KiB: a quarter fewer output pieces and about 8% less CPU on a sample of the export. gzip
 * and deflate use memLevel 9 (zlib's largest hash table, 128 KiB more per stream), a few percent
 * less CPU than the default 8 at the same size.
 */
export function compressor(coding: Exclude<Coding, 'identity'>, level: number): Compressor {
  const stream = { flush: syncFlushOf(coding), chunkSize: STREAM_CHUNK_BYTES };
  if (coding === 'br') return zlib.createBrotliCompress({ ...brotliOptions(), ...stream });
  const options = { ...stream, level, memLevel: 9 };
  return coding === 'gzip' ? zlib.createGzip(options) : zlib.createDeflate(options);
}

/** zlib's output buffer for a streamed answer (its default is 16 KiB). */
const STREAM_CHUNK_BYTES = 64 * 1024;

export type Compressor = zlib.Gzip | zlib.Deflate | zlib.BrotliCompress;

/**
 * The flush that makes what a compressor has taken so far decodable (and keeps the stream open):
 * Z_SYNC_FLUSH for gzip and deflate, BROTLI_OPERATION_FLUSH for brotli, whose own constants mean
 * other things (its 2 would end the stream).
 */
function syncFlushOf(coding: Exclude<Coding, 'identity'>): number {
  return coding === 'br' ? zlib.constants.BROTLI_OPERATION_FLUSH : zlib.constants.Z_SYNC_FLUSH;
}

/** A whole body compressed off the event loop (zlib's asynchronous API runs on the thread pool). */
export function compressWhole(coding: Exclude<Coding, 'identity'>, body: Buffer, level: number, done: (error: Error | null, compressed: Buffer) => void): void {
  if (coding === 'br') zlib.brotliCompress(body, brotliOptions(body.length), done);
  else if (coding === 'gzip') zlib.gzip(body, { level }, done);
  else zlib.deflate(body, { level }, done);
}

/** Marks the response as being compressed (its head not yet written) or done with that. */
export function setCompressing(res: ServerResponse, pending: boolean): void {
  if (pending) compressing.add(res);
  else compressing.delete(res);
}

/**
 * Whether the answer is under way: its head was written, or a whole body is being compressed and
 * its head will be. Either way no other answer may start.
 */
export function answerStarted(res: ServerResponse): boolean {
  return res.headersSent || compressing.has(res);
}

/**
 * A whole answer written straight to `res` (the console's pages and files), compressed as the
 * request negotiated: the same choice HttpResponder makes, for answers that are not OData.
 * `headers` names Content-Type and Content-Length in that spelling.
 */
export function sendWhole(res: ServerResponse, status: number, headers: Readonly<Record<string, string>>, body: Buffer): void {
  const negotiated = negotiatedFor(res);
  const coding = negotiated ? codingOf(negotiated, headers['Content-Type'], body.length) : 'identity';
  if (coding === 'identity') {
    res.writeHead(status, negotiated ? { ...headers, Vary: 'Accept-Encoding' } : headers);
    res.end(body);
    return;
  }
  setCompressing(res, true);
  compressWhole(coding, body, negotiated!.level, (error, compressed) => {
    setCompressing(res, false);
    if (res.destroyed || res.headersSent) return;
    if (error) return void res.destroy(error);
    res.writeHead(status, { ...headers, 'Content-Length': String(compressed.length), 'Content-Encoding': coding, Vary: 'Accept-Encoding' });
    res.end(compressed);
  });
}
