/**
 * What SQL does not standardise, per engine. The filter compiler (./filter.ts) owns the
 * structure and the null semantics of an expression; a dialect only spells each operation.
 * Both engines must give every operation the same result, so the semantics are written here
 * once, and the test suite checks them against an independent evaluation on both engines:
 *
 * - Strings compare and order by Unicode code point; positions count code points; length counts
 *   UTF-16 code units, as .NET's String.Length does (a character beyond U+FFFF counts 2).
 * - Int32 and Int64 arithmetic is integer arithmetic in the type's own range; div truncates
 *   toward zero; mod takes the dividend's sign. A result outside the range is an error of the
 *   expression (answered 400, see expressionError), never a wrapped or floating value.
 * - Decimal add, sub and mod are exact; mul and div truncate toward zero at 6 decimal places
 *   (the scale every Decimal property stores).
 * - Division or mod by zero is an error of the expression (answered 400), on whichever row the
 *   engine evaluates it: a divisor of 0 is no value .NET would compute either.
 * - round rounds half away from zero; floor and ceiling as usual; all three return a Decimal.
 * - tolower/toupper use Unicode case mapping; trim removes spaces, tabs, CR and LF at both ends.
 * - substring(s, i[, n]) is 0-based; a negative i counts as 0 and a negative n as 0.
 * - concat treats null as the empty string (String.Concat); every other function of a null
 *   argument is null.
 * - year/month/day/hour/minute/second of a UTC DateTime; second is whole seconds.
 */
import type { ArithmeticOperator, ExprType, FunctionName } from '../../odata/expr/ast';

/** The message of a 400 for div or mod by zero, on both engines. */
export const DIVISION_BY_ZERO = 'Division by zero in the expression: a div or mod has a divisor that is 0.';

/** A value as both engines' drivers take it as a parameter. */
export type SqlValue = string | number | bigint | null | Buffer;

/** Where a dialect adds a value it binds, getting its placeholder back (./params.ts). */
export interface Placeholders {
  add(value: SqlValue): string;
}

export type NumericType = 'Edm.Int32' | 'Edm.Int64' | 'Edm.Decimal';

/**
 * Statements built from a request (filters, orderings, expansions) use numbered placeholders
 * (`?1`, `?2`, … see ./params.ts) so that an operand a dialect writes twice still refers to one
 * parameter. Every other statement uses plain `?` in order. An adapter accepts both forms.
 */
export interface SqlDialect {
  /**
   * A bound parameter of an expression type, given its placeholder. SQLite writes the
   * placeholder (its codec binds integers as integers); PostgreSQL adds a cast
   * (`CAST(?3 AS numeric)`) so that a parameter has a type even where nothing else gives it one
   * (`? + ?`). A dialect may name an argument more than once in what it renders.
   */
  typed(type: ExprType, placeholder: string): string;
  /** `<column> IN <one parameter holding a list of ids>`, for the expansions of a page of rows. */
  inIds(column: string, placeholder: string): string;
  /** The value of that parameter. */
  idsParam(ids: readonly bigint[]): SqlValue;
  /**
   * A lookup by many values of one property (EntityStore.findWhereAny): `SELECT <select>` (over
   * the alias t) of the account's rows of `table` whose `column` holds one of `count` distinct
   * values of `type`, with `?` placeholders; lookupParams binds the account and the values.
   */
  rowsWithAnyOf(select: string, table: string, column: string, type: ExprType, count: number): string;
  lookupParams(accountId: number, values: readonly SqlValue[]): SqlValue[];
  /**
   * An INSERT of `rows` rows into `table`'s `columns` (of `types`), with `?` placeholders;
   * rowsParams binds to them the rows' values, given row after row in column order.
   */
  insertRows(table: string, columns: readonly string[], types: readonly ExprType[], rows: number): string;
  rowsParams(values: readonly SqlValue[], columnCount: number): SqlValue[];
  /** The statement, marked to be planned for the values of each execution where an engine can. */
  plannedPerExecution(sql: string): string;
  /**
   * A condition that is true while the statement is within its time budget and stops it after,
   * evaluated for every row a read with a $filter or $orderby looks at: SQLite's statements run
   * on the event loop and have no timeout of their own. Undefined where the server enforces the
   * budget itself (PostgreSQL's statement_timeout).
   */
  readonly budgetCheck?: string;
  /** The engine's error for a statement it cancelled at its time budget (PostgreSQL's 57014). */
  isTimeout(error: unknown): boolean;
  /** SQL for true and false as values of a Boolean expression. */
  readonly trueSql: string;
  readonly falseSql: string;
  /** Null-safe equality and inequality: null equals null, and null differs from any value. */
  isNotDistinct(a: string, b: string): string;
  isDistinct(a: string, b: string): string;
  /** One ORDER BY item: nulls first when ascending and last when descending (as .NET orders). */
  orderItem(sql: string, descending: boolean): string;
  /**
   * LIMIT/OFFSET clause for optional row counts ('' when both are absent), each written as the
   * engine plans it best: a literal, or a value added to `params`.
   */
  limitOffset(limit: number | undefined, offset: number | undefined, params: Placeholders): string;
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
