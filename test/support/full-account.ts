/**
 * A seller with at least one row in every entity set, links between products and catalogs, a
 * listing, and an order with payment and shipment history, and a webhook subscription with a
 * delivery of the order's event: the data an erasure must reach everywhere. Needs a service
 * started with the platform API (startWithPlatform).
 */
import assert from 'node:assert/strict';
import { asSeller, newSeller, type LiveService, type Seller } from './live-service';
import { createEntity } from './live-client';
import { awaitDelivery, registerPendingWebhook } from './webhook-fixture';
import { deliver, orderDocument, orderItem, paymentEvent, shipmentEvent } from '../platform/platform-client';

async function link(live: LiveService, s: Seller, path: string, uri: string): Promise<void> {
  const res = await asSeller(s, `${live.root}/${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ uri: `${live.root}/${uri}` }) });
  assert.equal(res.status, 204, res.body);
}

export async function fullAccount(live: LiveService, tag: string): Promise<Seller> {
  const create = (s: Seller, set: string, body: Record<string, unknown>) => createEntity(live, s, set, body);
  const s = await newSeller(live, tag);
  const hookId = await registerPendingWebhook(live, s);
  const product = await create(s, 'Products', { Title: `${tag} jacket`, Price: '99', StockAmount: 4, ForeignId: `${tag}-JACKET` });
  const child = await create(s, 'Products', { Title: `${tag} hood`, Price: '9', StockAmount: 4 });
  await create(s, 'ProductImages', { ProductId: product, ImageUrl: 'https://img.example.com/jacket.jpg', Type: 1 });
  await create(s, 'ProductSpecifics', { ProductId: product, Name: 'Material', Value: 'Wool' });
  await create(s, 'OptionalProductAttributes', { ProductId: product, Name: 'Care', Value: 'Dry clean' });
  await create(s, 'CarParts', { ProductId: product, KType: 1 });
  await create(s, 'ProductRelations', { ParentProductId: product, ChildProductId: child });
  const variation = await create(s, 'ProductVariations', { ProductId: product, Price: '99', StockAmount: 2, Sku: `${tag}-JACKET-M` });
  await create(s, 'ProductVariationSpecifics', { ProductVariationId: variation, Name: 'Size', Value: 'M' });
  await create(s, 'ProductVariationImages', { ProductVariationId: variation, ImageUrl: 'https://img.example.com/jacket-m.jpg', ImagePosition: 0 });
  await create(s, 'DiscountOffers', { ProductId: product, ProductVariationId: variation, Price: '120', Type: 1 });
  const catalog = await create(s, 'Catalogs', { Name: `${tag} outerwear`, IsRootLevel: true });
  const childCatalog = await create(s, 'Catalogs', { Name: `${tag} jackets` });
  await link(live, s, `Products(${product}L)/$links/Catalogs`, `Catalogs(${catalog}L)`);
  await link(live, s, `Catalogs(${catalog}L)/$links/ChildCatalogs`, `Catalogs(${childCatalog}L)`);
  await deliver(live, s.userName, { kind: 'listing', PlatformItemId: `${tag}-L`, Status: 1, Product: { Id: product }, ListingItems: [{ Sku: `${tag}-JACKET-M`, ProductVariation: { Sku: `${tag}-JACKET-M` } }] });
  await deliver(live, s.userName, orderDocument(`${tag}-O1`, [orderItem(`${tag}-I1`, { Product: { ForeignId: `${tag}-JACKET` }, ProductVariation: { Sku: `${tag}-JACKET-M` } })]));
  await deliver(live, s.userName, paymentEvent(`${tag}-O1`));
  await deliver(live, s.userName, shipmentEvent(`${tag}-O1`));
  await awaitDelivery(live, s, hookId);
  return s;
}

