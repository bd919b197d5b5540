/**
 * How batch errors quote the client's input: at most ECHO_LIMIT characters, control characters
 * replaced, so an error message can neither grow with the body nor carry line breaks or terminal
 * escapes into logs.
 */

export const ECHO_LIMIT = 60;

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** `input` shortened to ECHO_LIMIT characters ("…" marks a cut) with control characters as U+FFFD. */
export function echo(input: string | Buffer): string {
  // Decode or copy only a bounded prefix: a 4 MiB line must not be converted just to quote it.
  const text = typeof input === 'string' ? input.slice(0, ECHO_LIMIT + 1) : input.toString('latin1', 0, ECHO_LIMIT + 1);
  const shown = text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…` : text;
  return shown.replace(CONTROL, '\uFFFD');
}
