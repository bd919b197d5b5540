/**
 * A changeset reads the entities its operations address by key in one statement before the first
 * operation runs (src/store/read-ahead.ts). What each operation then sees must still be what the
 * database holds at that moment: after an earlier operation of the same changeset changed the
 * row, renumbered it as a follow-up, or deleted it by a cascade. Over real HTTP, answers read by
 * the connector's rules; then the executor itself against the real store, on both engines.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { batchBody, changesetAnswers, changesetPart, client, connectorBody, errorMessageOf, httpPart, jsonOperation, postBatch, readBatchAnswer, singleAnswer } from './support';
import { ReadAheadExecutor } from '../../src/store/read-ahead';
import type { SqlExecutor, SqlValue } from '../../src/store/store';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'ahead');
});
after(() => live.close());

const etagOf = (entity: Record<string, unknown> | undefined) => (entity?.__metadata as { etag?: string } | undefined)?.etag;

/** A MERGE with If-Match, in the connector's JSON. */
function mergeIfMatch(target: string, contentId: number, etag: string, body: unknown): string {
  return httpPart({
    method: 'MERGE',
    target,
    headers: ['Accept: application/json', `Content-ID: ${contentId}`, 'Content-Type: application/json', 'DataServiceVersion: 1.0', `If-Match: ${etag}`],
    body: JSON.stringify(body),
  });
}

