/**
 * The canonical functions: each one with its bound tree and result type, argument conversions,
 * and the 400s for unknown names, wrong argument counts and wrong argument types.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../../src/model/catalogue-model';
import { parseFilter, parseOrderBy, type Expr } from '../../../src/odata/expr';
import { assertBadRequest, sexpr } from './tree-text';

const product = model.typeByName.get('Product')!;
const filter = (text: string): Expr => parseFilter(model, product, text);
/** An expression of any type, read as a $orderby item. */
const expression = (text: string): Expr => {
  const [item] = parseOrderBy(model, product, text);
  assert.ok(item);
  return item.expr;
};

test('every function binds to its signature and result type', () => {
  const cases: [string, string, string][] = [
    ["substringof('abc', Title)", "(substringof 'abc' Title)", 'Edm.Boolean'],
    ["startswith(Title, 'B')", "(startswith Title 'B')", 'Edm.Boolean'],
    ["endswith(Title, 'B')", "(endswith Title 'B')", 'Edm.Boolean'],
    ['length(Title)', '(length Title)', 'Edm.Int32'],
    ["indexof(Title, 'x')", "(indexof Title 'x')", 'Edm.Int32'],
    ["replace(Title, 'a', 'b')", "(replace Title 'a' 'b')", 'Edm.String'],
    ['substring(Title, 1)', '(substring Title 1)', 'Edm.String'],
    ['substring(Title, 1, 2)', '(substring Title 1 2)', 'Edm.String'],
    ['substring(Title, StockAmount, length(Title))', '(substring Title StockAmount (length Title))', 'Edm.String'],
    ['tolower(Title)', '(tolower Title)', 'Edm.String'],
    ['toupper(Title)', '(toupper Title)', 'Edm.String'],
    ['trim(Title)', '(trim Title)', 'Edm.String'],
    ["concat(Title, 'x')", "(concat Title 'x')", 'Edm.String'],
    ['year(CreationDate)', '(year CreationDate)', 'Edm.Int32'],
    ['month(CreationDate)', '(month CreationDate)', 'Edm.Int32'],
    ['day(CreationDate)', '(day CreationDate)', 'Edm.Int32'],
    ['hour(CreationDate)', '(hour CreationDate)', 'Edm.Int32'],
    ['minute(CreationDate)', '(minute CreationDate)', 'Edm.Int32'],
    ['second(CreationDate)', '(second CreationDate)', 'Edm.Int32'],
    ['round(Price)', '(round Price)', 'Edm.Decimal'],
    ['floor(Price)', '(floor Price)', 'Edm.Decimal'],
    ['ceiling(Price)', '(ceiling Price)', 'Edm.Decimal'],
    ["year(datetime'2013-09-16T07:21:12')", "(year datetime'2013-09-16T07:21:12')", 'Edm.Int32'],
    ["tolower(toupper(trim(concat(Title, ' '))))", "(tolower (toupper (trim (concat Title ' '))))", 'Edm.String'],
  ];
  for (const [text, expected, type] of cases) {
    const e = expression(text);
    assert.equal(sexpr(e), expected, text);
    assert.equal(e.type, type, text);
  }
});

test('substringof takes the needle first', () => {
  const e = filter("substringof('needle', Title)");
  if (e.kind !== 'call') return assert.fail('call expected');
  assert.deepEqual(e.args[0], { kind: 'literal', type: 'Edm.String', value: 'needle' });
  assert.equal(e.args[1]?.kind === 'property' && e.args[1].property.name, 'Title');
});

test('arguments are converted where exact', () => {
  const cases: [string, string][] = [
    // Integers to round/floor/ceiling: literals in place, properties with a convert node.
    ['round(StockAmount)', '(round (->Decimal StockAmount))'],
    ['floor(Id)', '(floor (->Decimal Id))'],
    ['ceiling(5)', '(ceiling 5M)'],
    ['round(5L)', '(round 5M)'],
    ['round(2.5)', '(round 2.5M)'],
    // An Int64 literal that fits is an Int32 position.
    ['substring(Title, 1L, 2L)', '(substring Title 1 2)'],
    ['substring(Title, -1)', '(substring Title -1)'],
    // The literal null fits any parameter.
    ['length(null)', '(length null:Edm.String)'],
    ['substring(Title, null)', '(substring Title null:Edm.Int32)'],
    ['year(null)', '(year null:Edm.DateTime)'],
    ['round(null)', '(round null:Edm.Decimal)'],
  ];
  for (const [text, expected] of cases) assert.equal(sexpr(expression(text)), expected, text);
  const e = expression('ceiling(5)');
  if (e.kind !== 'call') return assert.fail('call expected');
  assert.deepEqual(e.args[0], { kind: 'literal', type: 'Edm.Decimal', value: '5' });
});

test('function results take part in expressions', () => {
  assert.equal(sexpr(filter("length(Title) gt 5 and indexof(Title, 'x') eq -1")), "(and (gt (length Title) 5) (eq (indexof Title 'x') -1))");
  assert.equal(sexpr(filter('round(Price) eq 5')), '(eq (round Price) 5M)');
  assert.equal(sexpr(filter('year(CreationDate) eq 2013L')), '(eq (->Int64 (year CreationDate)) 2013L)');
  assertBadRequest(() => filter("length(Title) eq 'x'"), "Operator 'eq' incompatible", "'Edm.Int32' and 'Edm.String'");
});

