/**
 * URI literals: every form of docs/protocol.md "Literals" and its edge values, read exactly;
 * formatUriLiteral as the inverse of parseUriLiteral for every type.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../../src/model/catalogue-model';
import { INT64_MAX, INT64_MIN } from '../../../src/odata/edm';
import { formatUriLiteral, parseFilter, parseUriLiteral, type ExprType, type LiteralExpr } from '../../../src/odata/expr';
import { mulberry32 } from '../../support/random';
import { assertBadRequest } from './tree-text';

const lit = (type: ExprType, value: LiteralExpr['value']): LiteralExpr => ({ kind: 'literal', type, value });

function check(cases: readonly [string, LiteralExpr][]): void {
  for (const [text, expected] of cases) assert.deepEqual(parseUriLiteral(text), expected, text);
}

test('integers: Int32 when they fit, else Int64', () => {
  check([
    ['0', lit('Edm.Int32', 0)],
    ['42', lit('Edm.Int32', 42)],
    ['-42', lit('Edm.Int32', -42)],
    ['007', lit('Edm.Int32', 7)],
    ['-0', lit('Edm.Int32', 0)],
    ['2147483647', lit('Edm.Int32', 2147483647)],
    ['-2147483648', lit('Edm.Int32', -2147483648)],
    ['2147483648', lit('Edm.Int64', 2147483648n)],
    ['-2147483649', lit('Edm.Int64', -2147483649n)],
    ['9223372036854775807', lit('Edm.Int64', INT64_MAX)],
    ['-9223372036854775808', lit('Edm.Int64', INT64_MIN)],
  ]);
  assert.ok(Object.is((parseUriLiteral('-0').value as number), 0), '-0 reads as +0');
  assertBadRequest(() => parseUriLiteral('9223372036854775808'), "'9223372036854775808' is not a valid Edm.Int64 literal", 'range');
  assertBadRequest(() => parseUriLiteral('-9223372036854775809'), 'not a valid Edm.Int64 literal');
  assertBadRequest(() => parseUriLiteral('1' + '0'.repeat(40)), 'not a valid Edm.Int64 literal');
});

test('Int64 literals with L or l, range-checked exactly', () => {
  check([
    ['42L', lit('Edm.Int64', 42n)],
    ['42l', lit('Edm.Int64', 42n)],
    ['-5L', lit('Edm.Int64', -5n)],
    ['0L', lit('Edm.Int64', 0n)],
    ['9007199254740993L', lit('Edm.Int64', 9007199254740993n)],
    ['9223372036854775807L', lit('Edm.Int64', INT64_MAX)],
    ['-9223372036854775808L', lit('Edm.Int64', INT64_MIN)],
    ['000000000000000000000042L', lit('Edm.Int64', 42n)],
  ]);
  assertBadRequest(() => parseUriLiteral('9223372036854775808L'), "'9223372036854775808L' is not a valid Edm.Int64 literal at position 0", 'range');
  assertBadRequest(() => parseUriLiteral('-9223372036854775809L'), 'not a valid Edm.Int64 literal');
  assertBadRequest(() => parseUriLiteral('1.5L'), "'1.5L' is not a valid Edm.Int64 literal", 'decimal point');
  assertBadRequest(() => parseUriLiteral('1e3L'), 'not a valid Edm.Int64 literal');
  assertBadRequest(
    () => parseFilter(model, model.typeByName.get('Product')!, 'Id eq 9223372036854775808L'),
    "'9223372036854775808L' is not a valid Edm.Int64 literal at position 6",
  );
});

test('decimals with M or m, exact to 6 places and 12 integer digits', () => {
  check([
    ['12.5M', lit('Edm.Decimal', '12.5')],
    ['12.5m', lit('Edm.Decimal', '12.5')],
    ['5M', lit('Edm.Decimal', '5')],
    ['-0.75m', lit('Edm.Decimal', '-0.75')],
    ['1.123456M', lit('Edm.Decimal', '1.123456')],
    ['1.1234560M', lit('Edm.Decimal', '1.123456')],
    ['80.000000M', lit('Edm.Decimal', '80')],
    ['999999999999M', lit('Edm.Decimal', '999999999999')],
    ['999999999999.999999M', lit('Edm.Decimal', '999999999999.999999')],
    ['0.0M', lit('Edm.Decimal', '0')],
    ['-0M', lit('Edm.Decimal', '0')],
    ['-0.000001M', lit('Edm.Decimal', '-0.000001')],
    ['000012.50M', lit('Edm.Decimal', '12.5')],
  ]);
  assertBadRequest(() => parseUriLiteral('1.1234567M'), "'1.1234567M' is not a valid Edm.Decimal literal", '6 decimal places');
  assertBadRequest(() => parseUriLiteral('1000000000000M'), "'1000000000000M' is not a valid Edm.Decimal literal", '12 integer digits');
});

test('floating forms are read exactly as Decimal', () => {
  check([
    ['2.5', lit('Edm.Decimal', '2.5')],
    ['1.5d', lit('Edm.Decimal', '1.5')],
    ['1.5D', lit('Edm.Decimal', '1.5')],
    ['2.0f', lit('Edm.Decimal', '2')],
    ['2.0F', lit('Edm.Decimal', '2')],
    ['2d', lit('Edm.Decimal', '2')],
    ['1E+10', lit('Edm.Decimal', '10000000000')],
    ['1e3d', lit('Edm.Decimal', '1000')],
    ['1e-6', lit('Edm.Decimal', '0.000001')],
    ['12.5e-5', lit('Edm.Decimal', '0.000125')],
    ['9.99e11', lit('Edm.Decimal', '999000000000')],
    ['-2.5E2', lit('Edm.Decimal', '-250')],
    ['5e0', lit('Edm.Decimal', '5')],
    ['0e999999999', lit('Edm.Decimal', '0')],
    ['0.1', lit('Edm.Decimal', '0.1')],
    ['1234567.654321', lit('Edm.Decimal', '1234567.654321')],
    ['0.0000012e1', lit('Edm.Decimal', '0.000012')],
  ]);
  // 0.1 + 0.2 as a float would be 0.30000000000000004: no float is ever involved.
  for (const text of ['1e-7', '1.5e-6', '1e12', '1e999999999', '0.1234567', '0.30000000000000004', '1e-999999999', '1234567890123.5']) {
    assertBadRequest(() => parseUriLiteral(text), `'${text}' is not a valid Edm.Decimal literal`, 'no exact Edm.Decimal value');
  }
});

test('strings with doubled quotes', () => {
  check([
    ["'O''Neil'", lit('Edm.String', "O'Neil")],
    ["''", lit('Edm.String', '')],
    ["''''", lit('Edm.String', "'")],
    ["'a''; DROP TABLE x; --'", lit('Edm.String', "a'; DROP TABLE x; --")],
    ["'%_;'", lit('Edm.String', '%_;')],
    ["'ünïcödé 😀'", lit('Edm.String', 'ünïcödé 😀')],
  ]);
  assertBadRequest(() => parseUriLiteral("'O'Neil'"), 'Syntax error at position 7 in the URI literal', 'no closing quote');
  assertBadRequest(() => parseUriLiteral("'O' 'Neil'"), 'Syntax error at position 4 in the URI literal', 'only one literal');
  assertBadRequest(() => parseUriLiteral("'open"), 'Syntax error at position 0', 'closing quote');
});

test('datetime literals: any case of the prefix, optional seconds and fraction', () => {
  const ms = Date.UTC(2013, 8, 16, 7, 21, 12);
  check([
    ["datetime'2013-09-16T07:21:12'", lit('Edm.DateTime', ms)],
    ["DateTime'2013-09-16T07:21:12'", lit('Edm.DateTime', ms)],
    ["DATETIME'2013-09-16T07:21:12'", lit('Edm.DateTime', ms)],
    ["datetime'2013-09-16T07:21'", lit('Edm.DateTime', ms - 12000)],
    ["datetime'2013-09-16T07:21:12.5'", lit('Edm.DateTime', ms + 500)],
    ["datetime'2013-09-16T07:21:12.1234567'", lit('Edm.DateTime', ms + 123)],
    ["datetime'2012-02-29T00:00'", lit('Edm.DateTime', Date.UTC(2012, 1, 29))],
    // DateTime.MinValue and MaxValue of .NET; years below 100 are not read as 19xx.
    ["datetime'0001-01-01T00:00:00'", lit('Edm.DateTime', -62135596800000)],
    ["datetime'0099-12-31T00:00:00'", lit('Edm.DateTime', -59011545600000)],
    ["datetime'9999-12-31T23:59:59.9999999'", lit('Edm.DateTime', 253402300799999)],
    // Z and offsets are converted to UTC.
    ["datetime'2013-09-16T07:21:12Z'", lit('Edm.DateTime', ms)],
    ["datetime'2013-09-16T09:21:12+02:00'", lit('Edm.DateTime', ms)],
    ["datetime'2013-09-16T05:51:12-0130'", lit('Edm.DateTime', ms)],
  ]);
  for (const bad of [
    '2013-02-30T00:00', '2013-02-29T00:00', '2013-09-16T24:00', '2013-09-16T07:60', '2013-13-01T00:00', '2013-09-16', 'abc', '', '2013-09-16T07:21:12.12345678',
    '0000-12-31T00:00:00', '0001-01-01T00:00:00+00:01', '9999-12-31T23:59:59-00:01', '2013-09-16T07:21:12+15:00', '2013-09-16T07:21:12+02:60',
  ]) {
    assertBadRequest(() => parseUriLiteral(`datetime'${bad}'`), `datetime'${bad}' is not a valid Edm.DateTime literal at position 0`);
  }
});

test('guid literals: hex validated, lower-cased', () => {
  check([
    ["guid'12345678-ABCD-ef01-2345-6789abcdef01'", lit('Edm.Guid', '12345678-abcd-ef01-2345-6789abcdef01')],
    ["Guid'12345678-abcd-ef01-2345-6789abcdef01'", lit('Edm.Guid', '12345678-abcd-ef01-2345-6789abcdef01')],
  ]);
  for (const bad of ['12345678-abcd-ef01-2345-6789abcdef0', '12345678-abcd-ef01-2345-6789abcdef0g', '12345678abcdef0123456789abcdef01', '']) {
    assertBadRequest(() => parseUriLiteral(`guid'${bad}'`), 'is not a valid Edm.Guid literal');
  }
});

test('null, true, false; unsupported types and malformed literals', () => {
  check([
    ['null', lit('Null', null)],
    ['true', lit('Edm.Boolean', true)],
    ['false', lit('Edm.Boolean', false)],
    ['  5L  ', lit('Edm.Int64', 5n)],
  ]);
  for (const text of ["X'0A'", "binary'0A'", "datetimeoffset'2010-01-01T00:00:00Z'", "time'PT1H'", 'INF', 'NaN', 'INFD']) {
    assertBadRequest(() => parseUriLiteral(text), 'not supported');
  }
  assertBadRequest(() => parseUriLiteral(''), 'Syntax error at position 0 in the URI literal', 'expected a literal');
  assertBadRequest(() => parseUriLiteral('Title'), 'expected a literal', "'Title'");
  assertBadRequest(() => parseUriLiteral('True'), 'expected a literal');
  assertBadRequest(() => parseUriLiteral('5 6'), 'Syntax error at position 2', 'only one literal');
  assertBadRequest(() => parseUriLiteral("'a','b'"), 'only one literal');
  assertBadRequest(() => parseUriLiteral('+5'), "'+'");
  assertBadRequest(() => parseUriLiteral('.5'), "'.'");
  assertBadRequest(() => parseUriLiteral("unknown'x'"), "'unknown' is not a literal prefix");
});

test('formatUriLiteral writes every type; parseUriLiteral reads it back', () => {
  const ms = Date.UTC(2013, 8, 16, 7, 21, 12);
  const cases: [ExprType, LiteralExpr['value'], string][] = [
    ['Edm.Int32', 42, '42'],
    ['Edm.Int32', -2147483648, '-2147483648'],
    ['Edm.Int64', 5n, '5L'],
    ['Edm.Int64', INT64_MIN, '-9223372036854775808L'],
    ['Edm.Int64', INT64_MAX, '9223372036854775807L'],
    ['Edm.Decimal', '12.5', '12.5M'],
    ['Edm.Decimal', '-0.75', '-0.75M'],
    ['Edm.Decimal', '999999999999.999999', '999999999999.999999M'],
    ['Edm.String', "O'Neil", "'O''Neil'"],
    ['Edm.String', '', "''"],
    ['Edm.String', "''", "''''''"],
    ['Edm.Boolean', true, 'true'],
    ['Edm.Boolean', false, 'false'],
    ['Edm.DateTime', ms, "datetime'2013-09-16T07:21:12'"],
    ['Edm.DateTime', ms + 7, "datetime'2013-09-16T07:21:12.007'"],
    ['Edm.DateTime', Date.UTC(1999, 11, 31, 23, 59, 59, 999), "datetime'1999-12-31T23:59:59.999'"],
    ['Edm.Guid', '12345678-abcd-ef01-2345-6789abcdef01', "guid'12345678-abcd-ef01-2345-6789abcdef01'"],
    ['Null', null, 'null'],
  ];
  for (const [type, value, text] of cases) {
    assert.equal(formatUriLiteral(type, value), text, `${type} ${String(value)}`);
    assert.deepEqual(parseUriLiteral(text), lit(type, value), text);
  }
  // A null of any type is written null (and reads back untyped).
  assert.equal(formatUriLiteral('Edm.String', null), 'null');
});

test('formatUriLiteral round-trips random values of every type', () => {
  const random = mulberry32(20240611);
  const int = (max: number) => Math.floor(random() * max);
  const alphabet = ["'", "''", 'a', 'Z', ' ', ';', '-', '%', '_', 'ü', '😀', '\t', ',', '(', ')'];
  for (let i = 0; i < 2000; i++) {
    const int32 = int(2 ** 32) - 2 ** 31;
    const int64 = BigInt(int(2 ** 32)) * BigInt(int(2 ** 31)) * (random() < 0.5 ? -1n : 1n);
    const scaled = BigInt(int(10 ** 9)) * BigInt(int(10 ** 9));
    const decimalText = (random() < 0.5 ? '-' : '') + (scaled / 1_000_000n).toString() + '.' + (scaled % 1_000_000n).toString().padStart(6, '0');
    const decimal = parseUriLiteral(decimalText + 'M').value as string;
    const text = Array.from({ length: int(12) }, () => alphabet[int(alphabet.length)]).join('');
    const date = Date.UTC(1900 + int(200), int(12), 1 + int(28), int(24), int(60), int(60), random() < 0.5 ? 0 : int(1000));
    const guid = [8, 4, 4, 4, 12].map((n) => Array.from({ length: n }, () => '0123456789abcdef'[int(16)]).join('')).join('-');
    const values: [ExprType, LiteralExpr['value']][] = [
      ['Edm.Int32', int32 === 0 ? 0 : int32],
      ['Edm.Int64', int64],
      ['Edm.Decimal', decimal],
      ['Edm.String', text],
      ['Edm.Boolean', random() < 0.5],
      ['Edm.DateTime', date],
      ['Edm.Guid', guid],
    ];
    for (const [type, value] of values) {
      assert.deepEqual(parseUriLiteral(formatUriLiteral(type, value)), lit(type, value), `${type} ${String(value)}`);
    }
  }
});
