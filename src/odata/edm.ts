/**
 * Edm primitive values: the one internal form of each type, and its conversions to and from the
 * wire (JSON verbose, Atom/XML text, URI literals). Every conversion is exact: Int64 is a bigint
 * and Decimal a canonical decimal string, so neither ever passes through a float.
 *
 * Internal forms:
 *   Edm.Int64    bigint              Edm.Int32   number (integer)
 *   Edm.Decimal  string "-12.5"      Edm.String  string
 *   Edm.Boolean  boolean             Edm.DateTime number (ms since epoch, UTC)
 *   null         null
 */
import { isoDateTimeText } from './iso-date';
import type { EdmType } from '../model/types';
import { quote } from './quote';

export type EdmValue = bigint | number | string | boolean | null;

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;
/** Decimal(18,6): what every Decimal property stores exactly. */
export const DECIMAL_SCALE = 6;
export const DECIMAL_INTEGER_DIGITS = 12;

/** Why a value could not be read as its type; the caller names the property. */
export class ValueError extends Error {}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

export function parseInt64Text(text: string): bigint {
  if (!INTEGER.test(text)) throw new ValueError(`'${quote(text)}' is not an Int64`);
  // Leading zeros aside, more than 19 digits is out of range: checked before BigInt reads them all.
  if (text.replace(/^[+-]?0*/, '').length > 19) throw new ValueError(`${quote(text)} is outside the Int64 range`);
  const value = BigInt(text);
  if (value < INT64_MIN || value > INT64_MAX) throw new ValueError(`${quote(text)} is outside the Int64 range`);
  return value;
}

export function parseInt32Text(text: string): number {
  if (!INTEGER.test(text)) throw new ValueError(`'${quote(text)}' is not an Int32`);
  if (text.replace(/^[+-]?0*/, '').length > 10) throw new ValueError(`${quote(text)} is outside the Int32 range`);
  const value = Number(text);
  if (value < INT32_MIN || value > INT32_MAX) throw new ValueError(`${quote(text)} is outside the Int32 range`);
  return value;
}

/**
 * "80.000000", "99.9", "-0.50", "5" -> canonical text without trailing zeros ("80", "99.9", "-0.5").
 * More than 6 significant decimals or 12 integer digits is refused, never rounded.
 */
export function parseDecimalText(text: string): string {
  const m = DECIMAL.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] === undefined || m[3] === ''))) throw new ValueError(`'${quote(text)}' is not a Decimal`);
  const integer = (m[2] ?? '').replace(/^0+(?=\d)/, '') || '0';
  const fraction = (m[3] ?? '').replace(/0+$/, '');
  if (fraction.length > DECIMAL_SCALE) throw new ValueError(`${quote(text)} has more than ${DECIMAL_SCALE} decimal places`);
  if (integer.length > DECIMAL_INTEGER_DIGITS) throw new ValueError(`${quote(text)} has more than ${DECIMAL_INTEGER_DIGITS} integer digits`);
  const negative = m[1] === '-' && (integer !== '0' || fraction !== '');
  return `${negative ? '-' : ''}${integer}${fraction ? '.' + fraction : ''}`;
}

/** Canonical decimal text -> the integer count of millionths (how SQLite stores it). */
export function decimalToScaled(decimal: string): bigint {
  // The digits of the scaled integer are the text's digits with the fraction padded to the
  // scale: one BigInt parse, no bigint arithmetic (this runs for every Decimal a write binds).
  const dot = decimal.indexOf('.');
  if (dot < 0) return BigInt(decimal + SCALE_ZEROS);
  const fraction = decimal.slice(dot + 1);
  if (fraction.length > DECIMAL_SCALE) throw new ValueError(`${quote(decimal)} has more than ${DECIMAL_SCALE} decimal places`);
  return BigInt(decimal.slice(0, dot) + fraction + SCALE_ZEROS.slice(fraction.length));
}

const SCALE_ZEROS = '0'.repeat(DECIMAL_SCALE);
const SCALE_FACTOR = 10 ** DECIMAL_SCALE;
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

export function scaledToDecimal(scaled: bigint): string {
  // Most amounts fit a double exactly, and number arithmetic costs far less than bigint strings.
  if (scaled <= SAFE_MAX && scaled >= -SAFE_MAX) {
    const n = Number(scaled);
    const magnitude = n < 0 ? -n : n;
    const remainder = magnitude % SCALE_FACTOR;
    const integer = (magnitude - remainder) / SCALE_FACTOR;
    const sign = n < 0 ? '-' : '';
    if (remainder === 0) return sign + String(integer);
    return sign + String(integer) + '.' + String(remainder).padStart(DECIMAL_SCALE, '0').replace(TRAILING_ZEROS, '');
  }
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(DECIMAL_SCALE + 1, '0');
  const integer = digits.slice(0, -DECIMAL_SCALE);
  const fraction = digits.slice(-DECIMAL_SCALE).replace(TRAILING_ZEROS, '');
  return `${negative ? '-' : ''}${integer}${fraction ? '.' + fraction : ''}`;
}

