/**
 * More clients than pooled database connections (issue 16, item 1). Three properties:
 *
 * - Clients that hang up while their requests wait (for their credentials to be checked, or for a
 *   connection) leave nothing behind. This is the stall `npm run bench -- --engine postgres`
 *   showed with the default pool of 10 and 32 clients: autocannon drops its sockets at the end of
 *   its warm-up, the requests that were waiting then got a connection, read their rows, and wrote
 *   their answer into the closed socket; their responder had been made after the socket's 'close'
 *   event, so it waited for a 'drain' that never came, inside the read transaction
 *   (`idle in transaction` after `CLOSE`), and every later request waited for the pool.
 * - When every connection is busy, a request waits at most DATABASE_POOL_WAIT_MS and is then
 *   answered 503 with Retry-After and an OData error in its format, never a 500 after 30 s.
 * - 128 clients against a pool of 10 get only 200s and 503s, and the service serves on after;
 *   with the share per account on (the default) one seller's 128 get 200s and 429s, never a 503,
 *   and another seller is served meanwhile.
 * - No request holds one pooled connection while it waits for another (a lookup, a session
 *   touch, a count): with a pool of one connection, every kind of request is still served; one
 *   that nested would wait for itself and be answered 503.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { CONNECTOR_VERSIONS, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { seedCatalogue } from '../support/catalogue-seed';
import { request, type HttpResponse } from '../support/http-client';
import { readODataError } from '../support/odata-error';
import { reportFigures } from '../support/figures';
import { testEngine } from '../support/test-database';
import { createEntity, JSON_HEADERS } from '../support/live-client';
import { batchBody, changesetPart, httpPart, jsonOperation, postBatch, readBatchAnswer } from '../batch/support';
import { callOperation } from '../operations/operation-client';

const postgresOnly = testEngine === 'postgres' ? {} : { skip: 'the connection pool is PostgreSQL’s' };

/** The filtered read of the bench's stalled workload: 50 products as a JSON feed. */
async function fiftyProductsUrl(live: LiveService, seller: Seller): Promise<string> {
  const res = await request(`${live.root}/Products?$select=Id&$orderby=Id`, { headers: { ...seller.auth, Accept: 'application/json' } });
  assert.equal(res.status, 200, res.body.slice(0, 300));
  const d = JSON.parse(res.body).d as { Id: string }[] | { results: { Id: string }[] };
  const ids = (Array.isArray(d) ? d : d.results).map((e) => e.Id);
  return `${live.root}/Products?$filter=${encodeURIComponent(`Id ge ${ids[0]}L and Id le ${ids[49]}L`)}`;
}

/** Requests from separate sockets that all hang up after `afterMs`, whatever stage they reached. */
async function hangUpAll(url: string, seller: Seller, clients: number, afterMs: number): Promise<void> {
  const requests = Array.from({ length: clients }, () => {
    const req = http.get(url, { headers: { ...seller.auth, Accept: 'application/json' }, agent: false }, (res) => res.resume());
    req.on('error', () => undefined);
    return req;
  });
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  for (const req of requests) req.destroy();
}

/** The service's own answer to 5xx other than 503 (overload) must never come. */
function faults(live: LiveService): unknown[] {
  return live.logLines.filter((l) => typeof l.status === 'number' && l.status >= 500 && l.status !== 503);
}

describe('clients that hang up mid-request (pool of 2)', () => {
  let live: LiveService;
  let seller: Seller;
  let url: string;
  before(async () => {
    live = await startLive({ env: { DATABASE_POOL_SIZE: '2' } });
    seller = await newSeller(live, 'hangup');
    const { app } = live.service;
    await seedCatalogue(app.model, app.store, app.entities, seller.accountId, 60);
    url = await fiftyProductsUrl(live, seller);
  });
  after(() => live.close());

  test('leave every pooled connection free: the next request is answered 200', async () => {
    // Rounds that hang up at different stages: while waiting for the login lookup, for a
    // connection, or while the answer is being written.
    for (const afterMs of [5, 20, 60]) {
      await hangUpAll(url, seller, 16, afterMs);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const res = await request(url, { headers: { ...seller.auth, ...CONNECTOR_VERSIONS, Accept: 'application/json' } });
      assert.equal(res.status, 200, `after clients hung up at ${afterMs} ms: ${res.status} ${res.body.slice(0, 300)}`);
      assert.equal((JSON.parse(res.body).d as unknown[]).length, 50);
    }
    assert.deepEqual(faults(live), []);
  });
});

