/**
 * ExprLimits: text length first, nodes and nesting depth as they are read; each limit accepted
 * exactly at its value and refused one above. Deeply nested input fails fast with a 400 and never
 * exhausts the stack, even with the limits lifted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';

import { model } from '../../../src/model/catalogue-model';
import { DEFAULT_EXPR_LIMITS, parseFilter, parseOrderBy, type Expr, type ExprLimits } from '../../../src/odata/expr';
import { assertBadRequest, countNodes, sexpr } from './tree-text';

const product = model.typeByName.get('Product')!;
const filter = (text: string, limits?: ExprLimits): Expr => parseFilter(model, product, text, limits);

/** A Boolean filter of exactly `n` (>= 3) nodes: `StockAmount eq k` clauses joined by `or`, topped up with `not`. */
function filterWithNodes(n: number): string {
  const clauses = Math.floor((n + 1) / 4);
  const extra = n - (4 * clauses - 1);
  const parts = Array.from({ length: clauses }, (_, i) => `StockAmount eq ${i}`);
  parts[0] = `${'not '.repeat(extra)}(${parts[0] ?? ''})`;
  return parts.join(' or ');
}

/** Runs `run`, which must fail with a 400, and returns how long it took in ms. */
function timedBadRequest(run: () => unknown, ...words: string[]): number {
  const start = performance.now();
  assertBadRequest(run, ...words);
  return performance.now() - start;
}

test('the defaults are 100 nodes, depth 32, 2048 characters, and the cost bounds', () => {
  assert.deepEqual(DEFAULT_EXPR_LIMITS, {
    maxNodes: 100,
    maxDepth: 32,
    maxLength: 2048,
    maxTextLength: 4 * 1024 * 1024,
    maxWorkPerRow: 256 * 1024 * 1024,
    unboundedTextLength: 1024 * 1024,
  });
});

