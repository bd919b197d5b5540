/**
 * $filter parsing and binding against the catalogue model: the forms real clients send
 * (docs/protocol.md, "Literals"), precedence and associativity, navigation paths, null binding,
 * numeric widening, and the 400 for every kind of mistake.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../../src/model/catalogue-model';
import { parseFilter, type Expr } from '../../../src/odata/expr';
import { assertBadRequest, sexpr } from './tree-text';
import { setType as typeOf } from '../../support/model-types';

const filter = (setName: string, text: string): Expr => parseFilter(model, typeOf(setName), text);
const tree = (setName: string, text: string): string => sexpr(filter(setName, text));

test('every $filter the connector sends parses to the expected tree', () => {
  const cases: [string, string, string][] = [
    ['SalesOrders', "(ForeignOrderId eq null) or (ForeignOrderId eq '')", "(or (eq ForeignOrderId null:Edm.String) (eq ForeignOrderId ''))"],
    // Int64 key compared with plain integers: the Int32 literals become Int64 literals.
    ['SalesOrders', '(Id eq 5) or (Id eq 9)', '(or (eq Id 5L) (eq Id 9L))'],
    ['SalesOrders', "ForeignOrderId eq '100000123'", "(eq ForeignOrderId '100000123')"],
    [
      'SalesOrders',
      "(EbayModificationDate gt DateTime'2013-09-16T07:21:12' and EbayModificationDate ne null)",
      "(and (gt EbayModificationDate datetime'2013-09-16T07:21:12') (ne EbayModificationDate null:Edm.DateTime))",
    ],
    ['ProductVariations', 'ProductId eq 123', '(eq ProductId 123L)'],
  ];
  for (const [set, text, expected] of cases) assert.equal(tree(set, text), expected, text);
});

test('the connector forms bind to concrete values and types', () => {
  const changed = filter('SalesOrders', "(EbayModificationDate gt DateTime'2013-09-16T07:21:12' and EbayModificationDate ne null)");
  assert.equal(changed.kind, 'binary');
  if (changed.kind !== 'binary' || changed.left.kind !== 'binary') return;
  assert.deepEqual(changed.left.right, { kind: 'literal', type: 'Edm.DateTime', value: Date.UTC(2013, 8, 16, 7, 21, 12) });
  const byId = filter('SalesOrders', '(Id eq 5) or (Id eq 9)');
  if (byId.kind !== 'binary' || byId.left.kind !== 'binary') return assert.fail('binary expected');
  assert.deepEqual(byId.left.right, { kind: 'literal', type: 'Edm.Int64', value: 5n });
  assert.equal(byId.left.left.kind === 'property' && byId.left.left.property.name, 'Id');
  assert.equal(byId.type, 'Edm.Boolean');
});

test('forms of generic clients (UI5, datajs, .NET) parse', () => {
  const cases: [string, string][] = [
    ["startswith(Title,'B')", "(startswith Title 'B')"],
    ["startswith(Title,'B') eq true", "(eq (startswith Title 'B') true)"],
    ["substringof('abc',Title)", "(substringof 'abc' Title)"],
    ["substringof('abc',Title) eq true", "(eq (substringof 'abc' Title) true)"],
    ['Price gt 2.5m', '(gt Price 2.5M)'],
    ['Id eq 5l', '(eq Id 5L)'],
    ['DisableAutomatch', 'DisableAutomatch'],
    ['DisableAutomatch eq false', '(eq DisableAutomatch false)'],
    ["CreationDate ge datetime'2010-01-01T00:00'", "(ge CreationDate datetime'2010-01-01T00:00:00')"],
    ["tolower(Title) eq 'abc'", "(eq (tolower Title) 'abc')"],
    // Spaces arrive as %20 or '+' (already decoded by the caller); any whitespace run separates.
    ['Price\tgt\t5', '(gt Price 5M)'],
    ['   Price    gt 5   ', '(gt Price 5M)'],
  ];
  for (const [text, expected] of cases) assert.equal(tree('Products', text), expected, text);
});

test('precedence and associativity', () => {
  const cases: [string, string][] = [
    ['DisableAutomatch or AutoMatched and DisableAutomatch', '(or DisableAutomatch (and AutoMatched DisableAutomatch))'],
    ['DisableAutomatch and AutoMatched or DisableAutomatch', '(or (and DisableAutomatch AutoMatched) DisableAutomatch)'],
    ['DisableAutomatch or AutoMatched or DisableAutomatch', '(or (or DisableAutomatch AutoMatched) DisableAutomatch)'],
    ['DisableAutomatch and AutoMatched and DisableAutomatch', '(and (and DisableAutomatch AutoMatched) DisableAutomatch)'],
    ['StockAmount add 1 mul 2 eq 5', '(eq (add StockAmount (mul 1 2)) 5)'],
    ['StockAmount mul 2 add 1 eq 5', '(eq (add (mul StockAmount 2) 1) 5)'],
    ['StockAmount sub 1 sub 2 eq 0', '(eq (sub (sub StockAmount 1) 2) 0)'],
    ['StockAmount div 2 div 3 eq 0', '(eq (div (div StockAmount 2) 3) 0)'],
    ['StockAmount mod 2 mul 3 eq 0', '(eq (mul (mod StockAmount 2) 3) 0)'],
    ['StockAmount add 2 mul 3 sub 4 div 5 eq 0', '(eq (sub (add StockAmount (mul 2 3)) (div 4 5)) 0)'],
    ['StockAmount sub (1 sub 2) eq 0', '(eq (sub StockAmount (sub 1 2)) 0)'],
    ['(StockAmount add 1) mul 2 eq 0', '(eq (mul (add StockAmount 1) 2) 0)'],
    ['- StockAmount add 1 eq 0', '(eq (add (- StockAmount) 1) 0)'],
    ['-StockAmount mul 2 eq 0', '(eq (mul (- StockAmount) 2) 0)'],
    ['-(StockAmount add 1) eq 0', '(eq (- (add StockAmount 1)) 0)'],
    ['- - StockAmount eq 1', '(eq (- (- StockAmount)) 1)'],
    ['StockAmount eq -1', '(eq StockAmount -1)'],
    ['StockAmount eq - 1', '(eq StockAmount (- 1))'],
    ['StockAmount mul -2 eq 4', '(eq (mul StockAmount -2) 4)'],
    ['not DisableAutomatch and AutoMatched', '(and (not DisableAutomatch) AutoMatched)'],
    ['not DisableAutomatch or AutoMatched', '(or (not DisableAutomatch) AutoMatched)'],
    ['not (DisableAutomatch or AutoMatched)', '(not (or DisableAutomatch AutoMatched))'],
    ['not not DisableAutomatch', '(not (not DisableAutomatch))'],
    ['not DisableAutomatch eq true', '(eq (not DisableAutomatch) true)'],
    ['not(DisableAutomatch)', '(not DisableAutomatch)'],
    ['StockAmount lt 5 eq true', '(eq (lt StockAmount 5) true)'],
    ['true eq StockAmount lt 5', '(eq true (lt StockAmount 5))'],
    ['DisableAutomatch eq true eq false', '(eq (eq DisableAutomatch true) false)'],
    ['DisableAutomatch ne true eq false', '(eq (ne DisableAutomatch true) false)'],
    ['StockAmount le 5 ne StockAmount ge 2', '(ne (le StockAmount 5) (ge StockAmount 2))'],
    ['StockAmount gt 1 and StockAmount lt 5', '(and (gt StockAmount 1) (lt StockAmount 5))'],
    ['StockAmount gt 1 or StockAmount lt 5 and Price ge 2', '(or (gt StockAmount 1) (and (lt StockAmount 5) (ge Price 2M)))'],
    ['(StockAmount gt 1 or StockAmount lt 5) and Price ge 2', '(and (or (gt StockAmount 1) (lt StockAmount 5)) (ge Price 2M))'],
    ['Price add 1 gt Price mul 2', '(gt (add Price 1M) (mul Price 2M))'],
    ['length(Title) add 1 gt 3', '(gt (add (length Title) 1) 3)'],
    ["not startswith(Title,'B') or endswith(Title,'x')", "(or (not (startswith Title 'B')) (endswith Title 'x'))"],
    ['((StockAmount)) eq ((1))', '(eq StockAmount 1)'],
    ['(((DisableAutomatch)))', 'DisableAutomatch'],
    ['(StockAmount)gt(1)', '(gt StockAmount 1)'],
  ];
  assert.ok(cases.length >= 30);
  for (const [text, expected] of cases) assert.equal(tree('Products', text), expected, text);
});

test('navigation paths through single-valued navigations', () => {
  assert.equal(tree('ProductSpecifics', "Product/Title eq 'x'"), "(eq Product/Title 'x')");
  assert.equal(tree('SalesOrderItems', "SalesOrder/Buyer/BuyerName eq 'Bob'"), "(eq SalesOrder/Buyer/BuyerName 'Bob')");
  assert.equal(tree('ProductVariationImages', 'ProductVariation/Product/Price gt 5'), '(gt ProductVariation/Product/Price 5M)');
  assert.equal(tree('ProductVariationPictures', 'ProductVariation/Id eq 1'), '(eq ProductVariation/Id 1L)');
  assert.equal(tree('SalesOrders', "ShippingAddress/Town eq 'Berlin'"), "(eq ShippingAddress/Town 'Berlin')");

  const e = filter('SalesOrderItems', "SalesOrder/Buyer/BuyerName eq 'Bob'");
  if (e.kind !== 'binary' || e.left.kind !== 'property') return assert.fail('property expected');
  assert.deepEqual(e.left.navigations.map((n) => [n.name, n.target, n.many]), [
    ['SalesOrder', 'SalesOrder', false],
    ['Buyer', 'Buyer', false],
  ]);
  assert.equal(e.left.property.name, 'BuyerName');
  assert.equal(e.left.type, 'Edm.String');
});

test('a to-many navigation in a path, a navigation as a value and unknown names are 400s that name them', () => {
  assertBadRequest(() => filter('Products', "ProductImages/ImageUrl eq 'x'"), "'ProductImages'", "'CatalogueService.Product'", 'many', 'position 0');
  assertBadRequest(() => filter('ProductVariations', 'ProductVariationPictures/ImagePosition eq 1'), "'ProductVariationPictures'", 'many');
  assertBadRequest(() => filter('ProductSpecifics', 'Product eq null'), "'Product'", "'CatalogueService.ProductSpecific'", 'cannot be used as a value');
  assertBadRequest(() => filter('SalesOrderItems', "SalesOrder/Buyer eq 'x'"), "'Buyer'", "'CatalogueService.SalesOrder'", 'position 11');
  assertBadRequest(() => filter('Products', 'Title/Length eq 1'), "'Title'", 'property', "'/'");
  assert.equal(
    assertBadRequest(() => filter('Products', 'Foo eq 1')),
    "No property 'Foo' exists in type 'CatalogueService.Product' at position 0.",
  );
  assert.equal(
    assertBadRequest(() => filter('ProductSpecifics', 'Product/Foo eq 1')),
    "No property 'Foo' exists in type 'CatalogueService.Product' at position 8.",
  );
  // Names are case-sensitive.
  assertBadRequest(() => filter('Products', 'title eq 1'), "No property 'title'");
});

test('null takes the type of the other side', () => {
  const cases: [string, string][] = [
    ['Title eq null', '(eq Title null:Edm.String)'],
    ['null eq Title', '(eq null:Edm.String Title)'],
    ['null ne null', '(ne null null)'],
    ['Price gt null', '(gt Price null:Edm.Decimal)'],
    ['CreationDate lt null', '(lt CreationDate null:Edm.DateTime)'],
    ['StockAmount add null eq 1', '(eq (add StockAmount null:Edm.Int32) 1)'],
    ['DisableAutomatch and null', '(and DisableAutomatch null:Edm.Boolean)'],
    ['not null', '(not null:Edm.Boolean)'],
    ["startswith(null, 'a')", "(startswith null:Edm.String 'a')"],
  ];
  for (const [text, expected] of cases) assert.equal(tree('Products', text), expected, text);
  const both = filter('Products', 'null eq null');
  if (both.kind !== 'binary') return assert.fail('binary expected');
  assert.deepEqual([both.left, both.right], [
    { kind: 'literal', type: 'Null', value: null },
    { kind: 'literal', type: 'Null', value: null },
  ]);
  assertBadRequest(() => filter('Products', 'null'), 'must be a Boolean expression');
  assertBadRequest(() => filter('Products', 'null add null eq 1'), "Operator 'add' incompatible");
});

test('numeric operands are widened: literals in place, other operands with a convert node', () => {
  const cases: [string, string][] = [
    ['StockAmount eq Id', '(eq (->Int64 StockAmount) Id)'],
    ['Price gt StockAmount', '(gt Price (->Decimal StockAmount))'],
    ['Price gt ExternalProductId', '(gt Price (->Decimal ExternalProductId))'],
    ['StockAmount eq 5L', '(eq (->Int64 StockAmount) 5L)'],
    ['StockAmount eq 2.5', '(eq (->Decimal StockAmount) 2.5M)'],
    ['Id eq 3000000000', '(eq Id 3000000000L)'],
    ['StockAmount add Id gt 1', '(gt (add (->Int64 StockAmount) Id) 1L)'],
    ['Price add 1 gt 1L', '(gt (add Price 1M) 1M)'],
    ['-StockAmount eq Id', '(eq (->Int64 (- StockAmount)) Id)'],
    ['Id eq 9223372036854775807L', '(eq Id 9223372036854775807L)'],
    ['Price eq 999999999999L', '(eq Price 999999999999M)'],
    ['5 eq 5L', '(eq 5L 5L)'],
  ];
  for (const [text, expected] of cases) assert.equal(tree('Products', text), expected, text);
  const e = filter('Products', 'Price gt 5');
  if (e.kind !== 'binary') return assert.fail('binary expected');
  assert.deepEqual(e.right, { kind: 'literal', type: 'Edm.Decimal', value: '5' });
  const sum = filter('Products', 'StockAmount add Id gt 1');
  if (sum.kind !== 'binary') return assert.fail('binary expected');
  assert.equal(sum.left.type, 'Edm.Int64');
  // An Int64 literal with more than 12 digits has no exact Decimal(18,6) value.
  assertBadRequest(() => filter('Products', 'Price eq 9223372036854775807L'), 'no exact Edm.Decimal value', 'position 9');
});

test('incompatible operands are 400s in the WCF wording', () => {
  assert.equal(
    assertBadRequest(() => filter('Products', 'Title eq 5')),
    "Operator 'eq' incompatible with operand types 'Edm.String' and 'Edm.Int32' at position 6.",
  );
  assertBadRequest(() => filter('Products', 'CreationDate add 1 eq CreationDate'), "Operator 'add' incompatible", "'Edm.DateTime'");
  assertBadRequest(() => filter('Products', "Title add 'x' eq 'y'"), "Operator 'add' incompatible", "'Edm.String'");
  assertBadRequest(() => filter('Products', 'DisableAutomatch and StockAmount'), "Operator 'and' incompatible", "'Edm.Int32'");
  assertBadRequest(() => filter('Products', 'StockAmount or DisableAutomatch'), "Operator 'or' incompatible");
  assert.equal(
    assertBadRequest(() => filter('Products', 'not StockAmount')),
    "Operator 'not' incompatible with operand type 'Edm.Int32' at position 0.",
  );
  assertBadRequest(() => filter('Products', "-Title eq 'x'"), "Operator '-' incompatible", "'Edm.String'");
  assertBadRequest(() => filter('Products', 'Title eq true'), "'Edm.String' and 'Edm.Boolean'");
  assertBadRequest(() => filter('Products', "CreationDate eq '2013-01-01'"), "'Edm.DateTime' and 'Edm.String'");
  assertBadRequest(() => filter('Products', "Title eq guid'12345678-1234-1234-1234-123456789012'"), "'Edm.String' and 'Edm.Guid'");
  assertBadRequest(() => filter('Products', 'DisableAutomatch gt 1'), "'Edm.Boolean' and 'Edm.Int32'");
  assertBadRequest(() => filter('Products', 'StockAmount'), 'The $filter expression must be a Boolean expression', "'Edm.Int32'");
  assertBadRequest(() => filter('Products', "Title"), 'must be a Boolean expression');
  assertBadRequest(() => filter('Products', 'length(Title)'), 'must be a Boolean expression');
});

test('Boolean, DateTime and Guid values compare with their own type', () => {
  assert.equal(tree('Products', 'DisableAutomatch lt true'), '(lt DisableAutomatch true)');
  assert.equal(tree('Products', "CreationDate gt ModificationDate"), '(gt CreationDate ModificationDate)');
  assert.equal(
    tree('Products', "guid'ABCDEF01-2345-6789-abcd-ef0123456789' eq guid'abcdef01-2345-6789-ABCD-EF0123456789'"),
    "(eq guid'abcdef01-2345-6789-abcd-ef0123456789' guid'abcdef01-2345-6789-abcd-ef0123456789')",
  );
});

test('syntax errors name the position', () => {
  assertBadRequest(() => filter('Products', 'Price gt'), 'Syntax error at position 8 in $filter', 'end');
  assertBadRequest(() => filter('Products', 'Price gt 5 6'), 'Syntax error at position 11 in $filter', "'6'");
  assertBadRequest(() => filter('Products', 'Price GT 5'), 'Syntax error at position 6 in $filter', "'GT'", "lower-case: 'gt'");
  assertBadRequest(() => filter('Products', 'Price gt 5 and'), 'Syntax error at position 14');
  assertBadRequest(() => filter('Products', 'Price # 5'), 'Syntax error at position 6', "'#'");
  assertBadRequest(() => filter('Products', "Price gt 'abc"), 'Syntax error at position 9', 'closing quote');
  assertBadRequest(() => filter('Products', 'Price gt 5abc'), 'Syntax error at position 9', "'5abc' is not a valid numeric literal");
  assertBadRequest(() => filter('Products', 'Price gt 2.'), 'Syntax error at position 9', "'2.'");
  assertBadRequest(() => filter('Products', 'and eq 1'), 'Syntax error at position 0', "the operator 'and'");
  assertBadRequest(() => filter('Products', 'Price gt 5, Title eq 1'), 'Syntax error at position 10', "','");
  assertBadRequest(() => filter('Products', '(Price gt 5, Title eq 1)'), 'Syntax error at position 11');
  assertBadRequest(() => filter('ProductSpecifics', 'Product/5 eq 1'), 'Syntax error at position 8', "after '/'", "'5'");
  assertBadRequest(() => filter('ProductSpecifics', 'Product/'), 'Syntax error at position 8', "after '/'", 'the end');
  assertBadRequest(() => filter('Products', '()'), 'Syntax error at position 1', "')'");
  assertBadRequest(() => filter('Products', "foo'bar' eq 1"), 'Syntax error at position 0', "'foo' is not a literal prefix");
  assertBadRequest(() => filter('Products', 'Price gt 5 asc'), 'Syntax error at position 11', "'asc'");
  assertBadRequest(() => filter('Products', 'Price */ 5'), 'Syntax error at position 6');
  assertBadRequest(() => filter('Products', 'length(Title)/x eq 1'), 'Syntax error at position 13');
  assertBadRequest(() => filter('Products', ''), 'The $filter expression is empty.');
  assertBadRequest(() => filter('Products', ' 	 '), 'The $filter expression is empty.');
});

