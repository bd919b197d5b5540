/**
 * A $batch whose session this process has met goes on its claim: its first changeset carries
 * the credential check as the first statement of its own transaction, and every other part runs
 * only once the check passed (src/service/batch/batch.ts). Seen from the client nothing may
 * differ from checking first: wrong, foreign, revoked or logged-out credentials answer 401 for
 * the whole batch whatever its parts hold (a changeset, a query first, an operation refused
 * before its transaction, a service operation, broken framing), and nothing is written.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { createEntity } from '../support/live-client';
import { odataError } from '../support/odata-error';
import type { HttpResponse } from '../support/http-client';
import { createToken, revokeToken } from '../../src/auth/accounts';
import { batchBody, changesetAnswers, changesetPart, httpPart, jsonOperation, postBatch, readBatchAnswer, singleAnswer } from '../batch/support';

let live: LiveService;
let seller: Seller;
let other: Seller;
let productId: string;
let n = 0;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'bguard');
  other = await newSeller(live, 'bguard-other');
  // The first request authenticates on its own; from then on this process knows the session.
  productId = await createEntity(live, seller, 'Products', { ForeignId: 'BG-1', Title: 'Guarded', Price: '1.00', StockAmount: 1 });
});

after(() => live.close());

const merge = () => jsonOperation('MERGE', `Products(${productId}L)`, 1, { StockAmount: ++n });

/** Batches and what each answers with good credentials: the status of every part, in order. */
const BATCHES: readonly { readonly name: string; readonly body: () => string; readonly parts: readonly (readonly number[])[] }[] = [
  { name: 'one changeset of MERGEs', body: () => batchBody([changesetPart([merge(), jsonOperation('MERGE', `Products(${productId}L)`, 2, { Title: `t${n}` })])]), parts: [[204, 204]] },
  {
    name: 'a query part first, then a changeset',
    body: () => batchBody([httpPart({ method: 'GET', target: `Products(${productId}L)`, headers: ['Accept: application/json'] }), changesetPart([merge()])]),
    parts: [[200], [204]],
  },
  {
    name: 'a changeset refused before its transaction (no such set), then a query',
    body: () => batchBody([changesetPart([jsonOperation('POST', 'NoSuchSet', 1, { x: 1 })]), httpPart({ method: 'GET', target: 'Products', headers: ['Accept: application/json'] })]),
    parts: [[404], [200]],
  },
  {
    name: 'a changeset with a service operation',
    body: () => batchBody([changesetPart([httpPart({ method: 'POST', target: `ReviseInventoryStatus?productId=${productId}L&stockAmount=${++n}`, headers: ['Accept: application/json', 'Content-ID: 1'] })])]),
    parts: [[200]],
  },
  { name: 'a changeset whose entity does not exist', body: () => batchBody([changesetPart([jsonOperation('MERGE', 'Products(999999999L)', 1, { StockAmount: 1 })])]), parts: [[404]] },
];

/** The statuses of every part of a batch answer. */
function statuses(body: ReturnType<typeof readBatchAnswer>): number[][] {
  return body.map((answer) => (answer.kind === 'changeset' ? changesetAnswers(answer).map((a) => a.status) : [singleAnswer(answer).status]));
}

async function sellerRows(): Promise<string> {
  return JSON.stringify(await tenantRows(live, seller.accountId));
}

function assertRefused(res: HttpResponse, what: string): void {
  assert.equal(res.status, 401, `${what}: ${res.body}`);
  assert.match(odataError(res).message, /Authentication required/, what);
}

describe('a $batch on a session this process has met', () => {
  test("with a wrong token or another account's token: 401 for every batch, and nothing is written", async () => {
    const before = await sellerRows();
    for (const token of ['00000000-0000-0000-0000-000000000000', other.token]) {
      const stranger: Seller = { ...seller, auth: { ...seller.auth, SubscriptionToken: token } };
      for (const batch of BATCHES) assertRefused(await postBatch(live, stranger, batch.body()), batch.name);
      assertRefused(await postBatch(live, stranger, 'not multipart framing at all'), 'a body its boundary does not frame');
    }
    assert.equal(await sellerRows(), before, 'no row of the account changed');
    // The right credentials: every part answers as it deserves.
    for (const batch of BATCHES) {
      const res = await postBatch(live, seller, batch.body());
      assert.equal(res.status, 202, `${batch.name}: ${res.body}`);
      assert.deepEqual(statuses(readBatchAnswer(res)), batch.parts, batch.name);
    }
  });

  test('a token revoked and a session ended elsewhere are refused on the very next batch', async () => {
    const { app } = live.service;
    const token = await createToken(app.store, app.clock, seller.userName);
    const withToken: Seller = { ...seller, auth: { ...seller.auth, SubscriptionToken: token } };
    assert.equal((await postBatch(live, withToken, BATCHES[0]!.body())).status, 202);
    // Revoked straight in the database, as `catalogue token revoke` does from another process.
    assert.ok(await revokeToken(app.store, app.clock, token));
    const beforeRevoked = await sellerRows();
    for (const batch of BATCHES) assertRefused(await postBatch(live, withToken, batch.body()), `revoked: ${batch.name}`);
    assert.equal(await sellerRows(), beforeRevoked);

    assert.equal((await postBatch(live, seller, BATCHES[0]!.body())).status, 202);
    // The session row is deleted behind this process's back (another process's logout).
    await app.store.writeDirectory((tx) => tx.run('DELETE FROM sessions WHERE account_id = ?', [seller.accountId]));
    const afterLogout = await sellerRows();
    for (const batch of BATCHES) assertRefused(await postBatch(live, seller, batch.body()), `logged out: ${batch.name}`);
    assert.equal(await sellerRows(), afterLogout);
  });
});
