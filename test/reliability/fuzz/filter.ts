/**
 * $filter cases over every entity set, generated from the grammar and the set's typed paths:
 * well-typed expressions, near-valid ones (a function with the wrong number of arguments, operands
 * of mismatched types, unknown members and functions, operators in the wrong case), expressions
 * mutated or cut off, and odd literals (numbers beyond every range, exponents, malformed
 * datetimes and guids, unbalanced quotes, Unicode, controls). Sent percent-encoded, form-encoded
 * or raw, asking for JSON or Atom. (test/query/filter-fuzz.test.ts checks the answers' rows on
 * one data set; this one is about surviving anything, on every set.)
 */
import type { EdmType } from '../../../src/model/types';
import type { FuzzContext, HttpCase } from './cases';
import { Gen, ODD_CHARACTERS, mutate, percentEncode, rawish } from './gen';
import { SETS, type SetShape } from './model-paths';

const HUGE_NUMBERS = [
  '2147483648', '-2147483649', '9223372036854775807', '9223372036854775808', '9223372036854775808L', '-9223372036854775809L',
  '99999999999999999999999999999999', '1e308', '1e309', '-1e309', '1e-400', '1.7976931348623157E+308M', '79228162514264337593543950336M',
  '0.0000000000000000000000000001M', '123456789012345678901234567890.123456789M', '1' + '0'.repeat(400), '0x10', '1_000', '0b1', '1.', '.5', '-.5M',
  '1e', '1e+', 'NaN', 'INF', '-INF', 'Infinity', '-0', '+5', '--5', '1.2.3', '5LL', '5Lm', '12.5q', '1d', '1f', '1E+1f',
];
const ODD_LITERALS = [
  "datetime'2013-02-30T00:00'", "datetime'2013-13-01T00:00'", "datetime'0000-01-01T00:00'", "datetime'9999-12-31T23:59:59.9999999'", "datetime'10000-01-01T00:00'",
  "datetime'garbage'", "datetime''", "datetime'2013-09-16'", "datetime'2013-09-16T25:00'", "datetime'2013-09-16T07:21:12Z'", "datetime'2013-09-16T07:21:12+02:00'",
  "datetimeoffset'2013-09-16T07:21:12Z'", "time'PT1H'", "guid'zz'", "guid''", "guid'12345678-aaaa-bbbb-cccc-ddddeeeeffff'", "guid'12345678aaaabbbbccccddddeeeeffff'",
  "X'00ff'", "binary'AQ=='", "'O''Neil'", "'O'Neil'", "''''", "'''", "'", "'unterminated", "'\\''", "'%'", "'%25'", "'_'", "'\u0000'", "'😀'", "'\ud800'",
  "'\u202eevil'", "'a'b'", 'null', 'NULL', 'Null', 'true', 'True', 'TRUE', 'false', '1=1', "' or 1=1 --", "'; DROP TABLE products; --", "') OR ('a'='a",
  '$it', '$filter', 'Edm.String', "cast('1', 'Edm.Int32')", "isof('Edm.String')",
];
const STRINGS = ['', 'a', 'Zebra', 'é', 'ß', '😀', ' ', '100%', "O''Neil", '_', '%_%', '\\', 'x'.repeat(300), '中文', "''", 'SELECT 1', '*/', '/*', '--'];
const FUNCTIONS: Record<string, readonly (EdmType | 'any')[]> = {
  substringof: ['Edm.String', 'Edm.String'],
  startswith: ['Edm.String', 'Edm.String'],
  endswith: ['Edm.String', 'Edm.String'],
  length: ['Edm.String'],
  indexof: ['Edm.String', 'Edm.String'],
  replace: ['Edm.String', 'Edm.String', 'Edm.String'],
  substring: ['Edm.String', 'Edm.Int32'],
  tolower: ['Edm.String'],
  toupper: ['Edm.String'],
  trim: ['Edm.String'],
  concat: ['Edm.String', 'Edm.String'],
  year: ['Edm.DateTime'],
  month: ['Edm.DateTime'],
  day: ['Edm.DateTime'],
  hour: ['Edm.DateTime'],
  minute: ['Edm.DateTime'],
  second: ['Edm.DateTime'],
  round: ['Edm.Decimal'],
  floor: ['Edm.Decimal'],
  ceiling: ['Edm.Decimal'],
};
const RESULT: Record<string, EdmType> = {
  substringof: 'Edm.Boolean', startswith: 'Edm.Boolean', endswith: 'Edm.Boolean', length: 'Edm.Int32', indexof: 'Edm.Int32', year: 'Edm.Int32', month: 'Edm.Int32',
  day: 'Edm.Int32', hour: 'Edm.Int32', minute: 'Edm.Int32', second: 'Edm.Int32', round: 'Edm.Decimal', floor: 'Edm.Decimal', ceiling: 'Edm.Decimal',
};
const TYPES: readonly EdmType[] = ['Edm.Int64', 'Edm.Int32', 'Edm.Decimal', 'Edm.String', 'Edm.Boolean', 'Edm.DateTime'];

