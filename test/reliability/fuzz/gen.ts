/**
 * The seeded generator the fuzz areas draw from (mulberry32 underneath, so a seed gives the same
 * cases on every run), plus the small text tools they share: mutation of a valid text, and the
 * two ways a value goes into a URL (percent-encoded, or as raw as Node's client lets it go).
 */
import { mulberry32 } from '../../support/random';

export class Gen {
  private readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = mulberry32(seed);
  }

  float(): number {
    return this.next();
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** `n` results of `make`, joined. */
  repeat(n: number, make: () => string, separator = ''): string {
    return Array.from({ length: n }, make).join(separator);
  }
}

/**
 * Characters that break parsers: quotes, delimiters of every layer (URL, OData, MIME, XML,
 * JSON), controls, a lone surrogate, a right-to-left override, a BOM, astral characters.
 */
export const ODD_CHARACTERS = [
  "'", '"', '(', ')', ',', '/', '\\', '%', '&', '=', '?', '#', '+', ';', ':', '$', '@', '*', '<', '>', '{', '}', '[', ']', '|', '`', '~', ' ', '\t', '\r', '\n',
  '\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\u00a0', 'é', 'ß', 'Ä', '€', '😀', '𝔘', '\u202e', '\ufeff', '\ufffe', '\uffff', '\ud800', '\udc00', '中', 'ئ',
];

/** Changes a valid text into a near-valid or broken one: one edit of a kind chosen at random. */
export function mutate(g: Gen, text: string, fragments: readonly string[] = ODD_CHARACTERS): string {
  if (text.length === 0) return g.pick(fragments);
  const at = g.int(0, text.length);
  switch (g.int(0, 7)) {
    case 0: // drop a character
      return text.slice(0, at) + text.slice(at + 1);
    case 1: // insert a fragment
      return text.slice(0, at) + g.pick(fragments) + text.slice(at);
    case 2: // replace a character
      return text.slice(0, at) + g.pick(fragments) + text.slice(at + 1);
    case 3: // truncate
      return text.slice(0, at);
    case 4: // swap two neighbours
      return at + 1 < text.length ? text.slice(0, at) + text[at + 1] + text[at] + text.slice(at + 2) : text + text;
    case 5: // duplicate a slice
      return text.slice(0, at) + text.slice(at, at + g.int(1, 12)) + text.slice(at);
    case 6: // drop a slice
      return text.slice(0, at) + text.slice(at + g.int(2, 20));
    default: // several edits
      return mutate(g, mutate(g, text, fragments), fragments);
  }
}

const UNRESERVED = /[A-Za-z0-9\-_.~]/;

/** Percent-encodes every byte of the UTF-8 form but unreserved characters (lone surrogates become U+FFFD, as on any wire). */
export function percentEncode(text: string, spaces: '%20' | '+' = '%20'): string {
  let out = '';
  for (const ch of text) {
    if (UNRESERVED.test(ch)) out += ch;
    else if (ch === ' ' && spaces === '+') out += '+';
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * The text as raw as Node's HTTP client sends it: only what it refuses in a request target
 * (blanks, controls, non-ASCII) is percent-encoded; quotes, '%', '&', '=', '#' and '+' go as they
 * are, so malformed percent-encoding and option splitting reach the server.
 */
export function rawish(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code > 0x20 && code < 0x7f) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
