/**
 * Header blocks of batch parts and of the HTTP requests inside them: `Name: value` lines up to an
 * empty line, CRLF or bare LF, obsolete line folding joined with a space. A header block may also
 * end with the end of its part: the connector's bodiless DELETEs are followed directly by the
 * next delimiter, whose line break is the one that would have made the empty line.
 */
import { badRequest } from '../errors';
import { echo } from './echo';

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

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface Line {
  /** Latin-1 text without its line break (one character per byte, as Node's HTTP parser does). */
  readonly text: string;
  /** Offset after the line break (or the end of the buffer). */
  readonly next: number;
  /** False for a last line that the buffer ended without a line break. */
  readonly broken: boolean;
}

/** The line that starts at `start` (which must be before the end of `buffer`). */
export function readLine(buffer: Buffer, start: number): Line {
  const lf = buffer.indexOf(LF, start);
  if (lf === -1) {
    // A lone CR at the very end of the part is taken as the line's end too.
    const end = buffer.length > start && buffer[buffer.length - 1] === CR ? buffer.length - 1 : buffer.length;
    return { text: buffer.toString('latin1', start, end), next: buffer.length, broken: false };
  }
  const end = lf > start && buffer[lf - 1] === CR ? lf - 1 : lf;
  return { text: buffer.toString('latin1', start, end), next: lf + 1, broken: true };
}

/** Reads the header block at `start` of `buffer`; `where` prefixes messages ("Batch part 2: "). */
export function readHeaderBlock(buffer: Buffer, start: number, where: string): HeaderBlock {
  const headers = new Map<string, string>();
  let lastName: string | undefined;
  let pos = start;
  while (pos < buffer.length) {
    const line = readLine(buffer, pos);
    pos = line.next;
    if (line.text === '') return { headers, end: pos, terminated: true };
    const first = line.text.charCodeAt(0);
    if (first === 0x20 || first === 0x09) {
      // Obsolete line folding (RFC 7230 3.2.4): the line continues the previous header's value.
      if (lastName === undefined) throw badRequest(`${where}a header block starts with a continuation line '${echo(line.text)}'.`);
      // Only the new piece is trimmed: trimming the growing value would make a long run of
      // continuation lines quadratic.
      const piece = line.text.trim();
      const previous = headers.get(lastName) ?? '';
      headers.set(lastName, previous === '' ? piece : piece === '' ? previous : `${previous} ${piece}`);
      continue;
    }
    const colon = line.text.indexOf(':');
    const name = colon === -1 ? '' : line.text.slice(0, colon);
    if (!TOKEN.test(name)) throw badRequest(`${where}the header line '${echo(line.text)}' is not 'Name: value'.`);
    const lowerName = name.toLowerCase();
    const value = line.text.slice(colon + 1).trim();
    const earlier = headers.get(lowerName);
    headers.set(lowerName, earlier === undefined ? value : `${earlier}, ${value}`);
    lastName = lowerName;
  }
  return { headers, end: buffer.length, terminated: false };
}