function literal(g: Gen, type: EdmType): string {
  if (g.chance(0.05)) return 'null';
  if (g.chance(0.06)) return g.pick(HUGE_NUMBERS);
  switch (type) {
    case 'Edm.Int64':
      return `${g.int(-5, 100000)}${g.pick(['L', 'l', ''])}`;
    case 'Edm.Int32':
      return String(g.int(-100, 3000));
    case 'Edm.Decimal':
      return `${g.int(-100, 5000)}.${g.int(0, 999999)}${g.pick(['M', 'm', '', 'd', 'f'])}`;
    case 'Edm.String':
      return `'${g.pick(STRINGS).replace(/'/g, "''")}'`;
    case 'Edm.Boolean':
      return g.pick(['true', 'false']);
    case 'Edm.DateTime':
      return `datetime'${g.int(1900, 2100)}-${String(g.int(1, 12)).padStart(2, '0')}-${String(g.int(1, 28)).padStart(2, '0')}T${String(g.int(0, 23)).padStart(2, '0')}:${String(g.int(0, 59)).padStart(2, '0')}${g.chance(0.5) ? `:${String(g.int(0, 59)).padStart(2, '0')}` : ''}'`;
  }
}

/** An operand of (usually) `type`: a path of that type, a literal, or a call that yields it. */
function operand(g: Gen, set: SetShape, type: EdmType, depth: number): string {
  const paths = set.paths.get(type);
  if (depth > 0 && g.chance(0.3)) {
    const fitting = Object.keys(FUNCTIONS).filter((f) => (RESULT[f] ?? 'Edm.String') === type);
    if (fitting.length) return call(g, set, g.pick(fitting), depth - 1);
  }
  if (depth > 0 && (type === 'Edm.Int32' || type === 'Edm.Decimal' || type === 'Edm.Int64') && g.chance(0.2)) {
    return `(${operand(g, set, type, depth - 1)} ${g.pick(['add', 'sub', 'mul', 'div', 'mod'])} ${operand(g, set, g.pick(['Edm.Int32', 'Edm.Decimal', 'Edm.Int64'] as const), depth - 1)})`;
  }
  if (paths && g.chance(0.6)) return g.pick(paths);
  return literal(g, type);
}

/** A call of `name`: mostly with its own arity and argument types, sometimes not. */
function call(g: Gen, set: SetShape, name: string, depth: number): string {
  let params = [...(FUNCTIONS[name] ?? [])];
  if (name === 'substring' && g.chance(0.4)) params.push('Edm.Int32');
  if (g.chance(0.08)) params = params.slice(0, g.int(0, Math.max(0, params.length - 1))); // too few
  if (g.chance(0.06)) params.push(g.pick(TYPES)); // too many
  const args = params.map((p) => operand(g, set, g.chance(0.08) ? g.pick(TYPES) : (p as EdmType), depth));
  return `${g.chance(0.03) ? name.toUpperCase() : name}(${args.join(g.pick([', ', ',', ' , ']))})`;
}

function booleanExpression(g: Gen, set: SetShape, depth: number): string {
  const r = g.float();
  if (depth <= 0 || r < 0.45) {
    const type = g.pick(TYPES);
    const other = g.chance(0.1) ? g.pick(TYPES) : type; // a type mismatch
    const op = g.chance(0.03) ? g.pick(['EQ', 'Eq', '==', '=', '!=', '<>', 'like', 'in', 'has']) : g.pick(['eq', 'ne', 'lt', 'le', 'gt', 'ge']);
    return `${operand(g, set, type, depth)} ${op} ${operand(g, set, other, depth)}`;
  }
  if (r < 0.65) return `(${booleanExpression(g, set, depth - 1)}) ${g.pick(['and', 'or'])} (${booleanExpression(g, set, depth - 1)})`;
  if (r < 0.72) return `not (${booleanExpression(g, set, depth - 1)})`;
  if (r < 0.9) return call(g, set, g.pick(['substringof', 'startswith', 'endswith']), depth - 1);
  const booleans = set.paths.get('Edm.Boolean');
  if (booleans && g.chance(0.5)) return g.pick(booleans);
  return g.pick([`${g.pick(set.properties)} eq ${g.pick(ODD_LITERALS)}`, `Nope eq 1`, `${g.pick(set.navigations.length ? set.navigations : ['X'])} eq null`, `foo(${g.pick(set.properties)})`, `any(x: x eq 1)`]);
}

