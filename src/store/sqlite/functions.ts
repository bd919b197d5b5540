/**
 * SQL functions the SQLite adapter adds to every connection, for operations SQLite does not do
 * the way the dialect's rules say (../sql/dialect.ts): integer arithmetic that refuses to leave
 * its type's range (SQLite silently turns an overflowing integer into a float), Decimal
 * multiplication and division on the stored millionths (an integer product of two millionths
 * overflows 64 bits long before the values are large), and Unicode case mapping (SQLite's
 * lower() and upper() know ASCII only).
 */
import type Database from 'better-sqlite3';
import { performance } from 'node:perf_hooks';
import { DECIMAL_INTEGER_DIGITS, DECIMAL_SCALE, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN } from '../../odata/edm';

const SCALE = 10n ** BigInt(DECIMAL_SCALE);
/** The largest Decimal(18,6) in millionths: 999999999999.999999. */
const DECIMAL_MAX = 10n ** BigInt(DECIMAL_SCALE + DECIMAL_INTEGER_DIGITS) - 1n;

/** Thrown inside SQLite when a result leaves the range the engine can hold; answered with a 400. */
export const OVERFLOW_MESSAGE = 'odata_overflow';
/** Thrown inside SQLite for div or mod by zero; answered with a 400. */
export const DIVISION_BY_ZERO_MESSAGE = 'odata_division_by_zero';
/** Thrown inside SQLite when a read statement passed its time budget (StatementBudget). */
export const BUDGET_MESSAGE = 'odata_time_budget';

/**
 * The time a read statement may hold its connection, and so the event loop, at one stretch:
 * better-sqlite3 runs a statement synchronously, and SQLite has no statement timeout. The store
 * arms it before each synchronous pull of rows and disarms it after; the SQL of a read with a
 * $filter or $orderby calls odata_within_budget() once per row it looks at (SqlDialect.budgetCheck),
 * which stops the statement once the deadline has passed, as a progress handler would.
 */
/** How often StatementBudget.check() reads the clock: once per this many rows. */
const CLOCK_EVERY = 32;

export class StatementBudget {
  /** performance.now() past which the statement stops; Infinity while disarmed. */
  private deadline = Infinity;
  /** The budget that was armed, for the error that names it. */
  armedMs = 0;

  constructor(readonly budgetMs: number) {}

  arm(): void {
    this.armedMs = this.budgetMs;
    this.uncounted = 0;
    this.deadline = this.budgetMs > 0 ? performance.now() + this.budgetMs : Infinity;
  }

  disarm(): void {
    this.deadline = Infinity;
  }

  check(): 1 {
    // The clock is read at every CLOCK_EVERY-th row looked at, the first included: reading it
    // for each row cost a third of the call, and SQLite looks at a few dozen rows in far less
    // than a millisecond, so the statement still stops within a hair of its deadline.
    if (this.uncounted-- > 0) return 1;
    this.uncounted = CLOCK_EVERY - 1;
    if (performance.now() > this.deadline) throw new Error(BUDGET_MESSAGE);
    return 1;
  }

  /** Rows the check lets pass before it reads the clock again. */
  private uncounted = 0;
}

function divisor(b: bigint): bigint {
  if (b === 0n) throw new Error(DIVISION_BY_ZERO_MESSAGE);
  return b;
}

function checked(value: bigint, min = INT64_MIN, max = INT64_MAX): bigint {
  if (value > max || value < min) throw new Error(OVERFLOW_MESSAGE);
  return value;
}

/** The integer operations, by the name of their SQL function; division truncates toward zero. */
const INTEGER_OPERATIONS: Readonly<Record<string, (a: bigint, b: bigint) => bigint>> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / divisor(b),
  mod: (a, b) => a % divisor(b),
};

const toBig = (v: unknown): bigint => (typeof v === 'bigint' ? v : BigInt(v as number));

export function registerFunctions(db: Database.Database, budget?: StatementBudget): void {
  const options = { deterministic: true, safeIntegers: true } as const;
  // Not deterministic: SQLite must call it for every row, never once for the statement.
  db.function('odata_within_budget', { deterministic: false }, budget ? () => budget.check() : () => 1);
  for (const [name, operation] of Object.entries(INTEGER_OPERATIONS)) {
    for (const [suffix, min, max] of [['32', BigInt(INT32_MIN), BigInt(INT32_MAX)], ['64', INT64_MIN, INT64_MAX]] as const) {
      db.function(`odata_int${suffix}_${name}`, options, (a: unknown, b: unknown) => {
        if (a === null || b === null) return null;
        return checked(operation(toBig(a), toBig(b)), min, max);
      });
    }
  }
  db.function('odata_int32_neg', options, (a: unknown) => (a === null ? null : checked(-toBig(a), BigInt(INT32_MIN), BigInt(INT32_MAX))));
  db.function('odata_int64_neg', options, (a: unknown) => (a === null ? null : checked(-toBig(a))));
  db.function('odata_dec_mul', options, (a: unknown, b: unknown) => {
    if (a === null || b === null) return null;
    // Truncates toward zero at the sixth decimal, like the division; the result must be a Decimal(18,6).
    return checked((toBig(a) * toBig(b)) / SCALE, -DECIMAL_MAX, DECIMAL_MAX);
  });
  db.function('odata_dec_div', options, (a: unknown, b: unknown) => {
    if (a === null || b === null) return null;
    return checked((toBig(a) * SCALE) / divisor(toBig(b)), -DECIMAL_MAX, DECIMAL_MAX);
  });
  db.function('odata_length', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.length : s === null ? null : String(s).length));
  // Millionths take remainders as integers: the same scale in and out.
  db.function('odata_dec_mod', options, (a: unknown, b: unknown) => (a === null || b === null ? null : toBig(a) % divisor(toBig(b))));
  db.function('odata_lower', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : s));
  db.function('odata_upper', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.toUpperCase() : s));
}
