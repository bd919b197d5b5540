/**
 * The multipart/mixed body of a $batch response (docs/protocol.md, "$batch"): one top-level part
 * per request part, a changeset answered by a nested multipart/mixed part holding one
 * application/http response per operation. A failed changeset is answered by the caller with a
 * single `response` part instead; the writer needs no special case for it.
 *
 * `boundary=` is the last (and only) parameter of every multipart Content-Type: the connector
 * reads the boundary with the regex `boundary=(.*)`.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';

export interface InnerResponse {
  readonly status: number;
  /**
   * Response headers in the order to write them. Content-Length is computed by the writer and a
   * Content-Length given here is dropped; so is a Content-ID header when `contentId` is given.
   */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** A string is written as UTF-8. */
  readonly body?: string | Buffer;
  /** Echoed as a Content-ID header (the request's Content-ID). */
  readonly contentId?: string;
}

export type BatchResponsePart =
  | { readonly kind: 'response'; readonly response: InnerResponse }
  | { readonly kind: 'changeset'; readonly responses: readonly InnerResponse[] };

export interface WriteBatchOptions {
  /** Makes the unique part of each boundary; crypto.randomUUID by default (tests fix it). */
  readonly newBoundaryId?: () => string;
}

export interface WrittenBatch {
  /** `multipart/mixed; boundary=batchresponse_<uuid>`. */
  readonly contentType: string;
  readonly body: Buffer;
}

const CRLF = '\r\n';
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What Node's own header validation lets through: no line breaks, no NUL, one byte per character. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Responses that never carry a body or a Content-Length (RFC 7230 3.3.2, 3.3.3). */
const BODILESS = (status: number) => status < 200 || status === 204 || status === 304;

/**
 * Writes the batch response. Headers and statuses come from our own code, so an invalid one
 * (a line break in a value, a status outside 100–599, a body on a 204) is a fault: a plain Error.
 */
export function writeBatchResponse(parts: readonly BatchResponsePart[], options: WriteBatchOptions = {}): WrittenBatch {
  const newBoundaryId = options.newBoundaryId ?? randomUUID;
  const boundary = `batchresponse_${newBoundaryId()}`;
  const chunks: Buffer[] = [];
  const text = (s: string) => chunks.push(Buffer.from(s, 'latin1'));

  for (const part of parts) {
    text(`--${boundary}${CRLF}`);
    if (part.kind === 'response') {
      writeHttpPart(part.response, chunks);
    } else {
      const changesetBoundary = `changesetresponse_${newBoundaryId()}`;
      text(`Content-Type: multipart/mixed; boundary=${changesetBoundary}${CRLF}${CRLF}`);
      for (const response of part.responses) {
        text(`--${changesetBoundary}${CRLF}`);
        writeHttpPart(response, chunks);
      }
      // The next batch delimiter follows at once, as WCF Data Services writes it: no empty line.
      // The shop connector takes an empty line here for one more operation of the changeset.
      text(`--${changesetBoundary}--${CRLF}`);
    }
  }
  text(`--${boundary}--${CRLF}`);
  return { contentType: `multipart/mixed; boundary=${boundary}`, body: Buffer.concat(chunks) };
}

/**
 * One application/http part: MIME headers, status line, headers, empty line, body, and the line
 * break before the next delimiter. A bodiless status (204) has neither Content-Type nor
 * Content-Length: its empty line is followed by that line break alone.
 */
function writeHttpPart(response: InnerResponse, chunks: Buffer[]): void {
  const { status } = response;
  if (!Number.isInteger(status) || status < 100 || status > 599) throw new Error(`Batch response status ${status} is not an HTTP status.`);
  const body = response.body === undefined ? Buffer.alloc(0) : typeof response.body === 'string' ? Buffer.from(response.body, 'utf8') : response.body;
  if (BODILESS(status) && body.length > 0) throw new Error(`A batch response with status ${status} cannot carry a body.`);

  let head = `Content-Type: application/http${CRLF}Content-Transfer-Encoding: binary${CRLF}${CRLF}`;
  head += `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}${CRLF}`;
  if (response.contentId !== undefined) head += header('Content-ID', response.contentId);
  for (const [name, value] of response.headers) {
    const lowerName = name.toLowerCase();
    if (lowerName === 'content-length') continue;
    if (lowerName === 'content-id' && response.contentId !== undefined) continue;
    head += header(name, value);
  }
  if (!BODILESS(status)) head += header('Content-Length', String(body.length));
  head += CRLF;
  // The CRLF after the body is the line break that belongs to the next delimiter (RFC 2046).
  chunks.push(Buffer.from(head, 'latin1'), body, Buffer.from(CRLF, 'latin1'));
}

function header(name: string, value: string): string {
  if (!TOKEN.test(name)) throw new Error(`'${name}' is not a valid header name.`);
  if (!HEADER_VALUE.test(value)) throw new Error(`The value of the header ${name} holds a line break or a character that HTTP cannot carry.`);
  return `${name}: ${value}${CRLF}`;
}
