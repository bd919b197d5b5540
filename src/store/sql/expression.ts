/**
 * Compiles a bound $filter / $orderby tree (../../odata/expr/ast.ts) to SQL over one row alias.
 * Values only ever become bound parameters; names come from the model.
 *
 * Null semantics are those of WCF Data Services over .NET (docs/protocol.md, "$filter"):
 * - eq and ne are null-safe: null eq null is true, null ne 'x' is true;
 * - lt, le, gt and ge with a null operand are false (never unknown), so `not (Price lt 5)` holds
 *   for a null Price;
 * - arithmetic and functions of null are null (concat excepted: it reads null as ''), and a
 *   Boolean null (a null property, a function of null) makes `and`, `or` and `not` lifted, as
 *   SQL's three-valued logic does; the WHERE clause keeps only rows that are true.
 * The engine-specific spelling of each operation comes from the dialect.
 */
import type { EntityTypeDef, Model, NavigationDef } from '../../model/types';
import type { EdmType } from '../../model/types';
import { columnOf } from '../../model/define';
import type { BinaryExpr, ComparisonOperator, Expr, ExprType, OrderByItem } from '../../odata/expr/ast';
import type { SqlValue, ValueCodec } from '../store';
import type { NumericType, SqlDialect } from './dialect';
import type { SqlParams } from './params';

const q = (name: string) => `"${name}"`;

export interface ExpressionScope {
  readonly model: Model;
  readonly dialect: SqlDialect;
  readonly codec: ValueCodec;
  readonly params: SqlParams;
  /** Alias of the row the expression is about (its columns are `alias."column"`). */
  readonly alias: string;
  /** Placeholder of the caller's account id: every subquery is scoped by it too. */
  readonly account: string;
  /** Names subquery aliases uniquely within one statement. */
  readonly nextAlias: () => string;
}

/**
 * Whether an expression can be null, read off the tree without compiling it (compiling binds
 * parameters, and a comparison that turns out constant must not leave one unused).
 */
function canBeNull(e: Expr): boolean {
  switch (e.kind) {
    case 'literal':
      return e.value === null;
    case 'property':
      return e.navigations.length > 0 || e.property.nullable;
    case 'convert':
    case 'unary':
      return canBeNull(e.operand);
    case 'binary':
      switch (e.op) {
        case 'eq':
        case 'ne':
        case 'lt':
        case 'le':
        case 'gt':
        case 'ge':
          return false;
        default:
          return canBeNull(e.left) || canBeNull(e.right);
      }
    case 'call':
      // concat reads null as ''; every other function of a null argument is null.
      return e.name === 'concat' ? false : e.args.some(canBeNull);
  }
}

const RELATIONAL: Record<Exclude<ComparisonOperator, 'eq' | 'ne'>, string> = { lt: '<', le: '<=', gt: '>', ge: '>=' };

const isNullLiteral = (e: Expr) => e.kind === 'literal' && e.value === null;

/** The store type of an expression type (Guid literals are compared as their text). */
export function storedType(type: ExprType): EdmType | undefined {
  switch (type) {
    case 'Edm.Guid':
      return 'Edm.String';
    case 'Null':
      return undefined;
    default:
      return type;
  }
}

/** An expression's SQL: a $filter for a WHERE clause, or a value (an ordering key) to select. */
export function compileExpression(scope: ExpressionScope, expr: Expr): string {
  return compile(scope, expr);
}

/** `$orderby` items for an ORDER BY clause (the caller appends the key as the last tie-breaker). */
export function compileOrderBy(scope: ExpressionScope, items: readonly OrderByItem[]): string[] {
  return items.map((item) => scope.dialect.orderItem(compile(scope, item.expr), item.descending));
}

function compile(scope: ExpressionScope, e: Expr): string {
  switch (e.kind) {
    case 'literal':
      return literal(scope, e.type, e.value);
    case 'property':
      return property(scope, e.navigations, e.property.column);
    case 'convert':
      return scope.dialect.convert(e.operand.type as NumericType, e.type, compile(scope, e.operand));
    case 'unary':
      return e.op === 'not' ? `(NOT ${compile(scope, e.operand)})` : scope.dialect.negate(e.type as NumericType, compile(scope, e.operand));
    case 'binary':
      return binary(scope, e);
    case 'call':
      return scope.dialect.call(e.name, e.args.map((a) => compile(scope, a)));
  }
}

