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
import { findBy, insertRow, newId, newRow, typeOf, updateChanged, type DeliveryOutcome, type RowDelivery } from './delivery';
import { platformProperties, propertiesNamed, readValues, type Json } from './documents';
import { resolveReference, type CatalogueReference } from './references';
import type { BufferedRows } from './buffered-rows';
import type { EntityTypeDef, Model } from '../model/types';
import type { SqlExecutor } from '../store/store';

/** The address roles of an order: document member and the order's foreign key. */
const ADDRESS_ROLES = [
  ['Address', 'AddressId'],
  ['ShippingAddress', 'ShippingAddressId'],
] as const;

/** Sets on a new item's row what it copies from the catalogue at sale time. */
function copyFromCatalogue(row: Record<string, EdmValue>, ref: CatalogueReference): void {
  row.ProductId = ref.product?.values.Id ?? null;
  row.ProductVariationId = ref.variation?.values.Id ?? null;
  row.ForeignId = ref.product?.values.ForeignId ?? null;
  row.ProductVariationSku = ref.variation?.values.Sku ?? null;
  row.ProductVariationForeignId = ref.variation?.values.ForeignId ?? null;
}

/** The buyer of a new order is the account's buyer of that name, if there is one. */
async function upsertBuyer(d: RowDelivery, order: EntityRecord | undefined, body: Json): Promise<{ id: bigint; changed: boolean }> {
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
async function upsertAddresses(d: RowDelivery, order: EntityRecord | undefined, buyerId: bigint, body: Json): Promise<{ keys: Record<string, EdmValue>; changed: boolean }> {
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

/** An item of the document, read and checked: a row to insert, or a stored row and its new values. */
type PlannedItem = { readonly stored: undefined; readonly row: Record<string, EdmValue> } | { readonly stored: EntityRecord; readonly values: Record<string, EdmValue> };

/**
 * The document's items for the order `orderId`, each read and checked against what is stored:
 * an item delivered with another order already is a 400. Nothing is written yet, so that a new
 * order can be stored with its totals before its items.
 */
async function planItems(d: RowDelivery, orderId: bigint, body: Json): Promise<PlannedItem[]> {
  const items = typeOf(d, 'SalesOrderItem');
  const seen = new Set<string>();
  const planned: PlannedItem[] = [];
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
      planned.push({ stored, values });
    } else {
      const ref = await resolveReference(d, itemJson, path);
      // The row's own properties set on the new row: spreading three sources into one object
      // first cost an import more than making the row.
      const row = newRow(d, items, await newId(d), values);
      copyFromCatalogue(row, ref);
      row.SalesOrderId = orderId;
      planned.push({ stored: undefined, row });
    }
  }
  return planned;
}

/** Writes the planned items; whether anything changed. */
async function storeItems(d: RowDelivery, planned: readonly PlannedItem[]): Promise<boolean> {
  const items = typeOf(d, 'SalesOrderItem');
  let changed = false;
  for (const item of planned) {
    if (item.stored) {
      changed = (await updateChanged(d, item.stored, item.values)) || changed;
    } else {
      await d.entities.insert(d.tx, d.accountId, items, item.row);
      changed = true;
    }
  }
  return changed;
}

/** ItemCount (items), TotalAmount (units) and TotalPrice (the items' price times amount, without shipping). */
function totalsOf(items: readonly Readonly<Record<string, EdmValue>>[]): Record<string, EdmValue> {
  let units = 0;
  let price = 0n;
  for (const item of items) {
    const amount = item.Amount as number;
    units += amount;
    price += decimalToScaled(item.Price as string) * BigInt(amount);
  }
  return { ItemCount: items.length, TotalAmount: units, TotalPrice: scaledToDecimal(price) };
}

export async function deliverOrder(d: RowDelivery, body: Json): Promise<DeliveryOutcome> {
  const orders = typeOf(d, 'SalesOrder');
  const values = readValues(orders, platformProperties(orders), body, '');
  const key = values.PlatformOrderId as string;
  const stored = (await findBy(d, orders, 'PlatformOrderId', key))[0];
  const buyer = await upsertBuyer(d, stored, body);
  const addresses = await upsertAddresses(d, stored, buyer.id, body);
  const orderValues = { ...values, ...addresses.keys, BuyerId: buyer.id };
  if (!stored) {
    // A new order is stored once, with its totals, and then its items (all new: an item of
    // another order is refused). It is a change the platform delivered: clients poll
    // EbayModificationDate for it.
    const orderId = await newId(d);
    const planned = await planItems(d, orderId, body);
    const rows = planned.map((item) => (item.stored ? item.values : item.row));
    await insertRow(d, orders, { ...orderValues, ...totalsOf(rows), EbayModificationDate: d.now }, orderId);
    await storeItems(d, planned);
    return { kind: 'order', key, id: String(orderId), outcome: 'created' };
  }
  const orderId = entityId(stored.values);
  let changed = buyer.changed || addresses.changed;
  changed = (await updateChanged(d, stored, orderValues)) || changed;
  changed = (await storeItems(d, await planItems(d, orderId, body))) || changed;
  const current = (await d.entities.find(d.tx, d.accountId, orders, orderId))!;
  const items = await findBy(d, typeOf(d, 'SalesOrderItem'), 'SalesOrderId', orderId);
  changed = (await updateChanged(d, current, totalsOf(items.map((item) => item.values)))) || changed;
  if (changed) await markPlatformChange(d, orderId, d.now);
  return { kind: 'order', key, id: String(orderId), outcome: changed ? 'updated' : 'unchanged' };
}

/**
 * What the order documents of one transaction will look up, loaded at once (BufferedRows): their
 * orders by PlatformOrderId, buyers by BuyerName, items by PlatformItemId, and the products and
 * variations their items name. A value a document holds in a form that does not read is left
 * out; the document fails on it when applied.
 */
export async function preloadOrders(rows: BufferedRows, tx: SqlExecutor, accountId: number, model: Model, bodies: readonly Json[]): Promise<void> {
  const wanted = new Map<string, { type: EntityTypeDef; name: string; values: EdmValue[] }>();
  const want = (typeName: string, name: string, json: unknown) => {
    if (json === null || typeof json !== 'object' || !Object.prototype.hasOwnProperty.call(json, name)) return;
    const type = model.typeByName.get(typeName)!;
    let value: EdmValue | undefined;
    try {
      value = readValues(type, propertiesNamed(type, [name]), json as Json, '')[name];
    } catch {
      return;
    }
    const key = `${typeName}.${name}`;
    let entry = wanted.get(key);
    if (!entry) wanted.set(key, (entry = { type, name, values: [] }));
    if (value !== undefined && value !== null) entry.values.push(value);
  };
  for (const body of bodies) {
    want('SalesOrder', 'PlatformOrderId', body);
    want('Buyer', 'BuyerName', body.Buyer);
    for (const item of Array.isArray(body.SalesOrderItems) ? (body.SalesOrderItems as Json[]) : []) {
      want('SalesOrderItem', 'PlatformItemId', item);
      want('Product', 'Id', item?.Product);
      want('Product', 'ForeignId', item?.Product);
      want('ProductVariation', 'Id', item?.ProductVariation);
    }
  }
  for (const { type, name, values } of wanted.values()) await rows.preload(tx, accountId, type, name, values);
}
