/**
 * An independent evaluation of OData v2 $filter expressions, for checking the live service
 * against. It shares no code with src/: its own tokenizer, recursive-descent parser, typing and
 * evaluator, written from the semantics the service documents (docs/protocol.md;
 * the header comments of src/store/sql/dialect.ts and src/store/sql/expression.ts):
 *
 * - literals: 5 (Int32, Int64 when it does not fit), 5L, 12.5M, 2.5 / 1E+1 / 2.0f / 1.5d read
 *   exactly as Decimal, datetime'…' (any case of the prefix), guid'…', null, true, false, 'O''Neil';
 * - numbers widen Int32 -> Int64 -> Decimal; Int arithmetic is integer arithmetic (div truncates
 *   toward zero, mod has the dividend's sign); Decimal arithmetic is exact, Decimal div truncates
 *   to 6 places; div and mod by zero are an error; arithmetic of null is null;
 * - eq/ne are null-safe; lt/le/gt/ge with a null operand are false; and/or/not are three-valued
 *   over null Booleans; only rows that evaluate to true are selected;
 * - strings compare by code point; length counts UTF-16 code units (as .NET's String.Length),
 *   positions count code points;
 * - round (half away from zero), floor, ceiling return Decimal; tolower/toupper are Unicode case
 *   mapping; trim removes space, tab, CR, LF; substring is 0-based with negative start and
 *   length read as 0; concat reads null as ''; every other function of null is null;
 * - date parts of a UTC DateTime, whole seconds;
 * - a path through a single-valued navigation to a missing entity is null.
 *
 * Values: Int32 and Int64 as bigint, Decimal as a bigint scaled by 10^24 (so products of several
 * Decimals stay exact), String and Guid as string, Boolean as boolean, DateTime as ms since the epoch.
 */

export type FType = 'Int32' | 'Int64' | 'Decimal' | 'String' | 'Boolean' | 'DateTime' | 'Guid' | 'Null';
export type FValue = bigint | string | boolean | number | null;

/** What the evaluator knows of the data: each set's property types and single-valued navigations. */
export interface Schema {
  readonly [set: string]: {
    readonly properties: Readonly<Record<string, FType>>;
    readonly navigations?: Readonly<Record<string, { readonly set: string; readonly foreignKey: string }>>;
  };
}

/** Rows as they were seeded (Int32 number, Int64 bigint, Decimal canonical text, DateTime ms). */
export type SeededRow = Readonly<Record<string, bigint | number | string | boolean | null>>;

export interface Data {
  readonly schema: Schema;
  readonly rows: Readonly<Record<string, readonly SeededRow[]>>;
}

/** The text is no valid filter for the schema (the service must answer 400). */
export class FilterError extends Error {}

/**
 * In strict mode: the value of the expression is not pinned down by the documented semantics, or
 * leaves what its type holds (an Int32/Int64 overflow is a 400, a Decimal beyond what the engine
 * holds exactly), so a differential check should not compare it.
 */
export class Unspecified extends Error {}

let strict = false;

// ---------------------------------------------------------------------------------------------
// Decimal arithmetic

const DEC_PLACES = 24n;
const DEC_SCALE = 10n ** DEC_PLACES;
const SIX = 10n ** 6n;
const ONE_DECIMAL_UNIT = DEC_SCALE / SIX; // 10^-6 in the internal scale

export function decimalOf(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new FilterError(`not a decimal: ${text}`);
  const fraction = (m[3] ?? '').padEnd(Number(DEC_PLACES), '0');
  if (fraction.length > Number(DEC_PLACES)) throw new FilterError(`too many places: ${text}`);
  const magnitude = BigInt(m[2]!) * DEC_SCALE + BigInt(fraction);
  return m[1] === '-' ? -magnitude : magnitude;
}