function literal(scope: ExpressionScope, type: ExprType, value: bigint | number | string | boolean | null): string {
  // A typed null, so that an engine that types parameters knows what a function receives.
  if (value === null) return type === 'Null' ? 'NULL' : scope.dialect.typed(type, 'NULL');
  return scope.dialect.typed(type, scope.params.add(encodeLiteral(scope.codec, type, value)));
}

/** A literal's value as the engine stores it (a $filter operand, a $skiptoken position). */
export function encodeLiteral(codec: ValueCodec, type: ExprType, value: bigint | number | string | boolean | null): SqlValue {
  const stored = storedType(type);
  return value === null || stored === undefined ? null : codec.encode(stored, value);
}

/**
 * A column of the row, or of an entity reached through single-valued navigations: a correlated
 * subquery per path, scoped by the account, that yields null when a navigation leads nowhere.
 */
function property(scope: ExpressionScope, navigations: readonly NavigationDef[], column: string): string {
  if (navigations.length === 0) return `${scope.alias}.${q(column)}`;
  let from = '';
  let where = '';
  let previousAlias = scope.alias;
  for (const [i, nav] of navigations.entries()) {
    const r = nav.relation;
    if (r.kind !== 'reference' || nav.many) throw new Error(`navigation ${nav.name} is not single-valued`);
    const dependent = scope.model.typeByName.get(r.dependent)!;
    const principal = scope.model.typeByName.get(r.principal)!;
    const fk = q(columnOf(dependent, r.foreignKey));
    const alias = scope.nextAlias();
    if (i === 0) {
      from = `${q(principal.table)} ${alias}`;
      where = `${alias}.account_id = ${scope.account} AND ${alias}.id = ${previousAlias}.${fk}`;
    } else {
      from += ` JOIN ${q(principal.table)} ${alias} ON ${alias}.account_id = ${previousAlias}.account_id AND ${alias}.id = ${previousAlias}.${fk}`;
    }
    previousAlias = alias;
  }
  return `(SELECT ${previousAlias}.${q(column)} FROM ${from} WHERE ${where})`;
}

function binary(scope: ExpressionScope, e: BinaryExpr): string {
  const d = scope.dialect;
  switch (e.op) {
    case 'and':
    case 'or':
      return `(${compile(scope, e.left)} ${e.op.toUpperCase()} ${compile(scope, e.right)})`;
    case 'eq':
    case 'ne':
      return equality(scope, e.op, e.left, e.right);
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge': {
      if (isNullLiteral(e.left) || isNullLiteral(e.right)) return d.falseSql;
      const left = compile(scope, e.left);
      const right = compile(scope, e.right);
      // Guarded so that a null operand gives false, not unknown (which `not` would keep unknown).
      const guards = [canBeNull(e.left) ? left : undefined, canBeNull(e.right) ? right : undefined]
        .filter((x) => x !== undefined)
        .map((x) => `${x} IS NOT NULL AND `);
      return `(${guards.join('')}${left} ${RELATIONAL[e.op]} ${right})`;
    }
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
    case 'mod':
      return d.arithmetic(e.op, e.type as NumericType, compile(scope, e.left), compile(scope, e.right));
  }
}

/**
 * eq and ne, null-safe. Written as plain `=` / `<>` with explicit null handling where an operand
 * can be null, so an index on the column still serves `ProductId eq 123`.
 */
function equality(scope: ExpressionScope, op: 'eq' | 'ne', leftExpr: Expr, rightExpr: Expr): string {
  const d = scope.dialect;
  const leftNull = isNullLiteral(leftExpr);
  const rightNull = isNullLiteral(rightExpr);
  if (leftNull && rightNull) return op === 'eq' ? d.trueSql : d.falseSql;
  if (leftNull || rightNull) {
    const other = leftNull ? rightExpr : leftExpr;
    if (!canBeNull(other)) return op === 'eq' ? d.falseSql : d.trueSql;
    return `(${compile(scope, other)} ${op === 'eq' ? 'IS NULL' : 'IS NOT NULL'})`;
  }
  const leftNullable = canBeNull(leftExpr);
  const rightNullable = canBeNull(rightExpr);
  const left = compile(scope, leftExpr);
  const right = compile(scope, rightExpr);
  if (!leftNullable && !rightNullable) return `(${left} ${op === 'eq' ? '=' : '<>'} ${right})`;
  if (leftNullable && rightNullable) return op === 'eq' ? d.isNotDistinct(left, right) : d.isDistinct(left, right);
  const nullableSide = leftNullable ? left : right;
  return op === 'eq' ? `(${nullableSide} IS NOT NULL AND ${left} = ${right})` : `(${nullableSide} IS NULL OR ${left} <> ${right})`;
}
