/**
 * The HTTP request inside an application/http batch part: `METHOD SP target SP HTTP/1.x`, header
 * lines, an empty line, the body. The body runs to the end of the part (the multipart framing
 * already cut it at the delimiter); an inner Content-Length is kept as a header, never used for
 * framing, and checked against the body by parse.ts (content-length.ts).
 */
import { badRequest } from '../errors';
import { quote } from '../quote';
import { readHeaderBlock, readRequestLine } from './headers';

/** The methods an inner request may use; PATCH is an alias of MERGE (SAP's clients send it). */
export const BATCH_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'MERGE', 'PATCH', 'DELETE']);

export interface InnerRequest {
  /** As sent, upper-cased: GET, POST, PUT, MERGE, PATCH or DELETE. */
  readonly method: string;
  /**
   * The request-line target exactly as written: relative (`Products`), absolute path
   * (`/publicapi/v1/api.svc/Products(1L)`), absolute URI, or a `$1/Nav` reference. See resolveTarget.
   */
  readonly target: string;
  /** The inner HTTP headers, lower-case names. */
  readonly headers: ReadonlyMap<string, string>;
  /** From the part's MIME headers or the inner request's headers (datajs and the connector put it inside). */
  readonly contentId?: string;
  /** The bytes after the empty line up to the delimiter's line break; may be empty. */
  readonly body: Buffer;
}

const LF = 0x0a;
const CR = 0x0d;
const HTTP_VERSION = /^HTTP\/1\.[01]$/;
const WHITESPACE = /[ \t]+/;

/** Parses the HTTP request in `message`; `where` prefixes messages ("Batch part 2: "). */
export function parseInnerRequest(message: Buffer, where: string): InnerRequest {
  let pos = 0;
  // RFC 7230 3.5: a server should ignore empty lines before the request line.
  while (message[pos] === LF || (message[pos] === CR && message[pos + 1] === LF)) pos += message[pos] === LF ? 1 : 2;
  if (pos >= message.length) throw badRequest(`${where}the part holds no HTTP request line.`);

  const requestLine = readRequestLine(message, pos, where);
  const words = requestLine.text.split(WHITESPACE);
  if (words.length !== 3) {
    throw badRequest(`${where}the request line '${quote(requestLine.text)}' is not 'METHOD target HTTP/1.1'.`);
  }
  const [methodWord, target, version] = words as [string, string, string];
  if (!HTTP_VERSION.test(version)) {
    throw badRequest(`${where}the request line '${quote(requestLine.text)}' does not end with HTTP/1.1.`);
  }
  const method = methodWord.toUpperCase();
  if (!BATCH_METHODS.has(method)) {
    throw badRequest(`${where}the method '${quote(methodWord)}' is not one of ${[...BATCH_METHODS].join(', ')}.`);
  }

  const block = readHeaderBlock(message, requestLine.next, where);
  if (block.headers.has('x-http-method')) {
    // Tunnelling exists for clients that cannot send MERGE or DELETE; inside a batch they can.
    throw badRequest(`${where}X-HTTP-Method is not allowed on a request inside a batch: write the method in the request line.`);
  }
  const contentId = block.headers.get('content-id');
  return {
    method,
    target,
    headers: block.headers,
    ...(contentId !== undefined && contentId !== '' ? { contentId } : {}),
    body: block.terminated ? message.subarray(block.end) : message.subarray(message.length),
  };
}
