/**
 * A listing document: a listing started (Status 1) or ended (Status 0) on the platform, with its
 * items, upserted by the listing's PlatformItemId. Items are known by their Sku within the
 * listing: a later delivery updates what differs, adds new items and removes the items it no
 * longer carries. Pointers to the catalogue are set when a row is first delivered and kept after.
 */
import { badRequest } from '../odata/errors';
import { findBy, insertRow, typeOf, updateChanged, type Delivery, type DeliveryOutcome } from './delivery';
import { platformProperties, readValues, type Json } from './documents';
import { resolveReference } from './references';
import { entityId } from '../odata/entity';

async function upsertListingItems(d: Delivery, listingId: bigint, listingProductId: bigint | null, body: Json): Promise<boolean> {
  const itemType = typeOf(d, 'ListingItem');
  const storedBySku = new Map((await findBy(d, itemType, 'ListingId', listingId)).map((r) => [r.values.Sku as string, r] as const));
  const listingProduct = listingProductId === null ? undefined : await d.entities.find(d.tx, d.accountId, typeOf(d, 'Product'), listingProductId);
  const delivered = new Set<string>();
  let changed = false;
  for (const [i, itemJson] of ((body.ListingItems ?? []) as Json[]).entries()) {
    const path = `/ListingItems/${i}`;
    const values = readValues(itemType, platformProperties(itemType), itemJson, path);
    const sku = values.Sku as string;
    if (delivered.has(sku)) throw badRequest(`'${path}' repeats the Sku '${sku}' of an earlier item of the listing.`);
    delivered.add(sku);
    const stored = storedBySku.get(sku);
    if (stored) {
      changed = (await updateChanged(d, stored, values)) || changed;
      continue;
    }
    const ref = await resolveReference(d, itemJson, path, listingProduct);
    await insertRow(d, itemType, { ...values, ListingId: listingId, ProductId: ref.product?.values.Id ?? null, ProductVariationId: ref.variation?.values.Id ?? null });
    changed = true;
  }
  for (const [sku, stored] of storedBySku) {
    if (delivered.has(sku)) continue;
    await d.entities.delete(d.tx, d.accountId, itemType, entityId(stored.values));
    changed = true;
  }
  return changed;
}

export async function deliverListing(d: Delivery, body: Json): Promise<DeliveryOutcome> {
  const listings = typeOf(d, 'Listing');
  const values = readValues(listings, platformProperties(listings), body, '');
  const key = values.PlatformItemId as string;
  const stored = (await findBy(d, listings, 'PlatformItemId', key))[0];
  let listingId: bigint;
  let productId: bigint | null;
  let changed: boolean;
  if (stored) {
    listingId = entityId(stored.values);
    productId = (stored.values.ProductId ?? null) as bigint | null;
    changed = await updateChanged(d, stored, values);
  } else {
    const ref = await resolveReference(d, body, '');
    productId = (ref.product?.values.Id ?? null) as bigint | null;
    listingId = await insertRow(d, listings, { ...values, ProductId: productId });
    changed = true;
  }
  changed = (await upsertListingItems(d, listingId, productId, body)) || changed;
  return { kind: 'listing', key, id: String(listingId), outcome: !stored ? 'created' : changed ? 'updated' : 'unchanged' };
}
