/**
 * Body URIs ($links bodies, bindings): `$n` Content-ID references are told apart from entity URIs,
 * and an entity URI is resolved to its key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import { ODataError } from '../../src/odata/errors';
import { contentIdReference, resolveEntityUri } from '../../src/odata/uri/entity-uri';

const Catalog = model.typeBySetName.get('Catalogs')!;

test('a $n reference: alone, or as the only segment below the service root of an absolute URI', () => {
  assert.equal(contentIdReference('$2'), '2');
  assert.equal(contentIdReference(' $12 '), '12');
  assert.equal(contentIdReference('http://host/publicapi/v1/api.svc/$3'), '3');
  assert.equal(contentIdReference('/publicapi/v1/api.svc/$newCatalog'), 'newCatalog');
  for (const uri of ['Catalogs(5L)', 'http://host/publicapi/v1/api.svc/Catalogs(5L)', '$2/Products', '$', '$metadata', 'http://host/publicapi/v1/api.svc/$batch', 'http://host/x/$2']) {
    assert.equal(contentIdReference(uri), undefined, uri);
  }
});

test('outside a changeset a $n body URI is a 400 saying what it is', () => {
  assert.equal(resolveEntityUri(model, 'http://host/publicapi/v1/api.svc/Catalogs(5L)', Catalog), 5n);
  assert.throws(
    () => resolveEntityUri(model, '$2', Catalog),
    (e: unknown) => e instanceof ODataError && e.status === 400 && /Content-ID '2'.*only an operation of the same \$batch changeset/.test(e.message),
  );
});
