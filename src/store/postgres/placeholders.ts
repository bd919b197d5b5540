/**
 * The service writes SQL with `?` placeholders (in order) or `?N` (numbered, for statements built
 * from a request: see ../sql/params.ts); PostgreSQL writes `$N`. A `?` inside a string literal, a
 * quoted identifier or a comment is text, not a placeholder, so the translation scans the SQL
 * instead of replacing blindly.
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
      let j = i + 1;
      while (j < sql.length && sql.charCodeAt(j) >= 48 && sql.charCodeAt(j) <= 57) j++;
      // `?N` keeps its number; a bare `?` takes the next one.
      out += j > i + 1 ? `$${sql.slice(i + 1, j)}` : `$${++n}`;
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
