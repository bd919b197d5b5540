/**
 * The service writes SQL with `?` placeholders (what SQLite takes); PostgreSQL numbers them
 * (`$1`, `$2`, …). A `?` inside a string literal, a quoted identifier or a comment is text, not a
 * placeholder, so the translation scans the SQL instead of replacing blindly.
 */
export function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      // A quoted run ends at the next unpaired quote of the same kind ('' and "" are escapes).
      let j = i + 1;
      for (;;) {
        const k = sql.indexOf(c, j);
        if (k < 0) {
          j = sql.length;
          break;
        }
        if (sql[k + 1] === c) {
          j = k + 2;
          continue;
        }
        j = k + 1;
        break;
      }
      out += sql.slice(i, j);
      i = j;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const j = end < 0 ? sql.length : end;
      out += sql.slice(i, j);
      i = j;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const j = end < 0 ? sql.length : end + 2;
      out += sql.slice(i, j);
      i = j;
    } else if (c === '?') {
      out += `$${++n}`;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
