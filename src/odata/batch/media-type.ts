/**
 * Content-Type values of the batch request and of its parts: the media type and its boundary
 * parameter (RFC 7231 3.1.1.1, RFC 2046 5.1.1); and the charset parameter of any request body.
 */
import { badRequest } from '../errors';
import { quote } from '../quote';

export interface ContentType {
  /** Lower-case `type/subtype`. */
  readonly type: string;
  /** The first boundary parameter, unquoted; other parameters are checked for syntax only. */
  readonly boundary?: string;
}

const TYPE = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** RFC 2046 bchars, 1 to 70 of them, the last not a space. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/** RFC 7230 tchar, by character code. */
const TOKEN_CHARS = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TOKEN_CHARS[c.charCodeAt(0)] = 1;

const SEMICOLON = 0x3b;
const EQUALS = 0x3d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const isTokenChar = (code: number) => code < 128 && TOKEN_CHARS[code] === 1;

function skipBlanks(value: string, from: number): number {
  let pos = from;
  for (let code = value.charCodeAt(pos); code === 0x20 || code === 0x09; code = value.charCodeAt(++pos));
  return pos;
}

/** True when value[start, end) is `lowerName` in any letter case. */
function nameIs(value: string, start: number, end: number, lowerName: string): boolean {
  if (end - start !== lowerName.length) return false;
  for (let i = 0; i < lowerName.length; i++) {
    if ((value.charCodeAt(start + i) | 0x20) !== lowerName.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Parses a Content-Type value; undefined when it is not a well-formed media type. A scan by
 * character code that copies out only the type and the boundary: a part header may be megabytes
 * of parameters, and a slice, a lower-casing and a regex per parameter made that slow.
 */
export function parseContentType(value: string): ContentType | undefined {
  const parsed = scanMediaType(value, 'boundary');
  if (!parsed) return undefined;
  return parsed.parameter === undefined ? { type: parsed.type } : { type: parsed.type, boundary: parsed.parameter };
}

/**
 * The charset parameter of a Content-Type value (unquoted, as sent); undefined when there is none
 * or when the value is not a well-formed media type (its type is judged elsewhere).
 */
export function charsetOf(value: string | undefined): string | undefined {
  return value === undefined ? undefined : scanMediaType(value, 'charset')?.parameter;
}

/** The lower-case type and the first parameter named `lowerName` (any case), unquoted. */
function scanMediaType(value: string, lowerName: string): { type: string; parameter?: string } | undefined {
  const length = value.length;
  let semicolon = value.indexOf(';');
  if (semicolon === -1) semicolon = length;
  const type = value.slice(0, semicolon).trim().toLowerCase();
  if (!TYPE.test(type)) return undefined;

  let parameter: string | undefined;
  let pos = semicolon;
  while (pos < length) {
    // Separators and blanks before the next parameter, in one tight loop: empty parameters
    // ("a/b; ; c=d", "a/b;") are tolerated, and a value of megabytes of ';' stays cheap.
    let code = value.charCodeAt(pos);
    while (code === SEMICOLON || code === 0x20 || code === 0x09) code = value.charCodeAt(++pos);
    if (pos >= length) break;
    const nameStart = pos;
    while (pos < length && isTokenChar(value.charCodeAt(pos))) pos++;
    const nameEnd = pos;
    pos = skipBlanks(value, pos);
    if (nameEnd === nameStart || value.charCodeAt(pos) !== EQUALS) return undefined;
    const wanted = parameter === undefined && nameIs(value, nameStart, nameEnd, lowerName);
    pos = skipBlanks(value, pos + 1);
    let paramValue = '';
    if (value.charCodeAt(pos) === QUOTE) {
      pos++;
      let chunkStart = pos;
      let closed = false;
      while (pos < length) {
        const code = value.charCodeAt(pos);
        if (code === BACKSLASH && pos + 1 < length) {
          // A quoted-pair: drop the backslash, keep the character after it.
          if (wanted) paramValue += value.slice(chunkStart, pos);
          chunkStart = pos + 1;
          pos += 2;
        } else if (code === QUOTE) {
          if (wanted) paramValue += value.slice(chunkStart, pos);
          pos++;
          closed = true;
          break;
        } else {
          pos++;
        }
      }
      if (!closed) return undefined;
      pos = skipBlanks(value, pos);
      if (pos < length && value.charCodeAt(pos) !== SEMICOLON) return undefined;
    } else {
      const valueStart = pos;
      while (pos < length && value.charCodeAt(pos) !== SEMICOLON) pos++;
      if (wanted) paramValue = value.slice(valueStart, pos).trim();
    }
    if (wanted) parameter = paramValue;
  }
  return parameter === undefined ? { type } : { type, parameter };
}

/**
 * The boundary of a multipart/mixed Content-Type (`what` names its owner in messages); a 400
 * when the value is not multipart/mixed or the boundary is missing or not a valid boundary.
 */
export function multipartBoundary(contentType: string, what: string): string {
  const parsed = parseContentType(contentType);
  if (!parsed) throw badRequest(`The Content-Type '${quote(contentType)}' of the ${what} is not a valid media type.`);
  if (parsed.type !== 'multipart/mixed') {
    throw badRequest(`The Content-Type of the ${what} must be multipart/mixed, not '${quote(parsed.type)}'.`);
  }
  const { boundary } = parsed;
  if (boundary === undefined || boundary === '') {
    throw badRequest(`The Content-Type '${quote(contentType)}' of the ${what} has no boundary parameter.`);
  }
  if (!BOUNDARY.test(boundary)) {
    throw badRequest(
      `The boundary '${quote(boundary)}' of the ${what} is not valid: 1 to 70 letters, digits or '()+_,-./:=? characters.`,
    );
  }
  return boundary;
}
