/**
 * The shop connector's $batch against the live service (docs/protocol.md, "$batch"): its
 * product deletion replayed in its exact bytes (absolute URIs http://127.0.0.1:<port>/…, Content-ID
 * among the inner headers, MERGE bodies ending in "\n\r", DELETEs followed directly by the next
 * delimiter, the changeset's Content-Length, the extra empty line between the closings), its
 * answer read by the connector's rules, and the data read back. Also the rule for DELETEs of what
 * the same changeset already removed, and that anything else missing rolls everything back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { CONNECTOR_DELETE_PRODUCT, CONNECTOR_ORIGIN, connectorBody as fixtureConnectorBody } from '../odata/batch/fixtures';
import {
  changesetAnswers,
  client,
  connectorBody,
  connectorDeletion,
  createProductWithParts,
  errorMessageOf,
  postBatch,
  readBatchAnswer,
  singleAnswer,
  type ConnectorOperation,
  type ProductWithParts,
} from './support';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'connector');
});
after(() => live.close());

/** Every entity of the product as `Set(id)` paths, the product first. */
function partPaths(p: ProductWithParts): string[] {
  const paths = (set: string, ids: readonly bigint[]) => ids.map((id) => `${set}(${id}L)`);
  return [
    ...paths('Products', [p.product]),
    ...paths('ProductSpecifics', p.specifics),
    ...paths('OptionalProductAttributes', p.optionalAttributes),
    ...paths('DiscountOffers', p.discountOffers),
    ...paths('ProductImages', p.images),
    ...paths('ProductVariations', p.variations),
    ...paths('ProductVariationSpecifics', p.variationSpecifics),
    ...paths('ProductVariationImages', p.variationPictures),
    ...paths('CarParts', p.carParts),
  ];
}

/** True when every row of `after` was in `before` (only deletions happened). */
function onlyRemoved(beforeRows: Record<string, string[]>, afterRows: Record<string, string[]>): boolean {
  return Object.entries(afterRows).every(([table, rows]) => rows.every((row) => beforeRows[table]!.includes(row)));
}

test('our layout of the connector bytes is its framing fixture, byte for byte', () => {
  assert.deepEqual(connectorBody(CONNECTOR_ORIGIN, CONNECTOR_DELETE_PRODUCT), fixtureConnectorBody());
});

describe("the connector's product deletion", () => {
  test('17 operations replayed byte for byte: all 204 with their Content-IDs, the product and its parts gone, catalogs kept', async () => {
    const api = client(live, seller);
    const bystander = await createProductWithParts(live, seller, 'bystander');
    const p = await createProductWithParts(live, seller, 'deleted', bystander.catalogs);
    const operations = connectorDeletion(p);
    assert.equal(operations.length, 17, 'the connector sends 17 operations for this product');
    const rowsBefore = await tenantRows(live, seller.accountId);

    const body = connectorBody(live.origin, operations);
    assert.ok(body.toString('latin1').includes(`MERGE ${live.origin}/publicapi/v1/api.svc/ProductVariations(${p.variations[0]}L) HTTP/1.1\r\n`));
    const res = await postBatch(live, seller, body);
    const answers = readBatchAnswer(res);
    assert.equal(answers.length, 1, 'exactly one part for the one request part');
    const responses = changesetAnswers(answers[0]);
    assert.equal(responses.length, 17);
    responses.forEach((response, index) => {
      assert.equal(response.status, 204, `operation ${index + 1} (${operations[index]!.method} ${operations[index]!.path}): ${response.body}`);
      assert.equal(response.headers.get('content-id'), String(index + 1));
      assert.equal(response.headers.get('dataserviceversion'), '1.0;');
    });

    for (const path of partPaths(p)) assert.equal(await api.get(path), undefined, `${path} is gone`);
    for (const catalog of p.catalogs) {
      assert.ok(await api.get(`Catalogs(${catalog}L)`), 'the catalog stays');
      const members = (await api.feed(`Catalogs(${catalog}L)/Products`)).map((e) => e.Id);
      assert.deepEqual(members, [String(bystander.product)], 'only the link of the deleted product is gone');
    }
    for (const path of partPaths(bystander)) assert.ok(await api.get(path), `${path} of the other product is untouched`);
    const rowsAfter = await tenantRows(live, seller.accountId);
    assert.ok(onlyRemoved(rowsBefore, rowsAfter), 'nothing but deletions');
    assert.equal(rowsAfter.product_catalogs!.length, rowsBefore.product_catalogs!.length - 2);
  });

  test('the variations were zeroed twice before the product went: each MERGE ran (a stock refused by the rules fails it)', async () => {
    const p = await createProductWithParts(live, seller, 'zeroed');
    const rowsBefore = await tenantRows(live, seller.accountId);
    // The same deletion with an invalid stock in the second MERGE of the first variation: the
    // MERGEs are really applied, so this one fails and everything stays.
    const operations = connectorDeletion(p).map((o, i, all) =>
      o.method === 'MERGE' && all.findIndex((x) => x.method === 'MERGE') + 1 === i ? { ...o, json: '{"StockAmount":"-1"}' } : o,
    );
    const answers = readBatchAnswer(await postBatch(live, seller, connectorBody(live.origin, operations)));
    const failure = singleAnswer(answers[0]);
    assert.equal(failure.status, 400, failure.body);
    assert.equal(failure.headers.get('content-id'), String(operations.findIndex((o) => o.json !== undefined) + 1));
    assert.match(errorMessageOf(failure), /StockAmount/);
    assert.deepEqual(await tenantRows(live, seller.accountId), rowsBefore);
  });

  for (const position of [1, 9, 17]) {
    test(`a DELETE of an entity that never existed, at position ${position} of the connector's changeset, fails and rolls everything back`, async () => {
      const p = await createProductWithParts(live, seller, `missing-${position}`);
      const operations: ConnectorOperation[] = connectorDeletion(p);
      operations.splice(position - 1, 0, { method: 'DELETE', path: '/ProductSpecifics(987654321L)' });
      const rowsBefore = await tenantRows(live, seller.accountId);
      const answers = readBatchAnswer(await postBatch(live, seller, connectorBody(live.origin, operations)));
      assert.equal(answers.length, 1);
      const failure = singleAnswer(answers[0]);
      assert.equal(failure.status, 404);
      assert.equal(failure.headers.get('content-id'), String(position));
      assert.match(failure.headers.get('content-type') ?? '', /^application\/json;charset=utf-8/, 'the error in the format the operation asked for');
      assert.match(errorMessageOf(failure), /ProductSpecifics\(987654321L\)/);
      assert.deepEqual(await tenantRows(live, seller.accountId), rowsBefore, 'nothing changed');
      assert.ok(await client(live, seller).get(`Products(${p.product}L)`));
    });
  }
});

