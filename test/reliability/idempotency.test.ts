/**
 * Idempotency-Key on POST: a retry with the key answers the first result and creates nothing;
 * the key with another request is a 409; keys are per account; concurrent retries create once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { asSeller, newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import type { HttpResponse } from '../support/http-client';
import { engineOptions } from '../query/fixture';

let live: LiveService;
let a: Seller;
let b: Seller;

function post(seller: Seller, body: unknown, key?: string, path = 'Products'): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${path}`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json', ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    body: JSON.stringify(body),
  });
}

async function count(seller: Seller, set = 'Products'): Promise<number> {
  const res = await asSeller(seller, `${live.root}/${set}/$count`);
  return Number(res.body);
}

const idOf = (res: HttpResponse) => (JSON.parse(res.body) as { d: { Id: string } }).d.Id;

before(async () => {
  live = await startLive(engineOptions());
  a = await newSeller(live, 'idem-a');
  b = await newSeller(live, 'idem-b');
});

after(async () => {
  await live.close();
});

describe('Idempotency-Key', () => {
  test('a retry with the same key answers the first 201 (same Id, Location, body) and creates nothing', async () => {
    const body = { Title: 'Einmal', Price: '2.5', StockAmount: 1 };
    const first = await post(a, body, 'order-4711-product');
    assert.equal(first.status, 201, first.body);
    const before = await count(a);
    const retry = await post(a, body, 'order-4711-product');
    assert.equal(retry.status, 201);
    assert.equal(retry.body, first.body);
    assert.equal(retry.headers.location, first.headers.location);
    assert.equal(retry.headers['content-type'], first.headers['content-type']);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assert.equal(await count(a), before, 'no second product');
  });

  test('the same key with another request is a 409, and creates nothing', async () => {
    const first = await post(a, { Title: 'Erste', Price: '1', StockAmount: 1 }, 'reused-key');
    assert.equal(first.status, 201);
    const rows = await tenantRows(live, a.accountId);
    const other = await post(a, { Title: 'Zweite', Price: '1', StockAmount: 1 }, 'reused-key');
    assert.equal(other.status, 409, other.body);
    assert.match(other.body, /Idempotency-Key/);
    const otherPath = await post(a, { ProductId: idOf(first), Name: 'Marke', Value: 'x' }, 'reused-key', 'ProductSpecifics');
    assert.equal(otherPath.status, 409);
    assert.deepEqual(await tenantRows(live, a.accountId), rows);
  });

  test('keys are per account', async () => {
    const body = { Title: 'Gleich', Price: '1', StockAmount: 1 };
    const fromA = await post(a, body, 'shared-key');
    const fromB = await post(b, body, 'shared-key');
    assert.equal(fromA.status, 201);
    assert.equal(fromB.status, 201);
    assert.notEqual(idOf(fromA), idOf(fromB));
    assert.equal(fromB.headers['idempotent-replayed'], undefined);
  });

  test('a refused create stores no key: the corrected request with that key succeeds', async () => {
    const refused = await post(a, { Title: 'Ohne Preis', StockAmount: 1 }, 'fix-me');
    assert.equal(refused.status, 400);
    const fixed = await post(a, { Title: 'Mit Preis', Price: '3', StockAmount: 1 }, 'fix-me');
    assert.equal(fixed.status, 201, fixed.body);
  });

  test('20 concurrent retries of one key create exactly one entity, and all answer its Id', async () => {
    const before = await count(a);
    const body = { Title: 'Gleichzeitig', Price: '1', StockAmount: 1 };
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(a, body, 'burst-key')));
    for (const res of answers) assert.equal(res.status, 201, res.body);
    assert.equal(new Set(answers.map(idOf)).size, 1);
    assert.equal(await count(a), before + 1);
  });

  test('a malformed key is a 400 that changes nothing', async () => {
    const rows = await tenantRows(live, a.accountId);
    for (const key of ['x'.repeat(256), 'bad key', 'tab\tkey', '']) {
      const res = await post(a, { Title: 'Nie', Price: '1', StockAmount: 1 }, key);
      assert.equal(res.status, 400, `${JSON.stringify(key)}: ${res.body}`);
    }
    assert.deepEqual(await tenantRows(live, a.accountId), rows);
  });
});
