/**
 * The SQLite spelling of the operations in ../sql/dialect.ts. Values are stored as the codec
 * says: Decimal as integer millionths, DateTime as UTC milliseconds, Boolean as 0/1, so Decimal
 * arithmetic and date parts are written in those units.
 */
import type { FunctionName } from '../../odata/expr/ast';
import { DECIMAL_SCALE } from '../../odata/edm';
import { DIVISION_BY_ZERO, type NumericType, type Placeholders, type SqlDialect } from '../sql/dialect';
import { DIVISION_BY_ZERO_MESSAGE, OVERFLOW_MESSAGE } from './functions';

const UNIT = String(10 ** DECIMAL_SCALE);
const HALF = String(10 ** DECIMAL_SCALE / 2);

/** Whole seconds since the epoch of a millisecond value, rounded down (also before 1970). */
const seconds = (ms: string) => `((${ms}) / 1000 - ((${ms}) % 1000 < 0))`;
const datePart = (format: string, ms: string) => `CAST(strftime('${format}', ${seconds(ms)}, 'unixepoch') AS INTEGER)`;
/** floor(x) of a Decimal in millionths, still in millionths. */
const floorScaled = (x: string) => `((${x}) - (((${x}) % ${UNIT}) + ${UNIT}) % ${UNIT})`;

const TRIMMED = `' ' || char(9) || char(10) || char(13)`;

function call(name: FunctionName, a: readonly string[]): string {
  const [x = '', y = '', z] = a;
  switch (name) {
    case 'substringof':
      return `(instr(${y}, ${x}) > 0)`;
    case 'startswith':
      return `(substr(${x}, 1, length(${y})) = ${y})`;
    case 'endswith':
      // A suffix longer than the string starts at or before position 0 and can never match.
      return `(substr(${x}, length(${x}) - length(${y}) + 1) = ${y})`;
    case 'length':
      // SQLite's length() counts code points; .NET counts UTF-16 code units.
      return `odata_length(${x})`;
    case 'indexof':
      return `(instr(${x}, ${y}) - 1)`;
    case 'replace':
      return `replace(${x}, ${y}, ${z ?? "''"})`;
    case 'substring':
      return z === undefined ? `substr(${x}, max(${y}, 0) + 1)` : `substr(${x}, max(${y}, 0) + 1, max(${z}, 0))`;
    case 'tolower':
      return `odata_lower(${x})`;
    case 'toupper':
      return `odata_upper(${x})`;
    case 'trim':
      return `trim(${x}, ${TRIMMED})`;
    case 'concat':
      return `(coalesce(${x}, '') || coalesce(${y}, ''))`;
    case 'year':
      return datePart('%Y', x);
    case 'month':
      return datePart('%m', x);
    case 'day':
      return datePart('%d', x);
    case 'hour':
      return datePart('%H', x);
    case 'minute':
      return datePart('%M', x);
    case 'second':
      return datePart('%S', x);
    case 'floor':
      return floorScaled(x);
    case 'ceiling':
      return `(-${floorScaled(`-(${x})`)})`;
    case 'round':
      return `(CASE WHEN (${x}) >= 0 THEN ((${x}) + ${HALF}) / ${UNIT} * ${UNIT} ELSE -((-(${x}) + ${HALF}) / ${UNIT} * ${UNIT}) END)`;
  }
}

/**
 * A LIMIT or OFFSET count as a literal: SQLite reads the value of a parameter bound there when it
 * plans, so a statement with one is prepared again on every run that binds it anew (a 50-row
 * page of products took about 100 µs instead of 70). The counts are integers the options parser
 * checked; one that is not a safe integer still goes as a parameter.
 */
function rowCount(count: number, params: Placeholders): string {
  return Number.isSafeInteger(count) && count >= 0 ? String(count) : params.add(count);
}

export const sqliteDialect: SqlDialect = {
  typed: (_type, placeholder) => placeholder,
  inIds: (column, placeholder) => `${column} IN (SELECT value FROM json_each(${placeholder}))`,
  idsParam: (ids) => `[${ids.join(',')}]`,
  rowsWithAnyOf: (select, table, column, _type, count) =>
    `SELECT ${select} FROM ${table} t WHERE t.account_id = ? AND t.${column} IN (${Array.from({ length: count }, () => '?').join(', ')})`,
  lookupParams: (accountId, values) => [accountId, ...values],
  insertRows: (table, columns, _types, rows) => {
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array.from({ length: rows }, () => tuple).join(', ')}`;
  },
  rowsParams: (values) => [...values],
  // SQLite plans a statement once, without looking at the values bound.
  plannedPerExecution: (sql) => sql,
  trueSql: '1',
  falseSql: '0',
  isNotDistinct: (a, b) => `(${a} IS ${b})`,
  isDistinct: (a, b) => `(${a} IS NOT ${b})`,
  // SQLite orders NULL below every value: first ascending, last descending, as .NET does.
  orderItem: (sql, descending) => (descending ? `${sql} DESC` : sql),
  // SQLite needs a LIMIT before an OFFSET; -1 means none.
  budgetCheck: 'odata_within_budget()',
  // The budget check itself throws StatementBudgetExceeded (ConnectionExecutor.timed).
  isTimeout: () => false,
  limitOffset: (limit, offset, params) =>
    limit === undefined && offset === undefined ? '' : ` LIMIT ${limit === undefined ? '-1' : rowCount(limit, params)}${offset === undefined ? '' : ` OFFSET ${rowCount(offset, params)}`}`,
  arithmetic(op, type: NumericType, a, b) {
    if (type === 'Edm.Decimal') {
      // Millionths add, subtract and take remainders as integers; products and quotients rescale.
      if (op === 'mul') return `odata_dec_mul(${a}, ${b})`;
      if (op === 'div') return `odata_dec_div(${a}, ${b})`;
      if (op === 'mod') return `odata_dec_mod(${a}, ${b})`;
      return op === 'add' ? `(${a} + ${b})` : `(${a} - ${b})`;
    }
    // Checked in the type's own range: an overflow is an error of the client's expression.
    return `odata_int${type === 'Edm.Int32' ? '32' : '64'}_${op}(${a}, ${b})`;
  },
  negate: (type, a) => (type === 'Edm.Decimal' ? `(-(${a}))` : `odata_int${type === 'Edm.Int32' ? '32' : '64'}_neg(${a})`),
  convert: (from, to, a) => (to === 'Edm.Decimal' && from !== 'Edm.Decimal' ? `((${a}) * ${UNIT})` : a),
  call,
  expressionError(error) {
    const message = error instanceof Error ? error.message : '';
    if (message.includes(OVERFLOW_MESSAGE)) return 'A value in the expression is outside the range of its type.';
    if (message.includes(DIVISION_BY_ZERO_MESSAGE)) return DIVISION_BY_ZERO;
    if (/integer overflow/i.test(message)) return 'A value in the expression is outside the range of its type.';
    return undefined;
  },
};
