/**
 * The table of URI kinds (src/odata/uri/uri-kind.ts): each parsed path has one kind, and the kind
 * alone says which methods (405 with Allow otherwise) and which system query options (400 naming
 * the option otherwise) a request may use, before anything runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import { ODataError } from '../../src/odata/errors';
import { parseQueryOptions } from '../../src/odata/uri/query-options';
import { parseResourcePath } from '../../src/odata/uri/resource-path';
import { admitRequest, URI_KINDS, uriKindOf, type UriKind } from '../../src/odata/uri/uri-kind';

const EXAMPLES: Readonly<Record<UriKind, string>> = {
  serviceDocument: '/',
  metadata: '/$metadata',
  batch: '/$batch',
  operation: '/ProductIsListed',
  collection: '/Products',
  entity: '/Products(1L)',
  count: '/Products/$count',
  property: '/Products(1L)/Title',
  propertyValue: '/Products(1L)/Title/$value',
  links: '/Products(1L)/$links/Catalogs',
  link: '/Products(1L)/$links/Catalogs(2L)',
  linksCount: '/Products(1L)/$links/Catalogs/$count',
};

function refusal(path: string, method: string, query = ''): ODataError | undefined {
  try {
    admitRequest(model, parseResourcePath(model, path), method, parseQueryOptions(query));
    return undefined;
  } catch (error) {
    assert.ok(error instanceof ODataError, String(error));
    return error;
  }
}

test('every kind has a row, and each example path is of its kind', () => {
  for (const [kind, path] of Object.entries(EXAMPLES)) {
    assert.ok(URI_KINDS[kind as UriKind], kind);
    assert.equal(uriKindOf(parseResourcePath(model, path)), kind, path);
  }
});

test('each kind takes exactly the options of its row, and names any other in a 400', () => {
  const all = ['$format', '$filter', '$orderby', '$top', '$skip', '$skiptoken', '$expand', '$select', '$inlinecount'];
  for (const [kind, path] of Object.entries(EXAMPLES)) {
    const method = kind === 'batch' ? 'POST' : 'GET';
    const taken = URI_KINDS[kind as UriKind].options;
    for (const option of all) {
      const error = refusal(path, method, `${option}=x`);
      if (taken.includes(option as never)) assert.equal(error, undefined, `${kind} takes ${option}`);
      else {
        assert.equal(error?.status, 400, `${kind} refuses ${option}`);
        assert.match(error!.message, new RegExp(`'\\${option}' cannot be applied`));
      }
    }
  }
});

test('the read options follow WCF: collections all, one entity four, $count and $value no $format', () => {
  assert.equal(URI_KINDS.collection.options.length, 9);
  assert.deepEqual([...URI_KINDS.entity.options].sort(), ['$expand', '$filter', '$format', '$select']);
  assert.ok(!URI_KINDS.count.options.includes('$format'));
  assert.deepEqual(URI_KINDS.propertyValue.options, []);
  assert.deepEqual(URI_KINDS.batch.options, []);
});

test('methods follow the set\'s access, the property\'s and the relation\'s; a refusal is a 405 with Allow', () => {
  const allow = (path: string, method: string) => refusal(path, method)?.headers.Allow;
  assert.equal(refusal('/Products', 'POST'), undefined);
  assert.equal(allow('/Products', 'PUT'), 'GET, HEAD, POST');
  assert.equal(allow('/Buyers', 'POST'), 'GET, HEAD');
  assert.equal(allow('/SalesOrders(1L)', 'DELETE'), 'GET, HEAD, PUT, MERGE, PATCH');
  assert.equal(refusal('/SalesOrders(1L)', 'MERGE'), undefined);
  assert.equal(refusal('/Products(1L)/Title', 'PUT'), undefined);
  assert.equal(allow('/Products(1L)/Title', 'DELETE'), 'GET, HEAD, PUT, MERGE, PATCH');
  assert.equal(allow('/Products(1L)/Title/$value', 'MERGE'), 'GET, HEAD, PUT, DELETE');
  assert.equal(allow('/Products(1L)/CreationDate', 'PUT'), 'GET, HEAD');
  assert.equal(allow('/Products(1L)/Id/$value', 'PUT'), 'GET, HEAD');
  assert.equal(allow('/Buyers(1L)/Email', 'PUT'), 'GET, HEAD');
  assert.equal(refusal('/SalesOrders(1L)/ShippingStatus/$value', 'PUT'), undefined);
  assert.equal(allow('/Products/$count', 'POST'), 'GET, HEAD');
  assert.equal(refusal('/Products(1L)/$links/Catalogs', 'POST'), undefined);
  assert.equal(allow('/Products(1L)/$links/Catalogs/$count', 'POST'), 'GET, HEAD');
  assert.equal(refusal('/Products(1L)/$links/Catalogs(2L)', 'DELETE'), undefined);
  assert.equal(allow('/ProductImages(1L)/$links/Product', 'POST'), 'GET, HEAD, PUT');
  assert.equal(allow('/DiscountOffers(1L)/$links/ProductVariation', 'POST'), 'GET, HEAD, PUT, DELETE');
  assert.equal(allow('/Products(1L)/$links/ChildProducts(2L)', 'PUT'), 'GET, HEAD, DELETE');
  assert.equal(allow('/Products(1L)/$links/SalesOrderItems', 'POST'), 'GET, HEAD');
  assert.equal(allow('/SalesOrderItems(1L)/$links/Product', 'PUT'), 'GET, HEAD');
  assert.equal(allow('/$batch', 'GET'), 'POST');
  assert.equal(allow('/$metadata', 'POST'), 'GET, HEAD');
  // A navigation's methods are those of the set it reaches.
  assert.equal(allow('/Products(1L)/ProductImages', 'PUT'), 'GET, HEAD, POST');
});

test('a method is judged before the options, as WCF does', () => {
  assert.equal(refusal('/Buyers', 'POST', '$top=1')?.status, 405);
});
