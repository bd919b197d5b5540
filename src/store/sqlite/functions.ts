/**
 * SQL functions the SQLite adapter adds to every connection, for operations SQLite does not do
 * the way the dialect's rules say (../sql/dialect.ts): exact Decimal multiplication and division
 * on the stored millionths (an integer product of two millionths overflows 64 bits long before
 * the values are large), and Unicode case mapping (SQLite's lower() and upper() know ASCII only).
 */
import type Database from 'better-sqlite3';
import { DECIMAL_SCALE, INT64_MAX, INT64_MIN } from '../../odata/edm';

const SCALE = 10n ** BigInt(DECIMAL_SCALE);

/** Thrown inside SQLite when a result leaves the range the engine can hold; answered with a 400. */
export const OVERFLOW_MESSAGE = 'odata_overflow';

function checked(value: bigint): bigint {
  if (value > INT64_MAX || value < INT64_MIN) throw new Error(OVERFLOW_MESSAGE);
  return value;
}

const toBig = (v: unknown): bigint => (typeof v === 'bigint' ? v : BigInt(v as number));

export function registerFunctions(db: Database.Database): void {
  const options = { deterministic: true, safeIntegers: true } as const;
  db.function('odata_dec_mul', options, (a: unknown, b: unknown) => {
    if (a === null || b === null) return null;
    // Truncates toward zero at the sixth decimal, like the division.
    return checked((toBig(a) * toBig(b)) / SCALE);
  });
  db.function('odata_dec_div', options, (a: unknown, b: unknown) => {
    if (a === null || b === null) return null;
    const divisor = toBig(b);
    if (divisor === 0n) return null;
    return checked((toBig(a) * SCALE) / divisor);
  });
  db.function('odata_lower', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : s));
  db.function('odata_upper', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.toUpperCase() : s));
}
