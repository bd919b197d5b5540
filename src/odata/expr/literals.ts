/**
 * URI literals (docs/protocol.md, "Literals") read into the internal value forms of ../edm.ts and
 * written back: the literals of $filter and $orderby, and single literals such as $skiptoken
 * values and service-operation parameters.
 *
 * Every reading is exact. Int64 goes through bigint; floating forms (2.5, 1.5d, 2.0f, 1E+10) are
 * read as Edm.Decimal digit by digit, never through a float, because no property of the model is a
 * Double: a literal without an exact Decimal(18,6) value is refused rather than rounded.
 */
import {
  DECIMAL_INTEGER_DIGITS,
  DECIMAL_SCALE,
  formatIsoDateTime,
  INT32_MAX,
  INT32_MIN,
  INT64_MAX,
  INT64_MIN,
  parseIsoDateTime,
} from '../edm';
import { badRequest } from '../errors';
import type { ExprType, LiteralExpr } from './ast';
import { Lexer, describeToken, type Token } from './lexer';
import { show } from './show';

export const NULL_LITERAL: LiteralExpr = { kind: 'literal', type: 'Null', value: null };

export function literal(type: ExprType, value: LiteralExpr['value']): LiteralExpr {
  return { kind: 'literal', type, value };
}

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?([LlMmDdFf]?)$/;
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** Double and Single specials: no property holds either type. */
const FLOAT_SPECIAL = /^(?:INF|NaN)[DdFf]?$/;

/**
 * Literal prefixes of types the model has no property of, by the lower-cased prefix (a Map, so
 * that a prefix such as `constructor` never finds Object.prototype members).
 */
const UNSUPPORTED_PREFIXES: ReadonlyMap<string, string> = new Map([
  ['x', 'Edm.Binary'],
  ['binary', 'Edm.Binary'],
  ['datetimeoffset', 'Edm.DateTimeOffset'],
  ['time', 'Edm.Time'],
]);

/** `text` as written: a number quoted ('1.5L'), a prefixed literal as it is (datetime'…'). */
function invalid(text: string, type: string, pos: number, reason: string) {
  const shown = text.includes("'") ? show(text) : `'${show(text)}'`;
  return badRequest(`${shown} is not a valid ${type} literal at position ${pos}: ${reason}.`);
}

function unsupported(text: string, type: string, pos: number) {
  return badRequest(
    `The literal '${show(text)}' at position ${pos} is not supported: no property of this service is of type ${type}.`,
  );
}

/**
 * The literal a token stands for, or undefined when the token is no literal (a name other than
 * null/true/false, punctuation). Malformed and unsupported literals are a 400.
 */
export function literalOfToken(token: Token, lexer: Lexer): LiteralExpr | undefined {
  switch (token.kind) {
    case 'number':
      return numberLiteral(token.text, token.pos);
    case 'string':
      return literal('Edm.String', token.value);
    case 'quoted': {
      const result = quotedLiteral(token.prefix, token.value, token.pos);
      if (result === undefined) {
        throw lexer.syntaxError(
          token.pos,
          `'${show(token.prefix)}' is not a literal prefix; the prefixes are datetime and guid (strings need no prefix).`,
        );
      }
      return result;
    }
    case 'name':
      return keywordLiteral(token.text, token.pos);
    default:
      return undefined;
  }
}

/** null, true, false; undefined for any other name. */
export function keywordLiteral(name: string, pos: number): LiteralExpr | undefined {
  if (name === 'null') return NULL_LITERAL;
  if (name === 'true' || name === 'false') return literal('Edm.Boolean', name === 'true');
  if (FLOAT_SPECIAL.test(name)) throw unsupported(name, name.startsWith('N') ? 'Edm.Double (NaN)' : 'Edm.Double (INF)', pos);
  return undefined;
}

/**
 * A numeric literal: 42 (Int32, or Int64 when it does not fit), 42L (Int64), 12.5M (Decimal), and
 * the floating forms 2.5, 1.5d, 2.0f, 1E+10, read exactly as Decimal.
 */
export function numberLiteral(text: string, pos: number): LiteralExpr {
  const m = NUMBER.exec(text);
  if (!m) throw badRequest(`'${show(text)}' at position ${pos} is not a valid numeric literal.`);
  const [, sign = '', integer = '', fraction, exponent, suffix = ''] = m;
  const negative = sign === '-';
  const integral = fraction === undefined && exponent === undefined;

  if (suffix === 'L' || suffix === 'l') {
    if (!integral) throw invalid(text, 'Edm.Int64', pos, 'an Int64 literal has no decimal point or exponent');
    const value = exactInteger(negative, integer);
    if (value === undefined) throw invalid(text, 'Edm.Int64', pos, `it is outside the range ${INT64_MIN} to ${INT64_MAX}`);
    return literal('Edm.Int64', value);
  }
  if (suffix === '' && integral) {
    const value = exactInteger(negative, integer);
    if (value === undefined) throw invalid(text, 'Edm.Int64', pos, `it is outside the range ${INT64_MIN} to ${INT64_MAX}`);
    if (value >= BigInt(INT32_MIN) && value <= BigInt(INT32_MAX)) return literal('Edm.Int32', Number(value));
    return literal('Edm.Int64', value);
  }
  const decimal = exactDecimal(negative, integer, fraction ?? '', exponent ?? '0');
  if (decimal === undefined) {
    throw invalid(
      text,
      'Edm.Decimal',
      pos,
      `it has no exact Edm.Decimal value with at most ${DECIMAL_SCALE} decimal places and ${DECIMAL_INTEGER_DIGITS} integer digits ` +
        '(numbers with a decimal point or exponent are read as Edm.Decimal)',
    );
  }
  return literal('Edm.Decimal', decimal);
}

