/**
 * How request text appears inside error messages. Messages are returned to the client and
 * logged, so they never carry unbounded input or control characters (which XML 1.0 cannot hold).
 */

/** Characters shown of any piece of request text. */
export const SHOWN_CHARACTERS = 60;

const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** At most 60 characters (code points) of `text`, control characters and lone surrogates replaced. */
export function show(text: string): string {
  // Clip before replacing: the input may be long, and only its start is ever shown.
  const head = text.length > SHOWN_CHARACTERS * 2 + 2 ? text.slice(0, SHOWN_CHARACTERS * 2 + 2) : text;
  const chars = Array.from(head.replace(UNPRINTABLE, '\uFFFD'));
  return chars.length > SHOWN_CHARACTERS || head.length < text.length
    ? chars.slice(0, SHOWN_CHARACTERS).join('') + '…'
    : chars.join('');
}
