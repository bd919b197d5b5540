/**
 * node:http wiring: limits on URL, headers, body and time; a request id; one log line per
 * request; routing by path prefix; and the guarantee that whatever goes wrong the client gets an
 * OData error, never a stack trace or a hung connection.
 */
import http, { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { CompressionConfig, Limits } from '../config';
import { ODataError, notFound, renderError, type ErrorFormat } from '../odata/errors';
import { errorFormatOf } from '../odata/negotiate';
import type { Handler, RequestContext } from './context';
import { sendError } from './respond';
import { answerableError } from '../service/error-reply';
import { quote } from '../odata/quote';
import { answerStarted, negotiateCoding } from './compression';

export interface Route {
  /** Lower-case path prefix, matched case-insensitively. */
  readonly prefix: string;
  readonly handler: Handler;
}

let requestCounter = 0;
const requestIdPrefix = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
const nextRequestId = () => `${requestIdPrefix}-${(++requestCounter).toString(36)}`;

/** The $format option of a raw query string, for choosing the format of an early error. */
function formatParam(query: string): string | undefined {
  if (!query.includes('format')) return undefined;
  return new URLSearchParams(query).get('$format') ?? undefined;
}

/** The format an error answers in, from Accept and $format; a malformed one still gets its error, as XML. */
function errorFormatFor(accept: string | undefined, query: string): ErrorFormat {
  try {
    return errorFormatOf(accept, formatParam(query));
  } catch {
    return 'xml';
  }
}

/**
 * Whether the request carries more than one Host header field. RFC 9112 §3.2: a server MUST
 * answer 400 to such a request. node:http keeps only the first in req.headers, so the raw list
 * is counted; a proxy in front could have routed by the other one.
 */
function hasRepeatedHost(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

function matchRoute(routes: readonly Route[], path: string): { route: Route; rest: string } | undefined {
  const lower = path.toLowerCase();
  for (const route of routes) {
    if (lower === route.prefix || lower.startsWith(route.prefix + '/') || lower.startsWith(route.prefix + '(')) {
      return { route, rest: path.slice(route.prefix.length) };
    }
  }
  return undefined;
}

/** Told when each request starts; what it returns is told how the request ended (the metrics). */
export type RequestObserver = () => (path: string, method: string | undefined, status: number | 'aborted', seconds: number) => void;

/**
 * The 406 of a request whose Accept-Encoding refuses every coding the service has, identity too
 * (`identity;q=0` without br, gzip or deflate). It is answered before anything runs: a write must not
 * commit and then find it cannot answer.
 */
function noAcceptableCoding(compression: CompressionConfig): ODataError {
  const offered = compression.enabled ? 'br, gzip, deflate or identity' : 'identity (compression is off)';
  return new ODataError(406, `The request's Accept-Encoding accepts none of the codings the service answers in: ${offered}.`);
}

export function createRequestListener(routes: readonly Route[], limits: Limits, log: Logger, observe?: RequestObserver, compression?: CompressionConfig) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const ended = observe?.();
    const id = nextRequestId();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    res.on('finish', () => {
      log.info({ reqId: id, method: req.method, path: path.slice(0, 512), status: res.statusCode, ms: Math.round((performance.now() - started) * 10) / 10 });
      ended?.(path, req.method, res.statusCode, (performance.now() - started) / 1000);
    });
    // A connection that ends before the answer (the client hung up or timed out) still gets its line.
    res.on('close', () => {
      if (res.writableFinished) return;
      log.info({ reqId: id, method: req.method, path: path.slice(0, 512), aborted: true, ms: Math.round((performance.now() - started) * 10) / 10 });
      ended?.(path, req.method, 'aborted', (performance.now() - started) / 1000);
    });
    const ctx: RequestContext = { id, req, res, path, query, clientAddress: req.socket.remoteAddress ?? '', log };
    const fail = (error: unknown) => {
      if (!answerableError(error)) log.error({ reqId: id, err: error }, 'request failed');
      if (answerStarted(res)) {
        // A streamed answer that fails half-way cannot change its status: cut it off, so the
        // client sees a broken response rather than a complete-looking partial one.
        res.destroy();
        return;
      }
      sendError(res, error, errorFormatFor(req.headers.accept, query), id);
    };
    try {
      if (compression !== undefined && !negotiateCoding(req, res, compression)) throw noAcceptableCoding(compression);
      if (Buffer.byteLength(url) > limits.maxUrlBytes) {
        throw new ODataError(414, `The request URL is longer than the limit of ${limits.maxUrlBytes} bytes.`);
      }
      if (hasRepeatedHost(req.rawHeaders)) {
        // The connection closes after the answer: what follows on it cannot be trusted either.
        throw new ODataError(400, 'The request has more than one Host header.', '', { Connection: 'close' });
      }
      const match = matchRoute(routes, path);
      if (!match) throw notFound(`No resource exists at '${quote(path, 200)}'. The service is at /publicapi/v1/api.svc.`);
      match.route.handler(ctx, match.rest).catch(fail);
    } catch (error) {
      fail(error);
    }
  };
}

