/**
 * The expression parser of $filter and $orderby: an operator-precedence parser with explicit
 * stacks (no recursion), so no input can exhaust the call stack. Each node is bound (./bind.ts,
 * ./functions.ts) as soon as it is reduced, so the result is the typed tree of ./ast.ts.
 *
 * Precedence, high to low (OData v2's): ( ), member access and calls, unary - and
 * not, mul div mod, add sub, lt gt le ge, eq ne, and, or; binary operators are left-associative.
 *
 * Limits are enforced as the text is read, before the work they bound: the length first, then
 * every node and every level of nesting when it is opened.
 */
import type { EntityTypeDef, Model } from '../../model/types';
import { badRequest, type ODataError } from '../errors';
import { checkExpressionCost } from './cost';
import { DEFAULT_EXPR_LIMITS, type BinaryOperator, type Expr, type ExprLimits, type FunctionName } from './ast';
import { bindBinary, bindMember, bindUnary, type Operand, type PathSegment } from './bind';
import { bindCall, lookupFunction } from './functions';
import { bindTypeFunction, TYPE_FUNCTIONS, type TypeFunctionName } from './type-functions';
import { describeToken, Lexer, type Token } from './lexer';
import { literalOfToken } from './literals';
import { show } from './show';

const PRECEDENCE: Readonly<Record<BinaryOperator, number>> = {
  or: 1,
  and: 2,
  eq: 3,
  ne: 3,
  lt: 4,
  gt: 4,
  le: 4,
  ge: 4,
  add: 5,
  sub: 5,
  mul: 6,
  div: 6,
  mod: 6,
};

function binaryOperator(name: string): BinaryOperator | undefined {
  return Object.prototype.hasOwnProperty.call(PRECEDENCE, name) ? (name as BinaryOperator) : undefined;
}

/** An operator or bracket read but not yet reduced. */
type Pending =
  | { readonly kind: 'binary'; readonly op: BinaryOperator; readonly precedence: number; readonly pos: number }
  | { readonly kind: 'unary'; readonly op: 'not' | 'negate'; readonly pos: number }
  /** `base`: the operand stack height when the bracket opened. */
  | { readonly kind: 'paren'; readonly pos: number; readonly base: number }
  | { readonly kind: 'call'; readonly name: FunctionName | TypeFunctionName; readonly pos: number; readonly open: number; readonly base: number };

type Bracket = Extract<Pending, { kind: 'paren' | 'call' }>;

/**
 * Where an expression ends: 'text' at the end of the text only; 'item' (an $orderby item) also at
 * a ',' or `asc`/`desc` outside brackets.
 */
export type ExpressionEnd = 'text' | 'item';

/** The option being parsed, for messages. */
export type ExpressionOption = '$filter' | '$orderby';

export class ExpressionParser {
  readonly lexer: Lexer;
  /** Nodes read so far, over all expressions of the text. */
  private nodes = 0;
  /** Open brackets and unary operators. */
  private depth = 0;

  constructor(
    private readonly model: Model,
    private readonly type: EntityTypeDef,
    text: string,
    private readonly option: ExpressionOption,
    private readonly limits: ExprLimits = DEFAULT_EXPR_LIMITS,
  ) {
    // The length first: everything after costs time in proportion to it.
    if (text.length > limits.maxLength) {
      throw badRequest(`The ${option} option is ${text.length} characters long, more than the ${limits.maxLength} allowed.`);
    }
    this.lexer = new Lexer(text, option);
  }

