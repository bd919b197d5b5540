/**
 * A streamed collection whose client goes away half-way must end its row statement: otherwise
 * the reader connection it ran on stays busy, the next request that gets that connection fails,
 * and closing the store fails. 300 products with the connector's nine expansions are more than
 * one page of rows (256) and more than the socket buffers take, so the answer stops while the
 * statement is still open.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { seedCatalogue } from '../support/catalogue-seed';
import { request } from '../support/http-client';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'abort');
  const { app } = live.service;
  await seedCatalogue(app.model, app.store, app.entities, seller.accountId, 300);
});
// A statement left open makes closing its connection throw here.
after(() => live.close());

const EXPAND = 'CarParts,Catalogs,ChildProducts,DiscountOffers,OptionalProductAttributes,ProductImages,ProductSpecifics,ProductVariations/ProductVariationSpecifics,ProductVariations/ProductVariationPictures';

/** Starts the export, reads its first bytes and drops the connection. */
function abandonExport(): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${live.root}/Products?$expand=${EXPAND}`, { headers: { ...seller.auth, Accept: 'application/json' }, agent: false }, (res) => {
      assert.equal(res.statusCode, 200);
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve() : reject(error)));
  });
}

test('after clients drop half-read exports, every reader connection still serves', async () => {
  for (let i = 0; i < 3; i++) await abandonExport();
  // Let the service notice the closed sockets and unwind.
  await new Promise((r) => setTimeout(r, 200));
  // More requests than reader connections (8): each connection is used again.
  for (let i = 0; i < 12; i++) {
    const res = await request(`${live.root}/Products?$top=2&$expand=ProductVariations`, { headers: { ...seller.auth, Accept: 'application/json' } });
    assert.equal(res.status, 200, res.body.slice(0, 300));
  }
});