describe('a changeset read ahead, over HTTP', () => {
  test('ten MERGEs of ten variations (the connector stock push): every one lands, with the ETag a GET reads afterwards', async () => {
    const api = client(live, seller);
    const product = await api.create('Products', { Title: 'Vorrat', Price: '5', StockAmount: 1 });
    const variations: bigint[] = [];
    for (let i = 0; i < 10; i++) variations.push(await api.create('ProductVariations', { ProductId: String(product), Sku: `AH-${i}`, Price: '5', StockAmount: i }));
    const body = connectorBody(live.origin, variations.map((id, i) => ({ method: 'MERGE', path: `/ProductVariations(${id}L)`, json: `{"StockAmount":"${100 + i}"}` })));
    const answers = changesetAnswers(readBatchAnswer(await postBatch(live, seller, body))[0]);
    assert.deepEqual(answers.map((a) => a.status), Array(10).fill(204));
    for (const [i, id] of variations.entries()) {
      const stored = await api.get(`ProductVariations(${id}L)`);
      assert.equal(stored?.StockAmount, 100 + i);
      assert.equal(answers[i]!.headers.get('etag'), etagOf(stored), `the ETag answered for variation ${i} is the one stored`);
    }
  });

  test('the same entity three times: each part answers the ETag its change made, and only the last one is current', async () => {
    // On PostgreSQL the UPDATEs go out together and each ETag is told from the version read
    // (EntityStore.update's storedVersion): what the connector is told must be what it can send back.
    const api = client(live, seller);
    const product = await api.create('Products', { Title: 'Dreimal', Price: '5', StockAmount: 1 });
    const body = connectorBody(live.origin, [7, 8, 9].map((stock) => ({ method: 'MERGE', path: `/Products(${product}L)`, json: `{"StockAmount":${stock}}` })));
    const answers = changesetAnswers(readBatchAnswer(await postBatch(live, seller, body))[0]);
    assert.deepEqual(answers.map((a) => a.status), [204, 204, 204]);
    const tags = answers.map((a) => a.headers.get('etag')!);
    assert.equal(new Set(tags).size, 3, `three changes, three ETags: ${tags.join(', ')}`);
    const stored = await api.get(`Products(${product}L)`);
    assert.equal(stored?.StockAmount, 9);
    assert.equal(tags[2], etagOf(stored), 'the last part answers the ETag a GET reads');
    const mergeWith = (etag: string) => postBatch(live, seller, batchBody([changesetPart([mergeIfMatch(`Products(${product}L)`, 1, etag, { StockAmount: 10 })])]));
    assert.equal(singleAnswer(readBatchAnswer(await mergeWith(tags[1]!))[0]).status, 412, 'the second ETag is out of date');
    assert.deepEqual(changesetAnswers(readBatchAnswer(await mergeWith(tags[2]!))[0]).map((a) => a.status), [204]);
    assert.equal((await api.get(`Products(${product}L)`))?.StockAmount, 10);
  });

  test('the same entity twice: the second operation sees the first one\'s change (its If-Match of the ETag before is refused)', async () => {
    const api = client(live, seller);
    const product = await api.create('Products', { Title: 'Zweimal', Price: '5', StockAmount: 1 });
    const other = await api.create('Products', { Title: 'Daneben', Price: '5', StockAmount: 1 });
    const etag = etagOf(await api.get(`Products(${product}L)`))!;
    const res = await postBatch(
      live,
      seller,
      batchBody([
        changesetPart([
          jsonOperation('MERGE', `Products(${product}L)`, 1, { StockAmount: 2 }),
          jsonOperation('MERGE', `Products(${other}L)`, 2, { StockAmount: 2 }),
          mergeIfMatch(`Products(${product}L)`, 3, etag, { StockAmount: 3 }),
        ]),
      ]),
    );
    const answer = singleAnswer(readBatchAnswer(res)[0]);
    assert.equal(answer.status, 412, errorMessageOf(answer));
    assert.equal((await api.get(`Products(${product}L)`))?.StockAmount, 1, 'nothing of the changeset was kept');
    assert.equal((await api.get(`Products(${other}L)`))?.StockAmount, 1);

    // With the ETag the first operation answered, the second one goes through.
    const first = await postBatch(live, seller, batchBody([changesetPart([jsonOperation('MERGE', `Products(${product}L)`, 1, { StockAmount: 2 }), jsonOperation('MERGE', `Products(${other}L)`, 2, { StockAmount: 2 })])]));
    const newTag = changesetAnswers(readBatchAnswer(first)[0])[0]!.headers.get('etag')!;
    const again = await postBatch(
      live,
      seller,
      batchBody([changesetPart([jsonOperation('MERGE', `Products(${other}L)`, 1, { StockAmount: 4 }), mergeIfMatch(`Products(${product}L)`, 2, newTag, { StockAmount: 4 })])]),
    );
    assert.deepEqual(changesetAnswers(readBatchAnswer(again)[0]).map((a) => a.status), [204, 204]);
    assert.equal((await api.get(`Products(${product}L)`))?.StockAmount, 4);
  });

  test('a row renumbered by an earlier operation\'s follow-up is read again: its old ETag is refused', async () => {
    const api = client(live, seller);
    const product = await api.create('Products', { Title: 'Bilder', Price: '5', StockAmount: 1 });
    const first = await api.create('ProductImages', { ProductId: String(product), Type: 3, ImageUrl: 'https://img.example.com/a.jpg' });
    const second = await api.create('ProductImages', { ProductId: String(product), Type: 4, ImageUrl: 'https://img.example.com/b.jpg' });
    const secondTag = etagOf(await api.get(`ProductImages(${second}L)`))!;
    // Moving the first image to Type 4 moves the second one down to Type 3 (a follow-up update).
    const res = await postBatch(
      live,
      seller,
      batchBody([changesetPart([jsonOperation('MERGE', `ProductImages(${first}L)`, 1, { Type: 4 }), mergeIfMatch(`ProductImages(${second}L)`, 2, secondTag, { ImageUrl: 'https://img.example.com/c.jpg' })])]),
    );
    const answer = singleAnswer(readBatchAnswer(res)[0]);
    assert.equal(answer.status, 412, errorMessageOf(answer));
    assert.equal((await api.get(`ProductImages(${second}L)`))?.Type, 4, 'nothing was kept');

    // Without the stale If-Match, both go through and the second image keeps its new place.
    const ok = await postBatch(
      live,
      seller,
      batchBody([changesetPart([jsonOperation('MERGE', `ProductImages(${first}L)`, 1, { Type: 4 }), jsonOperation('MERGE', `ProductImages(${second}L)`, 2, { ImageUrl: 'https://img.example.com/c.jpg' })])]),
    );
    assert.deepEqual(changesetAnswers(readBatchAnswer(ok)[0]).map((a) => a.status), [204, 204]);
    const moved = await api.get(`ProductImages(${second}L)`);
    assert.equal(moved?.Type, 3);
    assert.equal(moved?.ImageUrl, 'https://img.example.com/c.jpg');
  });

  test('a row deleted by an earlier operation\'s cascade is gone for the next one: 404, and nothing kept', async () => {
    const api = client(live, seller);
    const product = await api.create('Products', { Title: 'Weg', Price: '5', StockAmount: 1 });
    const variation = await api.create('ProductVariations', { ProductId: String(product), Sku: 'AH-GONE', Price: '5', StockAmount: 1 });
    const other = await api.create('Products', { Title: 'Bleibt', Price: '5', StockAmount: 1 });
    const res = await postBatch(
      live,
      seller,
      batchBody([
        changesetPart([
          jsonOperation('MERGE', `Products(${other}L)`, 1, { StockAmount: 9 }),
          jsonOperation('DELETE', `Products(${product}L)`, 2),
          jsonOperation('MERGE', `ProductVariations(${variation}L)`, 3, { StockAmount: 9 }),
        ]),
      ]),
    );
    const answer = singleAnswer(readBatchAnswer(res)[0]);
    assert.equal(answer.status, 404, errorMessageOf(answer));
    assert.match(errorMessageOf(answer), new RegExp(`ProductVariations\\(${variation}L\\)`));
    assert.equal((await api.get(`ProductVariations(${variation}L)`))?.StockAmount, 1, 'the cascade was rolled back with the changeset');
    assert.equal((await api.get(`Products(${other}L)`))?.StockAmount, 1);
  });
});

