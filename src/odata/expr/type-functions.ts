/**
 * `isof` and `cast`, the type functions of the OData v2 grammar, bound into the nodes the other
 * operators use (a Boolean literal, a null test, a numeric widening), so the SQL compiler needs
 * nothing new. The model has no derived entity types and no Double, which decides what they can
 * mean here:
 *
 * - `isof('NS.Type')` tests the entity being filtered: true for its own type, false for another
 *   entity type of the model;
 * - `isof(expr, 'Edm.X')` is true when `expr` has type Edm.X and is not null (as .NET's `is`);
 *   false for another primitive type;
 * - `cast(expr, 'Edm.X')` to the expression's own type, or a widening among Int32, Int64 and
 *   Decimal. Other casts (narrowing, to or from text, to an entity type) answer 400 naming them.
 */
import { qualifiedName } from '../../model/define';
import type { EntityTypeDef, Model } from '../../model/types';
import { badRequest } from '../errors';
import type { Expr, ExprType } from './ast';
import { isNullLiteral, type Operand } from './bind';
import { literal } from './literals';
import { show } from './show';

export type TypeFunctionName = 'isof' | 'cast';

export const TYPE_FUNCTIONS: ReadonlySet<string> = new Set<TypeFunctionName>(['isof', 'cast']);

/** Every primitive type name of OData v2; the model's expressions use some of them. */
const EDM_TYPES: ReadonlySet<string> = new Set([
  'Edm.Binary', 'Edm.Boolean', 'Edm.Byte', 'Edm.DateTime', 'Edm.DateTimeOffset', 'Edm.Decimal', 'Edm.Double', 'Edm.Guid',
  'Edm.Int16', 'Edm.Int32', 'Edm.Int64', 'Edm.SByte', 'Edm.Single', 'Edm.String', 'Edm.Time',
]);

/** The types a null literal may be cast to: those an expression of this service can have. */
const CAST_TARGETS: ReadonlySet<string> = new Set(['Edm.Int32', 'Edm.Int64', 'Edm.Decimal', 'Edm.String', 'Edm.Boolean', 'Edm.DateTime', 'Edm.Guid']);

const WIDER: Readonly<Record<string, readonly ExprType[]>> = {
  'Edm.Int32': ['Edm.Int64', 'Edm.Decimal'],
  'Edm.Int64': ['Edm.Decimal'],
};

/** The type name a type function's last argument gives: a string literal. */
function typeName(name: TypeFunctionName, pos: number, arg: Operand | undefined): string {
  const e = arg?.expr;
  if (e === undefined || e.kind !== 'literal' || e.type !== 'Edm.String' || typeof e.value !== 'string') {
    throw badRequest(`The function '${name}' at position ${pos} takes a type name as a string literal as its last argument, such as '${name}(Price, 'Edm.Decimal')'.`);
  }
  return e.value;
}

function unknownType(name: TypeFunctionName, pos: number, type: string) {
  return badRequest(`The function '${name}' at position ${pos} names the type '${show(type)}', which is neither an Edm primitive type nor an entity type of this service.`);
}

export function bindTypeFunction(model: Model, entity: EntityTypeDef, name: TypeFunctionName, pos: number, args: readonly Operand[]): Expr {
  if (args.length < 1 || args.length > 2) {
    throw badRequest(`The function '${name}' at position ${pos} takes 1 or 2 arguments, not ${args.length}: ${name}([expression,] 'type name').`);
  }
  const type = typeName(name, pos, args[args.length - 1]);
  const isEntityType = model.entityTypes.some((t) => qualifiedName(model, t) === type);
  if (!isEntityType && !EDM_TYPES.has(type)) throw unknownType(name, pos, type);
  if (args.length === 1) {
    if (name === 'isof' && isEntityType) return literal('Edm.Boolean', type === qualifiedName(model, entity));
    throw badRequest(
      name === 'isof'
        ? `isof with one argument at position ${pos} tests the entity's type: name an entity type such as '${qualifiedName(model, entity)}', not '${show(type)}'.`
        : `cast with one argument at position ${pos} casts the entity to a derived type; this service has no derived types.`,
    );
  }
  const operand = args[0]!.expr;
  if (isEntityType) throw badRequest(`The function '${name}' at position ${pos} applies an entity type to a value of type '${operand.type}'; a value has a primitive type.`);
  if (name === 'isof') {
    if (isNullLiteral(operand) || operand.type !== type) return literal('Edm.Boolean', false);
    return { kind: 'binary', op: 'ne', type: 'Edm.Boolean', left: operand, right: literal(operand.type, null) };
  }
  if (isNullLiteral(operand) && CAST_TARGETS.has(type)) return literal(type as ExprType, null);
  if (operand.type === type) return operand;
  if (WIDER[operand.type]?.includes(type as ExprType)) return { kind: 'convert', type: type as 'Edm.Int64' | 'Edm.Decimal', operand };
  throw badRequest(`cast at position ${pos} from '${operand.type}' to '${show(type)}' is not supported: only a cast to the value's own type and the widenings Int32 to Int64 or Decimal and Int64 to Decimal are.`);
}

