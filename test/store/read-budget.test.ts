/**
 * StatementBudget (src/store/sqlite/functions.ts), the time budget SQLite checks for every row a
 * filtered read looks at: it reads the clock only once per a few dozen rows, so it must still stop
 * a statement at the first row after arming that finds the deadline passed, and soon after it
 * passes mid-statement.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUDGET_MESSAGE, StatementBudget } from '../../src/store/sqlite/functions';

/** Long enough that the rows checked before the wait never find it passed, even on a busy machine. */
const BUDGET_MS = 50;

const waitPast = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() <= until);
};

/** How many rows the check lets pass before it stops the statement (Infinity: it never does). */
function rowsUntilStopped(budget: StatementBudget, atMost: number): number {
  for (let row = 0; row < atMost; row++) {
    try {
      budget.check();
    } catch (error) {
      assert.ok(error instanceof Error && error.message === BUDGET_MESSAGE);
      return row;
    }
  }
  return Infinity;
}

test('a deadline that passed before the first row stops the statement at its first row, however many rows the last statement left uncounted', () => {
  const budget = new StatementBudget(BUDGET_MS);
  budget.arm();
  assert.equal(rowsUntilStopped(budget, 5), Infinity);
  budget.disarm();
  budget.arm();
  waitPast(BUDGET_MS + 5);
  assert.equal(rowsUntilStopped(budget, 100), 0);
});

test('a deadline that passes mid-statement stops it within a few dozen rows', () => {
  const budget = new StatementBudget(BUDGET_MS);
  budget.arm();
  assert.equal(rowsUntilStopped(budget, 10), Infinity);
  waitPast(BUDGET_MS + 5);
  const rows = rowsUntilStopped(budget, 1000);
  assert.ok(rows <= 32, `stopped after ${rows} rows`);
});

test('disarmed, it never stops a statement', () => {
  const budget = new StatementBudget(BUDGET_MS);
  budget.arm();
  budget.disarm();
  waitPast(BUDGET_MS + 5);
  assert.equal(rowsUntilStopped(budget, 1000), Infinity);
});
