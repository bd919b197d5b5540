/**
 * The PostgreSQL spelling of the operations in ../sql/dialect.ts, to the same semantics as the
 * SQLite one. Values are stored natively (../postgres/values.ts), so arithmetic and date parts
 * work on the stored values directly. Where PostgreSQL would differ from the contract:
 * - integer arithmetic stays in its type (int4, int8), whose overflow raises 22003: answered 400,
 *   as the SQLite adapter's checked functions do;
 * - division and modulo by zero raise 22012, answered 400 as on SQLite;
 * - Decimal products and quotients are truncated to 6 places toward zero, as on SQLite;
 * - text columns and parameters collate "C" (code point order), but case mapping uses the ICU
 *   root collation, which maps all of Unicode (lower() under "C" maps ASCII only), and the result
 *   is put back to "C" so comparisons and ordering stay by code point;
 * - evaluation errors (SQLSTATE class 22: out of range, invalid value) are the client's
 *   expression at fault and are answered 400, never 500.
 */
import type { ExprType, FunctionName } from '../../odata/expr/ast';
import { DIVISION_BY_ZERO, type NumericType, type SqlDialect, type SqlValue } from '../sql/dialect';
import { PLANNED_PER_EXECUTION } from './statements';

/** The ICU root collation; the migration checks that the server has it. */
export const CASE_MAPPING_COLLATION = 'und-x-icu';

const paramCast: Record<ExprType, string> = {
  'Edm.Int32': 'integer',
  'Edm.Int64': 'bigint',
  'Edm.Decimal': 'numeric',
  'Edm.String': 'text',
  'Edm.Boolean': 'boolean',
  'Edm.DateTime': 'timestamp(3)',
  'Edm.Guid': 'text',
  // `null eq null`: the parameter needs some type, and text compares with anything that is null.
  Null: 'text',
};

/**
 * PostgreSQL's text form of an array: text quoted with `"` and `\` escaped, numbers bare (their
 * text has no character an array literal gives a meaning to), NULL bare. Of `values` it takes
 * every `stride`th from `start` (one column of rows given row after row).
 */
export function arrayLiteral(values: readonly SqlValue[], start = 0, stride = 1): string {
  let text = '{';
  for (let i = start; i < values.length; i += stride) {
    const value = values[i];
    if (i !== start) text += ',';
    if (value === null || value === undefined) {
      text += 'NULL';
      continue;
    }
    if (typeof value === 'number' || typeof value === 'bigint') {
      text += String(value);
      continue;
    }
    const s = String(value);
    text += NEEDS_ESCAPE.test(s) ? `"${s.replace(ESCAPED, '\\$&')}"` : `"${s}"`;
  }
  return text + '}';
}

const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

const TRIMMED = `' ' || chr(9) || chr(10) || chr(13)`;
const caseMapped = (fn: 'lower' | 'upper', x: string) => `(${fn}((${x}) COLLATE "${CASE_MAPPING_COLLATION}") COLLATE "C")`;
const datePart = (field: string, x: string) => `CAST(extract(${field} FROM ${x}) AS integer)`;

function call(name: FunctionName, a: readonly string[]): string {
  const [x = '', y = '', z] = a;
  switch (name) {
    case 'substringof':
      return `(strpos(${y}, ${x}) > 0)`;
    case 'startswith':
      return `starts_with(${x}, ${y})`;
    case 'endswith':
      // reverse() works on characters; each argument appears once (so a bound value binds once).
      return `starts_with(reverse(${x}), reverse(${y}))`;
    case 'length':
      // char_length counts code points; .NET counts UTF-16 code units, 2 for a character beyond U+FFFF.
      return `(char_length(${x}) + char_length(regexp_replace(${x}, '[^\\U00010000-\\U0010FFFF]+', '', 'g')))`;
    case 'indexof':
      return `(strpos(${x}, ${y}) - 1)`;
    case 'replace':
      return `replace(${x}, ${y}, ${z ?? "''"})`;
    case 'substring': {
      // CASE rather than greatest()/least(), which skip a null argument: a null position or
      // length makes the result null, as on SQLite. The start is capped so that adding one cannot
      // overflow int4 (SQLite answers '' there too).
      const start = `(CASE WHEN ${y} < 0 THEN 1 WHEN ${y} > 2147483646 THEN 2147483647 ELSE ${y} + 1 END)`;
      return z === undefined ? `substr(${x}, ${start})` : `substr(${x}, ${start}, CASE WHEN ${z} < 0 THEN 0 ELSE ${z} END)`;
    }
    case 'tolower':
      return caseMapped('lower', x);
    case 'toupper':
      return caseMapped('upper', x);
    case 'trim':
      return `btrim(${x}, ${TRIMMED})`;
    case 'concat':
      return `(coalesce(${x}, '') || coalesce(${y}, ''))`;
    case 'year':
      return datePart('year', x);
    case 'month':
      return datePart('month', x);
    case 'day':
      return datePart('day', x);
    case 'hour':
      return datePart('hour', x);
    case 'minute':
      return datePart('minute', x);
    case 'second':
      // extract(second) includes the fraction; the contract counts whole seconds.
      return `CAST(floor(extract(second FROM ${x})) AS integer)`;
    case 'floor':
      return `floor(${x})`;
    case 'ceiling':
      return `ceil(${x})`;
    case 'round':
      // round(numeric) rounds half away from zero.
      return `round(${x})`;
  }
}

