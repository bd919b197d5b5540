/**
 * Fills every tenant table of one seller's account through the live service: the catalogue over
 * HTTP as a connector would, the platform rows (buyers, orders, listings, order history) through
 * the store as the platform side does. Tests of row-level security need rows in every table to
 * show that a fence really holds rows back.
 */
import type { EdmValue } from '../../src/odata/edm';
import { storeRow, type LiveService, type Seller } from '../support/live-service';
import { addLink, createEntity } from '../support/live-client';
import { awaitDelivery, registerPendingWebhook } from '../support/webhook-fixture';

async function seed(live: LiveService, accountId: number, typeName: string, values: Record<string, EdmValue>): Promise<bigint> {
  return storeRow(live, accountId, live.service.app.model.typeByName.get(typeName)!, values);
}

/** One row or more in every tenant table of the seller's account. */
export async function fillEveryTenantTable(live: LiveService, s: Seller, tag: string): Promise<void> {
  // The webhook tables: a subscription, then (below) the delivery of the order's event and the fan-out's cursor.
  const hookId = await registerPendingWebhook(live, s);
  const product = await createEntity(live, s, 'Products', { Title: `${tag} product`, Price: '19.99', StockAmount: 3 });
  const child = await createEntity(live, s, 'Products', { Title: `${tag} child`, Price: '5', StockAmount: 1 });
  await createEntity(live, s, 'ProductImages', { ProductId: product, ImageUrl: `https://img.example.com/${tag}.jpg`, Type: 1 });
  await createEntity(live, s, 'ProductSpecifics', { ProductId: product, Name: 'Brand', Value: `${tag} brand` });
  const variation = await createEntity(live, s, 'ProductVariations', { ProductId: product, Price: '20', StockAmount: 2, Sku: `${tag}-RED` });
  await createEntity(live, s, 'ProductVariationSpecifics', { ProductVariationId: variation, Name: 'Colour', Value: 'Red' });
  await createEntity(live, s, 'ProductVariationPictures', { ProductVariationId: variation, ImageUrl: `https://img.example.com/${tag}-red.jpg`, ImagePosition: 0 });
  const catalog = await createEntity(live, s, 'Catalogs', { Name: `${tag} catalog`, IsRootLevel: true });
  const childCatalog = await createEntity(live, s, 'Catalogs', { Name: `${tag} child catalog` });
  await addLink(live, s, `/Products(${product}L)/$links/Catalogs`, `Catalogs(${catalog}L)`);
  await addLink(live, s, `/Catalogs(${catalog}L)/$links/ChildCatalogs`, `Catalogs(${childCatalog}L)`);
  await createEntity(live, s, 'CarParts', { ProductId: product, KType: 12345, HSN: '0603', TSN: 'ABC' });
  await createEntity(live, s, 'OptionalProductAttributes', { ProductId: product, Name: 'Warranty', Value: '2 years' });
  await createEntity(live, s, 'DiscountOffers', { ProductId: product, ProductVariationId: variation, Price: '25', Type: 1 });
  await createEntity(live, s, 'ProductRelations', { ParentProductId: product, ChildProductId: child, Quantity: 2 });
  const buyer = await seed(live, s.accountId, 'Buyer', { BuyerName: `${tag}-buyer`, Email: `${tag}@example.com` });
  const address = await seed(live, s.accountId, 'Address', { BuyerId: buyer, Name: 'Erika', Surname: 'Mustermann', Country: 'DE' });
  const order = await seed(live, s.accountId, 'SalesOrder', {
    BuyerId: buyer,
    AddressId: address,
    ShippingAddressId: address,
    PlatformOrderId: `${tag}-order-1`,
    CurrencyCode: 'EUR',
    ItemCount: 1,
    TotalPrice: '20',
  });
  await seed(live, s.accountId, 'SalesOrderItem', {
    SalesOrderId: order,
    ProductId: BigInt(product),
    ProductVariationId: BigInt(variation),
    PlatformItemId: `${tag}-item-1`,
    TransactionId: `${tag}-tx-1`,
    Name: `${tag} product`,
    Amount: 1,
    Price: '20',
  });
  const listing = await seed(live, s.accountId, 'Listing', { ProductId: BigInt(product), PlatformItemId: `${tag}-item-1`, Title: `${tag} product`, Status: 1, Price: '20', Quantity: 3 });
  await seed(live, s.accountId, 'ListingItem', { ListingId: listing, ProductId: BigInt(product), ProductVariationId: BigInt(variation), Sku: `${tag}-RED`, Price: '20', Quantity: 2 });
  const { store } = live.service.app;
  await store.write(s.accountId, async (tx) => {
    const id = await store.nextId(tx);
    await tx.run(
      `INSERT INTO sales_order_history (account_id, id, sales_order_id, platform_item_id, action, value, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [s.accountId, id, order, `${tag}-item-1`, 'shipped', 1, store.codec.encode('Edm.DateTime', live.service.app.clock.now())],
    );
  });
  // A create with an Idempotency-Key: its first answer is kept in idempotency_keys.
  await createEntity(live, s, 'Catalogs', { Name: `${tag} keyed catalog` }, { 'Idempotency-Key': `${tag}-key-1` });
  await awaitDelivery(live, s, hookId);
}
