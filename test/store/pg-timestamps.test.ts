/**
 * PostgreSQL's `timestamp` text as the server writes it (DateStyle ISO: trailing zeros of the
 * fraction dropped, up to six digits, years before 100 and BC) read back as the UTC milliseconds
 * it holds, by the common-shape reader and the general one alike.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTimestamp } from '../../src/store/postgres/values';

test('timestamp text in every shape the server writes reads as its UTC milliseconds', () => {
  const cases: [string, number][] = [
    ['2026-01-15 09:00:00', Date.UTC(2026, 0, 15, 9, 0, 0)],
    ['2026-01-15 09:00:00.1', Date.UTC(2026, 0, 15, 9, 0, 0, 100)],
    ['2026-01-15 09:00:00.12', Date.UTC(2026, 0, 15, 9, 0, 0, 120)],
    ['2026-01-15 09:00:00.123', Date.UTC(2026, 0, 15, 9, 0, 0, 123)],
    ['2026-01-15 09:00:00.123456', Date.UTC(2026, 0, 15, 9, 0, 0, 123)],
    ['1969-12-31 23:59:59.999', -1],
    ['1970-01-01 00:00:00', 0],
    ['2024-02-29 23:59:59.5', Date.UTC(2024, 1, 29, 23, 59, 59, 500)],
    ['9999-12-31 23:59:59.999', 253402300799999],
    ['0100-03-01 00:00:00', -59006361600000],
    // Years below 100, BC and beyond 9999 take the general reader.
    ['0050-06-01 12:00:00', -60576206400000],
    ['0001-01-01 00:00:00', -62135596800000],
    ['0001-01-01 00:00:00 BC', -62167219200000],
    ['33658-09-27 01:46:39.999', 999999999999999],
  ];
  for (const [text, ms] of cases) assert.equal(parseTimestamp(text), ms, text);
  assert.throws(() => parseTimestamp('2026-01-15T09:00:00'), /Unexpected timestamp text/);
});
