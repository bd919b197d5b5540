/**
 * A batch acts for its caller only: every inner request runs in the batch caller's account
 * (inner requests carry no credentials of their own), another account's entities answer exactly
 * like entities that do not exist, and nothing of the other account changes, whatever the batch
 * tries: reads, writes, deletes (also repeated), links, bindings, service operations.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import {
  batchBody,
  changesetAnswers,
  changesetPart,
  client,
  createProductWithParts,
  errorMessageOf,
  httpPart,
  jsonOperation,
  postBatch,
  readBatchAnswer,
  singleAnswer,
  type PartAnswer,
  type ProductWithParts,
} from './support';

let live: LiveService;
let owner: Seller;
let intruder: Seller;
let owned: ProductWithParts;

before(async () => {
  live = await startLive();
  owner = await newSeller(live, 'owner');
  intruder = await newSeller(live, 'intruder');
  owned = await createProductWithParts(live, owner, 'owned');
});
after(() => live.close());

/** Status, Content-ID and message with the numbers taken out: a foreign id must answer like a missing one. */
function shape(answer: PartAnswer): [number, string | undefined, string] {
  return [answer.status, answer.headers.get('content-id'), errorMessageOf(answer).replace(/\d+/g, '#')];
}

const MISSING = 987654321n;

/** Operations that each touch one of the owner's entities; `id` is the entity they name. */
function attempts(p: ProductWithParts, id: (owned: bigint) => bigint) {
  return [
    (cid: number) => jsonOperation('MERGE', `Products(${id(p.product)}L)`, cid, { Title: 'übernommen' }),
    (cid: number) => jsonOperation('PUT', `ProductVariations(${id(p.variations[0]!)}L)`, cid, { ProductId: String(id(p.product)), Price: '1', StockAmount: 1 }),
    (cid: number) => jsonOperation('DELETE', `ProductSpecifics(${id(p.specifics[0]!)}L)`, cid),
    (cid: number) => jsonOperation('DELETE', `Products(${id(p.product)}L)`, cid),
    (cid: number) => jsonOperation('POST', `Products(${id(p.product)}L)/ProductImages`, cid, { Type: 5, ImageUrl: 'https://img.example.com/x.jpg' }),
    (cid: number) => jsonOperation('POST', 'ProductSpecifics', cid, { ProductId: String(id(p.product)), Name: 'Fremd', Value: 'x' }),
    (cid: number) => jsonOperation('DELETE', `Products(${id(p.product)}L)/$links/Catalogs(${id(p.catalogs[0]!)}L)`, cid),
    (cid: number) => jsonOperation('POST', `ReviseInventoryStatus?productId=${id(p.product)}L&stockAmount=0`, cid),
  ];
}

test("a changeset that names another account's entities fails at each one as for a missing id, and changes nothing anywhere", async () => {
  const ownerRows = await tenantRows(live, owner.accountId);
  const intruderRows = await tenantRows(live, intruder.accountId);
  const foreign = attempts(owned, (x) => x);
  const missing = attempts(owned, () => MISSING);
  for (let k = 0; k < foreign.length; k++) {
    // A create of the intruder's own first, so that the failure has something to roll back.
    const body = (op: (cid: number) => string) => batchBody([changesetPart([jsonOperation('POST', 'Catalogs', 1, { Name: 'Eigener' }), op(2)])]);
    const foreignAnswer = singleAnswer(readBatchAnswer(await postBatch(live, intruder, body(foreign[k]!)))[0]);
    const missingAnswer = singleAnswer(readBatchAnswer(await postBatch(live, intruder, body(missing[k]!)))[0]);
    assert.ok(foreignAnswer.status === 404 || foreignAnswer.status === 400, `attempt ${k + 1}: ${foreignAnswer.status} ${foreignAnswer.body}`);
    assert.deepEqual(shape(foreignAnswer), shape(missingAnswer), `attempt ${k + 1}`);
  }
  // The same as query parts and as the target of `$1` of a changeset.
  const reads = readBatchAnswer(
    await postBatch(
      live,
      intruder,
      batchBody([
        httpPart({ method: 'GET', target: `Products(${owned.product}L)`, headers: ['Accept: application/json'] }),
        httpPart({ method: 'GET', target: `Catalogs(${owned.catalogs[0]}L)/Products`, headers: ['Accept: application/json'] }),
        httpPart({ method: 'GET', target: `ProductIsListed?productId=${owned.product}L`, headers: ['Accept: application/json'] }),
        httpPart({ method: 'GET', target: 'Products', headers: ['Accept: application/json'] }),
      ]),
    ),
  );
  assert.deepEqual(reads.slice(0, 3).map((a) => singleAnswer(a).status), [404, 404, 404]);
  assert.deepEqual((JSON.parse(singleAnswer(reads[3]).body) as { d: unknown[] }).d, [], "the intruder's own (empty) products only");

  assert.deepEqual(await tenantRows(live, owner.accountId), ownerRows, "the owner's rows are untouched");
  assert.deepEqual(await tenantRows(live, intruder.accountId), intruderRows, "the intruder's failed changesets left nothing either");
});

test("a successful batch of one account writes in that account only; the owner still sees all of its data", async () => {
  const ownerRows = await tenantRows(live, owner.accountId);
  const responses = changesetAnswers(
    readBatchAnswer(
      await postBatch(
        live,
        intruder,
        batchBody([
          changesetPart([
            jsonOperation('POST', 'Products', 1, { Title: 'Eigenes', Price: '3', StockAmount: 1 }),
            jsonOperation('POST', '$1/ProductSpecifics', 2, { Name: 'Marke', Value: 'Eigen' }),
          ]),
        ]),
      ),
    )[0],
  );
  assert.deepEqual(responses.map((r) => r.status), [201, 201]);
  const created = (JSON.parse(responses[0]!.body) as { d: { Id: string } }).d.Id;
  assert.deepEqual(await tenantRows(live, owner.accountId), ownerRows);
  assert.equal(await client(live, owner).get(`Products(${created}L)`), undefined, 'invisible to the owner');
  assert.equal((await client(live, intruder).get(`Products(${created}L)`))?.Title, 'Eigenes');
  for (const id of [owned.product, ...owned.specifics, ...owned.variations]) {
    assert.ok(await client(live, owner).get(`${id === owned.product ? 'Products' : owned.specifics.includes(id) ? 'ProductSpecifics' : 'ProductVariations'}(${id}L)`));
  }
});

test('without credentials the batch is a 401 and nothing inside it runs', async () => {
  const ownerRows = await tenantRows(live, owner.accountId);
  const anonymous = { ...owner, auth: {} };
  const res = await postBatch(live, anonymous, batchBody([changesetPart([jsonOperation('DELETE', `Products(${owned.product}L)`, 1)])]));
  assert.equal(res.status, 401);
  const wrongCookie = { ...owner, auth: { ...owner.auth, Cookie: `.ASPXAUTH=${intruder.cookie}` } };
  assert.equal((await postBatch(live, wrongCookie, batchBody([changesetPart([jsonOperation('DELETE', `Products(${owned.product}L)`, 1)])]))).status, 401);
  assert.deepEqual(await tenantRows(live, owner.accountId), ownerRows);
});