/** The transaction's executor, counting the statements that reach the database. */
function counting(tx: SqlExecutor): { exec: SqlExecutor; sent: string[] } {
  const sent: string[] = [];
  const exec = new Proxy(tx, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (sql: string, ...rest: unknown[]) => {
        sent.push(sql);
        return (value as (...a: unknown[]) => unknown).call(target, sql, ...rest);
      };
    },
  });
  return { exec, sent };
}

describe('the read-ahead executor on the real store', () => {
  async function threeProducts(): Promise<bigint[]> {
    const api = client(live, seller);
    return [await api.create('Products', { Title: 'A', Price: '1', StockAmount: 1 }), await api.create('Products', { Title: 'B', Price: '1', StockAmount: 2 }), await api.create('Products', { Title: 'C', Price: '1', StockAmount: 3 })];
  }

  test('rows read ahead answer find() without a statement; an entity update ends its own row only; any other write ends them all', async () => {
    const { app } = live.service;
    const type = app.model.typeByName.get('Product')!;
    const [a, b, c] = await threeProducts();
    const missing = c! + 1_000_000n;
    await app.store.write(seller.accountId, async (tx) => {
      const { exec, sent } = counting(tx);
      const ahead = new ReadAheadExecutor(exec);
      await app.entities.readAhead(ahead, seller.accountId, type, [a!, b!, c!, missing]);
      assert.equal(sent.length, 1, 'one statement for all four');
      assert.equal((await app.entities.find(ahead, seller.accountId, type, a!))?.values.Title, 'A');
      assert.equal(await app.entities.find(ahead, seller.accountId, type, missing), undefined, 'an id read ahead and not found is not found');
      assert.equal(sent.length, 1, 'answered from the rows read ahead');

      await app.entities.update(ahead, seller.accountId, type, a!, { StockAmount: 10 });
      assert.equal(sent.length, 2);
      assert.equal((await app.entities.find(ahead, seller.accountId, type, b!))?.values.StockAmount, 2);
      assert.equal(sent.length, 2, 'the other rows are still answered');
      assert.equal((await app.entities.find(ahead, seller.accountId, type, a!))?.values.StockAmount, 10, 'the updated row is read again');
      assert.equal(sent.length, 3);

      // A write the store does not describe (here: plain SQL) may change any row.
      await ahead.run(`UPDATE products SET stock_amount = 20 WHERE account_id = ? AND id = ?`, [seller.accountId, c!] as SqlValue[]);
      assert.equal((await app.entities.find(ahead, seller.accountId, type, c!))?.values.StockAmount, 20);
      assert.equal((await app.entities.find(ahead, seller.accountId, type, b!))?.values.StockAmount, 2);
      assert.equal(sent.length, 6, 'every row is read again after it');
    });
  });

  test('a write sent while the read-ahead is under way: nothing is kept', async () => {
    const { app } = live.service;
    const type = app.model.typeByName.get('Product')!;
    const [a, b] = await threeProducts();
    await app.store.write(seller.accountId, async (tx) => {
      const { exec, sent } = counting(tx);
      const ahead = new ReadAheadExecutor(exec);
      const reading = app.entities.readAhead(ahead, seller.accountId, type, [a!, b!]);
      const writing = ahead.run(`UPDATE products SET stock_amount = 30 WHERE account_id = ? AND id = ?`, [seller.accountId, b!] as SqlValue[]);
      await Promise.all([reading, writing]);
      assert.equal((await app.entities.find(ahead, seller.accountId, type, b!))?.values.StockAmount, 30);
      assert.equal((await app.entities.find(ahead, seller.accountId, type, a!))?.values.StockAmount, 1);
      assert.equal(sent.length, 4, 'both rows read again');
    });
  });
});
