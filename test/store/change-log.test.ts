/**
 * The change log (entity_changes) as the engines' triggers write it, through the live service:
 * a create, a change naming the properties that changed, an update that changes nothing writes
 * no row, a delete and the database's cascade write 'deleted' rows, a write that fails leaves
 * none, and the store's read API hands an account's rows out in change_seq order.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { createEntity, mergeEntity } from '../support/live-client';
import { ChangeLog, type ChangeRow } from '../../src/store/change-log';
import { runHousekeeping } from '../../src/server/housekeeping';
import { batchBody, changesetAnswers, changesetPart, jsonOperation, postBatch, readBatchAnswer } from '../batch/support';

let live: LiveService;
let seller: Seller;
let log: ChangeLog;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'changes');
  log = new ChangeLog(live.service.app.store.codec);
});
after(() => live.close());

/** The account's change rows after `afterSeq`, in order. */
function changesAfter(afterSeq: bigint): Promise<ChangeRow[]> {
  return live.service.app.store.read(seller.accountId, (tx) => log.after(tx, seller.accountId, afterSeq, 1000));
}

/** The change rows after a change_seq. */
const changesetsAfter = (seq: bigint) => changesAfter(seq);

const brief = (rows: readonly ChangeRow[]) => rows.map((r) => `${r.entitySet}(${r.entityId}) ${r.kind}${r.changedProperties.length ? ' ' + r.changedProperties.join(',') : ''}`);

