/**
 * Compiles a bound $filter / $orderby tree (../../odata/expr/ast.ts) to SQL over one row alias.
 * Values only ever become bound parameters; names come from the model.
 *
 * Null semantics are those of WCF Data Services over .NET (odata-v2-reference.md §4.4):
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
import type { BinaryExpr, CallExpr, ComparisonOperator, Expr, ExprType, OrderByItem } from '../../odata/expr/ast';
import type { ValueCodec } from '../store';
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

/** Compiled SQL, and whether it can be null (so comparisons know where to guard). */
interface Sql {
  readonly text: string;
  readonly nullable: boolean;
}

const RELATIONAL: Record<Exclude<ComparisonOperator, 'eq' | 'ne'>, string> = { lt: '<', le: '<=', gt: '>', ge: '>=' };

const isNullLiteral = (e: Expr) => e.kind === 'literal' && e.value === null;

/** The store type of an expression type (Guid literals are compared as their text). */
function storedType(type: ExprType): EdmType | undefined {
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
  return compile(scope, expr).text;
}

/** `$orderby` items for an ORDER BY clause (the caller appends the key as the last tie-breaker). */
export function compileOrderBy(scope: ExpressionScope, items: readonly OrderByItem[]): string[] {
  return items.map((item) => scope.dialect.orderItem(compile(scope, item.expr).text, item.descending));
}

function compile(scope: ExpressionScope, e: Expr): Sql {
  switch (e.kind) {
    case 'literal':
      return literal(scope, e.type, e.value);
    case 'property':
      return property(scope, e.navigations, e.property.column, e.property.nullable);
    case 'convert': {
      const operand = compile(scope, e.operand);
      return { text: scope.dialect.convert(e.operand.type as NumericType, e.type, operand.text), nullable: operand.nullable };
    }
    case 'unary': {
      const operand = compile(scope, e.operand);
      if (e.op === 'not') return { text: `(NOT ${operand.text})`, nullable: operand.nullable };
      return { text: scope.dialect.negate(e.type as NumericType, operand.text), nullable: operand.nullable };
    }
    case 'binary':
      return binary(scope, e);
    case 'call':
      return call(scope, e);
  }
}

function literal(scope: ExpressionScope, type: ExprType, value: bigint | number | string | boolean | null): Sql {
  // A typed null, so that an engine that types parameters knows what a function receives.
  if (value === null) return { text: type === 'Null' ? 'NULL' : scope.dialect.typed(type, 'NULL'), nullable: true };
  const stored = storedType(type);
  const encoded = stored === undefined ? null : scope.codec.encode(stored, value);
  return { text: scope.dialect.typed(type, scope.params.add(encoded)), nullable: false };
}

/**
 * A column of the row, or of an entity reached through single-valued navigations: a correlated
 * subquery per path, scoped by the account, that yields null when a navigation leads nowhere.
 */
function property(scope: ExpressionScope, navigations: readonly NavigationDef[], column: string, nullable: boolean): Sql {
  if (navigations.length === 0) return { text: `${scope.alias}.${q(column)}`, nullable };
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
  return { text: `(SELECT ${previousAlias}.${q(column)} FROM ${from} WHERE ${where})`, nullable: true };
}

function columnOf(type: EntityTypeDef, propertyName: string): string {
  return type.properties.find((p) => p.name === propertyName)!.column;
}

function binary(scope: ExpressionScope, e: BinaryExpr): Sql {
  const d = scope.dialect;
  switch (e.op) {
    case 'and':
    case 'or': {
      const left = compile(scope, e.left);
      const right = compile(scope, e.right);
      return { text: `(${left.text} ${e.op.toUpperCase()} ${right.text})`, nullable: left.nullable || right.nullable };
    }
    case 'eq':
    case 'ne':
      return equality(scope, e.op, e.left, e.right);
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge': {
      if (isNullLiteral(e.left) || isNullLiteral(e.right)) return { text: d.falseSql, nullable: false };
      const left = compile(scope, e.left);
      const right = compile(scope, e.right);
      // Guarded so that a null operand gives false, not unknown (which `not` would keep unknown).
      const guards = [left, right].filter((x) => x.nullable).map((x) => `${x.text} IS NOT NULL AND `);
      return { text: `(${guards.join('')}${left.text} ${RELATIONAL[e.op]} ${right.text})`, nullable: false };
    }
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
    case 'mod': {
      const left = compile(scope, e.left);
      const right = compile(scope, e.right);
      // Division and remainder by zero are null.
      const nullable = left.nullable || right.nullable || e.op === 'div' || e.op === 'mod';
      return { text: d.arithmetic(e.op, e.type as NumericType, left.text, right.text), nullable };
    }
  }
}

/**
 * eq and ne, null-safe. Written as plain `=` / `<>` with explicit null handling where an operand
 * can be null, so an index on the column still serves `ProductId eq 123`.
 */
function equality(scope: ExpressionScope, op: 'eq' | 'ne', leftExpr: Expr, rightExpr: Expr): Sql {
  const d = scope.dialect;
  const leftNull = isNullLiteral(leftExpr);
  const rightNull = isNullLiteral(rightExpr);
  if (leftNull && rightNull) return { text: op === 'eq' ? d.trueSql : d.falseSql, nullable: false };
  if (leftNull || rightNull) {
    const other = compile(scope, leftNull ? rightExpr : leftExpr);
    if (!other.nullable) return { text: op === 'eq' ? d.falseSql : d.trueSql, nullable: false };
    return { text: `(${other.text} ${op === 'eq' ? 'IS NULL' : 'IS NOT NULL'})`, nullable: false };
  }
  const left = compile(scope, leftExpr);
  const right = compile(scope, rightExpr);
  if (!left.nullable && !right.nullable) return { text: `(${left.text} ${op === 'eq' ? '=' : '<>'} ${right.text})`, nullable: false };
  if (left.nullable && right.nullable) {
    return { text: op === 'eq' ? d.isNotDistinct(left.text, right.text) : d.isDistinct(left.text, right.text), nullable: false };
  }
  const nullableSide = left.nullable ? left : right;
  return op === 'eq'
    ? { text: `(${nullableSide.text} IS NOT NULL AND ${left.text} = ${right.text})`, nullable: false }
    : { text: `(${nullableSide.text} IS NULL OR ${left.text} <> ${right.text})`, nullable: false };
}

function call(scope: ExpressionScope, e: CallExpr): Sql {
  const args = e.args.map((a) => compile(scope, a));
  const text = scope.dialect.call(e.name, args.map((a) => a.text));
  // concat reads null as ''; every other function of a null argument is null.
  const nullable = e.name === 'concat' ? false : args.some((a) => a.nullable);
  return { text, nullable };
}
