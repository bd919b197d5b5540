/**
 * The cost bounds of ../../../src/odata/expr/cost.ts: text that nested functions can grow to, and
 * the work per row of a search, from the model's property lengths. Each bound is accepted at its
 * value and refused above it with a 400 that names it; ordinary filters pass.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../../src/model/catalogue-model';
import { DEFAULT_EXPR_LIMITS, parseFilter, parseOrderBy, type ExprLimits } from '../../../src/odata/expr';
import { assertBadRequest } from './tree-text';

const product = model.typeByName.get('Product')!;
const filter = (text: string, limits: ExprLimits = DEFAULT_EXPR_LIMITS) => parseFilter(model, product, text, limits);
/** Description has no MaxLength: it counts as one request body (1 MiB by default); Title has 80. */
const UNBOUNDED = DEFAULT_EXPR_LIMITS.unboundedTextLength;

const nest = (fn: (inner: string) => string, inner: string, times: number): string => {
  let text = inner;
  for (let i = 0; i < times; i++) text = fn(text);
  return text;
};

test("the issue's filter, replace nested in replace over Description, is refused before it runs", () => {
  const message = assertBadRequest(
    () => filter("length(replace(replace(replace(Description,'e',Description),'e',Description),'e',Description)) gt 0"),
    "The function 'replace' could produce text of up to",
    'more than the limit of 4,194,304',
  );
  assert.ok(!message.includes('Description,'), 'the message does not echo the request');
});

test('replace grows text by the replacement: over Title (80), two nested pass, three are refused', () => {
  const replaceTitle = (inner: string) => `replace(${inner},'e',Title)`;
  filter(`length(${nest(replaceTitle, 'Title', 2)}) gt 0`); // 80 * 80 * 80 = 512,000
  assertBadRequest(() => filter(`length(${nest(replaceTitle, 'Title', 3)}) gt 0`), "'replace' could produce text of up to 40,960,000 characters");
  // A literal replacement multiplies by its length; an empty one removes and cannot grow.
  filter(`length(replace(Description,'e','')) gt 0`);
  filter(`length(replace(Description,'e','abcd')) gt 0`);
  assertBadRequest(() => filter(`length(replace(Description,'e','abcde')) gt 0`), 'up to 5,242,880 characters');
});

test('concat adds lengths: four Descriptions reach the limit exactly, five pass it', () => {
  const concatDescription = (inner: string) => `concat(${inner},Description)`;
  filter(`length(${nest(concatDescription, 'Description', 3)}) gt 0`);
  assert.equal(4 * UNBOUNDED, DEFAULT_EXPR_LIMITS.maxTextLength);
  assertBadRequest(() => filter(`length(${nest(concatDescription, 'Description', 4)}) gt 0`), "'concat' could produce text of up to 5,242,880");
});

test('case mapping grows text once, however deeply tolower and toupper are nested', () => {
  filter(`${'tolower(toupper('.repeat(16)}Title${'))'.repeat(16)} eq 'x'`);
  const deep = `${'tolower(toupper('.repeat(16)}Description${'))'.repeat(16)} eq 'x'`;
  filter(deep);
  // Each mapping still reads and writes its text (3 Mi out; 3 Mi in after the first): 32 of them and the comparison come to 202,375,172.
  assertBadRequest(() => filter(deep, { ...DEFAULT_EXPR_LIMITS, maxWorkPerRow: 200_000_000 }), 'up to 202,375,172 character operations');
  // A growth of three, once: three Descriptions concatenated (3 MiB) upper-cased are 9 MiB.
  assertBadRequest(() => filter(`toupper(concat(concat(Description,Description),Description)) eq 'x'`), "'toupper' could produce text of up to 9,437,184");
});

test('a search costs haystack times needle: a word in Description passes, Description in Description is refused', () => {
  filter(`substringof('waterproof', Description)`);
  filter(`indexof(tolower(Description), 'waterproof') ge 0`);
  filter(`substringof(Title, ShortDescription)`);
  const message = assertBadRequest(() => filter('substringof(Description, Description)'), 'character operations per row', 'more than the limit of 268,435,456');
  assert.match(message, /haystack/);
  assertBadRequest(() => filter('indexof(Description, ShortDescription) gt 0'), 'character operations per row');
});

test('the bounds apply to $orderby items too', () => {
  assert.equal(parseOrderBy(model, product, 'tolower(Title) desc, Id').length, 2);
  assertBadRequest(() => parseOrderBy(model, product, "Id, replace(Description,'e',Description)"), "'replace' could produce text");
  assertBadRequest(() => parseOrderBy(model, product, 'indexof(Description, Description)'), 'character operations per row');
});

test('the bounds come from the limits given: lower ones refuse what the defaults accept', () => {
  const tight: ExprLimits = { ...DEFAULT_EXPR_LIMITS, maxTextLength: 160, maxWorkPerRow: 1002, unboundedTextLength: 100 };
  filter("concat(Title,Title) eq 'x'", tight);
  assertBadRequest(() => filter("concat(concat(Title,Title),'x') eq 'x'", tight), 'up to 161 characters', 'limit of 160');
  assertBadRequest(() => filter("substringof('abcdefghijk', Description)", tight), 'up to 1,102 character operations', 'limit of 1,002');
  // 10 × 100 for the search, 1 for each argument.
  filter("substringof('abcdefghij', Description)", tight);
});

test('filters that connectors send cost little', () => {
  const cases: [string, string][] = [
    ['SalesOrder', "(ForeignOrderId eq null) or (ForeignOrderId eq '')"],
    ['Product', "startswith(Title, 'Shoe') and Price gt 10m"],
    ['Product', "year(CreationDate) eq 2026 and length(Ean) eq 13"],
    ['Product', "substringof('red', tolower(Title)) or substringof('red', tolower(Description))"],
  ];
  for (const [typeName, text] of cases) parseFilter(model, model.typeByName.get(typeName)!, text);
});
