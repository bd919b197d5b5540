/**
 * The served OpenAPI document used by a client driven by it (./openapi-client.ts) against the live
 * service: an account with rows in every entity set is read through every entity set, entity and
 * navigation path of the document, and through its GET service operations, and a product is
 * created from the create schema; every answer must conform to the response schema the document
 * declares, and the entities must carry exactly the members the schema names. The document
 * itself needs the same credentials as $metadata.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { request } from '../support/http-client';
import { asSeller, type LiveService, type Seller } from '../support/live-service';
import { fullAccount } from '../support/full-account';
import { startWithPlatform } from '../platform/platform-client';
import { OpenApiClient } from './openapi-client';

type Obj = Record<string, any>;

const OPENAPI_PATH = '/publicapi/v1/openapi.json';

let live: LiveService;
let seller: Seller;
let client: OpenApiClient;
/** The first Id read from each entity set, by set name. */
const firstIds = new Map<string, string>();

before(async () => {
  live = await startWithPlatform();
  seller = await fullAccount(live, 'openapi');
});
after(() => live.close());

test('the document needs the credentials $metadata needs, and is served as JSON', async () => {
  const attempts: Record<string, string>[] = [{}, { SubscriptionToken: seller.token }, { Cookie: `.ASPXAUTH=${seller.cookie}` }, { SubscriptionToken: 'x'.repeat(32), Cookie: `.ASPXAUTH=${seller.cookie}` }];
  for (const headers of attempts) {
    const res = await request(live.origin + OPENAPI_PATH, { headers: { Accept: 'application/json', ...headers } });
    assert.equal(res.status, 401, JSON.stringify(headers));
    assert.doesNotMatch(res.body, /openapi/);
  }
  const metadata = await request(`${live.root}/$metadata`);
  assert.equal(metadata.status, 401, 'the same rule as $metadata');
  const res = await asSeller(seller, live.origin + OPENAPI_PATH);
  assert.equal(res.status, 200, res.body.slice(0, 300));
  assert.match(String(res.headers['content-type']), /^application\/json;charset=utf-8/);
  const doc = JSON.parse(res.body) as Obj;
  const validation = await new Validator().validate(doc);
  assert.equal(validation.valid, true, JSON.stringify(validation.errors)?.slice(0, 1000));
  assert.equal((await asSeller(seller, live.origin + OPENAPI_PATH, { method: 'POST' })).status, 405);
  const head = await asSeller(seller, live.origin + OPENAPI_PATH, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  client = new OpenApiClient(doc, live.origin, { SubscriptionToken: seller.token, SessionCookie: seller.cookie });
});

/** The entity set paths of the document: `/Set` with a GET (not operations, $batch or $count). */
function setPaths(doc: Obj): string[] {
  return Object.keys(doc.paths).filter((p) => /^\/[A-Za-z]+$/.test(p) && doc.paths[p].get && doc.paths[`${p}({Id})`]);
}

/** The member names the document's schema gives the entities of a collection path. */
function memberNames(doc: Obj, path: string): string[] {
  const items = doc.paths[path].get.responses['200'].content['application/json'].schema.properties.d.properties.results.items;
  const name = (items.$ref as string).split('/').pop()!;
  return Object.keys(doc.components.schemas[name].properties);
}

test('every entity set read as the document describes it: collection, entity by key, each navigation', async () => {
  assert.ok(client, 'the document was read');
  const doc = client.doc;
  const sets = setPaths(doc);
  assert.ok(sets.length >= 17, `entity sets in the document: ${sets.join(', ')}`);
  for (const path of sets) {
    const top = client.parameters(path, 'get').find((p) => p.name === '$top')!;
    const answer = await client.call(path, 'get', { $top: top.example, $inlinecount: 'allpages' });
    assert.equal(answer.res.status, 200, `${path}: ${answer.res.body.slice(0, 300)}`);
    assert.deepEqual(client.check(path, 'get', answer), [], path);
    const rows = answer.body.d.results as Obj[];
    assert.ok(rows.length > 0, `${path} has rows in this account`);
    assert.equal(answer.body.d.__count, String(rows.length), path);
    // Exactly the members the schema names: none undocumented, none missing.
    for (const row of rows) assert.deepEqual(Object.keys(row).sort(), memberNames(doc, path).sort(), path);
    const id = String(rows[0]!.Id);
    firstIds.set(path.slice(1), id);

    // Expanded, the navigations are the entities or {"results":[…]} the schemas declare.
    const expand = client.parameters(path, 'get').find((p) => p.name === '$expand')!.schema.items.enum as string[];
    if (expand.length) {
      const expanded = await client.call(path, 'get', { $expand: expand.join(',') });
      assert.equal(expanded.res.status, 200, `${path}?$expand: ${expanded.res.body.slice(0, 300)}`);
      assert.deepEqual(client.check(path, 'get', expanded), [], `${path}?$expand=${expand.join(',')}`);
      assert.ok(expanded.body.d.results.some((row: Obj) => expand.some((nav) => row[nav] !== null && !('__deferred' in row[nav]))), `${path}: something was expanded`);
    }

    const byKey = `${path}({Id})`;
    const one = await client.call(byKey, 'get', { Id: id });
    assert.equal(one.res.status, 200, `${byKey}: ${one.res.body.slice(0, 300)}`);
    assert.deepEqual(client.check(byKey, 'get', one), [], byKey);
    assert.equal(one.body.d.Id, id);

    for (const nav of Object.keys(doc.paths).filter((p) => p.startsWith(`${byKey}/`))) {
      const related = await client.call(nav, 'get', { Id: id });
      assert.equal(related.res.status, 200, `${nav}: ${related.res.body.slice(0, 300)}`);
      assert.deepEqual(client.check(nav, 'get', related), [], nav);
    }
  }
});

test('the GET service operations called with the parameters the document declares', async () => {
  const doc = client.doc;
  const operations = Object.keys(doc.paths).filter((p) => doc.paths[p].get?.tags?.includes('Service operations'));
  assert.ok(operations.length >= 2, operations.join(', '));
  for (const path of operations) {
    // An id parameter names its set: productId -> Products, salesOrderId -> SalesOrders.
    const values: Record<string, string> = {};
    for (const p of client.parameters(path, 'get')) {
      const set = `${p.name.replace(/Id$/, '').replace(/^./, (c: string) => c.toUpperCase())}s`;
      const id = firstIds.get(set);
      assert.ok(id, `${path}: a value for ${p.name}`);
      values[p.name] = id;
    }
    const answer = await client.call(path, 'get', values);
    assert.equal(answer.res.status, 200, `${path}: ${answer.res.body.slice(0, 300)}`);
    assert.deepEqual(client.check(path, 'get', answer), [], path);
  }
});

test('a product created from the create schema, the answer as the document declares it; a refused one answers its error schema', async () => {
  const create = client.doc.components.schemas['CatalogueService.Product-create'];
  const body: Obj = {};
  for (const name of create.required as string[]) {
    const s = create.properties[name];
    body[name] = s.type === 'integer' ? (s.minimum ?? 0) : s.format === 'decimal' ? s.example : 'from the OpenAPI document'.slice(0, s.maxLength ?? 100);
  }
  const created = await client.call('/Products', 'post', {}, body);
  assert.equal(created.res.status, 201, created.res.body.slice(0, 300));
  assert.deepEqual(client.check('/Products', 'post', created), [], 'created');
  assert.equal(created.body.d.Title, body.Title);

  const refused = await client.call('/Products', 'post', {}, { ...body, Title: 'x'.repeat(create.properties.Title.maxLength + 1) });
  assert.equal(refused.res.status, 400);
  assert.deepEqual(client.check('/Products', 'post', refused), [], 'the error answer');
});