function oddLiteralFilter(g: Gen, set: SetShape): string {
  const property = g.pick(set.properties);
  const value = g.chance(0.5) ? g.pick(ODD_LITERALS) : g.pick(HUGE_NUMBERS);
  return g.pick([`${property} eq ${value}`, `${value} lt ${property}`, `${property} add ${value} gt 0`, `substringof(${value}, ${property})`, `${value}`, `-${value} eq ${property}`]);
}

/** The text functions, by what they take after their first text argument. */
const GROWING: readonly ((g: Gen, inner: string, text: () => string) => string)[] = [
  (_g, inner, text) => `replace(${inner},${text()},${text()})`,
  (_g, inner, text) => `concat(${inner},${text()})`,
  (_g, inner, text) => `concat(${text()},${inner})`,
  (_g, inner) => `tolower(${inner})`,
  (_g, inner) => `toupper(${inner})`,
  (_g, inner) => `trim(${inner})`,
  (g, inner) => `substring(${inner},${g.int(-2, 40)}${g.chance(0.5) ? `,${g.int(-2, 5000)}` : ''})`,
];
const TESTS: readonly ((g: Gen, inner: string, text: () => string) => string)[] = [
  (_g, inner, text) => `substringof(${text()},${inner})`,
  (_g, inner, text) => `substringof(${inner},${text()})`,
  (_g, inner, text) => `indexof(${inner},${text()}) ge 0`,
  (_g, inner, text) => `startswith(${inner},${text()})`,
  (_g, inner, text) => `endswith(${text()},${inner})`,
  (g, inner) => `length(${inner}) gt ${g.int(0, 1_000_000)}`,
  (_g, inner, text) => `${inner} eq ${text()}`,
];

/**
 * An expensive expression: text functions nested 1 to 8 deep over the set's text properties and
 * literals (long ones too), under a search or a comparison. Most are refused by the cost bounds
 * (400 naming the bound); the rest run. None may end in a 5xx, on either engine.
 */
function costlyExpression(g: Gen, set: SetShape): string {
  const texts = set.paths.get('Edm.String') ?? [];
  const text = () => (texts.length > 0 && g.chance(0.7) ? g.pick(texts) : `'${g.pick(['e', '', 'ab', 'x'.repeat(g.int(1, 300))])}'`);
  let inner = text();
  for (let depth = g.int(1, 8); depth > 0; depth--) inner = g.pick(GROWING)(g, inner, text);
  return g.pick(TESTS)(g, inner, text);
}

export function filterCases(seed: number, count: number, ctx: FuzzContext): HttpCase[] {
  const g = new Gen(seed);
  const cases: HttpCase[] = [];
  for (let i = 0; i < count; i++) {
    const set = g.pick(SETS);
    const r = g.float();
    let filter: string;
    if (r < 0.35) filter = booleanExpression(g, set, g.int(0, 4));
    else if (r < 0.45) filter = costlyExpression(g, set);
    else if (r < 0.7) filter = mutate(g, booleanExpression(g, set, g.int(0, 3)), [...ODD_CHARACTERS, ' and ', ' or ', '(', ')', "'", ',', ' eq ', '/', 'L', 'M', 'datetime', '$']);
    else if (r < 0.85) filter = oddLiteralFilter(g, set);
    else if (r < 0.93) filter = g.repeat(g.int(1, 12), () => g.pick([...ODD_CHARACTERS, ...ODD_LITERALS, 'and', 'or', 'eq', 'not', '(', ')', g.pick(set.properties)]), ' ');
    else filter = g.pick(['', ' ', '(', ')', '()', "'", '((((((((((', '('.repeat(200) + 'true' + ')'.repeat(200), 'not '.repeat(60) + 'true', 'Id eq 1 and '.repeat(200) + 'true', "'" + 'x'.repeat(3000) + "'", 'Title eq ' + "'".repeat(301)]);
    const json = g.chance(0.5);
    const encoding = g.pick(['%20', '+', 'raw'] as const);
    const value = encoding === 'raw' ? rawish(filter) : percentEncode(filter, encoding);
    const formatOption = json && g.chance(0.5) ? '&$format=json' : '';
    const extra = g.chance(0.15) ? g.pick(['&$top=3', '&$orderby=Id desc', '&$inlinecount=allpages', '&$select=Id', '&$skip=1']).replace(/ /g, '%20') : '';
    const target = `${ctx.servicePath}/${set.name}?$filter=${value}${extra}${formatOption}`;
    // Raw '&', '=' or '#' may end the $filter early and leave another option behind: any format then.
    const garbled = encoding === 'raw' && /[&=#]/.test(filter);
    cases.push({
      area: 'filter',
      method: 'GET',
      target,
      headers: { Accept: json && !formatOption ? 'application/json' : 'application/atom+xml', MaxDataServiceVersion: '2.0' },
      errorFormat: garbled ? 'any' : json ? 'json' : 'xml',
    });
  }
  return cases;
}
