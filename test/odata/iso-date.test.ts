/**
 * The Atom writer's DateTime text (src/odata/iso-date.ts, through formatIsoDateTime) against the
 * platform's own calendar, Date#toISOString: every boundary of the Edm.DateTime range, leap days
 * of the Gregorian rules (divisible by 4, not by 100, but by 400), days before 1970, and 200,000
 * seeded values spread over the whole range.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DATETIME_MAX_MS, DATETIME_MIN_MS, formatIsoDateTime } from '../../src/odata/edm';
import { isoDateTimeText } from '../../src/odata/iso-date';
import { mulberry32 } from '../support/random';

/** What the writer must print: the ISO text without its zone, and without `.000`. */
function expected(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
}

const at = (text: string) => Date.parse(text + 'Z');

test('the boundaries of the range, leap days and days before 1970 read as the platform reads them', () => {
  const values = [
    DATETIME_MIN_MS,
    DATETIME_MAX_MS,
    0,
    -1,
    1,
    999,
    -86_400_000,
    at('0001-01-01T00:00:00.001'),
    at('0004-02-29T12:00:00'),
    at('1600-02-29T23:59:59.999'),
    at('1899-12-31T23:59:59'),
    at('1900-02-28T00:00:00'),
    at('1900-03-01T00:00:00'),
    at('1969-12-31T23:59:59.999'),
    at('2000-02-29T00:00:00'),
    at('2000-03-01T00:00:00'),
    at('2026-11-26T22:39:25.500'),
    at('2100-02-28T00:00:00'),
    at('2100-03-01T00:00:00'),
    at('9999-12-31T00:00:00'),
  ];
  for (const ms of values) assert.equal(formatIsoDateTime(ms), expected(ms), `ms ${ms}`);
});

test('200,000 seeded values over the whole range', () => {
  const random = mulberry32(20261126);
  const span = DATETIME_MAX_MS - DATETIME_MIN_MS;
  for (let i = 0; i < 200_000; i++) {
    // Whole seconds half of the time: the form without milliseconds is the common one.
    let ms = DATETIME_MIN_MS + Math.floor(random() * span);
    if (i % 2 === 0) ms -= ms % 1000;
    assert.equal(isoDateTimeText(ms), expected(ms), `ms ${ms}`);
  }
});

test('after 9999, before year 0001, and for a fraction of a millisecond, the fast path steps aside', () => {
  assert.equal(isoDateTimeText(DATETIME_MAX_MS + 1), undefined);
  assert.equal(isoDateTimeText(at('0000-01-01T00:00:00') - 1), undefined);
  assert.equal(isoDateTimeText(0.5), undefined);
  assert.equal(formatIsoDateTime(0.5), expected(0.5));
});
