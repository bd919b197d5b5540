/**
 * Type binding of one node at a time: the parser calls these as it reduces, with operands that
 * are already bound, so binding never walks a tree (and never recurses).
 *
 * Rules (OData v2's, narrowed to the model's types): numeric operands widen
 * Int32 -> Int64 -> Decimal to the wider of the two, a literal in place and anything else through
 * a `convert` node; comparisons need one type family; arithmetic needs numbers; and/or/not need
 * Booleans; the literal null takes the type the other side gives it.
 */
import { findNavigation, findProperty, qualifiedName } from '../../model/define';
import type { EntityTypeDef, Model, NavigationDef } from '../../model/types';
import { badRequest } from '../errors';
import type { BinaryExpr, BinaryOperator, Expr, ExprType, PropertyExpr, UnaryExpr } from './ast';
import { convertLiteral, literal } from './literals';
import { show } from './show';

/** A bound expression and where it starts in the text (for messages about it). */
export interface Operand {
  readonly expr: Expr;
  readonly pos: number;
}

/** A name in a member path and where it is written. */
export interface PathSegment {
  readonly name: string;
  readonly pos: number;
}

const NUMERIC_RANK: Partial<Record<ExprType, number>> = { 'Edm.Int32': 0, 'Edm.Int64': 1, 'Edm.Decimal': 2 };
const COMPARISONS: ReadonlySet<BinaryOperator> = new Set(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);
const LOGICAL: ReadonlySet<BinaryOperator> = new Set(['and', 'or']);

export const isNumeric = (type: ExprType): boolean => NUMERIC_RANK[type] !== undefined;

export const isNullLiteral = (e: Expr): boolean => e.kind === 'literal' && e.type === 'Null';

/**
 * `Name`, `Nav/Name`, `Nav/Nav/Name`: a property reached through single-valued navigations.
 * `segments` is never empty.
 */
export function bindMember(model: Model, type: EntityTypeDef, segments: readonly PathSegment[]): PropertyExpr {
  const navigations: NavigationDef[] = [];
  let current = type;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if (segment === undefined) break;
    const last = i === segments.length - 1;
    const typeName = qualifiedName(model, current);
    const property = findProperty(current, segment.name);
    if (property) {
      if (last) return { kind: 'property', type: property.type, navigations, property };
      throw badRequest(
        `'${show(segment.name)}' at position ${segment.pos} is a property of type '${typeName}', not a navigation property; ` +
          "it cannot be followed by '/'.",
      );
    }
    const navigation = findNavigation(current, segment.name);
    if (!navigation) throw badRequest(`No property '${show(segment.name)}' exists in type '${typeName}' at position ${segment.pos}.`);
    if (navigation.many) {
      throw badRequest(
        `The navigation property '${show(segment.name)}' of type '${typeName}' at position ${segment.pos} leads to many entities; ` +
          'only single-valued navigations may appear in an expression.',
      );
    }
    if (last) {
      throw badRequest(
        `The navigation property '${show(segment.name)}' of type '${typeName}' at position ${segment.pos} cannot be used as a value; ` +
          `name one of its properties, e.g. '${show(segment.name)}/Id'.`,
      );
    }
    const target = model.typeByName.get(navigation.target);
    if (!target) throw badRequest(`The navigation property '${show(segment.name)}' of type '${typeName}' leads to no known type.`);
    navigations.push(navigation);
    current = target;
  }
  // Unreachable with a non-empty path: the last segment returned or threw above.
  throw badRequest('An empty member path cannot be bound.');
}

/** `operand` as `target` (a wider numeric type): a literal converted in place, else a convert node. */
function widen(operand: Operand, target: ExprType): Expr {
  const e = operand.expr;
  if (e.type === target) return e;
  if (e.kind === 'literal') {
    const converted = convertLiteral(e, target);
    if (converted === undefined) {
      throw badRequest(
        `The literal at position ${operand.pos} has no exact ${target} value (at most 12 integer digits and 6 decimals), ` +
          'so it cannot be compared or combined with a value of that type.',
      );
    }
    return converted;
  }
  if (target !== 'Edm.Int64' && target !== 'Edm.Decimal') {
    throw badRequest(`The expression at position ${operand.pos} cannot be converted to ${target}.`);
  }
  return { kind: 'convert', type: target, operand: e };
}