describe('change log', () => {
  test('creates, changes and deletes (with the cascade) are logged in order, naming what changed', async () => {
    const start = await live.service.app.store.read(seller.accountId, (tx) => log.lastSeq(tx, seller.accountId));
    const product = await createEntity(live, seller, 'Products', { Title: 'Lamp', Price: '10', StockAmount: 3 });
    const variation = await createEntity(live, seller, 'ProductVariations', { ProductId: Number(product), Price: '11', StockAmount: 1, Sku: 'L-1' });
    assert.equal((await mergeEntity(live, seller, 'Products', product, { StockAmount: 5, Title: 'Lamp 2' })).status, 204);
    // The same values again: only ModificationDate moves, which is no change.
    assert.equal((await mergeEntity(live, seller, 'Products', product, { StockAmount: 5 })).status, 204);
    // A refused write (StockAmount below its minimum) leaves no row.
    assert.equal((await mergeEntity(live, seller, 'Products', product, { StockAmount: -1 })).status, 400);
    const deleted = await asSeller(seller, `${live.root}/Products(${product}L)`, { method: 'DELETE' });
    assert.equal(deleted.status, 204);

    const rows = await changesAfter(start);
    assert.deepEqual(brief(rows).sort(), [
      `ProductVariations(${variation}) created`,
      `ProductVariations(${variation}) deleted`,
      `Products(${product}) changed Title,StockAmount`,
      `Products(${product}) created`,
      `Products(${product}) deleted`,
    ].sort());
    // In write order: created before changed before deleted.
    const kindsOfProduct = rows.filter((r) => r.entitySet === 'Products').map((r) => r.kind);
    assert.deepEqual(kindsOfProduct, ['created', 'changed', 'deleted']);
    for (let i = 1; i < rows.length; i++) assert.ok(rows[i]!.seq > rows[i - 1]!.seq);
    for (const r of rows) assert.ok(Math.abs(r.changedAt - Date.now()) < 60_000, 'changed_at is the time of the write');
  });

  test('a $batch changeset is logged when it commits and not at all when it rolls back; a deep insert logs every entity it creates', async () => {
    const start = await live.service.app.store.read(seller.accountId, (tx) => log.lastSeq(tx, seller.accountId));
    // The second operation breaks a rule (StockAmount below 0): the changeset is undone whole.
    const failed = batchBody([
      changesetPart([
        jsonOperation('POST', 'Products', 1, { Title: 'Rolled back', Price: '1', StockAmount: 1 }),
        jsonOperation('POST', 'Products', 2, { Title: 'Refused', Price: '1', StockAmount: -5 }),
      ]),
    ]);
    // A failed changeset is answered by its error alone.
    const refused = readBatchAnswer(await postBatch(live, seller, failed))[0]!;
    assert.ok(refused.kind === 'response' && refused.response.status === 400);
    assert.deepEqual(await changesetsAfter(start), []);

    const ok = batchBody([changesetPart([jsonOperation('POST', 'Products', 1, { Title: 'Committed', Price: '1', StockAmount: 1 }), jsonOperation('MERGE', '$1', 2, { StockAmount: 2 })])]);
    const answers = changesetAnswers(readBatchAnswer(await postBatch(live, seller, ok))[0]);
    assert.deepEqual(answers.map((a) => a.status), [201, 204]);
    const afterBatch = await changesetsAfter(start);
    assert.deepEqual(afterBatch.map((r) => `${r.entitySet} ${r.kind}${r.changedProperties.length ? ' ' + r.changedProperties.join(',') : ''}`), ['Products created', 'Products changed StockAmount']);

    const deep = await asSeller(seller, `${live.root}/Products`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ Title: 'Deep', Price: '1', StockAmount: 1, ProductVariations: [{ Price: '2', StockAmount: 1, Sku: 'D-1' }, { Price: '2', StockAmount: 1, Sku: 'D-2' }] }),
    });
    assert.equal(deep.status, 201, deep.body);
    const afterDeep = (await changesetsAfter(afterBatch.at(-1)!.seq)).map((r) => `${r.entitySet} ${r.kind}`);
    assert.deepEqual(afterDeep.sort(), ['ProductVariations created', 'ProductVariations created', 'Products created']);
  });

  test('DeleteAccountData logs a deletion for every entity it removes', async () => {
    const own = await newSeller(live, 'changes-erase');
    const product = await createEntity(live, own, 'Products', { Title: 'Gone', Price: '1', StockAmount: 1 });
    const variation = await createEntity(live, own, 'ProductVariations', { ProductId: Number(product), Price: '2', StockAmount: 1 });
    const before = await live.service.app.store.read(own.accountId, (tx) => log.lastSeq(tx, own.accountId));
    const res = await asSeller(own, `${live.root}/DeleteAccountData?type=2`, { method: 'POST', headers: { Accept: 'application/json' } });
    assert.equal(res.status, 200, res.body);
    const rows = await live.service.app.store.read(own.accountId, (tx) => log.after(tx, own.accountId, before, 1000));
    assert.deepEqual(rows.map((r) => `${r.entitySet}(${r.entityId}) ${r.kind}`).sort(), [`ProductVariations(${variation}) deleted`, `Products(${product}) deleted`]);
  });

  test('the read after a position hands out the rows past it; another account sees none of them', async () => {
    const product = await createEntity(live, seller, 'Products', { Title: 'Desk', Price: '99', StockAmount: 1 });
    const rows = await changesAfter(0n);
    const mine = rows.find((r) => r.entitySet === 'Products' && String(r.entityId) === product);
    assert.ok(mine);
    const other = await newSeller(live, 'changes-other');
    const foreign = await live.service.app.store.read(other.accountId, (tx) => log.after(tx, other.accountId, 0n, 1000));
    assert.deepEqual(foreign, []);
    assert.deepEqual(await changesAfter(mine.seq), rows.filter((r) => r.seq > mine.seq));
  });

  // Last: the housekeeping's clock is moved past every session's expiry.
  test('the housekeeping deletes changes older than the retention and a day, and keeps younger ones', async () => {
    const app = live.service.app;
    const day = 86_400_000;
    const rows = async () =>
      Number((await app.store.read(seller.accountId, (tx) => tx.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM entity_changes WHERE account_id = ?', [seller.accountId])))!.n);
    assert.ok((await rows()) > 0);
    const kept = await runHousekeeping(app.store, app.sessions, { now: () => Date.now() + 30 * day }, 30);
    assert.equal(kept.changes, 0);
    assert.ok((await rows()) > 0);
    const pruned = await runHousekeeping(app.store, app.sessions, { now: () => Date.now() + 32 * day }, 30);
    assert.ok(pruned.changes > 0);
    assert.equal(await rows(), 0);
  });
});
