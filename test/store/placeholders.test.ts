/**
 * `?` placeholders numbered for PostgreSQL: only the ones outside string literals, quoted
 * identifiers and comments, in order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { numberPlaceholders } from '../../src/store/postgres/placeholders';

test('placeholders are numbered in order; text inside quotes and comments is left alone', () => {
  assert.equal(numberPlaceholders('SELECT ? + ?, ?'), 'SELECT $1 + $2, $3');
  assert.equal(numberPlaceholders(`SELECT '?', 'it''s ?', ? FROM "odd?name" WHERE x = ?`), `SELECT '?', 'it''s ?', $1 FROM "odd?name" WHERE x = $2`);
  assert.equal(numberPlaceholders('SELECT ? -- why?\n, ? /* and ? here */ , ?'), 'SELECT $1 -- why?\n, $2 /* and ? here */ , $3');
  assert.equal(numberPlaceholders(`SELECT "a""?b", ?`), `SELECT "a""?b", $1`);
  assert.equal(numberPlaceholders('SELECT 1'), 'SELECT 1');
  // An unterminated quote runs to the end (the server reports the syntax error).
  assert.equal(numberPlaceholders(`SELECT ?, 'open ?`), `SELECT $1, 'open ?`);
});