export function decimalText(v: bigint): string {
  const negative = v < 0n;
  const abs = negative ? -v : v;
  const integer = abs / DEC_SCALE;
  const fraction = (abs % DEC_SCALE).toString().padStart(Number(DEC_PLACES), '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${integer}${fraction ? '.' + fraction : ''}`;
}

/** Truncates toward zero (BigInt division does). */
const truncDiv = (a: bigint, b: bigint) => a / b;
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

// ---------------------------------------------------------------------------------------------
// Strings by code point

export const codePoints = (s: string): string[] => Array.from(s);

export function compareCodePoints(a: string, b: string): number {
  const x = codePoints(a);
  const y = codePoints(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}

const TRIM = /^[ \t\r\n]+|[ \t\r\n]+$/g;

// ---------------------------------------------------------------------------------------------
// Tokens

type Tok =
  | { k: 'name'; text: string }
  | { k: 'num'; text: string }
  | { k: 'str'; value: string }
  | { k: 'prefixed'; prefix: string; value: string }
  | { k: '(' | ')' | ',' | '/' | '-' | 'end' };

function tokenize(text: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  const isNameStart = (c: string | undefined) => c !== undefined && /[A-Za-z_]/.test(c);
  const quoted = (open: number): [string, number] => {
    let value = '';
    let j = open + 1;
    for (;;) {
      if (j >= text.length) throw new FilterError('unterminated quote');
      if (text[j] === "'") {
        if (text[j + 1] === "'") {
          value += "'";
          j += 2;
          continue;
        }
        return [value, j + 1];
      }
      value += text[j];
      j++;
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if ('(),/'.includes(c)) {
      out.push({ k: c as '(' | ')' | ',' | '/' });
      i++;
    } else if (c === "'") {
      const [value, end] = quoted(i);
      out.push({ k: 'str', value });
      i = end;
    } else if (isDigit(c) || (c === '-' && isDigit(text[i + 1]))) {
      const m = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[LlMmDdFf]?/.exec(text.slice(i))!;
      out.push({ k: 'num', text: m[0] });
      i += m[0].length;
    } else if (c === '-') {
      out.push({ k: '-' });
      i++;
    } else if (isNameStart(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))!;
      i += m[0].length;
      if (text[i] === "'") {
        const [value, end] = quoted(i);
        out.push({ k: 'prefixed', prefix: m[0], value });
        i = end;
      } else out.push({ k: 'name', text: m[0] });
    } else throw new FilterError(`unexpected ${c}`);
  }
  out.push({ k: 'end' });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Typed expression tree

export type Node =
  | { kind: 'lit'; type: FType; value: FValue }
  | { kind: 'prop'; type: FType; path: string[] }
  | { kind: 'bin'; type: FType; op: string; left: Node; right: Node }
  | { kind: 'not'; type: 'Boolean'; operand: Node }
  | { kind: 'neg'; type: FType; operand: Node }
  | { kind: 'call'; type: FType; name: string; args: Node[] };

const RANK: Partial<Record<FType, number>> = { Int32: 0, Int64: 1, Decimal: 2 };
const numeric = (t: FType) => RANK[t] !== undefined;
const wider = (a: FType, b: FType): FType => ((RANK[a] ?? 0) >= (RANK[b] ?? 0) ? a : b);

const PREC: Record<string, number> = { or: 1, and: 2, eq: 3, ne: 3, lt: 4, le: 4, gt: 4, ge: 4, add: 5, sub: 5, mul: 6, div: 6, mod: 6 };

const SIGNATURES: Record<string, { params: FType[]; required?: number; result: FType }> = {
  substringof: { params: ['String', 'String'], result: 'Boolean' },
  startswith: { params: ['String', 'String'], result: 'Boolean' },
  endswith: { params: ['String', 'String'], result: 'Boolean' },
  length: { params: ['String'], result: 'Int32' },
  indexof: { params: ['String', 'String'], result: 'Int32' },
  replace: { params: ['String', 'String', 'String'], result: 'String' },
  substring: { params: ['String', 'Int32', 'Int32'], required: 2, result: 'String' },
  tolower: { params: ['String'], result: 'String' },
  toupper: { params: ['String'], result: 'String' },
  trim: { params: ['String'], result: 'String' },
  concat: { params: ['String', 'String'], result: 'String' },
  year: { params: ['DateTime'], result: 'Int32' },
  month: { params: ['DateTime'], result: 'Int32' },
  day: { params: ['DateTime'], result: 'Int32' },
  hour: { params: ['DateTime'], result: 'Int32' },
  minute: { params: ['DateTime'], result: 'Int32' },
  second: { params: ['DateTime'], result: 'Int32' },
  round: { params: ['Decimal'], result: 'Decimal' },
  floor: { params: ['Decimal'], result: 'Decimal' },
  ceiling: { params: ['Decimal'], result: 'Decimal' },
};

function numberLiteral(text: string): Node {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?([LlMmDdFf]?)$/.exec(text);
  if (!m) throw new FilterError(`bad number ${text}`);
  const [, sign, int, frac, exp, suffix] = m;
  if (suffix === 'L' || suffix === 'l') {
    if (frac !== undefined || exp !== undefined) throw new FilterError('Int64 with a point');
    return { kind: 'lit', type: 'Int64', value: BigInt(sign + int!) };
  }
  if (suffix === '' && frac === undefined && exp === undefined) {
    const v = BigInt(sign + int!);
    return { kind: 'lit', type: v >= -(2n ** 31n) && v < 2n ** 31n ? 'Int32' : 'Int64', value: v };
  }
  // Decimal, exactly: digits shifted by the exponent.
  let value = decimalOf(`${sign}${int}.${frac ?? '0'}`);
  const e = Number(exp ?? '0');
  value = e >= 0 ? value * 10n ** BigInt(e) : value / 10n ** BigInt(-e);
  return { kind: 'lit', type: 'Decimal', value };
}

function dateTimeLiteral(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?$/.exec(text);
  if (!m) throw new FilterError(`bad datetime ${text}`);
  const [, y, mo, d, h, mi, s = '0', f = ''] = m;
  return Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s, +f.padEnd(3, '0').slice(0, 3));
}

/**
 * A literal widens exactly or not at all: to Decimal only with at most 12 integer digits
 * (Decimal(18,6)).
 */
function checkLiteralWidening(n: Node, to: FType): void {
  if (n.kind !== 'lit' || n.value === null || n.type === to || to !== 'Decimal') return;
  const digits = (n.value as bigint).toString().replace('-', '');
  if (digits.length > 12) throw new FilterError(`the literal ${n.value} has no exact Decimal value`);
}

/**
 * Whether an argument fits a function parameter: the same type or null; a literal that converts
 * exactly (Int32 -> Int64 -> Decimal, an Int64 that fits Int32); any other number only by
 * widening to Int64 or Decimal (an Int64 property is no Int32 argument).
 */
function argumentFits(a: Node, p: FType): boolean {
  if (a.type === 'Null' || a.type === p) return true;
  if (!numeric(a.type) || !numeric(p)) return false;
  if (a.kind === 'lit') {
    const v = a.value as bigint;
    if (a.type === 'Decimal') return false;
    if (p === 'Int32') return v >= -(2n ** 31n) && v < 2n ** 31n;
    if (p === 'Decimal') return v.toString().replace('-', '').length <= 12;
    return true;
  }
  return p !== 'Int32' && wider(a.type, p) === p;
}

/** Parses and types a $filter over an entity set of the schema. */
export function parse(schema: Schema, set: string, text: string): Node {
  const tokens = tokenize(text);
  let at = 0;
  const peek = () => tokens[at]!;
  const take = () => tokens[at++]!;
  const expect = (k: Tok['k']) => {
    const t = take();
    if (t.k !== k) throw new FilterError(`expected ${k}, found ${t.k}`);
  };

  const expression = (minPrec: number): Node => {
    let left = unary();
    for (;;) {
      const t = peek();
      if (t.k !== 'name' || PREC[t.text] === undefined || PREC[t.text]! < minPrec) return left;
      take();
      const right = expression(PREC[t.text]! + 1);
      left = binary(t.text, left, right);
    }
  };

  const unary = (): Node => {
    const t = peek();
    if (t.k === 'name' && t.text === 'not') {
      take();
      const operand = unary();
      if (operand.type !== 'Boolean' && operand.type !== 'Null') throw new FilterError('not of a non-Boolean');
      return { kind: 'not', type: 'Boolean', operand };
    }
    if (t.k === '-') {
      take();
      const operand = unary();
      if (!numeric(operand.type)) throw new FilterError('- of a non-number');
      return { kind: 'neg', type: operand.type, operand };
    }
    return primary();
  };

  const primary = (): Node => {
    const t = take();
    switch (t.k) {
      case '(': {
        const e = expression(1);
        expect(')');
        return e;
      }
      case 'num':
        return numberLiteral(t.text);
      case 'str':
        return { kind: 'lit', type: 'String', value: t.value };
      case 'prefixed': {
        const p = t.prefix.toLowerCase();
        if (p === 'datetime') return { kind: 'lit', type: 'DateTime', value: dateTimeLiteral(t.value) };
        if (p === 'guid') return { kind: 'lit', type: 'Guid', value: t.value.toLowerCase() };
        throw new FilterError(`prefix ${t.prefix}`);
      }
      case 'name': {
        if (t.text === 'null') return { kind: 'lit', type: 'Null', value: null };
        if (t.text === 'true' || t.text === 'false') return { kind: 'lit', type: 'Boolean', value: t.text === 'true' };
        if (peek().k === '(') {
          take();
          const args: Node[] = [];
          if (peek().k !== ')') {
            for (;;) {
              args.push(expression(1));
              if (peek().k === ',') take();
              else break;
            }
          }
          expect(')');
          return call(t.text, args);
        }
        const path = [t.text];
        while (peek().k === '/') {
          take();
          const n = take();
          if (n.k !== 'name') throw new FilterError('path');
          path.push(n.text);
        }
        return member(path);
      }
      default:
        throw new FilterError(`unexpected ${t.k}`);
    }
  };

  const member = (path: string[]): Node => {
    let current = set;
    for (const [i, name] of path.entries()) {
      const def = schema[current];
      if (!def) throw new FilterError(`no set ${current}`);
      if (i === path.length - 1) {
        const type = def.properties[name];
        if (!type) throw new FilterError(`no property ${name} in ${current}`);
        return { kind: 'prop', type, path };
      }
      const nav = def.navigations?.[name];
      if (!nav) throw new FilterError(`no navigation ${name} in ${current}`);
      current = nav.set;
    }
    throw new FilterError('empty path');
  };

  const retype = (n: Node, type: FType): Node => (n.kind === 'lit' && n.type === 'Null' ? { kind: 'lit', type, value: null } : n);

  const binary = (op: string, left: Node, right: Node): Node => {
    if (op === 'and' || op === 'or') {
      const l = retype(left, 'Boolean');
      const r = retype(right, 'Boolean');
      if (l.type !== 'Boolean' || r.type !== 'Boolean') throw new FilterError(`${op} of non-Booleans`);
      return { kind: 'bin', type: 'Boolean', op, left: l, right: r };
    }
    if (PREC[op] === 3 || PREC[op] === 4) {
      if (left.type === 'Null' || right.type === 'Null') return { kind: 'bin', type: 'Boolean', op, left, right };
      if (numeric(left.type) && numeric(right.type)) {
        const common = wider(left.type, right.type);
        checkLiteralWidening(left, common);
        checkLiteralWidening(right, common);
        return { kind: 'bin', type: 'Boolean', op, left, right };
      }
      if (left.type !== right.type) throw new FilterError(`${op}: ${left.type} vs ${right.type}`);
      return { kind: 'bin', type: 'Boolean', op, left, right };
    }
    const lt = left.type === 'Null' ? right.type : left.type;
    const rt = right.type === 'Null' ? left.type : right.type;
    if (!numeric(lt) || !numeric(rt)) throw new FilterError(`${op} of non-numbers`);
    const type = wider(lt, rt);
    checkLiteralWidening(left, type);
    checkLiteralWidening(right, type);
    return { kind: 'bin', type, op, left: retype(left, type), right: retype(right, type) };
  };

  const call = (name: string, args: Node[]): Node => {
    const sig = SIGNATURES[name];
    if (!sig) throw new FilterError(`unknown function ${name}`);
    if (args.length < (sig.required ?? sig.params.length) || args.length > sig.params.length) throw new FilterError(`${name}: arity`);
    args.forEach((a, i) => {
      const p = sig.params[i]!;
      if (!argumentFits(a, p)) throw new FilterError(`${name}: argument ${i + 1} is ${a.type}, not ${p}`);
    });
    return { kind: 'call', type: sig.result, name, args: args.map((a, i) => retype(a, sig.params[i]!)) };
  };

  const e = expression(1);
  if (peek().k !== 'end') throw new FilterError('trailing tokens');
  if (e.type !== 'Boolean') throw new FilterError('not a Boolean filter');
  return e;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

function fromSeeded(type: FType, v: SeededRow[string] | undefined): FValue {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'Int32':
    case 'Int64':
      return BigInt(v as number | bigint);
    case 'Decimal':
      return decimalOf(String(v));
    default:
      return v as FValue;
  }
}

/** A numeric value of `from` as `to` (Int32 and Int64 are both bigint; Decimal is scaled). */
function widen(v: FValue, from: FType, to: FType): FValue {
  if (v === null) return null;
  if (to === 'Decimal' && from !== 'Decimal') return checked('Decimal', (v as bigint) * DEC_SCALE);
  return v;
}

const INT32_RANGE = 2n ** 31n;
const INT64_RANGE = 2n ** 63n;
/** What an engine holds exactly as Decimal(18,6) millionths in 64 bits: |v| < 9.2e12. */
const DECIMAL_LIMIT = 9_000_000_000_000n * DEC_SCALE;

/** In strict mode, a result outside what its type holds is unspecified. */
function checked(type: FType, v: bigint): bigint {
  if (!strict) return v;
  const outside =
    type === 'Int32' ? v < -INT32_RANGE || v >= INT32_RANGE : type === 'Int64' ? v < -INT64_RANGE || v >= INT64_RANGE : v <= -DECIMAL_LIMIT || v >= DECIMAL_LIMIT;
  if (outside) throw new Unspecified(`${type} result ${v} is outside its range`);
  return v;
}

function compare(type: FType, a: FValue, b: FValue): number {
  switch (type) {
    case 'String':
    case 'Guid':
      return compareCodePoints(a as string, b as string);
    case 'Boolean':
      return Number(a) - Number(b);
    case 'DateTime':
      return Math.sign((a as number) - (b as number));
    default: {
      const x = a as bigint;
      const y = b as bigint;
      return x < y ? -1 : x > y ? 1 : 0;
    }
  }
}

export function evaluate(data: Data, set: string, node: Node, row: SeededRow): FValue {
  const ev = (n: Node): FValue => evaluate(data, set, n, row);
  switch (node.kind) {
    case 'lit':
      return node.value;
    case 'prop': {
      let current: SeededRow | undefined = row;
      let currentSet = set;
      for (const name of node.path.slice(0, -1)) {
        const nav: { set: string; foreignKey: string } = data.schema[currentSet]!.navigations![name]!;
        const fk: SeededRow[string] | undefined = current[nav.foreignKey];
        const target: SeededRow | undefined =
          fk === null || fk === undefined ? undefined : data.rows[nav.set]!.find((r) => BigInt(r.Id as bigint) === BigInt(fk as bigint));
        if (!target) return null;
        current = target;
        currentSet = nav.set;
      }
      return fromSeeded(node.type, current[node.path[node.path.length - 1]!]);
    }
    case 'not': {
      const v = ev(node.operand);
      return v === null ? null : !v;
    }
    case 'neg': {
      const v = ev(node.operand);
      return v === null ? null : checked(node.type, -(v as bigint));
    }
    case 'bin':
      return binaryValue(node, ev);
    case 'call':
      return callValue(node.name, node.args.map(ev), node.args);
  }
}

function binaryValue(node: Extract<Node, { kind: 'bin' }>, ev: (n: Node) => FValue): FValue {
  const { op, left, right } = node;
  if (op === 'and' || op === 'or') {
    const l = ev(left) as boolean | null;
    const r = ev(right) as boolean | null;
    if (op === 'and') return l === false || r === false ? false : l === null || r === null ? null : true;
    return l === true || r === true ? true : l === null || r === null ? null : false;
  }
  const type = numeric(left.type) || numeric(right.type) ? wider(left.type === 'Null' ? right.type : left.type, right.type === 'Null' ? left.type : right.type) : left.type === 'Null' ? right.type : left.type;
  const l = widen(ev(left), left.type, type);
  const r = widen(ev(right), right.type, type);
  switch (op) {
    case 'eq':
    case 'ne': {
      const same = l === null || r === null ? l === r : compare(type, l, r) === 0;
      return op === 'eq' ? same : !same;
    }
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge': {
      if (l === null || r === null) return false;
      const c = compare(type, l, r);
      return op === 'lt' ? c < 0 : op === 'le' ? c <= 0 : op === 'gt' ? c > 0 : c >= 0;
    }
  }
  if (l === null || r === null) return null;
  const a = l as bigint;
  const b = r as bigint;
  const decimal = type === 'Decimal';
  switch (op) {
    case 'add':
      return checked(type, a + b);
    case 'sub':
      return checked(type, a - b);
    case 'mul':
      // Decimal: truncated toward zero at the sixth decimal place, like div.
      return checked(type, decimal ? ((a * b) / DEC_SCALE / ONE_DECIMAL_UNIT) * ONE_DECIMAL_UNIT : a * b);
    case 'div':
      if (b === 0n) throw new Unspecified('division by zero (answered 400 when the engine evaluates it)');
      // Decimal: truncated toward zero at the sixth decimal place.
      return checked(type, decimal ? truncDiv(a * SIX, b) * ONE_DECIMAL_UNIT : truncDiv(a, b));
    case 'mod':
      if (b === 0n) throw new Unspecified('mod by zero (answered 400 when the engine evaluates it)');
      return a % b;
  }
  throw new FilterError(`operator ${op}`);
}

function callValue(name: string, args: FValue[], nodes: Node[]): FValue {
  if (name === 'concat') return String(args[0] ?? '') + String(args[1] ?? '');
  if (args.some((a) => a === null)) return null;
  const s = args[0] as string;
  const t = args[1] as string;
  const asInt = (i: number) => Number(widen(args[i]!, nodes[i]!.type, 'Int64') as bigint);
  switch (name) {
    case 'substringof':
      return t.includes(s);
    case 'startswith':
      return s.startsWith(t);
    case 'endswith':
      return s.endsWith(t);
    case 'length':
      return BigInt(s.length);
    case 'indexof': {
      const i = s.indexOf(t);
      return BigInt(i < 0 ? -1 : codePoints(s.slice(0, i)).length);
    }
    case 'replace':
      if (t === '') throw new FilterError('replace with an empty search string is not specified');
      return s.split(t).join(args[2] as string);
    case 'substring': {
      const cps = codePoints(s);
      const start = Math.max(asInt(1), 0);
      const end = args.length > 2 ? start + Math.max(asInt(2), 0) : cps.length;
      return cps.slice(start, end).join('');
    }
    case 'tolower':
      return s.toLowerCase();
    case 'toupper':
      return s.toUpperCase();
    case 'trim':
      return s.replace(TRIM, '');
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
    case 'minute':
    case 'second': {
      const d = new Date(args[0] as number);
      const parts = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
      return BigInt(parts[name]);
    }
    case 'round':
    case 'floor':
    case 'ceiling': {
      const x = widen(args[0]!, nodes[0]!.type, 'Decimal') as bigint;
      if (name === 'floor') return floorDiv(x, DEC_SCALE) * DEC_SCALE;
      if (name === 'ceiling') return -floorDiv(-x, DEC_SCALE) * DEC_SCALE;
      const half = DEC_SCALE / 2n;
      return x >= 0n ? ((x + half) / DEC_SCALE) * DEC_SCALE : -(((-x + half) / DEC_SCALE) * DEC_SCALE);
    }
  }
  throw new FilterError(`function ${name}`);
}

/**
 * The Ids of the rows of `set` the filter selects (those for which it is true). Throws
 * FilterError for a text that is no valid filter, and in strict mode Unspecified when the
 * answer is not pinned down (see Unspecified).
 */
export function select(data: Data, set: string, filter: string, options: { strict?: boolean } = {}): string[] {
  const node = parse(data.schema, set, filter);
  strict = options.strict ?? false;
  try {
    return (data.rows[set] ?? []).filter((row) => evaluate(data, set, node, row) === true).map((row) => String(row.Id));
  } finally {
    strict = false;
  }
}