  /** One expression, from the current token to where `end` says it ends (that token is not consumed). */
  parseExpression(end: ExpressionEnd): Expr {
    const operands: Operand[] = [];
    const pending: Pending[] = [];
    let expectOperand = true;
    for (;;) {
      if (expectOperand) {
        expectOperand = this.readOperand(operands, pending);
        continue;
      }
      const token = this.lexer.peek();
      const op = token.kind === 'name' ? binaryOperator(token.text) : undefined;
      if (op !== undefined) {
        this.lexer.next();
        const precedence = PRECEDENCE[op];
        // Left-associative: first reduce what binds at least as tightly (unary operators bind tighter than any binary one).
        while (bindsAtLeast(pending.at(-1), precedence)) this.reduce(operands, pending);
        this.countNode(token.pos);
        pending.push({ kind: 'binary', op, precedence, pos: token.pos });
        expectOperand = true;
        continue;
      }
      switch (token.kind) {
        case 'comma': {
          const bracket = this.reduceToBracket(operands, pending);
          if (bracket?.kind === 'call') {
            this.lexer.next();
            expectOperand = true;
            continue;
          }
          if (bracket === undefined && end === 'item') return this.result(operands, token);
          throw this.lexer.syntaxError(
            token.pos,
            end === 'item'
              ? "',' separates function arguments and $orderby items only; a ')' is missing before it."
              : "',' separates function arguments only.",
          );
        }
        case 'close': {
          const bracket = this.reduceToBracket(operands, pending);
          if (bracket === undefined) throw this.unbalanced(`the ')' at position ${token.pos} has no matching '('.`);
          this.lexer.next();
          pending.pop();
          this.depth--;
          const args = operands.splice(bracket.base);
          if (bracket.kind === 'call') {
            operands.push({ expr: this.bindCallOf(bracket.name, bracket.pos, args), pos: bracket.pos });
          } else {
            const inner = args[0];
            if (inner === undefined || args.length !== 1) throw this.lexer.syntaxError(token.pos, 'the parentheses hold no single expression.');
            operands.push({ expr: inner.expr, pos: bracket.pos });
          }
          continue;
        }
        case 'end': {
          const bracket = this.reduceToBracket(operands, pending);
          if (bracket !== undefined) {
            const open = bracket.kind === 'call' ? bracket.open : bracket.pos;
            throw this.unbalanced(`the '(' at position ${open} is not closed.`);
          }
          return this.result(operands, token);
        }
        case 'name':
          if (end === 'item' && (token.text === 'asc' || token.text === 'desc')) {
            const bracket = this.reduceToBracket(operands, pending);
            if (bracket === undefined) return this.result(operands, token);
            throw this.lexer.syntaxError(token.pos, `expected ')' before '${token.text}'.`);
          }
          break;
      }
      throw this.lexer.syntaxError(token.pos, `expected an operator such as 'eq' or 'and', or the end, but found ${describeToken(token)}.${caseHint(token)}`);
    }
  }

  /**
   * Reads prefix operators and brackets, or one operand. Returns whether an operand is still
   * expected (after a prefix operator or an opening bracket).
   */
  private readOperand(operands: Operand[], pending: Pending[]): boolean {
    const token = this.lexer.next();
    if (token.kind === 'open') {
      this.nest(token.pos);
      pending.push({ kind: 'paren', pos: token.pos, base: operands.length });
      return true;
    }
    if (token.kind === 'minus' || (token.kind === 'name' && token.text === 'not')) {
      this.nest(token.pos);
      this.countNode(token.pos);
      pending.push({ kind: 'unary', op: token.kind === 'minus' ? 'negate' : 'not', pos: token.pos });
      return true;
    }
    const literal = literalOfToken(token, this.lexer);
    if (literal !== undefined) {
      this.countNode(token.pos);
      operands.push({ expr: literal, pos: token.pos });
      return false;
    }
    if (token.kind !== 'name') {
      throw this.lexer.syntaxError(token.pos, `expected an expression but found ${describeToken(token)}.`);
    }
    if (binaryOperator(token.text) !== undefined) {
      throw this.lexer.syntaxError(token.pos, `expected an expression but found the operator '${token.text}'.`);
    }
    if (this.lexer.peek().kind === 'open') {
      // The name is checked before its arguments are read.
      const name = lookupFunction(token.text, token.pos);
      this.nest(token.pos);
      this.countNode(token.pos);
      const open = this.lexer.next();
      if (this.lexer.peek().kind === 'close') {
        this.lexer.next();
        this.depth--;
        operands.push({ expr: this.bindCallOf(name, token.pos, []), pos: token.pos });
        return false;
      }
      pending.push({ kind: 'call', name, pos: token.pos, open: open.pos, base: operands.length });
      return true;
    }
    const path = this.memberPath(token.text, token.pos);
    this.countNode(token.pos);
    operands.push({ expr: bindMember(this.model, this.type, path), pos: token.pos });
    return false;
  }

