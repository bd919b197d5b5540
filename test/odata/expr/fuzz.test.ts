/**
 * Seeded fuzzing: random strings from a mixed alphabet of grammar tokens, names, literals,
 * quotes and junk, and random mutations of valid filters. Every call either returns a
 * well-typed tree or throws a 400 ODataError with a short, printable message; nothing else.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../../src/model/catalogue-model';
import { ODataError } from '../../../src/odata/errors';
import {
  parseExpand,
  parseFilter,
  parseOrderBy,
  parseSelect,
  parseUriLiteral,
  type Expr,
  type ExprType,
} from '../../../src/odata/expr';
import { FUNCTIONS } from '../../../src/odata/expr/functions';
import { mulberry32 } from '../../support/random';
import { countNodes } from './tree-text';

const EXPRESSION_TOKENS = [
  '(', ')', '(', ')', ' ', ' ', ' ', '  ', '\t', ',', '/', '-', "'", "''", '"',
  'and', 'or', 'not', 'eq', 'ne', 'gt', 'ge', 'lt', 'le', 'add', 'sub', 'mul', 'div', 'mod', 'asc', 'desc', 'GT', 'And',
  'Id', 'Title', 'Price', 'StockAmount', 'DisableAutomatch', 'CreationDate', 'ExternalProductId', 'Product', 'ProductImages',
  'Product/Title', 'SalesOrder/Buyer/BuyerName', 'ProductVariation/Product/Price', 'ProductVariationPictures', 'Foo',
  'null', 'true', 'false', '0', '5', '-5', '42L', '5l', '2147483648', '9223372036854775808L', '2.5', '12.5M', '1.1234567M',
  '1E+10', '1e3d', '2.0f', '1e999999999', "'x'", "'O''Neil'", "'a''; DROP TABLE x; --'",
  "datetime'2013-09-16T07:21:12'", "DateTime'2013-02-30T00:00'", "guid'12345678-abcd-ef01-2345-6789abcdef01'", "guid'zz'",
  "X'0A'", "time'PT1H'", 'INF', 'NaN',
  'substringof(', 'startswith(', 'endswith(', 'length(', 'indexof(', 'replace(', 'substring(', 'tolower(', 'trim(',
  'concat(', 'year(', 'round(', 'isof(', 'cast(', 'frobnicate(',
  '$', '#', '*', '%', '&', '=', '.', '+', ';', '\u0000', '\u001f', '\uD800', '\uDC00', '😀', 'ü', '\u202e', '\\',
  'X'.repeat(300), 'constructor(', "constructor'x'", '__proto__(', 'toString', 'hasOwnProperty(', "valueOf'1'",
];

const PATH_TOKENS = [
  'Catalogs', 'ProductVariations', 'ProductVariationPictures', 'ProductVariationImages', 'ProductVariationSpecifics', 'Product',
  'Products', 'ChildCatalogs', 'Title', 'Id', 'ImageUrl', '*', '/', '/', ',', ',', ' ', '', 'Foo', '\u0000', '😀', 'x'.repeat(200),
];

const VALID_FILTERS = [
  "(ForeignOrderId eq null) or (ForeignOrderId eq '')",
  '(Id eq 5) or (Id eq 9)',
  "(EbayModificationDate gt DateTime'2013-09-16T07:21:12' and EbayModificationDate ne null)",
  "startswith(PlatformName,'e') and length(ForeignOrderId) gt 3",
  'TotalPrice add 1.5 gt ItemCount mul -2 or not MarkedAsPayed',
  "substring(Buyer/BuyerName, 1, 2) eq 'ab' and year(CreationDate) ge 2013",
];

function randomText(random: () => number, tokens: readonly string[], maxTokens: number): string {
  const n = 1 + Math.floor(random() * maxTokens);
  let text = '';
  for (let i = 0; i < n; i++) {
    text += tokens[Math.floor(random() * tokens.length)] ?? '';
    if (random() < 0.4) text += ' ';
  }
  return text;
}

function mutate(random: () => number, text: string): string {
  const chars = Array.from(text);
  const edits = 1 + Math.floor(random() * 4);
  const junk = ['(', ')', "'", ' ', '/', ',', '-', 'x', '9', 'L', 'M', '.', 'e'];
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * (chars.length + 1));
    const kind = random();
    if (kind < 0.4) chars.splice(at, 1);
    else if (kind < 0.8) chars.splice(at, 0, junk[Math.floor(random() * junk.length)] ?? '');
    else chars.splice(at, 0, ...chars.slice(0, Math.floor(random() * 10)));
  }
  return chars.join('');
}

const NUMERIC: ReadonlySet<ExprType> = new Set(['Edm.Int32', 'Edm.Int64', 'Edm.Decimal']);

/** The typing invariants of ast.ts, checked on every node. */
function checkTyped(e: Expr): void {
  switch (e.kind) {
    case 'literal':
      return;
    case 'property':
      assert.ok(e.navigations.every((n) => !n.many), 'only single-valued navigations');
      assert.equal(e.type, e.property.type);
      return;
    case 'convert':
      assert.ok(NUMERIC.has(e.operand.type) && e.operand.type !== e.type && e.operand.type !== 'Edm.Decimal');
      return checkTyped(e.operand);
    case 'unary':
      assert.equal(e.operand.type, e.op === 'not' ? 'Edm.Boolean' : e.type);
      if (e.op === 'negate') assert.ok(NUMERIC.has(e.type));
      return checkTyped(e.operand);
    case 'binary': {
      assert.equal(e.left.type, e.right.type, `operands of ${e.op}`);
      if (e.op === 'and' || e.op === 'or') assert.equal(e.left.type, 'Edm.Boolean');
      const arithmetic = ['add', 'sub', 'mul', 'div', 'mod'].includes(e.op);
      assert.equal(e.type, arithmetic ? e.left.type : 'Edm.Boolean');
      if (arithmetic) assert.ok(NUMERIC.has(e.type));
      checkTyped(e.left);
      return checkTyped(e.right);
    }
    case 'call': {
      const signature = FUNCTIONS[e.name];
      assert.equal(e.type, signature.result);
      e.args.forEach((a, i) => assert.equal(a.type, signature.parameters[i]));
      e.args.forEach(checkTyped);
      return;
    }
  }
}