const TRAILING_ZEROS = /0+$/;

/** Compares two canonical decimals exactly (for >= 0 rules and the like). */
export function compareDecimal(a: string, b: string): number {
  const d = decimalToScaled(a) - decimalToScaled(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/**
 * The DateTime range of .NET (DateTime.MinValue to DateTime.MaxValue), which WCF clients send and
 * expect: 0001-01-01T00:00:00 (DateTime.MinValue, the .NET client's value of an unset date) up to
 * 9999-12-31T23:59:59.999, as UTC ms. Every value outside it is refused, so that every stored date
 * can be written back in Atom's four-digit years.
 */
export const DATETIME_MIN_MS = -62135596800000;
export const DATETIME_MAX_MS = 253402300799999;

const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?(?:(Z)|([+-])(\d{2}):?(\d{2}))?$/;
const ISO_FORM = 'expected yyyy-MM-ddTHH:mm[:ss[.fffffff]], optionally with Z or an offset such as +02:00';

/** UTC ms of a calendar date and time, or NaN when a part is out of its range (30 February, 24:00). */
function utcMs(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return NaN;
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCDate() !== day) return NaN; // the day does not exist in that month
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}

function checkRange(ms: number, text: string): number {
  if (!(ms >= DATETIME_MIN_MS && ms <= DATETIME_MAX_MS)) {
    throw new ValueError(`'${quote(text)}' is outside the DateTime range 0001-01-01T00:00:00 to 9999-12-31T23:59:59.999 (UTC)`);
  }
  return ms;
}

/**
 * The one reader of ISO date-time text, for every place a DateTime arrives as text (Atom and JSON
 * bodies, datetime'…' in $filter and every other URI literal): "2013-09-16T07:21:12", with
 * optional seconds and fraction (7 digits as .NET writes them, kept to the millisecond), from year
 * 0001 on. Without an offset the time is UTC (as WCF reads it); with Z or an offset such as
 * +02:00 it is converted to UTC, so 2015-06-01T10:00:00+02:00 is stored as 08:00.
 */
export function parseIsoDateTime(text: string): number {
  const m = ISO_DATETIME.exec(text.trim());
  if (!m) throw new ValueError(`'${quote(text)}' is not a DateTime (${ISO_FORM})`);
  const [, y, mo, d, h, mi, s = '0', frac = '', , sign, offsetHours = '0', offsetMinutes = '0'] = m;
  const local = utcMs(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s), Number(frac.padEnd(3, '0').slice(0, 3)));
  // .NET's offsets reach ±14:00.
  const offset = Number(offsetHours) * 60 + Number(offsetMinutes);
  if (Number.isNaN(local) || Number(y) < 1 || Number(offsetMinutes) > 59 || offset > 14 * 60) {
    throw new ValueError(`'${quote(text)}' is not a valid date and time`);
  }
  return checkRange(local - (sign === '-' ? -offset : offset) * 60_000, text);
}

const JSON_DATE = /^\/Date\((-?\d{1,15})(?:([+-])(\d{4}))?\)\/$/;

/**
 * "/Date(1325419200000)/" (ms since 1970 UTC; negative back to year 0001: /Date(-62135596800000)/)
 * or ISO text (datajs sends that). An offset in minutes, "/Date(1325419200000+0120)/", follows
 * the OData convention that the ms are the local wall-clock time: it is converted to UTC like an
 * ISO offset.
 */
export function parseJsonDateTime(text: string): number {
  const m = JSON_DATE.exec(text);
  if (!m) return parseIsoDateTime(text);
  const [, ms = '0', sign, minutes] = m;
  const offset = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * Number(minutes);
  if (Math.abs(offset) > 14 * 60) throw new ValueError(`'${quote(text)}' has an offset beyond 14 hours`);
  return checkRange(Number(ms) - offset * 60_000, text);
}

export function formatIsoDateTime(ms: number): string {
  // Atom text without offset, milliseconds only when present (datajs rejects non-Z offsets).
  const text = isoDateTimeText(ms);
  if (text !== undefined) return text;
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
}

