/**
 * Round trips to PostgreSQL per request (issue 16, item 2), counted by wrapping node-pg's
 * Client.query in this process, where the live service runs: a statement sent while another one
 * on the same connection is still unanswered travels in the same round trip (node-pg's pipeline
 * mode); one sent on an idle connection starts a new round trip. Counted up to the moment the
 * answer is written (ServerResponse.end): what the client waits for. A read's COMMIT goes out
 * after its answer and is reported apart.
 *
 * First a GET by key was 5 (login lookup, BEGIN, set tenant, SELECT, COMMIT); then 2 before its
 * answer (the credential check on its own, then BEGIN, tenant and SELECT pipelined). Now a read
 * of a session this process has met carries its credential check as its first statement, with
 * the tenant set from it: BEGIN, the check and the SELECT go out together, one round trip.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import pg from 'pg';
import { CONNECTOR_VERSIONS, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { request } from '../support/http-client';
import { createEntity, JSON_HEADERS } from '../support/live-client';
import { batchBody, changesetPart, jsonOperation, postBatch, readBatchAnswer, changesetAnswers } from '../batch/support';
import { reportFigures } from '../support/figures';
import { testEngine } from '../support/test-database';

interface Sent {
  readonly sql: string;
  /** Whether it started a round trip (its connection had nothing unanswered). */
  readonly starts: boolean;
}

type Event = { readonly kind: 'statement'; readonly sent: Sent } | { readonly kind: 'answer' };

const events: Event[] = [];
let recording = false;
const unanswered = new WeakMap<object, number>();
const originalQuery = pg.Client.prototype.query;

function instrument(): void {
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const sql = typeof config === 'string' ? config : String((config as { text?: string }).text ?? (config as { name?: string }).name);
    const open = unanswered.get(this) ?? 0;
    if (recording) events.push({ kind: 'statement', sent: { sql: sql.replace(/\s+/g, ' ').slice(0, 60), starts: open === 0 } });
    unanswered.set(this, open + 1);
    const result = (originalQuery as (...a: unknown[]) => unknown).call(this, config, ...rest);
    const done = () => unanswered.set(this, (unanswered.get(this) ?? 1) - 1);
    if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(done, done);
    else done();
    return result;
  } as typeof pg.Client.prototype.query;
}

interface Count {
  /** Round trips started before the answer was written. */
  readonly beforeAnswer: number;
  /** Round trips after it (a read's COMMIT, unless it went out with the read's statement). */
  readonly afterAnswer: number;
  readonly statements: string[];
}

async function roundTrips(live: LiveService, send: () => Promise<unknown>): Promise<Count> {
  // The request before has ended its read by now: a read's COMMIT that waits for the
  // connection's next use goes out on its own after a few milliseconds (DEFAULT_READ_END_WAIT_MS).
  await new Promise((resolve) => setTimeout(resolve, 50));
  events.length = 0;
  recording = true;
  const onRequest = (_req: unknown, res: ServerResponse) => {
    const end = res.end.bind(res);
    res.end = ((...args: Parameters<ServerResponse['end']>) => {
      events.push({ kind: 'answer' });
      return end(...args);
    }) as ServerResponse['end'];
  };
  live.service.server.on('request', onRequest);
  try {
    await send();
    // The statements that follow the answer (a read's COMMIT, sent when the connection is not
    // used again within a few milliseconds) are counted too.
    await new Promise((resolve) => setTimeout(resolve, 100));
  } finally {
    live.service.server.off('request', onRequest);
    recording = false;
  }
  const answeredAt = events.findIndex((e) => e.kind === 'answer');
  assert.ok(answeredAt >= 0, 'the request was answered');
  const starts = (from: number, to: number) => events.slice(from, to).filter((e) => e.kind === 'statement' && e.sent.starts).length;
  return {
    beforeAnswer: starts(0, answeredAt),
    afterAnswer: starts(answeredAt, events.length),
    statements: events.map((e) => (e.kind === 'answer' ? '<answer>' : `${e.sent.starts ? '| ' : '+ '}${e.sent.sql}`)),
  };
}