test('wrong argument counts are 400s naming the function', () => {
  const cases: [string, string][] = [
    ['length()', "The function 'length' at position 0 takes 1 argument, not 0"],
    ['length(Title, Title) eq 1', "'length' at position 0 takes 1 argument, not 2"],
    ['trim() eq Title', "'trim' at position 0 takes 1 argument, not 0"],
    ["substring(Title) eq 'x'", "'substring' at position 0 takes 2 to 3 arguments, not 1"],
    ["substring(Title, 1, 2, 3) eq 'x'", "takes 2 to 3 arguments, not 4"],
    ["concat(Title) eq 'x'", "'concat' at position 0 takes 2 arguments, not 1"],
    ["concat(Title, 'a', 'b') eq 'x'", "'concat' at position 0 takes 2 arguments, not 3"],
    ["replace(Title, 'a') eq 'x'", "'replace' at position 0 takes 3 arguments, not 2"],
    ["startswith(Title)", "'startswith' at position 0 takes 2 arguments, not 1"],
    ["substringof('a')", "'substringof' at position 0 takes 2 arguments, not 1"],
    ['year(CreationDate, 1) eq 1', "'year' at position 0 takes 1 argument, not 2"],
    ['round() eq 1', "'round' at position 0 takes 1 argument, not 0"],
    ["Title eq 'a' and endswith(Title,'a','b')", "'endswith' at position 17 takes 2 arguments, not 3"],
  ];
  for (const [text, words] of cases) assertBadRequest(() => filter(text), words);
});

test('wrong argument types are 400s naming the function and argument', () => {
  const cases: [string, string[]][] = [
    ['length(5) eq 1', ["No applicable function found for 'length' at position 0", "argument 1 (at position 7) is of type 'Edm.Int32' where 'Edm.String' is expected", 'length(Edm.String)']],
    ['startswith(Title, 5)', ["'startswith'", "argument 2 (at position 18) is of type 'Edm.Int32'"]],
    ['substringof(Title, StockAmount)', ["'substringof'", 'argument 2', "'Edm.Int32'"]],
    ['year(Title) eq 1', ["'year'", "'Edm.String' where 'Edm.DateTime'"]],
    ['round(Title) eq 1', ["'round'", "'Edm.String' where 'Edm.Decimal'"]],
    ["tolower(CreationDate) eq 'x'", ["'tolower'", "'Edm.DateTime' where 'Edm.String'"]],
    ["substring(Title, Id) eq 'x'", ["'substring'", "'Edm.Int64' where 'Edm.Int32'"]],
    ["substring(Title, 3000000000L) eq 'x'", ["'substring'", "'Edm.Int64' where 'Edm.Int32'"]],
    ["substring(Title, 1.5) eq 'x'", ["'substring'", "'Edm.Decimal' where 'Edm.Int32'"]],
    ["substring(Title, Price) eq 'x'", ["'substring'", "'Edm.Decimal'"]],
    ["startswith(DisableAutomatch, 'x')", ["'startswith'", "'Edm.Boolean'"]],
    ["concat(Title, 1) eq 'x'", ["'concat'", 'argument 2']],
    ['round(DisableAutomatch) eq 1', ["'round'", "'Edm.Boolean'"]],
  ];
  for (const [text, words] of cases) assertBadRequest(() => filter(text), ...words);
});

test('unknown and unsupported function names', () => {
  assert.equal(assertBadRequest(() => filter('frobnicate(Title)')), "Unknown function 'frobnicate' at position 0.");
  assertBadRequest(() => filter("StartsWith(Title, 'a')"), "Unknown function 'StartsWith' at position 0.");
  assertBadRequest(() => filter("contains(Title, 'a')"), "Unknown function 'contains'", 'substringof');
  assertBadRequest(() => filter("Title eq 'a' or now() gt CreationDate"), "Unknown function 'now' at position 16.");
  // isof and cast are bound into the nodes of the other operators (type-functions.ts).
  assert.equal(filter("isof('CatalogueService.Product')").kind, 'literal');
  assert.equal(filter("cast(StockAmount, 'Edm.Int64') eq 1").kind, 'binary');
  assertBadRequest(() => filter("cast(Price, 'Edm.Int32') eq 1"), "cast at position 0 from 'Edm.Decimal' to 'Edm.Int32' is not supported");
  assertBadRequest(() => filter("isof(Title, 'Edm.Strin')"), "names the type 'Edm.Strin', which is neither");
  assertBadRequest(() => filter('isof(Title, Title)'), "takes a type name as a string literal as its last argument");
  // Names of Object.prototype members are unknown names like any other.
  assert.equal(assertBadRequest(() => filter('constructor(Title)')), "Unknown function 'constructor' at position 0.");
  assert.equal(assertBadRequest(() => filter('__proto__(Title)')), "Unknown function '__proto__' at position 0.");
  assertBadRequest(() => filter("Title eq constructor'x'"), "'constructor' is not a literal prefix");
  // A property name is no function.
  assertBadRequest(() => filter('Title(1) eq 1'), "Unknown function 'Title'");
  // The name is refused before its (broken) arguments are read.
  assertBadRequest(() => filter('frobnicate(((('), "Unknown function 'frobnicate'");
});