export const pgDialect: SqlDialect = {
  typed: (type, placeholder) => (type === 'Edm.String' ? `(CAST(${placeholder} AS text) COLLATE "C")` : `CAST(${placeholder} AS ${paramCast[type]})`),
  inIds: (column, placeholder) => `${column} = ANY(CAST(${placeholder} AS bigint[]))`,
  // An array literal: the ids are integers, so they need no quoting.
  idsParam: (ids) => `{${ids.join(',')}}`,
  // One array parameter, not a placeholder per value: a list of n placeholders is another
  // statement for every n. Each value is looked up on its own, in a subquery per value that the
  // planner cannot merge into a join (OFFSET 0), so it always probes the index on the column:
  // - as `column = ANY(array)`, a table without statistics (a new database, the first minute of
  //   an import until autovacuum analyzes it) was taken to have 0.5% of its rows in the account
  //   and a list of 200 values to match all of them, and the whole account was scanned for each
  //   list: an import of 10,000 orders read 1.5 million item rows to find 30,000 ids;
  // - a generic plan compared every row of the account with each value in turn: 125 ms for 600
  //   values among 6,000 rows. So the lookup is also never prepared (plannedPerExecution);
  // - the account is an InitPlan's value, `= (SELECT ?)`, whose value the planner does not look
  //   at. With statistics taken before the account had rows (autovacuum on a busy database), the
  //   planner took the account to hold about one row, found a scan of the primary key as cheap as
  //   one of the column's index, and kept the key: every value read all of the account's rows
  //   (test/store/postgres-stale-statistics.test.ts). Not knowing the account, it estimates it
  //   from the number of accounts, and the column's index wins.
  rowsWithAnyOf: (select, table, column, type) =>
    `SELECT t.* FROM unnest(CAST(? AS ${paramCast[type]}[])) AS wanted(value) CROSS JOIN LATERAL (SELECT ${select} FROM ${table} t WHERE t.account_id = (SELECT CAST(? AS bigint)) AND t.${column} = wanted.value OFFSET 0) t`,
  lookupParams: (accountId, values) => [arrayLiteral(values), accountId],
  plannedPerExecution: (sql) => PLANNED_PER_EXECUTION + sql,
  // One array per column, not a placeholder per value: node-pg prepared and sent each of a
  // chunk's 13,800 values on its own, and PostgreSQL bound each; an array is one parameter.
  // The text is also the same for every number of rows, so it is prepared once per connection.
  insertRows: (table, columns, types) =>
    `INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${types.map((type) => `CAST(? AS ${paramCast[type]}[])`).join(', ')})`,
  rowsParams: (values, columnCount) => Array.from({ length: columnCount }, (_, column) => arrayLiteral(values, column, columnCount)),
  trueSql: 'TRUE',
  falseSql: 'FALSE',
  isNotDistinct: (a, b) => `(${a} IS NOT DISTINCT FROM ${b})`,
  isDistinct: (a, b) => `(${a} IS DISTINCT FROM ${b})`,
  orderItem: (sql, descending) => (descending ? `${sql} DESC NULLS LAST` : `${sql} ASC NULLS FIRST`),
  limitOffset: (limit, offset, params) =>
    limit === undefined && offset === undefined
      ? ''
      : ` LIMIT ${limit === undefined ? 'ALL' : `CAST(${params.add(limit)} AS bigint)`}${offset === undefined ? '' : ` OFFSET CAST(${params.add(offset)} AS bigint)`}`,
  arithmetic(op, type: NumericType, a, b) {
    if (type === 'Edm.Decimal') {
      // numeric(18,6), the scale and range every Decimal property holds: past it, 22003 (a 400).
      if (op === 'mul') return `CAST(trunc(${a} * ${b}, 6) AS numeric(18,6))`;
      if (op === 'div') return `CAST(trunc(${a} / ${b}, 6) AS numeric(18,6))`;
    }
    switch (op) {
      case 'add':
        return `(${a} + ${b})`;
      case 'sub':
        return `(${a} - ${b})`;
      case 'mul':
        return `(${a} * ${b})`;
      case 'div':
        // Integer division truncates toward zero in PostgreSQL, as the contract says.
        return `(${a} / ${b})`;
      case 'mod':
        return `(${a} % ${b})`;
    }
  },
  negate: (_type, a) => `(-(${a}))`,
  convert: (_from, to, a) => (to === 'Edm.Decimal' ? `CAST(${a} AS numeric)` : `CAST(${a} AS bigint)`),
  call,
  // query_canceled: statement_timeout (a read's READ_STATEMENT_TIMEOUT_MS) ran out.
  isTimeout: (error) => (error as { code?: unknown } | null)?.code === '57014',
  expressionError(error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== 'string' || !code.startsWith('22')) return undefined;
    if (code === '22003') return 'A value in the expression is outside the range of its type.';
    if (code === '22012') return DIVISION_BY_ZERO;
    return 'A value in the expression cannot be evaluated.';
  },
};