describe('round trips to PostgreSQL per request', { skip: testEngine !== 'postgres' ? 'PostgreSQL only' : false }, () => {
  let live: LiveService;
  let seller: Seller;
  let productId: string;
  let variationIds: string[];
  const figures: Record<string, number> = {};

  before(async () => {
    instrument();
    // The webhook worker polls on its own schedule: its statements are not the requests' round trips.
    live = await startLive({ env: { WEBHOOKS: 'false' } });
    seller = await newSeller(live, 'trips');
    productId = await createEntity(live, seller, 'Products', { ForeignId: 'RT-1', Title: 'Round trips', Price: '1.00', StockAmount: 1 });
    variationIds = [];
    for (let i = 0; i < 10; i++) variationIds.push(await createEntity(live, seller, 'ProductVariations', { ProductId: productId, Sku: `RT-${i}`, Price: '1.00', StockAmount: i }));
  });
  after(async () => {
    pg.Client.prototype.query = originalQuery;
    reportFigures('postgres-round-trips', figures);
    await live.close();
  });

  const getByKey = () => request(`${live.root}/Products(${productId}L)`, { headers: { ...seller.auth, Accept: 'application/json' } });

  test('GET by key: one round trip in all (BEGIN, the credential check with the tenant, the SELECT and the COMMIT in one)', async (t) => {
    // The first time prepares the statements on the connection; counted is the steady state.
    assert.equal((await getByKey()).status, 200);
    const count = await roundTrips(live, async () => assert.equal((await getByKey()).status, 200));
    t.diagnostic(count.statements.join('\n'));
    figures.getByKey = count.beforeAnswer;
    figures.getByKeyAfterAnswer = count.afterAnswer;
    assert.ok(count.beforeAnswer <= 1, `GET by key took ${count.beforeAnswer} round trips before its answer:\n${count.statements.join('\n')}`);
    // The COMMIT travels with the SELECT (a read of one statement): nothing is sent after the answer.
    assert.equal(count.afterAnswer, 0, `GET by key sent statements after its answer:\n${count.statements.join('\n')}`);
  });

  test('a filtered collection: one round trip in all (the credential check with the tenant and the SELECT, no BEGIN, cursor or COMMIT)', async (t) => {
    const filter = () => request(`${live.root}/ProductVariations?$filter=StockAmount ge 0`, { headers: { ...seller.auth, ...CONNECTOR_VERSIONS, Accept: 'application/json' } });
    assert.equal((await filter()).status, 200);
    const count = await roundTrips(live, async () => {
      const res = await filter();
      assert.equal(res.status, 200);
      assert.equal((JSON.parse(res.body).d as unknown[]).length, 10);
    });
    t.diagnostic(count.statements.join('\n'));
    figures.filter = count.beforeAnswer;
    figures.filterAfterAnswer = count.afterAnswer;
    assert.ok(count.beforeAnswer <= 1, `the filter took ${count.beforeAnswer} round trips before its answer:\n${count.statements.join('\n')}`);
    // Ten rows are read as one statement (readResource): one implicit transaction, nothing to end after the answer.
    assert.equal(count.afterAnswer, 0, `the filter sent statements after its answer:\n${count.statements.join('\n')}`);
    assert.ok(!count.statements.some((s) => /BEGIN|DECLARE|FETCH|COMMIT/.test(s)), `the filter ran a transaction of its own:\n${count.statements.join('\n')}`);
  });

  test('POST, MERGE and a $batch of 10 MERGEs: counted and reported', async (t) => {
    let n = 0;
    const post = () => request(`${live.root}/Products`, { method: 'POST', headers: { ...seller.auth, ...JSON_HEADERS }, body: JSON.stringify({ ForeignId: `RT-P-${++n}`, Title: 'p', Price: '1.00', StockAmount: 1 }) });
    assert.equal((await post()).status, 201);
    const posted = await roundTrips(live, async () => assert.equal((await post()).status, 201));
    const merge = () => request(`${live.root}/ProductVariations(${variationIds[0]}L)`, { method: 'MERGE', headers: { ...seller.auth, ...JSON_HEADERS }, body: JSON.stringify({ StockAmount: ++n }) });
    assert.equal((await merge()).status, 204);
    const merged = await roundTrips(live, async () => assert.equal((await merge()).status, 204));
    const batch = () =>
      postBatch(live, seller, batchBody([changesetPart(variationIds.map((id, i) => jsonOperation('MERGE', `ProductVariations(${id}L)`, i + 1, { StockAmount: ++n })))]));
    assert.equal(changesetAnswers(readBatchAnswer(await batch())[0]).length, 10);
    const batched = await roundTrips(live, async () => {
      const answers = changesetAnswers(readBatchAnswer(await batch())[0]);
      assert.deepEqual(answers.map((a) => a.status), Array(10).fill(204));
    });
    for (const [name, count] of [['post', posted], ['merge', merged], ['batch10Merges', batched]] as const) {
      t.diagnostic(`${name}: ${count.beforeAnswer} round trips before the answer\n${count.statements.join('\n')}`);
      figures[name] = count.beforeAnswer;
    }
    // The changeset reads its ten variations in one statement (src/store/read-ahead.ts), and its
    // credential check is the first statement of its transaction (batch.ts); its UPDATEs are sent
    // without waiting, each verified against the version read (EntityStore.update): BEGIN with the
    // lock and the check, the read-ahead, the ten UPDATEs together, the COMMIT. Each operation
    // reading its own variation made it 23; the check on its own, 14; each UPDATE awaited, 13.
    // The POST's id is drawn with BEGIN and the lock (WriteOptions.newIds), and so is its
    // credential check (WriteOptions.guard, sent with the batch's BEGIN): BEGIN with the lock,
    // the check and the id; the INSERT; the COMMIT. A MERGE: BEGIN with the lock and the check,
    // the SELECT of its entity, the UPDATE, the COMMIT.
    assert.ok(posted.beforeAnswer <= 3, `a POST took ${posted.beforeAnswer} round trips:\n${posted.statements.join('\n')}`);
    assert.ok(merged.beforeAnswer <= 4, `a MERGE took ${merged.beforeAnswer} round trips:\n${merged.statements.join('\n')}`);
    assert.ok(batched.beforeAnswer <= 4, `a $batch of 10 MERGEs took ${batched.beforeAnswer} round trips:\n${batched.statements.join('\n')}`);
  });

  test('a deep insert of a product with specifics, images and variations with their own: counted and reported', async (t) => {
    let n = 0;
    const deep = () => {
      const label = `RT-D-${++n}`;
      const body = {
        ForeignId: label, Title: 'deep', Price: '1.00', StockAmount: 1,
        ProductSpecifics: [1, 2].map((i) => ({ Name: `Spec ${i}`, Value: `v ${i}` })),
        ProductImages: [{ ImageUrl: `https://img.example.com/${label}.jpg`, Type: 1 }],
        ProductVariations: [1, 2, 3].map((i) => ({
          Price: '2.00', StockAmount: i, Sku: `${label}-${i}`,
          ProductVariationSpecifics: [{ Name: 'Colour', Value: `c ${i}` }],
          ProductVariationPictures: [{ ImageUrl: `https://img.example.com/${label}-${i}.jpg`, ImagePosition: 0 }],
        })),
      };
      return request(`${live.root}/Products`, { method: 'POST', headers: { ...seller.auth, ...JSON_HEADERS }, body: JSON.stringify(body) });
    };
    assert.equal((await deep()).status, 201);
    const count = await roundTrips(live, async () => assert.equal((await deep()).status, 201));
    t.diagnostic(`deep insert: ${count.beforeAnswer} round trips before the answer\n${count.statements.join('\n')}`);
    figures.deepInsert = count.beforeAnswer;
    // BEGIN with the lock, the check and the ids of the whole tree (WriteOptions.newIds counts the
    // entities sent inline); the product's INSERT and the five of its tree (TreeRows.store), sent
    // together without waiting between them (sentBehind); the COMMIT. Drawing the tree's ids on
    // their own and awaiting each INSERT made it 9; the product's INSERT awaited on its own, 4.
    assert.ok(count.beforeAnswer <= 3, `a deep insert took ${count.beforeAnswer} round trips:\n${count.statements.join('\n')}`);
    assert.equal(count.statements.filter((s) => s.includes('nextval')).length, 1, 'the ids are drawn once, with BEGIN');
  });
});
