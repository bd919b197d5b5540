/** Writes that keep related rows consistent: a moved variation takes its discount offers along. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { createEntity } from '../support/live-client';

let live: LiveService;
let seller: Seller;
before(async () => {
  live = await startLive();
  seller = await newSeller(live);
});
after(() => live.close());

const J = { Accept: 'application/json', 'Content-Type': 'application/json' };

const post = (set: string, body: Record<string, unknown>) => createEntity(live, seller, set, body);

test('moving a variation to another product moves its variation-level discount offers with it', async () => {
  const first = await post('Products', { Title: 'First', Price: '1', StockAmount: 1 });
  const second = await post('Products', { Title: 'Second', Price: '1', StockAmount: 1 });
  const variation = await post('ProductVariations', { ProductId: first, Price: '2', StockAmount: 1 });
  const productOffer = await post('DiscountOffers', { ProductId: first, Price: '0.5', Type: 1 });
  const variationOffer = await post('DiscountOffers', { ProductId: first, ProductVariationId: variation, Price: '1.5', Type: 1 });

  const moved = await asSeller(seller, `${live.root}/ProductVariations(${variation}L)`, { method: 'MERGE', headers: J, body: JSON.stringify({ ProductId: second }) });
  assert.equal(moved.status, 204, moved.body);

  const productIdOf = async (offer: string) =>
    (JSON.parse((await asSeller(seller, `${live.root}/DiscountOffers(${offer}L)`, { headers: J })).body) as { d: { ProductId: string } }).d.ProductId;
  assert.equal(await productIdOf(variationOffer), second);
  assert.equal(await productIdOf(productOffer), first, 'the product-level offer stays with its product');
});
