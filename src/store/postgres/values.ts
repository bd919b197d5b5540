/**
 * How Edm values travel to and from PostgreSQL, exactly: Int64 as bigint (read back as a JS
 * bigint, never a float), Decimal as numeric(18,6) (read back as canonical decimal text),
 * DateTime as timestamp(3) without time zone holding the UTC time (read back as UTC ms).
 *
 * node-pg's defaults would lose both: int8 arrives as a string and numeric as a string with the
 * column's scale, and a `timestamp` is read as LOCAL time. So the parsers below are given to each
 * connection (not installed globally), and DateTime values are sent as text, never as a Date.
 */
import { types } from './pg-driver';
import type { EdmType } from '../../model/types';
import { ValueError, parseDecimalText, type EdmValue } from '../../odata/edm';
import type { SqlValue, ValueCodec } from '../store';

const OID = { int8: 20, numeric: 1700, timestamp: 1114 } as const;

/** numeric text -> canonical decimal; a value with more scale than Decimal(18,6) stays as sent. */
function parseNumeric(text: string): string {
  try {
    return parseDecimalText(text);
  } catch (error) {
    if (error instanceof ValueError) return text;
    throw error;
  }
}

const TIMESTAMP_TEXT = /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?( BC)?$/;

/** The digits of text[from, to) as a number; NaN where one is not a digit. */
function digits(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return n;
}

/**
 * The common shape, "YYYY-MM-DD HH:MM:SS" with up to six fraction digits and a year from 100 on,
 * read by character codes: every DateTime column of every row read passes here, and the regular
 * expression and Date object of the general case showed in the profile of a feed.
 */
function parseCommonTimestamp(text: string): number {
  const length = text.length;
  if (length < 19 || length > 26 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return NaN;
  if (length > 19 && (length === 20 || text.charCodeAt(19) !== 46)) return NaN;
  const year = digits(text, 0, 4);
  // Date.UTC reads the years 0 to 99 as 1900 to 1999: those take the general path.
  if (!(year >= 100)) return NaN;
  const fraction = length > 20 ? digits(text, 20, Math.min(length, 23)) * 10 ** Math.max(0, 23 - length) : 0;
  return Date.UTC(year, digits(text, 5, 7) - 1, digits(text, 8, 10), digits(text, 11, 13), digits(text, 14, 16), digits(text, 17, 19), fraction);
}

/** `timestamp` text in DateStyle ISO ("2026-01-15 09:00:00.123", "0001-01-01 00:00:00 BC") -> UTC ms. */
export function parseTimestamp(text: string): number {
  const common = parseCommonTimestamp(text);
  if (!Number.isNaN(common)) return common;
  const m = TIMESTAMP_TEXT.exec(text);
  if (!m) throw new Error(`Unexpected timestamp text from PostgreSQL: '${text}'`);
  const [, y, mo, d, h, mi, s, frac = '', bc] = m;
  // PostgreSQL has no year 0: 1 BC is the astronomical year 0.
  const year = bc ? 1 - Number(y) : Number(y);
  const date = new Date(0);
  date.setUTCFullYear(year, Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), Number(frac.padEnd(3, '0').slice(0, 3)));
  return date.getTime();
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** The last time formatted, and its text: the rows a write stores mostly carry the same time. */
let lastFormatted = { ms: NaN, text: '' };

/** UTC ms -> `timestamp` input text, for every year JavaScript can hold (AD and BC). */
export function formatTimestamp(ms: number): string {
  if (ms === lastFormatted.ms) return lastFormatted.text;
  const text = formatTimestampText(ms);
  lastFormatted = { ms, text };
  return text;
}

function formatTimestampText(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) throw new ValueError(`${ms} is not a valid DateTime`);
  const year = date.getUTCFullYear();
  const era = year <= 0 ? ' BC' : '';
  return (
    `${pad(year <= 0 ? 1 - year : year, 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)} ` +
    `${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}.${pad(date.getUTCMilliseconds(), 3)}${era}`
  );
}

const parseInt8 = (text: string): bigint => BigInt(text);

/**
 * The `types` option of every connection: exact integers, decimals and UTC times. node-pg asks
 * for every column of every result (each FETCH of a cursor too), so the answers are functions
 * made once, not new closures per column.
 */
export const pgTypeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (text: string) => unknown {
    switch (oid) {
      case OID.int8:
        return parseInt8;
      case OID.numeric:
        return parseNumeric;
      case OID.timestamp:
        return parseTimestamp;
      default:
        return types.getTypeParser(oid, format ?? 'text') as (text: string) => unknown;
    }
  },
};

const isAbsent = (raw: unknown): raw is null | undefined => raw === null || raw === undefined;

const DECODERS: Readonly<Record<EdmType, (raw: unknown) => EdmValue>> = {
  'Edm.Int64': (raw) => (isAbsent(raw) ? null : typeof raw === 'bigint' ? raw : BigInt(raw as string | number)),
  'Edm.Int32': (raw) => (isAbsent(raw) ? null : Number(raw)),
  'Edm.DateTime': (raw) => (isAbsent(raw) ? null : Number(raw)),
  'Edm.Decimal': (raw) => (isAbsent(raw) ? null : parseNumeric(String(raw))),
  'Edm.Boolean': (raw) => (isAbsent(raw) ? null : raw === true || raw === 't' || raw === 'true'),
  'Edm.String': (raw) => (isAbsent(raw) ? null : String(raw)),
};

export const pgCodec: ValueCodec = {
  encode(type: EdmType, value: EdmValue): SqlValue {
    if (value === null) return null;
    switch (type) {
      case 'Edm.Boolean':
        return value ? 'true' : 'false';
      case 'Edm.DateTime':
        return formatTimestamp(value as number);
      default:
        // Int64 bigints are sent as their digits, Decimals as their canonical text: both exact.
        return value as SqlValue;
    }
  },
  decode(type: EdmType, raw: unknown): EdmValue {
    return DECODERS[type](raw);
  },
  decoderOf(type: EdmType): (raw: unknown) => EdmValue {
    return DECODERS[type];
  },
};