describe('an exhausted pool (pool of 1, DATABASE_POOL_WAIT_MS=300)', postgresOnly, () => {
  let live: LiveService;
  let seller: Seller;
  before(async () => {
    live = await startLive({ env: { DATABASE_POOL_SIZE: '1', DATABASE_POOL_WAIT_MS: '300' } });
    seller = await newSeller(live, 'busy');
  });
  after(() => live.service.close());

  /** Holds the only pooled connection (in a read of the seller's account) while fn runs. */
  async function whileHeld<T>(fn: () => Promise<T>): Promise<T> {
    let release!: () => void;
    let held!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const holding = new Promise<void>((resolve) => (held = resolve));
    const reading = live.service.app.store.read(seller.accountId, async () => {
      held();
      await gate;
    });
    await holding;
    try {
      return await fn();
    } finally {
      release();
      await reading;
    }
  }

  for (const [format, accept] of [['json', 'application/json'], ['xml', 'application/atom+xml']] as const) {
    test(`answers 503 with Retry-After and an OData error in ${format}`, async () => {
      const res: HttpResponse = await whileHeld(() => request(`${live.root}/Products`, { headers: { ...seller.auth, Accept: accept } }));
      assert.equal(res.status, 503, res.body.slice(0, 300));
      assert.match(String(res.headers['retry-after']), /^[1-9][0-9]*$/);
      const error = readODataError(String(res.headers['content-type']), res.body, format);
      assert.match(error.message, /busy/);
      // Once the connection is free again, the same request is served.
      const again = await request(`${live.root}/Products`, { headers: { ...seller.auth, Accept: accept } });
      assert.equal(again.status, 200);
    });
  }
});

/**
 * 128 clients of one seller, each sending 6 reads of a 50-product page; the statuses they got.
 * Every 200 has its 50 products; every other status is one of `others` and carries Retry-After.
 */
async function crowd(url: string, seller: Seller, others: readonly number[]): Promise<Record<number, number>> {
  const CLIENTS = 128;
  const EACH = 6;
  const statuses: Record<number, number> = {};
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const get = () =>
    new Promise<HttpResponse>((resolve, reject) => {
      const req = http.get(url, { headers: { ...seller.auth, ...CONNECTOR_VERSIONS, Accept: 'application/json' }, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
    });
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < EACH; i++) {
        const res = await get();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 200) assert.equal((JSON.parse(res.body).d as unknown[]).length, 50);
        else {
          assert.ok(others.includes(res.status), `${res.status}: ${res.body.slice(0, 300)}`);
          assert.ok(res.headers['retry-after']);
        }
      }
    }),
  );
  agent.destroy();
  return statuses;
}

describe('128 clients against a pool of 10', () => {
  let live: LiveService;
  let seller: Seller;
  let url: string;
  before(async () => {
    // The pool's own limit, with the share per account off: one seller's 128 clients then reach
    // the pool itself (the next describe has the share on).
    live = await startLive({ env: { DATABASE_POOL_SIZE: '10', LOG_LEVEL: 'warn', ACCOUNT_MAX_IN_FLIGHT: '0' } });
    seller = await newSeller(live, 'crowd');
    const { app } = live.service;
    await seedCatalogue(app.model, app.store, app.entities, seller.accountId, 60);
    url = await fiftyProductsUrl(live, seller);
  });
  after(() => live.service.close());

  test('get only 200s and 503s, and the service serves on', async (t) => {
    const statuses = await crowd(url, seller, [503]);
    const total = Object.values(statuses).reduce((a, b) => a + b, 0);
    reportFigures('pool-exhaustion', { clients: 128, pool: 10, requests: total, ok: statuses[200] ?? 0, busy503: statuses[503] ?? 0, busyShare: ((statuses[503] ?? 0) / total).toFixed(3) }, t);
    assert.deepEqual(Object.keys(statuses).filter((s) => s !== '200' && s !== '503'), []);
    const res = await request(url, { headers: { ...seller.auth, ...CONNECTOR_VERSIONS, Accept: 'application/json' } });
    assert.equal(res.status, 200);
    assert.deepEqual(faults(live), []);
  });
});

