/**
 * Content-Type values of the batch request and of its parts: the media type and its parameters
 * (RFC 7231 3.1.1.1), and the multipart boundary (RFC 2046 5.1.1).
 */
import { badRequest } from '../errors';
import { echo } from './echo';

export interface MediaType {
  /** Lower-case `type/subtype`. */
  readonly type: string;
  /** Lower-case parameter names; values unquoted and as sent. */
  readonly params: ReadonlyMap<string, string>;
}

const TYPE = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/;
const PARAM_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** RFC 2046 bchars, 1 to 70 of them, the last not a space. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/** Parses a Content-Type value; undefined when it is not a well-formed media type. */
export function parseMediaType(value: string): MediaType | undefined {
  let semicolon = value.indexOf(';');
  if (semicolon === -1) semicolon = value.length;
  const type = value.slice(0, semicolon).trim().toLowerCase();
  if (!TYPE.test(type)) return undefined;

  const params = new Map<string, string>();
  const length = value.length;
  let pos = semicolon;
  // Hand-written rather than one regex over the whole value: quoted strings with escapes make a
  // single pattern either wrong or prone to backtracking. Every character is visited once, so a
  // part header of megabytes of ';' costs linear time.
  while (pos < length) {
    pos++; // the ';'
    let nameEnd = pos;
    while (nameEnd < length && value[nameEnd] !== '=' && value[nameEnd] !== ';') nameEnd++;
    const name = value.slice(pos, nameEnd).trim().toLowerCase();
    if (nameEnd === length || value[nameEnd] === ';') {
      // A parameter without '=': tolerated when empty ("a/b; ; c=d", "a/b;"), malformed otherwise.
      if (name !== '') return undefined;
      pos = nameEnd;
      continue;
    }
    if (!PARAM_NAME.test(name)) return undefined;
    pos = nameEnd + 1;
    while (value[pos] === ' ' || value[pos] === '\t') pos++;
    let paramValue = '';
    if (value[pos] === '"') {
      pos++;
      let closed = false;
      while (pos < length) {
        const c = value[pos]!;
        if (c === '\\' && pos + 1 < length) {
          paramValue += value[pos + 1];
          pos += 2;
        } else if (c === '"') {
          pos++;
          closed = true;
          break;
        } else {
          paramValue += c;
          pos++;
        }
      }
      if (!closed) return undefined;
      while (value[pos] === ' ' || value[pos] === '\t') pos++;
      if (pos < length && value[pos] !== ';') return undefined;
    } else {
      let end = pos;
      while (end < length && value[end] !== ';') end++;
      paramValue = value.slice(pos, end).trim();
      pos = end;
    }
    // The first occurrence wins; a repeated parameter is not worth a 400.
    if (!params.has(name)) params.set(name, paramValue);
  }
  return { type, params };
}

/**
 * The boundary of a multipart/mixed Content-Type (`what` names its owner in messages); a 400
 * when the value is not multipart/mixed or the boundary is missing or not a valid boundary.
 */
export function multipartBoundary(contentType: string, what: string): string {
  const media = parseMediaType(contentType);
  if (!media) throw badRequest(`The Content-Type '${echo(contentType)}' of the ${what} is not a valid media type.`);
  if (media.type !== 'multipart/mixed') {
    throw badRequest(`The Content-Type of the ${what} must be multipart/mixed, not '${echo(media.type)}'.`);
  }
  const boundary = media.params.get('boundary');
  if (boundary === undefined || boundary === '') {
    throw badRequest(`The Content-Type '${echo(contentType)}' of the ${what} has no boundary parameter.`);
  }
  if (!BOUNDARY.test(boundary)) {
    throw badRequest(
      `The boundary '${echo(boundary)}' of the ${what} is not valid: 1 to 70 letters, digits or '()+_,-./:=? characters.`,
    );
  }
  return boundary;
}
