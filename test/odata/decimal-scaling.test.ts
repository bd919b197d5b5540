/**
 * Decimals are stored as integer millionths (SQLite) and read back as canonical text. The
 * conversion has a fast path for amounts a double holds exactly and a bigint path beyond it; both
 * must give the same text, at every edge between them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DECIMAL_SCALE, decimalToScaled, parseDecimalText, scaledToDecimal } from '../../src/odata/edm';

/** The reference: digits and a decimal point placed by string arithmetic alone. */
function referenceText(scaled: bigint): string {
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(DECIMAL_SCALE + 1, '0');
  const integer = digits.slice(0, -DECIMAL_SCALE);
  const fraction = digits.slice(-DECIMAL_SCALE).replace(/0+$/, '');
  return `${negative ? '-' : ''}${integer}${fraction ? '.' + fraction : ''}`;
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const EDGES = [0n, 1n, -1n, 999_999n, 1_000_000n, -1_000_000n, 1_000_001n, 19_990_000n, -500_000n, SAFE - 1n, SAFE, SAFE + 1n, -SAFE, -SAFE - 1n, 999_999_999_999_999_999n, -999_999_999_999_999_999n];

test('scaled millionths read back as canonical text on both sides of the exact-double range', () => {
  for (const scaled of EDGES) assert.equal(scaledToDecimal(scaled), referenceText(scaled), `scaled ${scaled}`);
  // A spread of values with every fraction length.
  for (let i = 0; i < 2000; i++) {
    const scaled = BigInt(Math.floor(Math.random() * 2 ** 53)) * (i % 2 ? -1n : 1n) * BigInt(10 ** (i % 7));
    assert.equal(scaledToDecimal(scaled), referenceText(scaled), `scaled ${scaled}`);
  }
});

test('canonical text round-trips through the stored millionths', () => {
  for (const text of ['0', '1', '-1', '0.5', '-0.5', '19.99', '0.000001', '-0.000001', '123456789012.123456', '-999999999999.999999', '9007199254.740991', '9007199254.740993']) {
    const canonical = parseDecimalText(text);
    assert.equal(scaledToDecimal(decimalToScaled(canonical)), canonical, text);
  }
  assert.equal(decimalToScaled('19.99'), 19_990_000n);
  assert.equal(decimalToScaled('-0.5'), -500_000n);
  assert.equal(decimalToScaled('12'), 12_000_000n);
});

test('a fraction finer than millionths is refused, not stored wrongly', () => {
  assert.throws(() => decimalToScaled('1.1234567'), /more than 6 decimal places/);
});
