/**
 * The OpenAPI description (src/odata/openapi.ts): a valid OpenAPI 3.0 document by a maintained
 * validator (@seriousme/openapi-schema-validator, which checks it against the OpenAPI
 * specification's own JSON schema), generated from the model (a property added to a model
 * appears in it, typed), and in the OASIS converter's V2 form with this service's JSON values.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { model } from '../../src/model/catalogue-model';
import { defineModel, p } from '../../src/model/define';
import type { Model } from '../../src/model/types';
import { renderOpenApi } from '../../src/odata/openapi';
import { uriKind } from '../../src/server/metrics';

type Obj = Record<string, any>;

const OPTIONS = { servicePath: '/publicapi/v1/api.svc', version: '1' };
const doc = renderOpenApi(model, OPTIONS) as Obj;

/** A small model of one set, with `extra` properties added to its type. */
function oneSetModel(extra: Record<string, ReturnType<typeof p.string>> = {}): Model {
  return defineModel({
    namespace: 'Shop',
    containerName: 'ShopEntities',
    entities: [{ name: 'Item', setName: 'Items', access: 'catalogue', properties: { Id: p.key(), Title: p.string({ maxLength: 80, requiredOnCreate: true }), ...extra } }],
    relations: [],
    operations: [],
  });
}

test('the document is valid OpenAPI 3.0 by the OpenAPI schema (@seriousme/openapi-schema-validator)', async () => {
  const validator = new Validator();
  const result = await validator.validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
  assert.equal(validator.version, '3.0');
});

test('the validator refuses a broken document (so the check above can fail)', async () => {
  const broken = structuredClone(doc);
  broken.paths['/Products'].get.responses['200'].content['application/json'].schema.properties.d.type = 'table';
  const result = await new Validator().validate(broken);
  assert.equal(result.valid, false);
});

test('a property added to the model appears in the document, typed from the model', () => {
  const before = renderOpenApi(oneSetModel(), OPTIONS) as Obj;
  const after = renderOpenApi(oneSetModel({ Colour: p.string({ maxLength: 30, nullable: true }) }), OPTIONS) as Obj;
  assert.equal(before.components.schemas['Shop.Item'].properties.Colour, undefined);
  assert.deepEqual(after.components.schemas['Shop.Item'].properties.Colour, { type: 'string', maxLength: 30, nullable: true });
  assert.deepEqual(after.components.schemas['Shop.Item-create'].properties.Colour, { type: 'string', maxLength: 30, nullable: true });
  const orderby = after.paths['/Items'].get.parameters.find((x: Obj) => x.name === '$orderby');
  assert.ok(orderby.schema.items.enum.includes('Colour desc'));
});

test('every entity set of the model has its paths and schemas, every property its member', () => {
  for (const t of model.entityTypes) {
    const name = `${model.namespace}.${t.name}`;
    assert.ok(doc.paths[`/${t.setName}`]?.get, `${t.setName} has a collection GET`);
    assert.ok(doc.paths[`/${t.setName}({Id})`]?.get, `${t.setName} has a GET by key`);
    assert.equal(Boolean(doc.paths[`/${t.setName}`].post), t.access === 'catalogue', `${t.setName}: POST only on catalogue sets`);
    assert.equal(Boolean(doc.paths[`/${t.setName}({Id})`].delete), t.access === 'catalogue', `${t.setName}: DELETE only on catalogue sets`);
    assert.equal(Boolean(doc.paths[`/${t.setName}({Id})`].patch), t.access !== 'readOnly', `${t.setName}: updates unless read-only`);
    const schema = doc.components.schemas[name];
    assert.deepEqual(Object.keys(schema.properties), ['__metadata', ...t.properties.map((x) => x.name), ...t.navigations.map((n) => n.name)]);
    for (const n of t.navigations) assert.ok(doc.paths[`/${t.setName}({Id})/${n.name}`]?.get, `${t.setName}/${n.name}`);
    if (t.access === 'catalogue') {
      const create = doc.components.schemas[`${name}-create`];
      assert.deepEqual(create.required ?? [], t.properties.filter((x) => x.requiredOnCreate).map((x) => x.name));
      for (const x of t.properties) assert.equal(x.name in create.properties, x.access === 'writable', `${t.name}.${x.name} in create`);
    }
  }
});

