/**
 * $expand trees and $select items against the catalogue model: the connector's expands, path
 * merging (twin navigations stay apart), the depth and path limits, and the 400s.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../../src/model/catalogue-model';
import { DEFAULT_EXPAND_LIMITS, parseExpand, parseSelect, type ExpandNode } from '../../../src/odata/expr';
import { assertBadRequest, expandText } from './tree-text';
import { setType as typeOf } from '../../support/model-types';

const expand = (setName: string, text: string, limits = DEFAULT_EXPAND_LIMITS): ExpandNode[] =>
  parseExpand(model, typeOf(setName), text, limits);
const select = (setName: string, text: string, expandText = ''): ReadonlySet<string> =>
  parseSelect(model, typeOf(setName), text, expand(setName, expandText));

const CONNECTOR_PRODUCT_EXPAND =
  'CarParts,Catalogs,ChildProducts,DiscountOffers,OptionalProductAttributes,ProductImages,ProductSpecifics,' +
  'ProductVariations/ProductVariationSpecifics,ProductVariations/ProductVariationPictures';

test("the connector's product expand: 8 top nodes, ProductVariations with 2 children", () => {
  const tree = expand('Products', CONNECTOR_PRODUCT_EXPAND);
  assert.equal(tree.length, 8);
  assert.equal(
    expandText(tree),
    'CarParts,Catalogs,ChildProducts,DiscountOffers,OptionalProductAttributes,ProductImages,ProductSpecifics,' +
      'ProductVariations(ProductVariationSpecifics,ProductVariationPictures)',
  );
  const variations = tree[7];
  assert.ok(variations);
  assert.equal(variations.navigation.name, 'ProductVariations');
  assert.equal(variations.navigation.many, true);
  assert.equal(variations.children.length, 2);
  const pictures = variations.children[1];
  assert.ok(pictures);
  // A navigation of its own (the twin of ProductVariationImages, over the same foreign key).
  assert.equal(pictures.name, 'ProductVariationPictures');
  assert.equal(pictures.navigation.name, 'ProductVariationPictures');
  assert.equal(pictures.navigation.relation, typeOf('ProductVariations').navigations.find((n) => n.name === 'ProductVariationImages')!.relation);
  assert.equal(pictures.navigation.target, 'ProductVariationImage');
  assert.deepEqual(pictures.children, []);
  assert.equal(tree[1]?.navigation.target, 'Catalog');
});

test("the connector's order and catalog expands", () => {
  const orders = expand('SalesOrders', 'Address,Buyer,SalesOrderItems/Product,SalesOrderItems/ProductVariation');
  assert.equal(expandText(orders), 'Address,Buyer,SalesOrderItems(Product,ProductVariation)');
  assert.deepEqual(orders.map((n) => n.navigation.many), [false, false, true]);
  assert.equal(orders[2]?.children[0]?.navigation.target, 'Product');
  assert.equal(expandText(expand('Catalogs', 'ParentCatalogs')), 'ParentCatalogs');
});

test('paths merge: each navigation once per level; twin navigations are two', () => {
  assert.equal(expandText(expand('Products', 'Catalogs,Catalogs')), 'Catalogs');
  assert.equal(
    expandText(expand('Products', 'ProductVariations/ProductVariationImages,ProductVariations/ProductVariationPictures,ProductVariations')),
    'ProductVariations(ProductVariationImages,ProductVariationPictures)',
  );
  assert.equal(
    expandText(expand('Products', 'ProductVariations/ProductVariationPictures, ProductVariations/ProductVariationPictures/ProductVariation')),
    'ProductVariations(ProductVariationPictures(ProductVariation))',
  );
  assert.equal(expandText(expand('Products', '  Catalogs ,\tProductImages  ')), 'Catalogs,ProductImages');
  assert.equal(expandText(expand('ProductSpecifics', 'Product/ProductImages,Product/Catalogs/ChildCatalogs')), 'Product(ProductImages,Catalogs(ChildCatalogs))');
  assert.deepEqual(expand('Products', ''), []);
  assert.deepEqual(expand('Products', '  '), []);
});

test('$expand limits: depth and number of paths at N accepted, N+1 refused', () => {
  assert.equal(expandText(expand('Products', 'ProductVariations/Product/Catalogs')), 'ProductVariations(Product(Catalogs))');
  assertBadRequest(
    () => expand('Products', 'ProductVariations/Product/Catalogs/Products'),
    "The $expand path 'ProductVariations/Product/Catalogs/Products' has 4 segments, more than the 3 navigations allowed",
  );
  const twelve = Array(12).fill('Catalogs').join(',');
  assert.equal(expand('Products', twelve).length, 1);
  assertBadRequest(() => expand('Products', `${twelve},Catalogs`), 'The $expand option has 13 paths, more than the 12 allowed.');
  const tight = { maxDepth: 1, maxPaths: 2 };
  assert.equal(expand('Products', 'Catalogs,ProductImages', tight).length, 2);
  assertBadRequest(() => expand('Products', 'Catalogs,ProductImages,CarParts', tight), '3 paths, more than the 2 allowed');
  assertBadRequest(() => expand('Products', 'Catalogs/Products', tight), 'more than the 1 navigations allowed');
  // The limits come before any name is looked up.
  assertBadRequest(() => expand('Products', 'Nope/Nope/Nope/Nope'), 'more than the 3 navigations allowed');
  assertBadRequest(() => expand('Products', ','.repeat(10_000)), 'The $expand option has 10001 paths');
});

test('$expand errors name the segment and the type', () => {
  assert.equal(
    assertBadRequest(() => expand('Products', 'Catalogs,Foo')),
    "No navigation property 'Foo' exists in type 'CatalogueService.Product' (in the $expand path 'Foo').",
  );
  assertBadRequest(() => expand('Products', 'ProductVariations/Foo'), "'Foo'", "'CatalogueService.ProductVariation'", "'ProductVariations/Foo'");
  assertBadRequest(() => expand('Products', 'Title'), "'Title'", "is a property of type 'CatalogueService.Product', not a navigation property");
  assertBadRequest(() => expand('Products', 'ProductImages/ImageUrl'), "'ImageUrl'", "'CatalogueService.ProductImage'");
  assertBadRequest(() => expand('Products', 'ProductVariations//ProductVariationSpecifics'), 'has an empty segment');
  assertBadRequest(() => expand('Products', 'Catalogs/'), "The $expand path 'Catalogs/' has an empty segment.");
  assertBadRequest(() => expand('Products', '/Catalogs'), 'has an empty segment');
  assertBadRequest(() => expand('Products', 'Catalogs,,ProductImages'), 'The $expand option has an empty path (item 2).');
  assertBadRequest(() => expand('Products', 'Catalogs,'), 'empty path (item 2)');
  assertBadRequest(() => expand('Products', 'catalogs'), "No navigation property 'catalogs'");
  const message = assertBadRequest(() => expand('Products', 'X'.repeat(5000)), 'No navigation property');
  assert.ok(message.length < 300);
});

test('$select items as written, checked against the model and the expand tree', () => {
  assert.deepEqual(select('Products', 'Title,ProductImages/ImageUrl', 'ProductImages'), new Set(['Title', 'ProductImages/ImageUrl']));
  assert.deepEqual(select('Products', ' Title , Price ,Title'), new Set(['Title', 'Price']));
  assert.deepEqual(select('Products', '*'), new Set(['*']));
  assert.deepEqual(select('Products', '*,ProductImages/*', 'ProductImages'), new Set(['*', 'ProductImages/*']));
  // A navigation alone needs no expand (it is written deferred).
  assert.deepEqual(select('Products', 'Id,ProductImages,Catalogs'), new Set(['Id', 'ProductImages', 'Catalogs']));
  assert.deepEqual(
    select('Products', 'ProductVariations/ProductVariationPictures/ImageUrl', 'ProductVariations/ProductVariationPictures'),
    new Set(['ProductVariations/ProductVariationPictures/ImageUrl']),
  );
  // Selecting inside one twin needs that twin expanded, not the other.
  assertBadRequest(
    () => select('Products', 'ProductVariations/ProductVariationPictures/*', 'ProductVariations/ProductVariationImages'),
    "navigation property 'ProductVariationPictures', which $expand does not expand",
  );
  // A navigation of an expanded entity, itself not expanded.
  assert.deepEqual(
    select('Products', 'ProductVariations/ProductVariationSpecifics', 'ProductVariations'),
    new Set(['ProductVariations/ProductVariationSpecifics']),
  );
  assert.deepEqual(
    select('SalesOrders', 'Id,Buyer/BuyerName,SalesOrderItems/Product/Title', 'Buyer,SalesOrderItems/Product'),
    new Set(['Id', 'Buyer/BuyerName', 'SalesOrderItems/Product/Title']),
  );
});

test('$select errors', () => {
  assert.equal(
    assertBadRequest(() => select('Products', 'Title,Foo')),
    "No property or navigation property 'Foo' exists in type 'CatalogueService.Product' (in the $select item 'Foo').",
  );
  assertBadRequest(() => select('Products', 'ProductImages/ImageUrl'), "'ProductImages'", 'add it to $expand');
  assertBadRequest(
    () => select('Products', 'ProductVariations/ProductVariationSpecifics/Name', 'ProductVariations'),
    "'ProductVariationSpecifics'",
    '$expand',
  );
  assertBadRequest(() => select('Products', 'ProductImages/Foo', 'ProductImages'), "'Foo'", "'CatalogueService.ProductImage'");
  assertBadRequest(() => select('Products', 'Title/Length'), "'Title' is a property of type 'CatalogueService.Product'");
  assertBadRequest(() => select('Products', '*/Title'), "'*' may only be the last segment");
  assertBadRequest(() => select('Products', 'Title,,Price'), 'The $select option has an empty item (item 2).');
  assertBadRequest(() => select('Products', 'Title,'), 'empty item (item 2)');
  assertBadRequest(() => select('Products', 'ProductImages/', 'ProductImages'), 'has an empty segment');
  assertBadRequest(() => select('Products', ''), 'The $select option is empty');
  assertBadRequest(() => select('Products', 'Ti tle'), "'Ti tle'");
  assertBadRequest(() => select('Products', 'title'), "'title'");
});