describe('DELETE of what the same changeset already removed answers 204', () => {
  const del = (path: string): ConnectorOperation => ({ method: 'DELETE', path });

  test("after the product's delete, DELETEs of its cascaded parts and of its catalog links answer 204", async () => {
    const api = client(live, seller);
    const p = await createProductWithParts(live, seller, 'cascade');
    const operations = [
      del(`/Products(${p.product}L)`),
      del(`/Products(${p.product}L)`),
      del(`/ProductSpecifics(${p.specifics[0]}L)`),
      del(`/ProductVariations(${p.variations[1]}L)`),
      del(`/ProductVariationPictures(${p.variationPictures[1]}L)`),
      del(`/DiscountOffers(${p.discountOffers[1]}L)`),
      del(`/Products(${p.product}L)/$links/Catalogs(${p.catalogs[0]}L)`),
    ];
    const responses = changesetAnswers(readBatchAnswer(await postBatch(live, seller, connectorBody(live.origin, operations)))[0]);
    assert.deepEqual(responses.map((r) => r.status), operations.map(() => 204), responses.map((r) => r.body).join(' '));
    for (const path of partPaths(p)) assert.equal(await api.get(path), undefined, `${path} is gone`);
    for (const catalog of p.catalogs) assert.ok(await api.get(`Catalogs(${catalog}L)`));
  });

  test('a link removed twice answers 204 twice; a link the changeset did not remove fails once the product is gone', async () => {
    const p = await createProductWithParts(live, seller, 'links');
    const unlinked = await client(live, seller).create('Catalogs', { Name: 'Nie verknüpft' });
    const twice = [del(`/Products(${p.product}L)/$links/Catalogs(${p.catalogs[0]}L)`), del(`/Products(${p.product}L)/$links/Catalogs(${p.catalogs[0]}L)`)];
    const ok = changesetAnswers(readBatchAnswer(await postBatch(live, seller, connectorBody(live.origin, twice)))[0]);
    assert.deepEqual(ok.map((r) => r.status), [204, 204]);
    assert.deepEqual((await client(live, seller).feed(`Products(${p.product}L)/Catalogs`)).map((c) => c.Id), [String(p.catalogs[1])]);

    const rowsBefore = await tenantRows(live, seller.accountId);
    const never = [del(`/Products(${p.product}L)`), del(`/Products(${p.product}L)/$links/Catalogs(${unlinked}L)`)];
    const failure = singleAnswer(readBatchAnswer(await postBatch(live, seller, connectorBody(live.origin, never)))[0]);
    assert.equal(failure.status, 404);
    assert.equal(failure.headers.get('content-id'), '2');
    assert.deepEqual(await tenantRows(live, seller.accountId), rowsBefore);
  });

  test('a MERGE of an entity the changeset deleted fails (404) and rolls back: only DELETE repeats', async () => {
    const p = await createProductWithParts(live, seller, 'merge-after');
    const rowsBefore = await tenantRows(live, seller.accountId);
    const operations: ConnectorOperation[] = [del(`/Products(${p.product}L)`), { method: 'MERGE', path: `/ProductVariations(${p.variations[0]}L)` }];
    const failure = singleAnswer(readBatchAnswer(await postBatch(live, seller, connectorBody(live.origin, operations)))[0]);
    assert.equal(failure.status, 404);
    assert.equal(failure.headers.get('content-id'), '2');
    assert.deepEqual(await tenantRows(live, seller.accountId), rowsBefore);
  });

  test('a second changeset does not inherit the first one’s deletions: its DELETE of the gone product is a 404', async () => {
    const p = await createProductWithParts(live, seller, 'two-changesets');
    const body = connectorBody(live.origin, [del(`/Products(${p.product}L)`)]);
    assert.equal(changesetAnswers(readBatchAnswer(await postBatch(live, seller, body))[0])[0]!.status, 204);
    assert.equal(singleAnswer(readBatchAnswer(await postBatch(live, seller, body))[0]).status, 404);
  });
});
