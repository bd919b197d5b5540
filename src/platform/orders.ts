/**
 * An order document: the order with its buyer, billing and shipping addresses and items, upserted
 * by PlatformOrderId. Items are known by (PlatformItemId, TransactionId); a later delivery
 * updates what differs, adds new items and removes none. An item's pointers to the catalogue and
 * the catalogue ids copied with them are set when the item is first delivered (at sale time) and
 * kept afterwards, so redelivering an order whose product was since deleted still changes nothing.
 */
import { markPlatformChange } from '../catalogue/order-history';
import { badRequest } from '../odata/errors';
import { decimalToScaled, scaledToDecimal, type EdmValue } from '../odata/edm';
import { entityId, type EntityRecord } from '../odata/entity';
import { findBy, insertRow, typeOf, updateChanged, type Delivery, type DeliveryOutcome } from './delivery';
import { platformProperties, readValues, type Json } from './documents';
import { resolveReference, type CatalogueReference } from './references';

/** The address roles of an order: document member and the order's foreign key. */
const ADDRESS_ROLES = [
  ['Address', 'AddressId'],
  ['ShippingAddress', 'ShippingAddressId'],
] as const;

/** What an item copies from the catalogue at sale time. */
function copiedFromCatalogue(ref: CatalogueReference): Record<string, EdmValue> {
  return {
    ProductId: ref.product?.values.Id ?? null,
    ProductVariationId: ref.variation?.values.Id ?? null,
    ForeignId: ref.product?.values.ForeignId ?? null,
    ProductVariationSku: ref.variation?.values.Sku ?? null,
    ProductVariationForeignId: ref.variation?.values.ForeignId ?? null,
  };
}

/** The buyer of a new order is the account's buyer of that name, if there is one. */
async function upsertBuyer(d: Delivery, order: EntityRecord | undefined, body: Json): Promise<{ id: bigint; changed: boolean }> {
  const buyers = typeOf(d, 'Buyer');
  const values = readValues(buyers, platformProperties(buyers), body.Buyer as Json, '/Buyer');
  const stored = order
    ? await d.entities.find(d.tx, d.accountId, buyers, order.values.BuyerId as bigint)
    : (await findBy(d, buyers, 'BuyerName', values.BuyerName!))[0];
  if (stored) return { id: entityId(stored.values), changed: await updateChanged(d, stored, values) };
  return { id: await insertRow(d, buyers, values), changed: true };
}

/**
 * Each address the document carries updates the order's address of that role, or becomes it;
 * the foreign keys of addresses that are new.
 */
async function upsertAddresses(d: Delivery, order: EntityRecord | undefined, buyerId: bigint, body: Json): Promise<{ keys: Record<string, EdmValue>; changed: boolean }> {
  const addresses = typeOf(d, 'Address');
  const keys: Record<string, EdmValue> = {};
  let changed = false;
  for (const [member, foreignKey] of ADDRESS_ROLES) {
    if (body[member] === undefined) continue;
    const values = { ...readValues(addresses, platformProperties(addresses), body[member] as Json, `/${member}`), BuyerId: buyerId };
    const storedId = (order?.values[foreignKey] ?? null) as bigint | null;
    const stored = storedId === null ? undefined : await d.entities.find(d.tx, d.accountId, addresses, storedId);
    if (stored) {
      changed = (await updateChanged(d, stored, values)) || changed;
    } else {
      keys[foreignKey] = await insertRow(d, addresses, values);
      changed = true;
    }
  }
  return { keys, changed };
}

const itemKey = (platformItemId: EdmValue, transactionId: EdmValue) => JSON.stringify([platformItemId, transactionId ?? null]);

async function upsertItems(d: Delivery, orderId: bigint, body: Json): Promise<boolean> {
  const items = typeOf(d, 'SalesOrderItem');
  const seen = new Set<string>();
  let changed = false;
  for (const [i, itemJson] of (body.SalesOrderItems as Json[]).entries()) {
    const path = `/SalesOrderItems/${i}`;
    const values = readValues(items, platformProperties(items), itemJson, path);
    const transactionId = values.TransactionId ?? null;
    const key = itemKey(values.PlatformItemId!, transactionId);
    if (seen.has(key)) throw badRequest(`'${path}' repeats the PlatformItemId and TransactionId of an earlier item of the order.`);
    seen.add(key);
    const sameIds = (await findBy(d, items, 'PlatformItemId', values.PlatformItemId!)).filter((r) => (r.values.TransactionId ?? null) === transactionId);
    const other = sameIds.find((r) => r.values.SalesOrderId !== orderId);
    if (other) throw badRequest(`'${path}': the item ${key} was delivered with another order already.`);
    const stored = sameIds[0];
    if (stored) {
      changed = (await updateChanged(d, stored, values)) || changed;
    } else {
      const ref = await resolveReference(d, itemJson, path);
      await insertRow(d, items, { ...values, ...copiedFromCatalogue(ref), SalesOrderId: orderId });
      changed = true;
    }
  }
  return changed;
}

/** ItemCount (items), TotalAmount (units) and TotalPrice (the items' price times amount, without shipping). */
async function totalsOf(d: Delivery, orderId: bigint): Promise<Record<string, EdmValue>> {
  const items = await findBy(d, typeOf(d, 'SalesOrderItem'), 'SalesOrderId', orderId);
  let units = 0;
  let price = 0n;
  for (const item of items) {
    const amount = item.values.Amount as number;
    units += amount;
    price += decimalToScaled(item.values.Price as string) * BigInt(amount);
  }
  return { ItemCount: items.length, TotalAmount: units, TotalPrice: scaledToDecimal(price) };
}

export async function deliverOrder(d: Delivery, body: Json): Promise<DeliveryOutcome> {
  const orders = typeOf(d, 'SalesOrder');
  const values = readValues(orders, platformProperties(orders), body, '');
  const key = values.PlatformOrderId as string;
  const stored = (await findBy(d, orders, 'PlatformOrderId', key))[0];
  const buyer = await upsertBuyer(d, stored, body);
  const addresses = await upsertAddresses(d, stored, buyer.id, body);
  const orderValues = { ...values, ...addresses.keys, BuyerId: buyer.id };
  let orderId: bigint;
  let changed = buyer.changed || addresses.changed;
  if (stored) {
    orderId = entityId(stored.values);
    changed = (await updateChanged(d, stored, orderValues)) || changed;
  } else {
    // A new order is a change the platform delivered: clients poll EbayModificationDate for it.
    orderId = await insertRow(d, orders, { ...orderValues, EbayModificationDate: d.now });
  }
  changed = (await upsertItems(d, orderId, body)) || changed;
  const current = (await d.entities.find(d.tx, d.accountId, orders, orderId))!;
  changed = (await updateChanged(d, current, await totalsOf(d, orderId))) || changed;
  if (stored && changed) await markPlatformChange(d, orderId, d.now);
  return { kind: 'order', key, id: String(orderId), outcome: !stored ? 'created' : changed ? 'updated' : 'unchanged' };
}