/** An Int64 value from sign and digits, or undefined outside the Int64 range. */
function exactInteger(negative: boolean, digits: string): bigint | undefined {
  const significant = digits.replace(/^0+(?=\d)/, '');
  if (significant.length > 19) return undefined;
  const magnitude = BigInt(significant);
  const value = negative ? -magnitude : magnitude;
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

/**
 * The canonical Decimal text of sign, integer digits, fraction digits and a decimal exponent, or
 * undefined when the value needs more than 12 integer digits or 6 decimals. Works on the digits
 * only, so 1e999999999 costs no more than 1e9.
 */
function exactDecimal(negative: boolean, integer: string, fraction: string, exponent: string): string | undefined {
  let digits = integer + fraction;
  // A larger exponent cannot leave a value within 12 integer digits and 6 decimals anyway.
  const exponentDigits = exponent.replace(/^[+-]/, '').replace(/^0+(?=\d)/, '');
  const exponentSize = exponentDigits.length > 7 ? 10_000_000 : Number(exponentDigits);
  // Where the decimal point stands: after this many of `digits`.
  let point = integer.length + (exponent.startsWith('-') ? -exponentSize : exponentSize);
  let leadingZeros = 0;
  while (leadingZeros < digits.length && digits.charAt(leadingZeros) === '0') leadingZeros++;
  digits = digits.slice(leadingZeros);
  point -= leadingZeros;
  let end = digits.length;
  while (end > 0 && digits.charAt(end - 1) === '0') end--;
  digits = digits.slice(0, end);
  if (digits === '') return '0';
  if (point > DECIMAL_INTEGER_DIGITS || digits.length - point > DECIMAL_SCALE) return undefined;
  const text =
    point <= 0
      ? '0.' + '0'.repeat(-point) + digits
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : digits.slice(0, point) + '.' + digits.slice(point);
  return (negative ? '-' : '') + text;
}

/** datetime'…' and guid'…' (prefixes in any case); undefined for an unknown prefix. */
export function quotedLiteral(prefix: string, content: string, pos: number): LiteralExpr | undefined {
  const kind = prefix.toLowerCase();
  const written = `${prefix}'${content}'`;
  if (kind === 'datetime') {
    try {
      return literal('Edm.DateTime', parseIsoDateTime(content));
    } catch {
      throw invalid(
        written,
        'Edm.DateTime',
        pos,
        "expected datetime'yyyy-MM-ddTHH:mm[:ss[.fffffff]]' (optionally with Z or an offset such as +02:00) with a real date and time from 0001-01-01 to 9999-12-31 in UTC",
      );
    }
  }
  if (kind === 'guid') {
    if (!GUID.test(content)) throw invalid(written, 'Edm.Guid', pos, "expected guid'hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh' in hexadecimal digits");
    return literal('Edm.Guid', content.toLowerCase());
  }
  const unsupportedType = UNSUPPORTED_PREFIXES.get(kind);
  if (unsupportedType !== undefined) throw unsupported(written, unsupportedType, pos);
  return undefined;
}

/**
 * The same literal as another type when that is exact: Int32 -> Int64 -> Decimal widening, an Int64
 * that fits as Int32, and a null as any type. Undefined when there is no exact value (an Int64 with
 * more than 12 digits as Decimal(18,6)) or the types do not convert.
 */
export function convertLiteral(source: LiteralExpr, target: ExprType): LiteralExpr | undefined {
  if (source.type === target) return source;
  const value = source.value;
  if (value === null) return literal(target, null);
  if (source.type === 'Edm.Int32' && target === 'Edm.Int64' && typeof value === 'number') return literal(target, BigInt(value));
  if ((source.type === 'Edm.Int32' || source.type === 'Edm.Int64') && target === 'Edm.Decimal') {
    const text = String(value);
    return text.replace('-', '').length > DECIMAL_INTEGER_DIGITS ? undefined : literal(target, text);
  }
  if (source.type === 'Edm.Int64' && target === 'Edm.Int32' && typeof value === 'bigint') {
    return value >= BigInt(INT32_MIN) && value <= BigInt(INT32_MAX) ? literal(target, Number(value)) : undefined;
  }
  return undefined;
}

/** Exactly one literal, with optional whitespace around it: '$skiptoken' values, operation parameters. */
export function parseUriLiteral(text: string): LiteralExpr {
  const lexer = new Lexer(text, 'the URI literal');
  const token = lexer.next();
  const result = literalOfToken(token, lexer);
  if (result === undefined) {
    throw lexer.syntaxError(token.pos, `expected a literal (such as 42, 5L, 2.5M, 'text', datetime'…', null) but found ${describeToken(token)}.`);
  }
  const after = lexer.next();
  if (after.kind !== 'end') throw lexer.syntaxError(after.pos, `only one literal is expected, but ${describeToken(after)} follows it.`);
  return result;
}

/** The URI literal of a value, the inverse of parseUriLiteral: 5L, 12.5M, 'O''Neil', datetime'…', guid'…'. */
export function formatUriLiteral(type: ExprType, value: LiteralExpr['value']): string {
  if (value === null) return 'null';
  switch (type) {
    case 'Edm.Int32':
      return String(value);
    case 'Edm.Int64':
      return `${String(value)}L`;
    case 'Edm.Decimal':
      return `${String(value)}M`;
    case 'Edm.String':
      return `'${String(value).replace(/'/g, "''")}'`;
    case 'Edm.Boolean':
      return value ? 'true' : 'false';
    case 'Edm.DateTime':
      return `datetime'${formatIsoDateTime(Number(value))}'`;
    case 'Edm.Guid':
      return `guid'${String(value)}'`;
    case 'Null':
      return 'null';
  }
}