describe('128 clients of one seller with the share per account on (the default)', () => {
  let live: LiveService;
  let seller: Seller;
  let other: Seller;
  let url: string;
  before(async () => {
    live = await startLive({ env: { DATABASE_POOL_SIZE: '10', LOG_LEVEL: 'warn' } });
    seller = await newSeller(live, 'crowd');
    other = await newSeller(live, 'bystander');
    const { app } = live.service;
    await seedCatalogue(app.model, app.store, app.entities, seller.accountId, 60);
    url = await fiftyProductsUrl(live, seller);
  });
  after(() => live.service.close());

  test('get 200s and 429s, never a 503: the seller never holds the whole pool, and another seller is served meanwhile', async (t) => {
    const crowding = crowd(url, seller, [429]);
    // While the crowd runs, another seller reads: the pool always has connections for it.
    const bystander = [];
    for (let i = 0; i < 20; i++) bystander.push((await request(`${live.root}/Products?$top=1`, { headers: { ...other.auth, Accept: 'application/json' } })).status);
    const statuses = await crowding;
    reportFigures('pool-share', { clients: 128, pool: 10, ok: statuses[200] ?? 0, refused429: statuses[429] ?? 0, busy503: statuses[503] ?? 0 }, t);
    assert.deepEqual(Object.keys(statuses).filter((s) => s !== '200' && s !== '429'), []);
    assert.deepEqual(bystander, Array(20).fill(200));
    assert.deepEqual(faults(live), []);
  });
});

describe('a pool of one connection (DATABASE_POOL_WAIT_MS=2000)', postgresOnly, () => {
  let live: LiveService;
  let seller: Seller;
  before(async () => {
    // touchIntervalMs is 60 s: the session touch is exercised by the login and the first requests.
    live = await startLive({ env: { DATABASE_POOL_SIZE: '1', DATABASE_POOL_WAIT_MS: '2000' } });
    seller = await newSeller(live, 'single');
  });
  after(() => live.close());

  test('serves every kind of request: no request waits for a second connection', async () => {
    const json = { ...seller.auth, ...JSON_HEADERS };
    const product = await createEntity(live, seller, 'Products', { ForeignId: 'ONE-1', Title: 'One', Price: '1.00', StockAmount: 1 });
    const variation = await createEntity(live, seller, 'ProductVariations', { ProductId: product, Sku: 'ONE-1-A', Price: '1.00', StockAmount: 1 });
    const answers: [string, HttpResponse, number][] = [
      ['GET by key', await request(`${live.root}/Products(${product}L)`, { headers: json }), 200],
      ['filter with $inlinecount', await request(`${live.root}/Products?$filter=Price gt 0M&$inlinecount=allpages&$expand=ProductVariations`, { headers: json }), 200],
      ['$count', await request(`${live.root}/Products/$count`, { headers: seller.auth }), 200],
      ['MERGE', await request(`${live.root}/ProductVariations(${variation}L)`, { method: 'MERGE', headers: json, body: JSON.stringify({ StockAmount: 5 }) }), 204],
      ['service operation', await callOperation(live, seller, 'GET', 'ProductIsListed', `productId=${product}L`), 200],
      [
        '$batch (a query and a changeset)',
        await postBatch(live, seller, batchBody([httpPart({ method: 'GET', target: `Products(${product}L)`, headers: ['Accept: application/json'] }), changesetPart([jsonOperation('MERGE', `ProductVariations(${variation}L)`, 1, { StockAmount: 6 })])])),
        202,
      ],
    ];
    for (const [what, res, status] of answers) assert.equal(res.status, status, `${what}: ${res.status} ${res.body.slice(0, 300)}`);
    assert.equal(readBatchAnswer(answers[5]![1]).length, 2);
    assert.deepEqual(faults(live), []);
  });
});
