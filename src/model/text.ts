/**
 * How the service reads and compares text, in one place, so that both engines agree: the
 * comparison key that rules compare (computed here and stored, never by the database's own
 * lower(), which maps ASCII only on SQLite), what counts as blank, and which characters the two
 * wire formats cannot both carry.
 */

/**
 * The text a rule compares, as the original service's SQL Server compared it under its default
 * collation: case-insensitively, with trailing spaces (U+0020) ignored. Leading spaces, tabs and
 * other blanks count, as they did there. Case is folded by mapping to upper case and then to lower
 * case (locale-independent, as ECMAScript defines it), so 'ß' and 'SS', or 'ς' and 'Σ', compare
 * equal as under full Unicode case folding.
 */
export function comparisonKey(text: string): string {
  return text.replace(/ +$/, '').toUpperCase().toLowerCase();
}

/** Empty, or only white space (Unicode White_Space, as .NET's String.IsNullOrWhiteSpace reads it). */
export function isBlank(text: string): boolean {
  return /^\s*$/u.test(text);
}

/**
 * The first character of `text` that a write refuses, or undefined: the control characters
 * (Unicode category Cc: U+0000 to U+001F, U+007F to U+009F) other than tab, LF and CR, the
 * non-characters U+FFFE and U+FFFF, and a lone surrogate. XML 1.0 cannot carry most of them, so an
 * Atom answer would differ from the JSON one, and an Atom round trip would corrupt the value;
 * PostgreSQL cannot store U+0000 at all.
 */
export function refusedCharacter(text: string): string | undefined {
  return /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]|\p{Cs}/u.exec(text)?.[0];
}

/** A character as U+XXXX. */
export function codePointName(c: string): string {
  return `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
