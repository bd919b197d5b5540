/**
 * What evaluating an expression can cost, worked out from the bound tree and the model before the
 * database sees it. Two bounds, each a 400 naming it when exceeded:
 *
 * - the longest text any node can produce. Text functions that grow text (replace, concat,
 *   toupper, tolower) multiply or add their arguments' lengths, so a few nested calls over a
 *   long property reach gigabytes: SQLite then fails with "string or blob too big" after holding
 *   the event loop for seconds, and PostgreSQL runs out of memory;
 * - the work per row, in characters read or written: a search (substringof, indexof) can compare
 *   its needle at every position of its haystack, so its cost is the product of the two lengths.
 *
 * A text property's bound is its MaxLength; one without a MaxLength can hold at most what one
 * request body carries (the caller says how much). Everything here is an upper bound: a row's
 * real cost is usually far lower, and the statement's time budget (in the store) bounds the rest.
 */
import type { Expr } from './ast';
import type { ExprLimits } from './ast';
import { badRequest } from '../errors';

/**
 * Case mapping can lengthen text: 'ß' upper-cases to 'SS', 'ŉ' to 'ʼN', 'ΐ' to three code units.
 * What a mapping produced maps again to text of the same length ('SS', 'ss'), so text grows by
 * this only once, however many tolower and toupper are nested.
 */
const CASE_MAPPING_GROWTH = 3;

interface NodeCost {
  /** The longest text the node can produce (0 for values that are not text). */
  readonly length: number;
  /** The part of that length no case mapping has produced yet (and which can still grow by one). */
  readonly unmapped: number;
  /** Characters read and written to evaluate the node and its operands once. */
  readonly work: number;
}

const FLAT: NodeCost = { length: 0, unmapped: 0, work: 1 };

/** The bounds of `expr`, or a 400 naming the option and the bound it would pass. */
export function checkExpressionCost(expr: Expr, option: string, limits: ExprLimits): void {
  const cost = costOf(expr, limits);
  if (cost.work > limits.maxWorkPerRow) {
    throw badRequest(
      `The ${option} expression could cost up to ${Math.round(cost.work).toLocaleString('en-US')} character operations per row, ` +
        `more than the limit of ${limits.maxWorkPerRow.toLocaleString('en-US')}: every text function reads and writes its text, and a ` +
        "search (substringof, indexof) costs its haystack's length times its needle's. Use fewer functions, shorter text or a shorter needle.",
    );
  }
}

/** The operands of a node, in order. */
function operandsOf(expr: Expr): readonly Expr[] {
  switch (expr.kind) {
    case 'convert':
    case 'unary':
      return [expr.operand];
    case 'binary':
      return [expr.left, expr.right];
    case 'call':
      return expr.args;
    default:
      return [];
  }
}

/**
 * The cost of the tree, operands before the nodes that use them. Iterative, like the parser:
 * with the node and depth limits lifted, a tree can be 100,000 levels deep.
 */
function costOf(root: Expr, limits: ExprLimits): NodeCost {
  // The costs of the nodes done so far, in the order they were done: a node's operands are done
  // one after the other just before it, so theirs are the last ones here, in operand order. (A
  // map from node to cost did the same at several times the price: this runs for every $filter.)
  const done: NodeCost[] = [];
  const stack: { expr: Expr; expanded: boolean }[] = [{ expr: root, expanded: false }];
  while (stack.length > 0) {
    const top = stack.pop()!;
    const operands = operandsOf(top.expr);
    if (!top.expanded && operands.length > 0) {
      stack.push({ expr: top.expr, expanded: true });
      // Pushed last to first, so that the first operand is done first.
      for (let i = operands.length - 1; i >= 0; i--) stack.push({ expr: operands[i]!, expanded: false });
      continue;
    }
    const operandCosts = operands.length === 0 ? NO_OPERANDS : done.splice(done.length - operands.length, operands.length);
    done.push(nodeCost(top.expr, operandCosts, limits));
  }
  return done[0]!;
}

const NO_OPERANDS: readonly NodeCost[] = [];

/** One node's cost, given its operands' costs. */
function nodeCost(expr: Expr, operands: readonly NodeCost[], limits: ExprLimits): NodeCost {
  switch (expr.kind) {
    case 'literal':
      return text(typeof expr.value === 'string' ? expr.value.length : 0, 1);
    case 'property':
      return expr.type === 'Edm.String' ? text(expr.property.maxLength ?? limits.unboundedTextLength, 1) : FLAT;
    case 'convert':
    case 'unary':
      return { length: 0, unmapped: 0, work: operands[0]!.work + 1 };
    case 'binary': {
      const [left, right] = operands as [NodeCost, NodeCost];
      // A comparison of texts reads both; other operators are constant work.
      return { length: 0, unmapped: 0, work: left.work + right.work + left.length + right.length + 1 };
    }
    case 'call':
      return callCost(expr.name, operands, limits);
  }
}

/** Text of `length` characters that no case mapping has produced. */
function text(length: number, work: number): NodeCost {
  return { length, unmapped: length, work };
}

function callCost(name: string, args: readonly NodeCost[], limits: ExprLimits): NodeCost {
  const below = args.reduce((sum, a) => sum + a.work, 0);
  const first = args[0] ?? FLAT;
  const a = first.length;
  const b = args[1]?.length ?? 0;
  let result: NodeCost;
  switch (name) {
    case 'replace': {
      // Every occurrence of the needle (at most one per character) becomes the replacement.
      const length = a * Math.max(1, args[2]?.length ?? 0);
      result = text(length, a + length);
      break;
    }
    case 'concat':
      result = { length: a + b, unmapped: first.unmapped + (args[1]?.unmapped ?? 0), work: a + b };
      break;
    case 'tolower':
    case 'toupper': {
      const length = a - first.unmapped + first.unmapped * CASE_MAPPING_GROWTH;
      result = { length, unmapped: 0, work: a + length };
      break;
    }
    case 'trim':
    case 'substring':
      result = { length: a, unmapped: first.unmapped, work: a };
      break;
    case 'substringof':
    case 'indexof':
      // A search compares the needle at every position of the haystack: the product bounds it.
      result = { length: 0, unmapped: 0, work: Math.max(1, a) * Math.max(1, b) };
      break;
    case 'startswith':
    case 'endswith':
    case 'length':
      result = { length: 0, unmapped: 0, work: a + b };
      break;
    default:
      // Date parts and rounding: constant work on a value that is not text.
      result = FLAT;
  }
  if (result.length > limits.maxTextLength) {
    throw badRequest(
      `The function '${name}' could produce text of up to ${Math.round(result.length).toLocaleString('en-US')} characters, ` +
        `more than the limit of ${limits.maxTextLength.toLocaleString('en-US')}: nested replace and concat ` +
        'multiply or add up the length of their text. Nest fewer of them, or apply them to shorter properties.',
    );
  }
  return { ...result, work: below + result.work };
}