/** Runs `run`; a result goes to `check`, an error must be a short printable 400. Returns whether it succeeded. */
function outcome<T>(input: string, run: () => T, check: (result: T) => void): boolean {
  let result: T;
  try {
    result = run();
  } catch (e) {
    if (!(e instanceof ODataError)) assert.fail(`input ${JSON.stringify(input)} threw ${String(e)}`);
    assert.equal(e.status, 400, JSON.stringify(input));
    assert.ok(e.message.length < 600, `message too long for ${JSON.stringify(input)}: ${e.message.length}`);
    assert.ok(!/native code|\[object /.test(e.message), `an Object.prototype member in ${JSON.stringify(e.message)}`);
    assert.ok(!/[\u0000-\u001f\u007f-\u009f]/.test(e.message), `control character in ${JSON.stringify(e.message)}`);
    assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(e.message), 'lone surrogate in message');
    return false;
  }
  check(result);
  return true;
}

test('random expressions: a well-typed tree or a 400, nothing else', () => {
  const random = mulberry32(0x5eed);
  const types = ['Products', 'ProductSpecifics', 'SalesOrderItems', 'ProductVariationImages', 'SalesOrders'].map((s) => model.typeBySetName.get(s)!);
  let parsed = 0;
  const runs = 6000;
  for (let i = 0; i < runs; i++) {
    const text = randomText(random, EXPRESSION_TOKENS, 24);
    const type = types[i % types.length]!;
    if (outcome(text, () => parseFilter(model, type, text), (e) => {
      assert.equal(e.type, 'Edm.Boolean');
      assert.ok(countNodes(e) <= 100);
      checkTyped(e);
    })) parsed++;
    if (outcome(text, () => parseOrderBy(model, type, text), (items) => {
      assert.ok(items.length >= 1);
      items.forEach((item) => checkTyped(item.expr));
    })) parsed++;
    outcome(text, () => parseUriLiteral(text), (literal) => assert.equal(literal.kind, 'literal'));
  }
  // The alphabet is rich enough that some random strings are valid.
  assert.ok(parsed > 25, `only ${parsed} random expressions parsed`);
});

test('mutations of valid filters: a well-typed tree or a 400', () => {
  const random = mulberry32(424242);
  const orders = model.typeBySetName.get('SalesOrders')!;
  let parsed = 0;
  for (const valid of VALID_FILTERS) assert.equal(parseFilter(model, orders, valid).type, 'Edm.Boolean', valid);
  for (let i = 0; i < 6000; i++) {
    const text = mutate(random, VALID_FILTERS[i % VALID_FILTERS.length] ?? '');
    if (outcome(text, () => parseFilter(model, orders, text), (e) => {
      assert.equal(e.type, 'Edm.Boolean');
      checkTyped(e);
    })) parsed++;
  }
  assert.ok(parsed > 100, `only ${parsed} mutations parsed`);
});

test('random $expand and $select: a tree or a 400', () => {
  const random = mulberry32(77);
  const product = model.typeByName.get('Product')!;
  let parsed = 0;
  for (let i = 0; i < 5000; i++) {
    const expandText = randomText(random, PATH_TOKENS, 10).replace(/ (?=\S)/g, () => (random() < 0.5 ? '' : ' '));
    const selectText = randomText(random, PATH_TOKENS, 8);
    let tree: ReturnType<typeof parseExpand> = [];
    if (outcome(expandText, () => parseExpand(model, product, expandText), (t) => { tree = t; })) parsed++;
    outcome(selectText, () => parseSelect(model, product, selectText, tree), (set) => {
      for (const item of set) assert.equal(item, item.trim());
    });
  }
  assert.ok(parsed > 50, `only ${parsed} expands parsed`);
});
