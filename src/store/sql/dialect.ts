/**
 * What SQL does not standardise, per engine. The filter compiler (./filter.ts) owns the
 * structure and the null semantics of an expression; a dialect only spells each operation.
 * Both engines must give every operation the same result, so the semantics are written here
 * once, and the test suite checks them against an independent evaluation on both engines:
 *
 * - Strings compare and order by Unicode code point; lengths and positions count code points.
 * - Int32 and Int64 arithmetic is integer arithmetic; div truncates toward zero; mod takes the
 *   dividend's sign. Decimal arithmetic is exact; Decimal div truncates to 6 decimal places.
 *   Division or mod by zero yields null (never an error).
 * - round rounds half away from zero; floor and ceiling as usual; all three return a Decimal.
 * - tolower/toupper use Unicode case mapping; trim removes spaces, tabs, CR and LF at both ends.
 * - substring(s, i[, n]) is 0-based; a negative i counts as 0 and a negative n as 0.
 * - concat treats null as the empty string (String.Concat); every other function of a null
 *   argument is null.
 * - year/month/day/hour/minute/second of a UTC DateTime; second is whole seconds.
 */
import type { ArithmeticOperator, ExprType, FunctionName } from '../../odata/expr/ast';
import type { SqlValue } from '../store';

export type NumericType = 'Edm.Int32' | 'Edm.Int64' | 'Edm.Decimal';

export interface SqlDialect {
  /**
   * The placeholder for one bound parameter of an expression type. SQLite writes `?` (cast to
   * INTEGER for integer types, which better-sqlite3 would bind as REAL); PostgreSQL adds a cast
   * (`CAST(? AS numeric)`) so that a parameter has a type even where nothing else gives it one
   * (`? + ?`). A dialect may name an argument more than once in what it renders.
   */
  param(type: ExprType): string;
  /** `<column> IN <one parameter holding a list of ids>`, for the expansions of a page of rows. */
  inIds(column: string): string;
  /** The value of that parameter. */
  idsParam(ids: readonly bigint[]): SqlValue;
  /** SQL for true and false as values of a Boolean expression. */
  readonly trueSql: string;
  readonly falseSql: string;
  /** Null-safe equality and inequality: null equals null, and null differs from any value. */
  isNotDistinct(a: string, b: string): string;
  isDistinct(a: string, b: string): string;
  /** One ORDER BY item: nulls first when ascending and last when descending (as .NET orders). */
  orderItem(sql: string, descending: boolean): string;
  /** a <op> b for two operands of `type`, by the rules above. */
  arithmetic(op: ArithmeticOperator, type: NumericType, a: string, b: string): string;
  negate(type: NumericType, a: string): string;
  /** A lossless widening: Int32 -> Int64, Int32/Int64 -> Decimal. */
  convert(from: NumericType, to: 'Edm.Int64' | 'Edm.Decimal', a: string): string;
  /** A canonical function over already-rendered arguments, by the rules above. */
  call(name: FunctionName, args: readonly string[]): string;
  /**
   * Whether a database error was raised by evaluating a client's expression (an overflow, a
   * value out of range) rather than by a fault: such errors are answered 400 with this message.
   */
  expressionError(error: unknown): string | undefined;
}
