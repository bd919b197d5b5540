/**
 * The one XML escape of the service: safe in element text and in attribute values quoted with
 * either " or '.
 */

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

const SPECIAL = /[&<>"']/g;
/** Non-global twin of SPECIAL: `test` on a global regex would move lastIndex between calls. */
const HAS_SPECIAL = /[&<>"']/;

function entityFor(c: string): string {
  return ENTITIES[c] ?? c;
}

export function escapeXml(s: string): string {
  // Most values need no escaping: answer them without allocating a new string.
  return HAS_SPECIAL.test(s) ? s.replace(SPECIAL, entityFor) : s;
}

/**
 * Characters escapeXml leaves alone but XML text cannot hold: CR (a parser turns it into LF, so
 * it is written as &#xD; to survive), C0 controls other than TAB/LF/CR, U+FFFE/U+FFFF and lone
 * surrogates (not representable in XML 1.0 at all: written as U+FFFD).
 */
const XML_UNSAFE = /[\r\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const XML_UNSAFE_ALL = new RegExp(XML_UNSAFE.source, 'g');

function unsafeReplacement(c: string): string {
  return c === '\r' ? '&#xD;' : '\uFFFD';
}

/**
 * Every character either escape above may touch, in one class without lookarounds (surrogates
 * are all included, valid pairs too): text without any of them, nearly all text, is answered
 * after one cheap scan instead of two, the second with lookbehinds.
 */
const NEEDS_ATTENTION = /[&<>"'\r\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

/** Any text as XML element content: escapeXml plus the characters above; the fast path allocates nothing. */
export function xmlText(s: string): string {
  if (!NEEDS_ATTENTION.test(s)) return s;
  const escaped = escapeXml(s);
  return XML_UNSAFE.test(escaped) ? escaped.replace(XML_UNSAFE_ALL, unsafeReplacement) : escaped;
}
