/**
 * The text of an XML request body (an Atom entry, a $links `<uri>` document), decoded by the
 * encoding the request names, in the order an XML processor decides it (RFC 7303 §3, XML 1.0
 * §4.3.3 and Appendix F):
 *   1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE);
 *   2. the charset parameter of the request's Content-Type;
 *   3. the encoding of the XML declaration (`<?xml version="1.0" encoding="iso-8859-1"?>`);
 *   4. UTF-8.
 * Clients written for WCF Data Services send ISO-8859-1 and windows-1252 bodies that say so, and
 * WCF read them as they said. Each encoding is read as it is defined: ISO-8859-1 is ISO-8859-1
 * (as .NET reads it; its bytes 0x80–0x9F are control characters, so a client that writes € must
 * say windows-1252). UTF-8 and UTF-16 go through Node's TextDecoder; every other encoding through
 * iconv-lite (Node 20's TextDecoder reads windows-1252 as ISO-8859-1, so it cannot be used for
 * them). An encoding it does not know is a 415 naming it; bytes that are not valid in the named
 * encoding are a 400.
 */
import { TextDecoder } from 'node:util';
import iconv from 'iconv-lite';
import { ODataError, badRequest } from './errors';
import { quote } from './quote';

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const UTF16LE_BOM = [0xff, 0xfe];
const UTF16BE_BOM = [0xfe, 0xff];

/**
 * The encoding of the XML declaration, read from the body's first bytes as ASCII (XML 1.0
 * Appendix F: every encoding the declaration can name without a BOM is ASCII-compatible there).
 * EncName is a letter followed by letters, digits, '.', '_' and '-'.
 */
const DECLARED_ENCODING = /^<\?xml\s+version\s*=\s*(["'])[^"']*\1\s+encoding\s*=\s*(["'])([A-Za-z][A-Za-z0-9._-]*)\2/;
/** A declaration fits comfortably in this many bytes; nothing more of the body is looked at. */
const DECLARATION_WINDOW = 256;

function startsWith(body: Buffer, bytes: readonly number[]): boolean {
  return body.length >= bytes.length && bytes.every((b, i) => body[i] === b);
}

function declaredEncoding(body: Buffer): string | undefined {
  return DECLARED_ENCODING.exec(body.toString('latin1', 0, DECLARATION_WINDOW))?.[3];
}

/** Names compared as iconv-lite compares them: lower case, letters and digits only. */
const canonical = (label: string) => label.toLowerCase().replace(/[^0-9a-z]/g, '');

/** The Unicode encodings, decoded strictly (an invalid sequence is an error, not U+FFFD). */
const UNICODE: ReadonlyMap<string, string> = new Map([
  ['utf8', 'utf-8'],
  ['utf16', 'utf-16le'],
  ['utf16le', 'utf-16le'],
  ['utf16be', 'utf-16be'],
]);

/**
 * Names iconv-lite accepts that are no character encoding of a document: Node's byte-to-text
 * transforms, and UTF-7, which the Encoding Standard bans because it hides markup from filters.
 */
const NOT_A_CHARSET = new Set(['base64', 'base64url', 'hex', 'utf7', 'utf7imap', 'unicode11utf7']);

/**
 * `body` as text, decoded as the request says (see above). `charset` is the Content-Type's charset
 * parameter, if any. A BOM is not part of the text.
 */
export function xmlBodyText(body: Buffer, charset: string | undefined): string {
  const label = startsWith(body, UTF8_BOM)
    ? 'utf-8'
    : startsWith(body, UTF16LE_BOM)
      ? 'utf-16le'
      : startsWith(body, UTF16BE_BOM)
        ? 'utf-16be'
        : (charset ?? declaredEncoding(body) ?? 'utf-8');
  const name = canonical(label);

  const unicode = UNICODE.get(name);
  if (unicode !== undefined) {
    try {
      // fatal: invalid sequences throw; ignoreBOM false: a BOM of this encoding is dropped.
      return new TextDecoder(unicode, { fatal: true }).decode(body);
    } catch {
      throw invalidBytes(unicode.toUpperCase());
    }
  }
  if (NOT_A_CHARSET.has(name) || !iconv.encodingExists(name)) {
    throw new ODataError(
      415,
      `The request body's encoding '${quote(label.trim())}' is not supported: send UTF-8, or name an encoding such as ISO-8859-1, windows-1252 or UTF-16.`,
    );
  }
  const text = iconv.decode(body, name);
  // iconv-lite puts U+FFFD where a byte means nothing in the encoding (0x81 in windows-1252, a
  // broken Shift_JIS sequence): that body is not in the encoding it names.
  if (text.includes('\uFFFD')) throw invalidBytes(label.trim());
  return text;
}

function invalidBytes(encoding: string): ODataError {
  return badRequest(`The request body is not valid ${quote(encoding)}.`);
}