  /** A call of a canonical function, or of isof/cast, which need the model. */
  private bindCallOf(name: FunctionName | TypeFunctionName, pos: number, args: readonly Operand[]): Expr {
    return TYPE_FUNCTIONS.has(name) ? bindTypeFunction(this.model, this.type, name as TypeFunctionName, pos, args) : bindCall(name as FunctionName, pos, args);
  }

  /** `Name` or `Nav/…/Name`, the first name already read. */
  private memberPath(first: string, pos: number): PathSegment[] {
    const segments: PathSegment[] = [{ name: first, pos }];
    while (this.lexer.peek().kind === 'slash') {
      this.lexer.next();
      const token = this.lexer.next();
      if (token.kind !== 'name') {
        throw this.lexer.syntaxError(token.pos, `expected a property or navigation name after '/' but found ${describeToken(token)}.`);
      }
      segments.push({ name: token.text, pos: token.pos });
    }
    return segments;
  }

  /** Reduces operators down to the innermost open bracket, which it returns (not popped). */
  private reduceToBracket(operands: Operand[], pending: Pending[]): Bracket | undefined {
    for (let top = pending.at(-1); top !== undefined; top = pending.at(-1)) {
      if (top.kind === 'paren' || top.kind === 'call') return top;
      this.reduce(operands, pending);
    }
    return undefined;
  }

  /** Binds the operator on top of `pending` to its operands. */
  private reduce(operands: Operand[], pending: Pending[]): void {
    const top = pending.pop();
    if (top === undefined || top.kind === 'paren' || top.kind === 'call') return;
    const right = this.popOperand(operands, top.pos);
    if (top.kind === 'unary') {
      this.depth--;
      operands.push({ expr: bindUnary(top.op, top.pos, right), pos: top.pos });
      return;
    }
    const left = this.popOperand(operands, top.pos);
    operands.push({ expr: bindBinary(top.op, top.pos, left, right), pos: left.pos });
  }

  private popOperand(operands: Operand[], pos: number): Operand {
    const operand = operands.pop();
    // The grammar always leaves an operand here; kept a 400 so that no input can cause a fault.
    if (operand === undefined) throw this.lexer.syntaxError(pos, 'an operand is missing.');
    return operand;
  }

  private result(operands: Operand[], token: Token): Expr {
    const only = operands[0];
    if (only === undefined || operands.length !== 1) throw this.lexer.syntaxError(token.pos, 'the expression is incomplete.');
    return only.expr;
  }

  private countNode(pos: number): void {
    this.nodes++;
    if (this.nodes > this.limits.maxNodes) {
      throw badRequest(`The ${this.option} expression has more than ${this.limits.maxNodes} nodes (reached at position ${pos}).`);
    }
  }

  private nest(pos: number): void {
    this.depth++;
    if (this.depth > this.limits.maxDepth) {
      throw badRequest(
        `The ${this.option} expression is nested more than ${this.limits.maxDepth} level${this.limits.maxDepth === 1 ? '' : 's'} deep at position ${pos} ` +
          '(parentheses, function calls and unary operators).',
      );
    }
  }

  private unbalanced(detail: string): ODataError {
    return badRequest(`Unbalanced parentheses in ${this.option}: ${detail}`);
  }
}

function bindsAtLeast(top: Pending | undefined, precedence: number): boolean {
  return top !== undefined && (top.kind === 'unary' || (top.kind === 'binary' && top.precedence >= precedence));
}

/** "GT" for "gt": operators are lower-case keywords. */
function caseHint(token: Token): string {
  if (token.kind !== 'name') return '';
  const lower = token.text.toLowerCase();
  return lower !== token.text && binaryOperator(lower) !== undefined ? ` Operators are lower-case: '${show(lower)}'.` : '';
}

/** A $filter: a Boolean expression (a bare Boolean property or function is one). */
export function parseFilter(model: Model, type: EntityTypeDef, text: string, limits: ExprLimits = DEFAULT_EXPR_LIMITS): Expr {
  const parser = new ExpressionParser(model, type, text, '$filter', limits);
  if (parser.lexer.peek().kind === 'end') throw badRequest('The $filter expression is empty.');
  const expr = parser.parseExpression('text');
  if (expr.type !== 'Edm.Boolean') {
    throw badRequest(`The $filter expression must be a Boolean expression; this one is of type '${expr.type}'.`);
  }
  checkExpressionCost(expr, '$filter', limits);
  return expr;
}
