/**
 * Test helpers for the expression parser: a tree as a compact S-expression string, so that
 * expectations are literals, and a check that a call fails with a 400 ODataError.
 *
 *   literal   5  5L  5M  'x'  true  datetime'…'  guid'…'   null (type Null)   null:Edm.String (typed null)
 *   property  Title  Product/Title
 *   convert   (->Int64 StockAmount)
 *   unary     (not X)  (- X)
 *   binary    (eq L R)
 *   call      (startswith Title 'B')
 */
import assert from 'node:assert/strict';

import type { Expr, ExpandNode } from '../../../src/odata/expr/ast';
import { formatUriLiteral } from '../../../src/odata/expr/literals';
import { ODataError } from '../../../src/odata/errors';

export function sexpr(e: Expr): string {
  switch (e.kind) {
    case 'literal':
      if (e.value === null) return e.type === 'Null' ? 'null' : `null:${e.type}`;
      return formatUriLiteral(e.type, e.value);
    case 'property':
      return [...e.navigations.map((n) => n.name), e.property.name].join('/');
    case 'convert':
      return `(->${e.type.slice(4)} ${sexpr(e.operand)})`;
    case 'unary':
      return `(${e.op === 'not' ? 'not' : '-'} ${sexpr(e.operand)})`;
    case 'binary':
      return `(${e.op} ${sexpr(e.left)} ${sexpr(e.right)})`;
    case 'call':
      return `(${[e.name, ...e.args.map(sexpr)].join(' ')})`;
  }
}

/** Nodes as the limits count them: every node but convert. */
export function countNodes(e: Expr): number {
  switch (e.kind) {
    case 'literal':
    case 'property':
      return 1;
    case 'convert':
      return countNodes(e.operand);
    case 'unary':
      return 1 + countNodes(e.operand);
    case 'binary':
      return 1 + countNodes(e.left) + countNodes(e.right);
    case 'call':
      return 1 + e.args.reduce((sum, a) => sum + countNodes(a), 0);
  }
}

/** An expand tree as text: `A(B,C),D` with the names as written. */
export function expandText(nodes: readonly ExpandNode[]): string {
  return nodes.map((n) => (n.children.length ? `${n.name}(${expandText(n.children)})` : n.name)).join(',');
}

/**
 * Asserts that `run` throws a 400 ODataError whose message contains every one of `parts`
 * (a string, matched literally, or a RegExp); returns the message.
 */
export function assertBadRequest(run: () => unknown, ...parts: (string | RegExp)[]): string {
  let thrown: unknown;
  try {
    run();
  } catch (e) {
    thrown = e;
  }
  assert.ok(thrown !== undefined, 'expected a 400, but nothing was thrown');
  assert.ok(thrown instanceof ODataError, `expected an ODataError, got ${String(thrown)}`);
  assert.equal(thrown.status, 400);
  for (const part of parts) {
    if (typeof part === 'string') assert.ok(thrown.message.includes(part), `message ${JSON.stringify(thrown.message)} lacks ${JSON.stringify(part)}`);
    else assert.match(thrown.message, part);
  }
  return thrown.message;
}
