/**
 * Header blocks of batch parts and of the HTTP requests inside them: `Name: value` lines up to an
 * empty line, CRLF or bare LF, obsolete line folding joined with a space. A header block may also
 * end with the end of its part: the connector's bodiless DELETEs are followed directly by the
 * next delimiter, whose line break is the one that would have made the empty line.
 */
import { badRequest } from '../errors';
import { quote } from '../quote';

const LF = 0x0a;
const CR = 0x0d;

export interface HeaderBlock {
  /** Lower-case names; repeated headers joined with ", " as HTTP allows. */
  readonly headers: Map<string, string>;
  /** Offset just after the empty line, or the end of the part when there was none. */
  readonly end: number;
  /** False when the part ended before an empty line. */
  readonly terminated: boolean;
}

/**
 * At most this many bytes in one header block (and in one request line): Node's own limit for
 * the headers of a request, so an inner request may be no bigger than it could be on its own.
 * It also bounds the work one block can cause.
 */
export const MAX_HEADER_BYTES = 16 * 1024;

/** RFC 7230 tchar, by character code. */
const TOKEN_CHARS = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TOKEN_CHARS[c.charCodeAt(0)] = 1;

const COLON = 0x3a;
const SPACE = 0x20;
const TAB = 0x09;
const isBlank = (code: number) => code === SPACE || code === TAB;

export interface Line {
  /** Latin-1 text without its line break (one character per byte, as Node's HTTP parser does). */
  readonly text: string;
  /** Offset after the line break (or the end of the buffer). */
  readonly next: number;
}

/**
 * The request line that starts at `start`; a lone CR at the very end of the buffer counts as its
 * line break. A 400 when it is longer than MAX_HEADER_BYTES.
 */
export function readRequestLine(buffer: Buffer, start: number, where: string): Line {
  const length = buffer.length;
  const limit = Math.min(length, start + MAX_HEADER_BYTES + 2);
  let lf = start;
  while (lf < limit && buffer[lf] !== LF) lf++;
  if (lf === limit && limit < length) throw badRequest(`${where}the request line is longer than ${MAX_HEADER_BYTES} bytes.`);
  if (lf === length) {
    const end = length > start && buffer[length - 1] === CR ? length - 1 : length;
    return { text: buffer.toString('latin1', start, end), next: length };
  }
  const end = lf > start && buffer[lf - 1] === CR ? lf - 1 : lf;
  return { text: buffer.toString('latin1', start, end), next: lf + 1 };
}

/**
 * Where the header block at `start` ends: the offset of its empty line (`blank`) and the offset
 * after it; undefined when the buffer ends first; a 400 when the block is longer than
 * MAX_HEADER_BYTES. Walks line starts only as far as the block goes: searching for "\n\n" or
 * "\n\r\n" instead would scan the whole rest of the part for whichever does not occur.
 */
function findBlankLine(buffer: Buffer, start: number, where: string): { blank: number; after: number } | undefined {
  const length = buffer.length;
  // The block may use MAX_HEADER_BYTES, then comes its empty line.
  const scanEnd = Math.min(length, start + MAX_HEADER_BYTES + 2);
  let lineStart = start;
  while (lineStart < scanEnd) {
    if (buffer[lineStart] === LF) return { blank: lineStart, after: lineStart + 1 };
    if (buffer[lineStart] === CR && buffer[lineStart + 1] === LF) return { blank: lineStart, after: lineStart + 2 };
    // The next line start: indexOf of one byte is a memchr, not a loop in JavaScript.
    const lf = buffer.indexOf(LF, lineStart);
    if (lf < 0 || lf >= scanEnd) break;
    lineStart = lf + 1;
  }
  if (scanEnd < length) throw badRequest(`${where}a header block is longer than ${MAX_HEADER_BYTES} bytes.`);
  return undefined;
}

/** Reads the header block at `start` of `buffer`; `where` prefixes messages ("Batch part 2: "). */
export function readHeaderBlock(buffer: Buffer, start: number, where: string): HeaderBlock {
  const blankLine = findBlankLine(buffer, start, where);
  const end = blankLine ? blankLine.blank : buffer.length;
  if (end - start > MAX_HEADER_BYTES) throw badRequest(`${where}a header block is longer than ${MAX_HEADER_BYTES} bytes.`);
  // Decoded once and scanned by character code: a Buffer-to-string call, a regex and a few
  // slices per line cost more than all the rest of the parsing for a body of header lines.
  let text = buffer.toString('latin1', start, end);
  if (!blankLine && text.endsWith('\r')) text = text.slice(0, -1);
  const headers = new Map<string, string>();
  let lastName: string | undefined;
  let pos = 0;
  while (pos < text.length) {
    const lf = text.indexOf('\n', pos);
    const lineEnd = lf === -1 ? text.length : lf;
    const contentEnd = lineEnd > pos && text.charCodeAt(lineEnd - 1) === CR ? lineEnd - 1 : lineEnd;
    const lineStart = pos;
    pos = lineEnd + 1;

    let valueEnd = contentEnd;
    while (valueEnd > lineStart && isBlank(text.charCodeAt(valueEnd - 1))) valueEnd--;
    if (isBlank(text.charCodeAt(lineStart))) {
      // Obsolete line folding (RFC 7230 3.2.4): the line continues the previous header's value.
      if (lastName === undefined) {
        throw badRequest(`${where}a header block starts with a continuation line '${quote(text.slice(lineStart, contentEnd))}'.`);
      }
      let pieceStart = lineStart;
      while (pieceStart < valueEnd && isBlank(text.charCodeAt(pieceStart))) pieceStart++;
      const piece = text.slice(pieceStart, valueEnd);
      const previous = headers.get(lastName) ?? '';
      headers.set(lastName, previous === '' ? piece : piece === '' ? previous : `${previous} ${piece}`);
      continue;
    }

    let nameEnd = lineStart;
    let hasUpper = false;
    for (; nameEnd < contentEnd; nameEnd++) {
      const code = text.charCodeAt(nameEnd);
      if (code >= 128 || TOKEN_CHARS[code] !== 1) break;
      if (code >= 0x41 && code <= 0x5a) hasUpper = true;
    }
    if (nameEnd === lineStart || nameEnd === contentEnd || text.charCodeAt(nameEnd) !== COLON) {
      throw badRequest(`${where}the header line '${quote(text.slice(lineStart, contentEnd))}' is not 'Name: value'.`);
    }
    const name = text.slice(lineStart, nameEnd);
    const lowerName = hasUpper ? name.toLowerCase() : name;
    let valueStart = nameEnd + 1;
    while (valueStart < valueEnd && isBlank(text.charCodeAt(valueStart))) valueStart++;
    const value = text.slice(valueStart, valueEnd);
    const earlier = headers.get(lowerName);
    headers.set(lowerName, earlier === undefined ? value : `${earlier}, ${value}`);
    lastName = lowerName;
  }
  return blankLine
    ? { headers, end: blankLine.after, terminated: true }
    : { headers, end: buffer.length, terminated: false };
}
