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
