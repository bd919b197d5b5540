/**
 * The SQL dialect of the engine under test, evaluated by that engine and compared with the values
 * the contract in src/store/sql/dialect.ts prescribes (computed here independently, in
 * JavaScript). The suite runs on both engines, so both must give the same answers: code point
 * order, Unicode case mapping, 0-based substrings, integer division toward zero, exact Decimal
 * division truncated to 6 places, division by zero an error of the expression, half-away-from-zero rounding, date
 * parts in UTC, nulls first ascending and last descending.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ExprType, FunctionName } from '../../src/odata/expr/ast';
import type { EdmValue } from '../../src/odata/edm';
import type { EdmType } from '../../src/model/types';
import { openStore } from '../../src/store/open';
import type { Store } from '../../src/store/store';
import type { NumericType } from '../../src/store/sql/dialect';
import { SqlParams } from '../../src/store/sql/params';
import { freshDatabase, testEngine } from '../support/test-database';

let store: Store;

before(async () => {
  const database = await freshDatabase();
  store = openStore(database.url, { ownerUrl: database.ownerUrl });
  await store.migrate();
});
after(() => store.close());

type Arg = readonly [ExprType & EdmType, EdmValue];

/**
 * Evaluates one expression and decodes the result as `resultType`. The arguments are bound once
 * each, as columns of a derived table, the way the expression would read stored columns (a
 * dialect may name an argument more than once).
 */
async function evaluate(resultType: EdmType, render: (columns: string[]) => string, args: readonly Arg[]): Promise<EdmValue> {
  const { dialect, codec } = store;
  const columns = args.map((_, i) => `t.a${i}`);
  const from = args.length ? ` FROM (SELECT ${args.map(([type], i) => `${dialect.typed(type, '?')} AS a${i}`).join(', ')}) t` : '';
  const sql = `SELECT ${render(columns)} AS v${from}`;
  const row = await store.read(1, (tx) => tx.get<{ v: unknown }>(sql, args.map(([type, value]) => codec.encode(type, value))));
  return codec.decode(resultType, row!.v);
}

/** Column types as each engine's schema stores the Edm types (the ddl.ts of src/store/sqlite and src/store/postgres). */
const SQL_TYPES: Record<'Edm.Int64' | 'Edm.String' | 'Edm.Decimal' | 'Edm.DateTime' | 'Edm.Boolean' | 'Edm.Int32', string> =
  testEngine === 'postgres'
    ? { 'Edm.Int64': 'bigint', 'Edm.String': 'text', 'Edm.Decimal': 'numeric(18,6)', 'Edm.DateTime': 'timestamp(3)', 'Edm.Boolean': 'boolean', 'Edm.Int32': 'integer' }
    : { 'Edm.Int64': 'INTEGER', 'Edm.String': 'TEXT', 'Edm.Decimal': 'INTEGER', 'Edm.DateTime': 'INTEGER', 'Edm.Boolean': 'INTEGER', 'Edm.Int32': 'INTEGER' };

const str = (v: string | null): Arg => ['Edm.String', v];
const i32 = (v: number | null): Arg => ['Edm.Int32', v];
const i64 = (v: bigint | null): Arg => ['Edm.Int64', v];
const dec = (v: string | null): Arg => ['Edm.Decimal', v];
const date = (iso: string): Arg => ['Edm.DateTime', Date.parse(iso)];

const fn = (name: FunctionName, resultType: EdmType, ...args: Arg[]) => evaluate(resultType, (p) => store.dialect.call(name, p), args);
const arith = (op: 'add' | 'sub' | 'mul' | 'div' | 'mod', type: NumericType, a: Arg, b: Arg) =>
  evaluate(type === 'Edm.Int32' ? 'Edm.Int64' : type, (p) => store.dialect.arithmetic(op, type, p[0]!, p[1]!), [a, b]);