test('unbalanced parentheses', () => {
  assertBadRequest(() => filter('Products', 'Price gt 5)'), 'Unbalanced parentheses in $filter', "')' at position 10");
  assertBadRequest(() => filter('Products', '(Price gt 5'), 'Unbalanced parentheses in $filter', "'(' at position 0 is not closed");
  assertBadRequest(() => filter('Products', "startswith(Title,'B'"), 'Unbalanced parentheses in $filter', "'(' at position 10");
  assertBadRequest(() => filter('Products', '((Price gt 5)'), 'Unbalanced parentheses');
  assertBadRequest(() => filter('Products', '(Price gt 5))'), 'Unbalanced parentheses', 'position 12');
});

test('unsupported literal types are 400s that say so', () => {
  for (const text of ["Title eq X'0A1B'", "Title eq binary'0A1B'", "Title eq datetimeoffset'2010-01-01T00:00:00Z'", "Title eq time'PT13H20M'"]) {
    assertBadRequest(() => filter('Products', text), 'not supported', 'position 9');
  }
  for (const text of ['Price eq INF', 'Price eq NaN', 'Price eq -INF', 'Price eq INFd', 'Price eq NaNf']) {
    assertBadRequest(() => filter('Products', text), 'not supported');
  }
});

test('strings are taken literally', () => {
  const cases: [string, string][] = [
    ["'O''Neil'", "O'Neil"],
    ["';'", ';'],
    ["'--'", '--'],
    ["'%'", '%'],
    ["'_'", '_'],
    ["'a''; DROP TABLE x; --'", "a'; DROP TABLE x; --"],
    ["''''", "'"],
    ["''", ''],
    ["'  two  spaces '", '  two  spaces '],
    ["'and or not eq ( ) ,'", 'and or not eq ( ) ,'],
  ];
  for (const [literal, value] of cases) {
    const e = filter('Products', `Title eq ${literal}`);
    if (e.kind !== 'binary') return assert.fail('binary expected');
    assert.deepEqual(e.right, { kind: 'literal', type: 'Edm.String', value }, literal);
  }
});
