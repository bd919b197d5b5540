/**
 * The log lines' timestamp (src/server/log-time.ts) is exactly the text pino's isoTime writes,
 * for every millisecond across second, day, month and year boundaries, leap days included,
 * and whatever order the times come in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { logTimeAt } from '../../src/server/log-time';

const pinoIsoTime = (now: number) => `,"time":"${new Date(now).toISOString()}"`;

test("a line's timestamp is the text of pino's isoTime, millisecond by millisecond across boundaries", () => {
  const boundaries = ['2026-11-27T01:38:46.000Z', '2026-12-31T23:59:59.000Z', '2028-02-29T23:59:59.000Z', '2000-02-28T23:59:59.000Z', '1999-12-31T23:59:59.000Z'];
  let checked = 0;
  for (const iso of boundaries) {
    const start = Date.parse(iso) - 1500;
    for (let now = start; now < start + 3000; now++, checked++) assert.equal(logTimeAt(now), pinoIsoTime(now));
  }
  assert.equal(checked, boundaries.length * 3000);
});

test('times out of order (two processes, a clock stepped back) still get their own second', () => {
  const times = [Date.parse('2026-11-27T01:38:46.999Z'), Date.parse('2026-11-27T01:38:45.001Z'), Date.parse('2026-11-27T01:38:46.000Z'), 0, 1_700_000_000_123];
  for (let round = 0; round < 3; round++) for (const now of times) assert.equal(logTimeAt(now), pinoIsoTime(now));
});
