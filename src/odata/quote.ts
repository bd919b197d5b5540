/**
 * The one way an error message quotes what the client sent: at most QUOTE_LIMIT characters (code
 * points; "…" marks a cut), control characters and lone surrogates replaced by U+FFFD. So a
 * message can neither grow with the input nor carry line breaks, terminal escapes or characters
 * XML cannot hold into the answer or the log.
 */

export const QUOTE_LIMIT = 60;

const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `input` as shown in a message; bytes (a $batch body) are read as Latin-1, one character each. */
export function quote(input: string | Buffer, limit = QUOTE_LIMIT): string {
  // Decode or copy only a bounded prefix: a 4 MiB line must not be converted just to quote it.
  // Two units per code point at most, and one more to see that there is more.
  const prefix = typeof input === 'string' ? input.slice(0, 2 * limit + 2) : input.toString('latin1', 0, limit + 1);
  const chars = Array.from(prefix);
  const cut = chars.length > limit || (typeof input === 'string' && input.length > prefix.length);
  const shown = chars.slice(0, limit).join('');
  return (cut ? `${shown}…` : shown).replace(UNPRINTABLE, '\uFFFD');
}