test('exactly 100 nodes are accepted, 101 refused', () => {
  for (const n of [3, 4, 5, 6, 99, 100]) assert.equal(countNodes(filter(filterWithNodes(n))), n, `${n} nodes`);
  // The 101st node is the literal 24 of the last clause, 15 characters after its `StockAmount eq `.
  assert.equal(
    assertBadRequest(() => filter(filterWithNodes(101))),
    `The $filter expression has more than 100 nodes (reached at position ${filterWithNodes(101).lastIndexOf('StockAmount eq 24') + 15}).`,
  );
  // Convert nodes do not count: StockAmount widened to Int64 here.
  const widened = filter(filterWithNodes(100).replace(/StockAmount eq (\d+)/g, 'StockAmount eq $1L'));
  assert.match(sexpr(widened), /^\(or \(or .*\(eq \(->Int64 StockAmount\) 24L\)\)$/);
  assert.equal(countNodes(widened), 100);
  // Calls count one each, their arguments one each.
  assert.equal(countNodes(filter("startswith(Title, 'a')")), 3);
  const limits = { ...DEFAULT_EXPR_LIMITS, maxNodes: 3 };
  filter("startswith(Title, 'a')", limits);
  assertBadRequest(() => filter("startswith(Title, 'a') eq true", limits), 'more than 3 nodes');
});

test('nesting at maxDepth is accepted, one more level refused', () => {
  const depth = DEFAULT_EXPR_LIMITS.maxDepth;
  const shapes: [string, (n: number) => string][] = [
    ['parentheses', (n) => `${'('.repeat(n)}DisableAutomatch${')'.repeat(n)}`],
    ['not', (n) => `${'not '.repeat(n)}DisableAutomatch`],
    ['negation', (n) => `${'- '.repeat(n)}StockAmount eq 1`],
    ['calls', (n) => `${'tolower('.repeat(n)}Title${')'.repeat(n)} eq 'x'`],
    ['mixed', (n) => `${'not ('.repeat(n / 2)}DisableAutomatch${')'.repeat(n / 2)}`],
  ];
  for (const [name, build] of shapes) {
    assert.equal(filter(build(depth)).type, 'Edm.Boolean', name);
    if (name !== 'mixed') {
      const message = assertBadRequest(() => filter(build(depth + 1)), 'The $filter expression is nested more than 32 levels deep');
      assert.ok(message.length < 200, name);
    } else {
      assertBadRequest(() => filter(`not ${build(depth)}`), 'nested more than 32 levels');
    }
  }
  const shallow = { ...DEFAULT_EXPR_LIMITS, maxDepth: 2 };
  assert.equal(filter('not (DisableAutomatch)', shallow).type, 'Edm.Boolean');
  assertBadRequest(() => filter('not (not DisableAutomatch)', shallow), 'nested more than 2 levels deep at position 5');
  assertBadRequest(() => filter('length(trim(tolower(Title))) eq 1', shallow), 'more than 2 levels', 'position 12');
  // Binary chains are no nesting.
  assert.equal(filter(filterWithNodes(99), { ...DEFAULT_EXPR_LIMITS, maxDepth: 1 }).type, 'Edm.Boolean');
});

test('the length is checked first, and the message does not echo the text', () => {
  const padded = (n: number) => 'DisableAutomatch'.padEnd(n, ' ');
  assert.equal(filter(padded(2048)).type, 'Edm.Boolean');
  const message = assertBadRequest(() => filter(padded(2049)), 'The $filter option is 2049 characters long, more than the 2048 allowed.');
  assert.ok(!message.includes('DisableAutomatch'));
  // Even before any syntax error.
  assertBadRequest(() => filter(')'.repeat(3000)), 'more than the 2048 allowed');
  assertBadRequest(() => parseOrderBy(model, product, 'Id,'.repeat(1000)), 'The $orderby option is 3000 characters long');
});

test('100000 nested parentheses or nots fail fast with a 400', () => {
  const parens = '('.repeat(100_000);
  const nots = 'not '.repeat(100_000) + 'DisableAutomatch';
  const balanced = `${parens}DisableAutomatch${')'.repeat(100_000)}`;
  const roomy = { ...DEFAULT_EXPR_LIMITS, maxLength: 10_000_000 };
  const timings = [
    timedBadRequest(() => filter(parens), 'more than the 2048 allowed'),
    timedBadRequest(() => filter(nots), 'more than the 2048 allowed'),
    // With room for the text, the depth stops them at level 33.
    timedBadRequest(() => filter(parens, roomy), 'nested more than 32 levels deep at position 32'),
    timedBadRequest(() => filter(nots, roomy), 'nested more than 32 levels deep at position 128'),
    timedBadRequest(() => filter(balanced, roomy), 'nested more than 32 levels'),
    timedBadRequest(() => filter('-'.repeat(100_000), roomy), 'nested more than 32 levels'),
  ];
  // Refusal takes well under a millisecond; 1 s (the bound on any answer) catches only a
  // pathological parser, never a busy CI machine.
  for (const ms of timings) assert.ok(ms < 1000, `took ${ms.toFixed(1)} ms`);
});

test('with every limit lifted, deep input still never exhausts the stack', () => {
  const unlimited = { ...DEFAULT_EXPR_LIMITS, maxNodes: Infinity, maxDepth: Infinity, maxLength: Infinity };
  const nots = filter('not '.repeat(100_000) + 'DisableAutomatch', unlimited);
  assert.equal(nots.kind === 'unary' && nots.op, 'not');
  const parens = filter(`${'('.repeat(100_000)}DisableAutomatch${')'.repeat(100_000)}`, unlimited);
  assert.equal(parens.kind === 'property' && parens.property.name, 'DisableAutomatch');
  const calls = filter(`${'trim('.repeat(50_000)}Title${')'.repeat(50_000)} eq 'x'`, unlimited);
  assert.equal(calls.kind, 'binary');
  assertBadRequest(() => filter('('.repeat(100_000), unlimited), 'Syntax error at position 100000', 'the end');
  assertBadRequest(() => filter(`${'('.repeat(100_000)}DisableAutomatch`, unlimited), 'Unbalanced parentheses', "'(' at position 99999");
  assertBadRequest(() => filter(`DisableAutomatch${')'.repeat(100_000)}`, unlimited), 'Unbalanced parentheses', "')' at position 16");
});

test('$orderby limits apply to the whole text', () => {
  assert.equal(parseOrderBy(model, product, Array(100).fill('Id').join(',')).length, 100);
  assertBadRequest(() => parseOrderBy(model, product, Array(101).fill('Id').join(',')), 'The $orderby expression has more than 100 nodes');
  const limits = { ...DEFAULT_EXPR_LIMITS, maxDepth: 1 };
  assert.equal(parseOrderBy(model, product, '(Id),(Title) desc', limits).length, 2);
  assertBadRequest(() => parseOrderBy(model, product, 'Id,((Title))', limits), 'The $orderby expression is nested more than 1 level deep at position 4');
});
