/**
 * The change log (entity_changes) as the engines' triggers write it, through the live service:
 * a create, a change naming the properties that changed, an update that changes nothing writes
 * no row, a delete and the database's cascade write 'deleted' rows, a write that fails leaves
 * none, and the store's read API hands unpublished rows out in order and marks them published.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { createEntity, mergeEntity } from '../support/live-client';
import { ChangeLog, type ChangeRow } from '../../src/store/change-log';

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
  return live.service.app.store.read(seller.accountId, (tx) => log.unpublished(tx, seller.accountId, afterSeq, 1000));
}

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

  test('marking published hides rows from the unpublished read; another account sees none of them', async () => {
    const product = await createEntity(live, seller, 'Products', { Title: 'Desk', Price: '99', StockAmount: 1 });
    const rows = await changesAfter(0n);
    const mine = rows.find((r) => r.entitySet === 'Products' && String(r.entityId) === product);
    assert.ok(mine);
    const other = await newSeller(live, 'changes-other');
    const foreign = await live.service.app.store.read(other.accountId, (tx) => log.unpublished(tx, other.accountId, 0n, 1000));
    assert.deepEqual(foreign, []);
    const marked = await live.service.app.store.write(seller.accountId, (tx) => log.markPublished(tx, seller.accountId, mine.seq));
    assert.equal(marked, rows.filter((r) => r.seq <= mine.seq).length);
    assert.deepEqual(await changesAfter(0n), rows.filter((r) => r.seq > mine.seq));
  });
});
