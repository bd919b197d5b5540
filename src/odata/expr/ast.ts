/**
 * The typed, model-bound syntax tree of $filter and $orderby expressions. The parser
 * (./parser.ts) produces it from text and the model; the store compiles it to SQL
 * (src/store/sql/). Nothing in between sees text again.
 *
 * Binding has already happened when a tree exists: every property is resolved against the model,
 * every node carries its result type, and operands of different numeric types have been brought
 * to one type (literals converted in place, other operands wrapped in a `convert` node). So the
 * SQL compiler never reasons about promotion; it only renders.
 *
 * Values of literals are in the internal forms of ../edm.ts: Int32 number, Int64 bigint, Decimal
 * canonical string, String string, Boolean boolean, DateTime ms since epoch (UTC), Guid lower-case
 * 8-4-4-4-12 string, and null.
 */
import type { NavigationDef, PropertyDef } from '../../model/types';

/**
 * Types an expression can have. There is no Double: the model has no Double property, so
 * floating literals (2.5, 1.5d, 2E3, 2.0f) are read exactly as Decimal, and a literal that has no
 * exact Decimal(18,6) value is a 400.
 */
export type ExprType =
  | 'Edm.Int32'
  | 'Edm.Int64'
  | 'Edm.Decimal'
  | 'Edm.String'
  | 'Edm.Boolean'
  | 'Edm.DateTime'
  | 'Edm.Guid'
  /** The literal null where nothing gives it a type (`null eq null`). */
  | 'Null';

export type ComparisonOperator = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';
export type LogicalOperator = 'and' | 'or';
export type ArithmeticOperator = 'add' | 'sub' | 'mul' | 'div' | 'mod';
export type BinaryOperator = ComparisonOperator | LogicalOperator | ArithmeticOperator;

export type FunctionName =
  | 'substringof'
  | 'startswith'
  | 'endswith'
  | 'length'
  | 'indexof'
  | 'replace'
  | 'substring'
  | 'tolower'
  | 'toupper'
  | 'trim'
  | 'concat'
  | 'day'
  | 'hour'
  | 'minute'
  | 'month'
  | 'second'
  | 'year'
  | 'round'
  | 'floor'
  | 'ceiling';

export type Expr = LiteralExpr | PropertyExpr | ConvertExpr | UnaryExpr | BinaryExpr | CallExpr;

export interface LiteralExpr {
  readonly kind: 'literal';
  readonly type: ExprType;
  readonly value: bigint | number | string | boolean | null;
}

/**
 * A property of the entity being filtered, or of an entity reached from it through single-valued
 * navigations (`Product/Title`, `SalesOrder/Buyer/BuyerName`). `navigations` is empty for a
 * property of the entity itself. Through a missing (null) navigation the value is null.
 */
export interface PropertyExpr {
  readonly kind: 'property';
  readonly type: ExprType;
  /** Each one has many === false; the first starts at the filtered entity type. */
  readonly navigations: readonly NavigationDef[];
  readonly property: PropertyDef;
}

/** A lossless numeric widening of a non-literal operand: Int32 -> Int64 -> Decimal. */
export interface ConvertExpr {
  readonly kind: 'convert';
  readonly type: 'Edm.Int64' | 'Edm.Decimal';
  readonly operand: Expr;
}

export interface UnaryExpr {
  readonly kind: 'unary';
  /** not: Boolean -> Boolean. negate: numeric -> the same numeric type. */
  readonly op: 'not' | 'negate';
  readonly type: ExprType;
  readonly operand: Expr;
}

/**
 * Both operands have the same type after binding, except where one side is the literal null
 * (typed as the other side, or 'Null' when both are null). Comparisons and logical operators
 * yield Boolean; arithmetic yields the operands' type.
 */
export interface BinaryExpr {
  readonly kind: 'binary';
  readonly op: BinaryOperator;
  readonly type: ExprType;
  readonly left: Expr;
  readonly right: Expr;
}

/**
 * A canonical function. Arguments are bound to the signature: string functions take Edm.String,
 * date parts Edm.DateTime, round/floor/ceiling Edm.Decimal (integer arguments are converted);
 * substring and indexof positions are Edm.Int32.
 */
export interface CallExpr {
  readonly kind: 'call';
  readonly name: FunctionName;
  readonly type: ExprType;
  readonly args: readonly Expr[];
}

export interface OrderByItem {
  readonly expr: Expr;
  readonly descending: boolean;
}

/** One navigation of a $expand tree (`ProductVariations/ProductVariationSpecifics`). */
export interface ExpandNode {
  readonly navigation: NavigationDef;
  /** The navigation's name, as the answer writes it. */
  readonly name: string;
  readonly children: readonly ExpandNode[];
}

/** Limits on expressions; each one broken is a 400 that names it. */
export interface ExprLimits {
  /** Nodes of the tree: literals, properties, operators and calls (default 100). */
  readonly maxNodes: number;
  /** Nesting of parentheses, calls and unary operators (default 32). */
  readonly maxDepth: number;
  /** Characters of the option's text (default 2048). */
  readonly maxLength: number;
  /** The longest text one node may produce, by the bounds of ./cost.ts (default 4 Mi characters). */
  readonly maxTextLength: number;
  /** Characters read and written per row to evaluate the expression, by ./cost.ts (default 256 Mi). */
  readonly maxWorkPerRow: number;
  /** The length a text property without a MaxLength counts as: what one request body can carry. */
  readonly unboundedTextLength: number;
}

export interface ExpandLimits {
  /** Navigations in one path (default 3). */
  readonly maxDepth: number;
  /** Comma-separated paths (default 12). */
  readonly maxPaths: number;
}

export const DEFAULT_EXPR_LIMITS: ExprLimits = {
  maxNodes: 100,
  maxDepth: 32,
  maxLength: 2048,
  maxTextLength: 4 * 1024 * 1024,
  maxWorkPerRow: 256 * 1024 * 1024,
  unboundedTextLength: 1024 * 1024,
};
export const DEFAULT_EXPAND_LIMITS: ExpandLimits = { maxDepth: 3, maxPaths: 12 };
