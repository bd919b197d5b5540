/**
 * The SQLite spelling of the operations in ../sql/dialect.ts. Values are stored as the codec
 * says: Decimal as integer millionths, DateTime as UTC milliseconds, Boolean as 0/1, so Decimal
 * arithmetic and date parts are written in those units.
 */
import type { FunctionName } from '../../odata/expr/ast';
import { DECIMAL_SCALE } from '../../odata/edm';
import type { NumericType, SqlDialect } from '../sql/dialect';
import { OVERFLOW_MESSAGE } from './functions';

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
      return `length(${x})`;
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

export const sqliteDialect: SqlDialect = {
  // better-sqlite3 binds a JS number as REAL: integer types (Int32, DateTime ms; Int64 and
  // Decimal arrive as bigint) are cast, or 7 / -2 would be -3.5 instead of -3.
  param: (type) => (type === 'Edm.Int32' || type === 'Edm.Int64' || type === 'Edm.DateTime' ? 'CAST(? AS INTEGER)' : '?'),
  inIds: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  idsParam: (ids) => `[${ids.join(',')}]`,
  trueSql: '1',
  falseSql: '0',
  isNotDistinct: (a, b) => `(${a} IS ${b})`,
  isDistinct: (a, b) => `(${a} IS NOT ${b})`,
  // SQLite orders NULL below every value: first ascending, last descending, as .NET does.
  orderItem: (sql, descending) => (descending ? `${sql} DESC` : sql),
  arithmetic(op, type: NumericType, a, b) {
    if (type === 'Edm.Decimal') {
      // Millionths add, subtract and take remainders as integers; products and quotients rescale.
      if (op === 'mul') return `odata_dec_mul(${a}, ${b})`;
      if (op === 'div') return `odata_dec_div(${a}, ${b})`;
    }
    switch (op) {
      case 'add':
        return `(${a} + ${b})`;
      case 'sub':
        return `(${a} - ${b})`;
      case 'mul':
        return `(${a} * ${b})`;
      case 'div':
        return `(${a} / NULLIF(${b}, 0))`;
      case 'mod':
        return `(${a} % NULLIF(${b}, 0))`;
    }
  },
  negate: (_type, a) => `(-(${a}))`,
  convert: (from, to, a) => (to === 'Edm.Decimal' && from !== 'Edm.Decimal' ? `((${a}) * ${UNIT})` : a),
  call,
  expressionError(error) {
    const message = error instanceof Error ? error.message : '';
    if (message.includes(OVERFLOW_MESSAGE)) return 'A value in the expression is outside the range of its type.';
    if (/integer overflow/i.test(message)) return 'A value in the expression is outside the range of its type.';
    return undefined;
  },
};