test('values are described as JSON verbose writes them: Int64 and Decimal strings, DateTime /Date(ms)/, facets from the model', () => {
  const product = doc.components.schemas['CatalogueService.Product'].properties;
  assert.equal(product.Id.type, 'string');
  assert.equal(product.Id.format, 'int64');
  assert.equal(product.Price.type, 'string');
  assert.equal(product.Price.format, 'decimal');
  assert.match('99.5', new RegExp(product.Price.pattern));
  assert.doesNotMatch('99.1234567', new RegExp(product.Price.pattern));
  assert.equal(product.StockAmount.type, 'integer');
  assert.equal(product.StockAmount.minimum, 0);
  assert.equal(product.ProductType.maximum, 2);
  assert.match('/Date(1492098664000)/', new RegExp(product.CreationDate.pattern));
  assert.equal(product.Title.maxLength, 80);
  assert.equal(product.Title.nullable, undefined);
  assert.equal(product.ShortDescription.nullable, true);
  assert.equal(product.Description.maxLength, undefined);
  assert.deepEqual(product.ProductImages.anyOf[0], { $ref: '#/components/schemas/deferred' });
  assert.deepEqual(product.ProductImages.anyOf[1].properties.results.items, { $ref: '#/components/schemas/CatalogueService.ProductImage' });
});

test('collections are {"d":{"results":[…]}} and one entity {"d":{…}}, the version 2.0 shapes', () => {
  const collection = doc.paths['/Products'].get.responses['200'].content['application/json'].schema;
  assert.deepEqual(collection.properties.d.properties.results, { type: 'array', items: { $ref: '#/components/schemas/CatalogueService.Product' } });
  const one = doc.paths['/Products({Id})'].get.responses['200'].content['application/json'].schema;
  assert.deepEqual(one.properties.d, { $ref: '#/components/schemas/CatalogueService.Product' });
  assert.deepEqual(
    doc.paths['/Products'].get.parameters.map((x: Obj) => x.$ref ?? x.name),
    ['#/components/parameters/top', '#/components/parameters/skip', '#/components/parameters/filter', '#/components/parameters/count', '$orderby', '$select', '$expand'],
  );
});

test('service operations have their HTTP method and parameters, $batch is there, credentials are the security schemes', () => {
  for (const op of model.operations) {
    const item = doc.paths[`/${op.name}`];
    assert.deepEqual(Object.keys(item), [op.httpMethod.toLowerCase()], op.name);
    const params = item[op.httpMethod.toLowerCase()].parameters;
    assert.deepEqual(params.map((x: Obj) => [x.name, x.in, x.required]), op.parameters.map((x) => [x.name, 'query', x.required]), op.name);
  }
  const revise = doc.paths['/ReviseInventoryStatus'].post;
  assert.deepEqual(revise.responses['200'].content['application/json'].schema.properties.d.properties.ReviseInventoryStatus, { type: 'boolean' });
  assert.ok(doc.paths['/$batch'].post.requestBody.content['multipart/mixed;boundary=request-separator']);
  assert.deepEqual(doc.components.securitySchemes.SubscriptionToken, { type: 'apiKey', in: 'header', name: 'SubscriptionToken', description: "The account's subscription token, as the login answers it" });
  assert.equal(doc.components.securitySchemes.SessionCookie.in, 'cookie');
  assert.equal(doc.components.securitySchemes.SessionCookie.name, '.ASPXAUTH');
  // One requirement naming both: every request needs the token and the cookie together.
  assert.deepEqual(doc.security, [{ SubscriptionToken: [], SessionCookie: [] }]);
  assert.deepEqual(doc.servers, [{ url: '/publicapi/v1/api.svc' }]);
});

test('the metrics count requests for the document as kind openapi', () => {
  assert.equal(uriKind(model, '/platform/v1', '/publicapi/v1/openapi.json'), 'openapi');
  assert.equal(uriKind(model, '/platform/v1', '/publicapi/v1/openapi.json/x'), 'unknown');
});
