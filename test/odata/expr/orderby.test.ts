/**
 * $orderby: comma-separated `expr [asc|desc]` items of the $filter grammar, of any type.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../../src/model/catalogue-model';
import { parseOrderBy } from '../../../src/odata/expr';
import { assertBadRequest, sexpr } from './tree-text';

const orderBy = (setName: string, text: string): string[] =>
  parseOrderBy(model, model.typeBySetName.get(setName)!, text).map((item) => `${sexpr(item.expr)} ${item.descending ? 'desc' : 'asc'}`);

test('items with and without a direction', () => {
  const cases: [string, string, string[]][] = [
    ['Products', 'Title', ['Title asc']],
    ['Products', 'Title asc', ['Title asc']],
    ['Products', 'Title desc', ['Title desc']],
    ['Products', 'Title desc, Price asc,Id', ['Title desc', 'Price asc', 'Id asc']],
    ['Products', '  Title   desc  ,  Id  ', ['Title desc', 'Id asc']],
    ['ProductSpecifics', 'Product/Title desc', ['Product/Title desc']],
    ['SalesOrderItems', 'SalesOrder/Buyer/BuyerName,Id desc', ['SalesOrder/Buyer/BuyerName asc', 'Id desc']],
    ['Products', 'length(Title) desc', ['(length Title) desc']],
    // A comma inside a call separates arguments, not items.
    ['Products', 'substring(Title, 1, 2) desc,Id', ['(substring Title 1 2) desc', 'Id asc']],
    ['Products', 'Price add 1 desc', ['(add Price 1M) desc']],
    ['Products', 'DisableAutomatch,StockAmount gt 5 desc', ['DisableAutomatch asc', '(gt StockAmount 5) desc']],
    ['Products', '(Title) desc', ['Title desc']],
    ['Products', 'StockAmount add Id', ['(add (->Int64 StockAmount) Id) asc']],
  ];
  for (const [set, text, expected] of cases) assert.deepEqual(orderBy(set, text), expected, text);
});

test('malformed $orderby options are 400s', () => {
  assertBadRequest(() => orderBy('Products', ''), 'The $orderby option is empty.');
  assertBadRequest(() => orderBy('Products', '   '), 'The $orderby option is empty.');
  assertBadRequest(() => orderBy('Products', 'Title,,Price'), 'The $orderby option has an empty item at position 6.');
  assertBadRequest(() => orderBy('Products', ',Title'), 'empty item at position 0');
  assertBadRequest(() => orderBy('Products', 'Title,'), 'empty item at position 6');
  assertBadRequest(() => orderBy('Products', 'Title desc,'), 'empty item at position 11');
  assertBadRequest(() => orderBy('Products', 'Title descending'), 'Syntax error at position 6 in $orderby', "'descending'");
  assertBadRequest(() => orderBy('Products', 'Title asc desc'), 'Syntax error at position 10 in $orderby', "expected ',' or the end");
  assertBadRequest(() => orderBy('Products', 'Title DESC'), 'Syntax error at position 6 in $orderby');
  assertBadRequest(() => orderBy('Products', '(Title desc)'), 'Syntax error at position 7', "expected ')' before 'desc'");
  assertBadRequest(() => orderBy('Products', '(Title, Price)'), 'Syntax error at position 6', "a ')' is missing");
  assertBadRequest(() => orderBy('Products', '(Title'), 'Unbalanced parentheses in $orderby');
  assertBadRequest(() => orderBy('Products', 'Title)'), 'Unbalanced parentheses in $orderby');
  assertBadRequest(() => orderBy('Products', 'Foo desc'), "No property 'Foo' exists in type 'CatalogueService.Product' at position 0.");
  assertBadRequest(() => orderBy('Products', 'Title,Foo'), "No property 'Foo' exists in type 'CatalogueService.Product' at position 6.");
  assertBadRequest(() => orderBy('Products', 'ProductImages/Type'), "'ProductImages'", 'many');
  assertBadRequest(() => orderBy('Products', 'Title add 1'), "Operator 'add' incompatible");
  assertBadRequest(() => orderBy('Products', 'asc'), "No property 'asc'");
});