describe(`the ${testEngine} dialect`, () => {
  test('strings: Unicode case mapping, lengths in UTF-16 code units (as .NET counts), code point positions, 0-based substrings, trim, concat', async () => {
    for (const s of ['ÄÖÜ Straße ΣΑΣ', 'İstanbul', 'ǅ', 'abc']) {
      assert.equal(await fn('tolower', 'Edm.String', str(s)), s.toLowerCase(), `tolower ${s}`);
      assert.equal(await fn('toupper', 'Edm.String', str(s)), s.toUpperCase(), `toupper ${s}`);
    }
    // An emoji is two UTF-16 code units, as String.Length counts it in .NET.
    assert.equal(await fn('length', 'Edm.Int32', str('😀aé')), 4);
    assert.equal(await fn('indexof', 'Edm.Int32', str('a😀bcd'), str('cd')), 3);
    assert.equal(await fn('indexof', 'Edm.Int32', str('abc'), str('x')), -1);
    assert.equal(await fn('substring', 'Edm.String', str('h😀llo'), i32(2)), 'llo');
    assert.equal(await fn('substring', 'Edm.String', str('hello'), i32(-3), i32(2)), 'he');
    assert.equal(await fn('substring', 'Edm.String', str('hello'), i32(1), i32(-1)), '');
    assert.equal(await fn('substring', 'Edm.String', str('hello'), i32(2147483647)), '');
    assert.equal(await fn('trim', 'Edm.String', str(' \t x y \r\n')), 'x y');
    assert.equal(await fn('concat', 'Edm.String', str(null), str('a')), 'a');
    assert.equal(await fn('concat', 'Edm.String', str('a'), str(null)), 'a');
    assert.equal(await fn('replace', 'Edm.String', str('a-b-c'), str('-'), str('+')), 'a+b+c');
    assert.equal(await fn('length', 'Edm.Int32', str(null)), null);
  });

  test('string predicates, including the empty string and a suffix longer than the string', async () => {
    assert.equal(await fn('substringof', 'Edm.Boolean', str('b😀'), str('ab😀c')), true);
    assert.equal(await fn('substringof', 'Edm.Boolean', str(''), str('abc')), true);
    assert.equal(await fn('startswith', 'Edm.Boolean', str('abc'), str('ab')), true);
    assert.equal(await fn('startswith', 'Edm.Boolean', str('abc'), str('')), true);
    assert.equal(await fn('startswith', 'Edm.Boolean', str('ab'), str('abc')), false);
    assert.equal(await fn('endswith', 'Edm.Boolean', str('abc'), str('bc')), true);
    assert.equal(await fn('endswith', 'Edm.Boolean', str('bc'), str('abc')), false);
    assert.equal(await fn('endswith', 'Edm.Boolean', str('abc'), str('')), true);
  });

  test('strings compare by code point, also after case mapping', async () => {
    const lt = (a: string, b: string) => evaluate('Edm.Boolean', (p) => `(${p[0]} < ${p[1]})`, [str(a), str(b)]);
    assert.equal(await lt('B', 'a'), true);
    assert.equal(await lt('z', 'é'), true);
    assert.equal(await lt('é', '😀'), true);
    assert.equal(await lt('a', 'B'), false);
    const lowerLt = await evaluate('Edm.Boolean', (p) => `(${store.dialect.call('toupper', [p[0]!])} < ${p[1]})`, [str('a'), str('b')]);
    assert.equal(lowerLt, true, "'A' < 'b' by code point");
  });

  test('integer arithmetic: division toward zero, modulo with the dividend sign, zero divisors and overflow errors of the expression', async () => {
    assert.equal(await arith('div', 'Edm.Int32', i32(7), i32(-2)), -3n);
    assert.equal(await arith('div', 'Edm.Int32', i32(-7), i32(2)), -3n);
    assert.equal(await arith('mod', 'Edm.Int32', i32(-7), i32(2)), -1n);
    assert.equal(await arith('mod', 'Edm.Int32', i32(7), i32(-2)), 1n);
    assert.equal(await arith('add', 'Edm.Int32', i32(2147483646), i32(1)), 2147483647n);
    assert.equal(await arith('sub', 'Edm.Int64', i64(9223372036854775807n), i64(1n)), 9223372036854775806n);
    // Each type's own range: past it, the expression is at fault (a 400), never a wrapped value.
    // Started one at a time: a rejection must not wait unhandled while an earlier one is awaited.
    const overflows = [
      () => arith('add', 'Edm.Int32', i32(2147483647), i32(1)),
      () => arith('mul', 'Edm.Int32', i32(-2147483648), i32(2)),
      () => arith('div', 'Edm.Int32', i32(-2147483648), i32(-1)),
      () => evaluate('Edm.Int64', (p) => store.dialect.negate('Edm.Int32', p[0]!), [i32(-2147483648)]),
      () => arith('add', 'Edm.Int64', i64(9223372036854775807n), i64(1n)),
    ];
    for (const attempt of overflows) {
      const error = await attempt().then(() => undefined, (e: unknown) => e);
      assert.match(String(store.dialect.expressionError(error)), /outside the range/);
    }
  });

  test('div and mod by zero, of every numeric type, are an error of the expression (a 400), never null', async () => {
    const zeroDivisors = [
      () => arith('div', 'Edm.Int32', i32(5), i32(0)),
      () => arith('mod', 'Edm.Int32', i32(5), i32(0)),
      () => arith('div', 'Edm.Int64', i64(5n), i64(0n)),
      () => arith('mod', 'Edm.Int64', i64(5n), i64(0n)),
      () => arith('div', 'Edm.Decimal', dec('1'), dec('0')),
      () => arith('mod', 'Edm.Decimal', dec('1.5'), dec('0')),
    ];
    for (const attempt of zeroDivisors) {
      const error = await attempt().then(() => undefined, (e: unknown) => e);
      assert.match(String(store.dialect.expressionError(error)), /Division by zero/);
    }
    // A null divisor stays null, as any arithmetic of null.
    assert.equal(await arith('div', 'Edm.Int32', i32(5), i32(null)), null);
    assert.equal(await arith('mod', 'Edm.Decimal', dec('1'), dec(null)), null);
  });

  test('Decimal arithmetic is exact; products and quotients truncate to 6 places toward zero', async () => {
    assert.equal(await arith('div', 'Edm.Decimal', dec('1'), dec('3')), '0.333333');
    assert.equal(await arith('div', 'Edm.Decimal', dec('-2'), dec('3')), '-0.666666');
    assert.equal(await arith('mul', 'Edm.Decimal', dec('2.5'), dec('2.5')), '6.25');
    assert.equal(await arith('mul', 'Edm.Decimal', dec('0.000001'), dec('0.5')), '0');
    assert.equal(await arith('mul', 'Edm.Decimal', dec('-0.000003'), dec('0.5')), '-0.000001');
    assert.equal(await arith('add', 'Edm.Decimal', dec('999999999999.999999'), dec('-0.000001')), '999999999999.999998');
    assert.equal(await arith('mod', 'Edm.Decimal', dec('-7.5'), dec('2')), '-1.5');
    // A product or quotient past Decimal(18,6) is an error of the expression on both engines.
    for (const attempt of [() => arith('mul', 'Edm.Decimal', dec('999999999999'), dec('10')), () => arith('div', 'Edm.Decimal', dec('999999999999'), dec('0.1'))]) {
      const error = await attempt().then(() => undefined, (e: unknown) => e);
      assert.match(String(store.dialect.expressionError(error)), /outside the range/);
    }
    assert.equal(await arith('sub', 'Edm.Decimal', dec('0.1'), dec('0.3')), '-0.2');
  });

  test('round half away from zero, floor and ceiling, as Decimals', async () => {
    const cases: [FunctionName, string, string][] = [
      ['round', '2.5', '3'],
      ['round', '-2.5', '-3'],
      ['round', '2.499999', '2'],
      ['floor', '-1.5', '-2'],
      ['floor', '1.999999', '1'],
      ['ceiling', '-1.5', '-1'],
      ['ceiling', '1.000001', '2'],
    ];
    for (const [name, input, expected] of cases) assert.equal(await fn(name, 'Edm.Decimal', dec(input)), expected, `${name}(${input})`);
  });

  test('conversions widen exactly', async () => {
    assert.equal(await evaluate('Edm.Decimal', (p) => store.dialect.convert('Edm.Int64', 'Edm.Decimal', p[0]!), [i64(123456789012n)]), '123456789012');
    assert.equal(await evaluate('Edm.Int64', (p) => store.dialect.convert('Edm.Int32', 'Edm.Int64', p[0]!), [i32(-5)]), -5n);
  });

  test('date parts of a UTC DateTime, whole seconds, also before 1970', async () => {
    const parts: [FunctionName, number][] = [
      ['year', 2026],
      ['month', 1],
      ['day', 15],
      ['hour', 9],
      ['minute', 8],
      ['second', 7],
    ];
    for (const [name, expected] of parts) assert.equal(await fn(name, 'Edm.Int32', date('2026-01-15T09:08:07.999Z')), expected, name);
    assert.equal(await fn('second', 'Edm.Int32', date('1969-12-31T23:59:59.500Z')), 59);
    assert.equal(await fn('year', 'Edm.Int32', date('1969-12-31T23:59:59.500Z')), 1969);
  });

  test('null-safe equality, booleans, nulls first ascending and last descending, id lists', async () => {
    const { dialect } = store;
    assert.equal(await evaluate('Edm.Boolean', (p) => dialect.isNotDistinct(p[0]!, p[1]!), [i32(null), i32(null)]), true);
    assert.equal(await evaluate('Edm.Boolean', (p) => dialect.isDistinct(p[0]!, p[1]!), [i32(1), i32(null)]), true);
    assert.equal(await evaluate('Edm.Boolean', (p) => dialect.isNotDistinct(p[0]!, p[1]!), [str('a'), str('a')]), true);
    assert.equal(await evaluate('Edm.Boolean', () => dialect.trueSql, []), true);
    assert.equal(await evaluate('Edm.Boolean', () => dialect.falseSql, []), false);
    const values = [3, null, 1, 2];
    const union = values.map(() => `SELECT ${dialect.typed('Edm.Int32', '?')} AS v`).join(' UNION ALL ');
    for (const descending of [false, true]) {
      const rows = await store.read(1, (tx) => tx.all<{ v: unknown }>(`SELECT v FROM (${union}) t ORDER BY ${dialect.orderItem('v', descending)}`, values));
      assert.deepEqual(rows.map((r) => store.codec.decode('Edm.Int32', r.v)), descending ? [3, 2, 1, null] : [null, 1, 2, 3]);
    }
    const ids = [5, 6, 7].map(() => `SELECT ${dialect.typed('Edm.Int64', '?')} AS id`).join(' UNION ALL ');
    const found = await store.read(1, (tx) => tx.all<{ id: unknown }>(`SELECT id FROM (${ids}) t WHERE ${dialect.inIds('t.id', '?')} ORDER BY id`, [5n, 6n, 7n, dialect.idsParam([7n, 5n, 9n])]));
    assert.deepEqual(found.map((r) => store.codec.decode('Edm.Int64', r.id)), [5n, 7n]);
  });

  test('LIMIT and OFFSET take and skip rows in order; SQLite writes safe counts as literals, since a bound count re-prepares the statement on every run', async () => {
    const { dialect } = store;
    const values = [4, 1, 5, 2, 3];
    const page = async (limit: number | undefined, offset: number | undefined) => {
      const params = new SqlParams();
      const union = values.map((v) => `SELECT ${dialect.typed('Edm.Int32', params.add(store.codec.encode('Edm.Int32', v)))} AS v`).join(' UNION ALL ');
      const clause = dialect.limitOffset(limit, offset, params);
      const rows = await store.read(1, (tx) => tx.all<{ v: unknown }>(`SELECT v FROM (${union}) t ORDER BY v${clause}`, params.values));
      return { clause, bound: params.values.length - values.length, values: rows.map((r) => store.codec.decode('Edm.Int32', r.v)) };
    };
    assert.deepEqual((await page(2, 1)).values, [2, 3]);
    assert.deepEqual((await page(undefined, 3)).values, [4, 5]);
    assert.deepEqual((await page(0, undefined)).values, []);
    assert.equal((await page(undefined, undefined)).clause, '');
    // A count past the safe integers is bound on both engines, and still limits nothing here.
    const huge = await page(2 ** 53, 0);
    assert.deepEqual(huge.values, [1, 2, 3, 4, 5]);
    assert.equal(huge.bound, testEngine === 'sqlite' ? 1 : 2);
    const safe = await page(2, 1);
    assert.equal(safe.bound, testEngine === 'sqlite' ? 0 : 2, safe.clause);
  });

  test('a list of values of each type matches exactly the rows holding one of them, whatever the text holds', async () => {
    const { dialect, codec } = store;
    /** The members of `candidates` (rows of account 1) that `rowsWithAnyOf` finds in `list`. */
    const matching = async (type: ExprType & EdmType, candidates: readonly EdmValue[], list: readonly EdmValue[]): Promise<EdmValue[]> => {
      const rows = candidates.map((_, i) => `SELECT 1 AS account_id, ${i} AS n, ${dialect.typed(type, '?')} AS v`).join(' UNION ALL ');
      const sql = `WITH candidates AS (${rows}) SELECT n FROM (${dialect.rowsWithAnyOf('t.n', 'candidates', 'v', type, list.length)}) found ORDER BY n`;
      const params = [...candidates.map((v) => codec.encode(type, v)), ...dialect.lookupParams(1, list.map((v) => codec.encode(type, v)))];
      const found = await store.read(1, (tx) => tx.all<{ n: unknown }>(sql, params));
      return found.map((r) => candidates[Number(r.n)]!);
    };
    // Text that an array literal must quote: quotes, backslashes, braces, commas, spaces, NULL.
    const awkward = ['a"b', 'c\\d', '{x,y}', ' lead', 'trail ', 'NULL', '', 'Köln 🚚', 'plain'];
    assert.deepEqual(await matching('Edm.String', [...awkward, 'other', 'null', 'A"B'], awkward.slice(0, -1)), awkward.slice(0, -1));
    assert.deepEqual(await matching('Edm.Int64', [9007199254740993n, -1n, 0n, 5n], [9007199254740993n, 0n, 7n]), [9007199254740993n, 0n]);
    assert.deepEqual(await matching('Edm.Int32', [1, 2, 3], [3, 1]), [1, 3]);
    assert.deepEqual(await matching('Edm.Decimal', ['19.99', '20', '-0.5'], ['19.990000', '-0.5']), ['19.99', '-0.5']);
    assert.deepEqual(await matching('Edm.Boolean', [true, false], [false]), [false]);
    const t1 = Date.parse('2026-11-20T09:00:00.123Z');
    const t2 = Date.parse('1969-12-31T23:59:59Z');
    assert.deepEqual(await matching('Edm.DateTime', [t1, t2, t1 + 1], [t2, t1]), [t1, t2]);
    // A null in the list matches nothing, as `= null` matches nothing.
    assert.deepEqual(await matching('Edm.String', ['a', null], ['a', null]), ['a']);
  });

  test('many rows inserted by one statement come back exactly, every type, awkward text and nulls included', async () => {
    const { dialect, codec } = store;
    const types: (ExprType & EdmType)[] = ['Edm.Int64', 'Edm.String', 'Edm.Decimal', 'Edm.DateTime', 'Edm.Boolean', 'Edm.Int32'];
    const rows: EdmValue[][] = [
      [9007199254740993n, 'a"b\\c {x,y} NULL', '19.99', Date.parse('2026-11-20T09:00:00.123Z'), true, -5],
      [-1n, '', '-0.000001', Date.parse('1969-12-31T23:59:59Z'), false, 2147483647],
      [0n, 'NULL', '0', Date.parse('2000-02-29T00:00:00Z'), true, 0],
      [7n, null, null, null, null, null],
      [8n, 'Köln 🚚 \t\n', '12345.123456', Date.parse('2026-01-01T00:00:00Z'), false, 1],
    ];
    const columns = types.map((_, i) => `c${i}`);
    const read = await store.write(1, async (tx) => {
      await tx.run(`CREATE TEMP TABLE inserted (${columns.map((c, i) => `${c} ${SQL_TYPES[types[i] as keyof typeof SQL_TYPES]}`).join(', ')})`);
      const values = rows.flatMap((row) => row.map((v, i) => codec.encode(types[i]!, v)));
      await tx.run(dialect.insertRows('inserted', columns, types, rows.length), dialect.rowsParams(values, columns.length));
      const back = await tx.rows(`SELECT ${columns.join(', ')} FROM inserted ORDER BY c0`);
      await tx.run('DROP TABLE inserted');
      return back;
    });
    const decoded = read.map((row) => row.map((v, i) => codec.decode(types[i]!, v)));
    const expected = [...rows].sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
    // Decimals come back in the engine's scale: compare them as numbers of millionths.
    const millionths = (v: EdmValue) => (v === null ? null : Math.round(Number(v) * 1e6));
    assert.deepEqual(decoded.map((r) => r.map((v, i) => (i === 2 ? millionths(v) : v))), expected.map((r) => r.map((v, i) => (i === 2 ? millionths(v) : v))));
  });

  test('a value out of range in an expression is recognised as the expression\'s fault (400), not a fault of the service', async () => {
    const error = await arith('add', 'Edm.Int64', i64(9223372036854775807n), i64(1n)).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error, 'the overflow fails');
    assert.match(String(store.dialect.expressionError(error)), /outside the range/);
    assert.equal(store.dialect.expressionError(new Error('connection lost')), undefined);
  });
});
