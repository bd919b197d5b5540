/**
 * Generic multipart splitting (RFC 2046 5.1.1) over raw bytes: the body parts between the
 * delimiter lines of one boundary, preamble and epilogue dropped.
 *
 * The boundary is authoritative: Content-Length headers inside parts are never used for framing
 * (they are only checked against what the framing gives, content-length.ts).
 * A delimiter is `--boundary` at the start of the body or of a line, followed by optional
 * whitespace and a line break (CRLF or bare LF); a close delimiter is `--boundary--`, followed by
 * anything (the epilogue). The line break before a delimiter belongs to the delimiter, so a part
 * ends before it; when the part is empty at that point (the line break ended the previous
 * delimiter line) the part is empty. Linear in the body: one pass over its bytes, and at each
 * line start a comparison no longer than the boundary.
 */
import type { ODataError } from '../errors';
import { badRequest } from '../errors';
import { quote } from '../quote';

const LF = 0x0a;
const CR = 0x0d;
const DASH = 0x2d;
const SPACE = 0x20;
const TAB = 0x09;

interface Delimiter {
  /** Offset of the leading `--`. */
  readonly start: number;
  /** True for the close delimiter `--boundary--`. */
  readonly close: boolean;
  /** Offset just after the delimiter line (after `--` for a close delimiter). */
  readonly next: number;
}

/** One body part, and the line break after it that belongs to the next delimiter. */
export interface MultipartBodyPart {
  /** The part's bytes (a view into the body, no copy). */
  readonly bytes: Buffer;
  /** Bytes of the line break between the part and the next delimiter: 2 (CRLF), 1 (LF) or 0. */
  readonly lineBreak: number;
}

export interface PartLimit {
  readonly max: number;
  /** The 400 to throw when the body holds more than `max` parts. */
  readonly tooMany: () => ODataError;
}

/**
 * The body parts of `body` as views into it (no copies), each with the size of the line break
 * that ends it (a Content-Length inside may count it, see content-length.ts). `what` names the multipart entity in
 * messages ("batch request", "changeset in part 2"). Throws a 400 when no delimiter is found,
 * when the close delimiter is missing (a truncated body), or when there are more parts than
 * `limit.max` (checked while splitting, so a body of a million tiny parts stops early).
 */
export function splitMultipart(body: Buffer, boundary: string, what: string, limit: PartLimit): MultipartBodyPart[] {
  const dashBoundary = Buffer.from(`--${boundary}`, 'latin1');
  let delimiter = findDelimiter(body, dashBoundary, 0);
  if (!delimiter) {
    throw badRequest(`The ${what} contains no delimiter line '--${quote(boundary)}': its boundary does not match its body.`);
  }
  const parts: MultipartBodyPart[] = [];
  while (!delimiter.close) {
    const contentStart = delimiter.next;
    const following = findDelimiter(body, dashBoundary, contentStart);
    if (!following) {
      throw badRequest(`The ${what} has no closing delimiter '--${quote(boundary)}--': the body is truncated.`);
    }
    if (parts.length >= limit.max) throw limit.tooMany();
    const end = partEnd(body, contentStart, following.start);
    parts.push({ bytes: body.subarray(contentStart, end), lineBreak: following.start - end });
    delimiter = following;
  }
  return parts;
}

/**
 * The first delimiter (plain or close) at or after `from`: each line start found with
 * Buffer#indexOf of the single byte LF (a memchr, many times faster than a loop over the bytes
 * in JavaScript), then `--` and the boundary compared there. Not indexOf of the boundary itself:
 * a multi-byte search prepares its tables on every call, and a body of near-miss delimiters
 * ("\n--boundaryX" over and over) made that cost per candidate dominate.
 */
function findDelimiter(body: Buffer, dashBoundary: Buffer, from: number): Delimiter | undefined {
  // Only at the start of a line: `--boundary` elsewhere is content.
  if (from === 0 || body[from - 1] === LF) {
    const delimiter = delimiterAt(body, dashBoundary, from);
    if (delimiter) return delimiter;
  }
  const last = body.length - 2;
  for (let at = body.indexOf(LF, from); at >= 0 && at < last; at = body.indexOf(LF, at + 1)) {
    if (body[at + 1] === DASH && body[at + 2] === DASH) {
      const delimiter = delimiterAt(body, dashBoundary, at + 1);
      if (delimiter) return delimiter;
    }
  }
  return undefined;
}

/** The delimiter that starts at `start` (a line start), if one does. */
function delimiterAt(body: Buffer, dashBoundary: Buffer, start: number): Delimiter | undefined {
  const boundaryEnd = start + dashBoundary.length;
  if (boundaryEnd > body.length) return undefined;
  for (let i = 0; i < dashBoundary.length; i++) if (body[start + i] !== dashBoundary[i]) return undefined;
  let pos = boundaryEnd;
  if (body[pos] === DASH && body[pos + 1] === DASH) return { start, close: true, next: pos + 2 };
  // Transport padding (RFC 2046) before the line break.
  while (body[pos] === SPACE || body[pos] === TAB) pos++;
  if (body[pos] === LF) return { start, close: false, next: pos + 1 };
  if (body[pos] === CR && body[pos + 1] === LF) return { start, close: false, next: pos + 2 };
  // `--boundaryX…` or a delimiter cut off by the end of the body: not a delimiter.
  return undefined;
}

/** End of the part that starts at `contentStart` and is followed by a delimiter at `delimiterStart`. */
function partEnd(body: Buffer, contentStart: number, delimiterStart: number): number {
  // The delimiter sits right after the previous delimiter line: the line break before it is that
  // line's own, and the part is empty.
  if (delimiterStart <= contentStart) return contentStart;
  let end = delimiterStart - 1; // the LF that starts the delimiter's line
  if (end > contentStart && body[end - 1] === CR) end--;
  return end;
}
