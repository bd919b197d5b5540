/**
 * A client that asks for a large feed and then reads none of it: the stream waits for the socket
 * to drain while it holds a read snapshot (on PostgreSQL a pool connection). SEND_TIMEOUT_MS
 * cuts such a client off, so it cannot hold the snapshot for ever. With a pool of one
 * connection, other requests are served again once the stalled client has been cut off.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { CONNECTOR_VERSIONS, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { seedCatalogue } from '../support/catalogue-seed';
import { request } from '../support/http-client';

const SEND_TIMEOUT_MS = 500;
const EXPAND = 'ProductImages,ProductSpecifics,ProductVariations/ProductVariationSpecifics,ProductVariations/ProductVariationPictures';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive({ env: { SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS), DATABASE_POOL_SIZE: '1' } });
  seller = await newSeller(live, 'stall');
  const { app } = live.service;
  // About 12 MB of JSON: more than the socket buffers on both ends take.
  await seedCatalogue(app.model, app.store, app.entities, seller.accountId, 400);
});
after(() => live.close());

/**
 * Starts the export, reads nothing for `stallMs`, then reads on: resolves whether the answer
 * arrived whole or the server had cut the connection off. (A paused socket notices no close, so
 * the cut shows only once it reads again.)
 */
function stallExport(stallMs: number): Promise<'whole' | 'cut off'> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${live.root}/Products?$expand=${EXPAND}`, { headers: { ...seller.auth, Accept: 'application/json' }, agent: false }, (res) => {
      assert.equal(res.statusCode, 200);
      res.pause();
      setTimeout(() => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.complete ? 'whole' : 'cut off'));
        res.on('aborted', () => resolve('cut off'));
        res.on('error', () => resolve('cut off'));
        res.resume();
      }, stallMs);
    });
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve('cut off') : reject(error)));
  });
}

test('a client that reads nothing is cut off after SEND_TIMEOUT_MS, and what it held serves others again', async () => {
  assert.equal(await stallExport(SEND_TIMEOUT_MS * 6), 'cut off');
  const res = await request(`${live.root}/Products?$top=2`, { headers: { ...seller.auth, ...CONNECTOR_VERSIONS, Accept: 'application/json' } });
  assert.equal(res.status, 200, res.body.slice(0, 300));
  assert.equal((JSON.parse(res.body) as { d: unknown[] }).d.length, 2);
});

test('a client that reads slowly but within SEND_TIMEOUT_MS gets the whole answer', async () => {
  assert.equal(await stallExport(SEND_TIMEOUT_MS / 5), 'whole');
});