export function parseBooleanText(text: string): boolean {
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw new ValueError(`'${quote(text)}' is not a Boolean (true or false)`);
}

/**
 * A JSON number that a double cannot hold exactly (9007199254740993, 123456789012.123456, 1e400),
 * kept as the text the client sent: the JSON reader hands these to fromJson instead of a rounded
 * number, so that a value is read from its own digits or refused naming them.
 */
export class JsonNumberText {
  constructor(readonly text: string) {}
}

/**
 * A JSON request value read as `type`, coerced where the meaning is unambiguous
 * (docs/protocol.md, "Formats"): Decimals and Int64 as strings or numbers, Int32 as a digit string,
 * numbers sent for String properties, "true"/"false" for Booleans.
 */
export function fromJson(type: EdmType, value: unknown): EdmValue {
  if (value === null) return null;
  switch (type) {
    case 'Edm.String':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      if (value instanceof JsonNumberText) return value.text;
      break;
    case 'Edm.Int64':
      if (typeof value === 'string') return parseInt64Text(value.trim());
      if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
      // Beyond 2^53 (pyodata writes every Int64 as a number): read from the digits sent.
      if (value instanceof JsonNumberText) return parseInt64Text(value.text);
      break;
    case 'Edm.Int32':
      if (typeof value === 'number' && Number.isInteger(value)) return parseInt32Text(String(value));
      if (typeof value === 'string') return parseInt32Text(value.trim());
      if (value instanceof JsonNumberText) return parseInt32Text(value.text);
      break;
    case 'Edm.Decimal':
      if (typeof value === 'string') return parseDecimalText(value);
      if (typeof value === 'number' && Number.isFinite(value) && !/e/i.test(String(value))) return parseDecimalText(String(value));
      // More digits than a double holds (123456789012.123456): read from the digits sent.
      if (value instanceof JsonNumberText) return parseDecimalText(value.text);
      break;
    case 'Edm.Boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'false') return value === 'true';
      break;
    case 'Edm.DateTime':
      if (typeof value === 'string') return parseJsonDateTime(value);
      break;
  }
  throw new ValueError(`${describe(value)} is not a valid ${type}`);
}

/** Text of an Atom/XML property element read as `type`. */
export function fromXmlText(type: EdmType, text: string): EdmValue {
  switch (type) {
    case 'Edm.String':
      return text;
    case 'Edm.Int64':
      return parseInt64Text(text.trim());
    case 'Edm.Int32':
      return parseInt32Text(text.trim());
    case 'Edm.Decimal':
      return parseDecimalText(text);
    case 'Edm.Boolean':
      return parseBooleanText(text.trim());
    case 'Edm.DateTime':
      return parseIsoDateTime(text);
  }
}

/**
 * The JSON verbose text of a value of each type (an absent one as null): Int64 and Decimal quoted,
 * DateTime as "\/Date(ms)\/". One function per type, so that the writers, which convert every
 * value of every row, call the conversion of the property's own type instead of switching on it.
 */
const quotedJson = (v: EdmValue | undefined): string => (v === null || v === undefined ? 'null' : '"' + String(v) + '"');
const JSON_TEXT: Readonly<Record<EdmType, (value: EdmValue | undefined) => string>> = {
  'Edm.Int64': quotedJson,
  'Edm.Decimal': quotedJson,
  'Edm.Int32': (v) => (v === null || v === undefined ? 'null' : String(v)),
  'Edm.Boolean': (v) => (v === null || v === undefined ? 'null' : v ? 'true' : 'false'),
  'Edm.DateTime': (v) => (v === null || v === undefined ? 'null' : '"\\/Date(' + String(v) + ')\\/"'),
  'Edm.String': (v) => (v === null || v === undefined ? 'null' : JSON.stringify(v)),
};

/** The JSON text conversion of a type's values (JSON_TEXT). */
export const jsonTextOf = (type: EdmType): ((value: EdmValue | undefined) => string) => JSON_TEXT[type];

/** The JSON verbose text of a value: Int64 and Decimal quoted, DateTime as "\/Date(ms)\/". */
export function toJson(type: EdmType, value: EdmValue): string {
  return JSON_TEXT[type](value);
}

/** The Atom/XML element text of a non-null value (not yet XML-escaped). */
export function toXmlText(type: EdmType, value: Exclude<EdmValue, null>): string {
  switch (type) {
    case 'Edm.DateTime':
      return formatIsoDateTime(value as number);
    case 'Edm.Boolean':
      return value ? 'true' : 'false';
    default:
      return String(value);
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${quote(value)}'`;
  if (value instanceof JsonNumberText) return quote(value.text);
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}