/**
 * The error format a request that Node could not parse asked for, from the bytes that arrived: an
 * oversized header block still carries its request line ($format) and usually its Accept header.
 */
function errorFormatOfRawHead(raw: Buffer | undefined): ErrorFormat {
  if (!raw) return 'xml';
  const head = raw.subarray(0, 64 * 1024).toString('latin1');
  const lineEnd = head.indexOf('\r\n');
  const target = (lineEnd < 0 ? head : head.slice(0, lineEnd)).split(' ')[1] ?? '';
  const q = target.indexOf('?');
  // Only a complete Accept line: one cut off by the overflow may be missing its end.
  const accept = /\r\naccept[ \t]*:[ \t]*([^\r\n]*)\r\n/i.exec(head)?.[1];
  return errorFormatFor(accept, q < 0 ? '' : target.slice(q + 1));
}

/** The error format of a request whose headers were read (a body that timed out). */
function errorFormatOfRequest(req: IncomingMessage): ErrorFormat {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return errorFormatFor(req.headers.accept, q < 0 ? '' : url.slice(q + 1));
}

/**
 * Errors Node's parser meets before a request exists (oversized headers, timeouts, bad syntax),
 * or while its body arrives (`req`: the request timeout).
 */
function answerClientError(error: Error & { code?: string; rawPacket?: Buffer }, socket: Socket, req: IncomingMessage | undefined): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are larger than the limit.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'ERR_HTTP_HEADERS_TIMEOUT'
        ? [408, 'The request did not arrive within the time limit.']
        : [400, 'The request is not well-formed HTTP.'];
  const rendered = renderError(req ? errorFormatOfRequest(req) : errorFormatOfRawHead(error.rawPacket), '', message);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      `Content-Type: ${rendered.contentType}\r\nContent-Length: ${Buffer.byteLength(rendered.body)}\r\n` +
      'DataServiceVersion: 1.0;\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n' +
      rendered.body,
  );
}

/** `compression`: answers negotiated by Accept-Encoding (server/compression.ts); identity only without it. */
export function createHttpServer(routes: readonly Route[], limits: Limits, log: Logger, observe?: RequestObserver, compression?: CompressionConfig): http.Server {
  // The request each connection is reading, so that a timeout in its body answers in its format.
  const reading = new WeakMap<Socket, IncomingMessage>();
  const listener = createRequestListener(routes, limits, log, observe, compression);
  const server = http.createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Check the two timeouts often enough that a slow client is cut off close to its limit.
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
      keepAliveTimeout: 5000,
    },
    (req, res) => {
      reading.set(req.socket, req);
      res.on('close', () => {
        if (reading.get(req.socket) === req) reading.delete(req.socket);
      });
      listener(req, res);
    },
  );
  server.on('clientError', (error: Error & { code?: string; rawPacket?: Buffer }, socket: Socket) => answerClientError(error, socket, reading.get(socket)));
  return server;
}
