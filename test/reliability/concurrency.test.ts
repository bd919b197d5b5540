/**
 * Optimistic concurrency: every entity carries its ETag (Atom m:etag, JSON __metadata.etag, the
 * ETag header of single-entity answers); If-Match on PUT, MERGE, PATCH and DELETE answers 412
 * on a mismatch and changes nothing; If-None-Match answers 304. And the proof that it works:
 * rounds of concurrent read-modify-write writers on one entity lose no update.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { childElements, parseXml } from '../clients/datajs';
import { CONNECTOR_VERSIONS, asSeller, newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import type { HttpResponse } from '../support/http-client';
import { ATOM, M } from '../support/spec';

let live: LiveService;
let seller: Seller;

const json = { ...CONNECTOR_VERSIONS, Accept: 'application/json', 'Content-Type': 'application/json' };

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${path}`, { method, headers: { ...json, ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

async function newProduct(stock = 0): Promise<{ id: string; etag: string }> {
  const res = await call('POST', 'Products', { Title: 'Zähler', Price: '1', StockAmount: stock });
  assert.equal(res.status, 201, res.body);
  const d = (JSON.parse(res.body) as { d: { Id: string; __metadata: { etag: string } } }).d;
  assert.equal(res.headers.etag, d.__metadata.etag, 'the ETag header and __metadata.etag agree');
  return { id: d.Id, etag: d.__metadata.etag };
}

async function read(id: string): Promise<{ stock: number; etag: string }> {
  const res = await call('GET', `Products(${id}L)`);
  assert.equal(res.status, 200, res.body);
  const d = (JSON.parse(res.body) as { d: { StockAmount: number; __metadata: { etag: string } } }).d;
  assert.equal(res.headers.etag, d.__metadata.etag);
  return { stock: d.StockAmount, etag: d.__metadata.etag };
}

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'etag');
});

after(async () => {
  await live.close();
});

describe('ETags', () => {
  test('every entity carries one: JSON __metadata.etag, Atom m:etag, the ETag header; a change gives a new one', async () => {
    const p = await newProduct();
    assert.match(p.etag, /^W\/"\d+"$/);
    const atom = await call('GET', `Products(${p.id}L)`, undefined, { Accept: 'application/atom+xml' });
    assert.equal(parseXml(atom.body).documentElement.getAttributeNS(M, 'etag'), p.etag);
    assert.equal(atom.headers.etag, p.etag);
    const merged = await call('MERGE', `Products(${p.id}L)`, { StockAmount: 3 });
    assert.equal(merged.status, 204);
    assert.notEqual(merged.headers.etag, p.etag, 'a change makes a new ETag');
    assert.equal((await read(p.id)).etag, merged.headers.etag, 'the 204 names the new ETag');
  });

  test('feeds carry one per entry, and never an ETag header', async () => {
    const res = await call('GET', 'Products?$top=3', undefined, { Accept: 'application/atom+xml' });
    assert.equal(res.headers.etag, undefined);
    const entries = childElements(parseXml(res.body).documentElement, ATOM, 'entry');
    assert.ok(entries.length > 0);
    for (const e of entries) assert.match(e.getAttributeNS(M, 'etag') ?? '', /^W\/"\d+"$/);
    const d = (JSON.parse((await call('GET', 'Products?$top=3&$expand=ProductSpecifics')).body) as { d: { __metadata: { etag: string } }[] }).d;
    for (const e of d) assert.match(e.__metadata.etag, /^W\/"\d+"$/);
  });

  test('If-Match with a stale ETag: 412 for PUT, MERGE, PATCH and DELETE, and nothing changes', async () => {
    const p = await newProduct(5);
    const stale = p.etag;
    const fresh = (await call('MERGE', `Products(${p.id}L)`, { StockAmount: 6 })).headers.etag!;
    const before = await tenantRows(live, seller.accountId);
    for (const [method, body] of [['PUT', { Title: 'x', Price: '1', StockAmount: 1 }], ['MERGE', { StockAmount: 7 }], ['PATCH', { StockAmount: 8 }], ['DELETE', undefined]] as const) {
      const res = await call(method, `Products(${p.id}L)`, body, { 'If-Match': stale });
      assert.equal(res.status, 412, `${method}: ${res.body}`);
      assert.equal((JSON.parse(res.body) as { error: { message: { value: string } } }).error.message.value.includes('has changed'), true);
    }
    const tunnelled = await asSeller(seller, `${live.root}/Products(${p.id}L)`, { method: 'POST', headers: { ...json, 'X-HTTP-Method': 'MERGE', 'If-Match': stale }, body: '{"StockAmount":9}' });
    assert.equal(tunnelled.status, 412);
    assert.deepEqual(await tenantRows(live, seller.accountId), before, 'nothing changed');
    assert.equal((await read(p.id)).stock, 6);
    // The current ETag, its strong form and * pass.
    assert.equal((await call('MERGE', `Products(${p.id}L)`, { StockAmount: 10 }, { 'If-Match': fresh })).status, 204);
    const current = (await read(p.id)).etag;
    assert.equal((await call('MERGE', `Products(${p.id}L)`, { StockAmount: 11 }, { 'If-Match': current.replace(/^W\//, '') })).status, 204);
    assert.equal((await call('MERGE', `Products(${p.id}L)`, { StockAmount: 12 }, { 'If-Match': '*' })).status, 204);
    assert.equal((await call('DELETE', `Products(${p.id}L)`, undefined, { 'If-Match': `W/"0", ${(await read(p.id)).etag}` })).status, 204);
  });

  test('If-None-Match with the current ETag: 304 without a body; with another: 200', async () => {
    const p = await newProduct();
    const notModified = await call('GET', `Products(${p.id}L)`, undefined, { 'If-None-Match': p.etag });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.body, '');
    assert.equal((await call('GET', `Products(${p.id}L)`, undefined, { 'If-None-Match': 'W/"999999"' })).status, 200);
  });
});

describe('concurrent writers', () => {
  test('100 rounds of 8 concurrent read-modify-write writers on one entity lose no update', { timeout: 300_000 }, async () => {
    const p = await newProduct(0);
    const ROUNDS = 100;
    const WRITERS = 8;
    let conflicts = 0;
    /** Adds one to StockAmount: read, then MERGE with If-Match; on 412, read again. */
    const increment = async () => {
      for (;;) {
        const { stock, etag } = await read(p.id);
        const res = await call('MERGE', `Products(${p.id}L)`, { StockAmount: stock + 1 }, { 'If-Match': etag });
        if (res.status === 204) return;
        assert.equal(res.status, 412, res.body);
        conflicts++;
      }
    };
    for (let round = 0; round < ROUNDS; round++) await Promise.all(Array.from({ length: WRITERS }, increment));
    const final = await read(p.id);
    console.log(`# concurrency: ${ROUNDS * WRITERS} increments by ${WRITERS} concurrent writers, ${conflicts} conflicts answered 412 and retried`);
    assert.equal(final.stock, ROUNDS * WRITERS, 'every increment counted once');
    assert.ok(conflicts > 0, 'the writers really did collide');
  });
});