function widerNumeric(a: ExprType, b: ExprType): ExprType {
  return (NUMERIC_RANK[a] ?? 0) >= (NUMERIC_RANK[b] ?? 0) ? a : b;
}

function incompatible(op: string, left: Expr, right: Expr, pos: number) {
  return badRequest(`Operator '${op}' incompatible with operand types '${left.type}' and '${right.type}' at position ${pos}.`);
}

/** The literal null typed as `type`; any other expression as it is. */
function typedNull(e: Expr, type: ExprType): Expr {
  return isNullLiteral(e) ? literal(type, null) : e;
}

export function bindBinary(op: BinaryOperator, opPos: number, left: Operand, right: Operand): BinaryExpr {
  const l = left.expr;
  const r = right.expr;

  if (LOGICAL.has(op)) {
    const lb = typedNull(l, 'Edm.Boolean');
    const rb = typedNull(r, 'Edm.Boolean');
    if (lb.type !== 'Edm.Boolean' || rb.type !== 'Edm.Boolean') throw incompatible(op, l, r, opPos);
    return { kind: 'binary', op, type: 'Edm.Boolean', left: lb, right: rb };
  }

  if (COMPARISONS.has(op)) {
    if (isNullLiteral(l) || isNullLiteral(r)) {
      // null compares with anything; it takes the other side's type ('Null' when both are null).
      return { kind: 'binary', op, type: 'Edm.Boolean', left: typedNull(l, r.type), right: typedNull(r, l.type) };
    }
    if (isNumeric(l.type) && isNumeric(r.type)) {
      const common = widerNumeric(l.type, r.type);
      return { kind: 'binary', op, type: 'Edm.Boolean', left: widen(left, common), right: widen(right, common) };
    }
    if (l.type !== r.type) throw incompatible(op, l, r, opPos);
    return { kind: 'binary', op, type: 'Edm.Boolean', left: l, right: r };
  }

  // Arithmetic: numbers only; a null operand makes the result null (lifted), typed as the other side.
  const lt = isNullLiteral(l) ? r.type : l.type;
  const rt = isNullLiteral(r) ? l.type : r.type;
  if (!isNumeric(lt) || !isNumeric(rt)) throw incompatible(op, l, r, opPos);
  const common = widerNumeric(lt, rt);
  if ((op === 'div' || op === 'mod') && r.kind === 'literal' && r.value !== null && Number(r.value) === 0) {
    throw badRequest(`Division by zero at position ${opPos}: the divisor of '${op}' is the literal ${show(String(r.value))}.`);
  }
  return {
    kind: 'binary',
    op,
    type: common,
    left: isNullLiteral(l) ? literal(common, null) : widen(left, common),
    right: isNullLiteral(r) ? literal(common, null) : widen(right, common),
  };
}

export function bindUnary(op: 'not' | 'negate', opPos: number, operand: Operand): UnaryExpr {
  const e = operand.expr;
  if (op === 'not') {
    const b = typedNull(e, 'Edm.Boolean');
    if (b.type !== 'Edm.Boolean') {
      throw badRequest(`Operator 'not' incompatible with operand type '${e.type}' at position ${opPos}.`);
    }
    return { kind: 'unary', op, type: 'Edm.Boolean', operand: b };
  }
  if (!isNumeric(e.type)) throw badRequest(`Operator '-' incompatible with operand type '${e.type}' at position ${opPos}.`);
  return { kind: 'unary', op, type: e.type, operand: e };
}

/** An argument bound to a parameter type, or undefined when it does not fit. */
export function bindArgument(argument: Operand, parameter: ExprType): Expr | undefined {
  const e = argument.expr;
  if (isNullLiteral(e)) return literal(parameter, null);
  if (e.type === parameter) return e;
  if (e.kind === 'literal') return convertLiteral(e, parameter);
  // Non-literals only widen: an Int64 property is no Int32 position.
  if (isNumeric(e.type) && parameter !== 'Edm.Int32' && isNumeric(parameter) && widerNumeric(e.type, parameter) === parameter) {
    return { kind: 'convert', type: parameter as 'Edm.Int64' | 'Edm.Decimal', operand: e };
  }
  return undefined;
}
