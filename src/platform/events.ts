/**
 * Payment and shipping events for a delivered order (named by PlatformOrderId). Each is compared
 * with the order's state as the platform last reported it, so delivering an event again changes
 * nothing; a real change appends order history exactly as a seller's update would, and moves the
 * order's EbayModificationDate.
 */
import { markPlatformChange, recordPayment } from '../catalogue/order-history';
import { badRequest } from '../odata/errors';
import type { EdmValue } from '../odata/edm';
import { entityId, type EntityRecord } from '../odata/entity';
import { findBy, typeOf, updateChanged, type Delivery, type DeliveryOutcome } from './delivery';
import { propertiesNamed, readValues, type Json } from './documents';

/** PaymentStatus as payment events leave it: the platform's own record of payment. */
export const PAYMENT_STATUS = { paid: 'Paid', withdrawn: 'Withdrawn' } as const;

async function orderOf(d: Delivery, body: Json): Promise<EntityRecord> {
  const order = (await findBy(d, typeOf(d, 'SalesOrder'), 'PlatformOrderId', body.PlatformOrderId as string))[0];
  if (!order) throw badRequest(`'/PlatformOrderId': no order '${String(body.PlatformOrderId)}' was delivered to this account; deliver the order before its events.`);
  return order;
}

const outcome = (kind: 'payment' | 'shipment', order: EntityRecord, changed: boolean): DeliveryOutcome => ({
  kind,
  key: String(order.values.PlatformOrderId),
  id: String(order.values.Id),
  outcome: changed ? 'updated' : 'unchanged',
});

/**
 * `Paid: true` records payment (`MarkedAsPaid:1` per item) unless the platform reported it
 * already; `Paid: false` withdraws a payment the platform had reported (`MarkedAsPaid:0`).
 */
export async function deliverPayment(d: Delivery, body: Json): Promise<DeliveryOutcome> {
  const order = await orderOf(d, body);
  const orders = order.type;
  const paid = body.Paid === true;
  const wasPaid = order.values.PaymentStatus === PAYMENT_STATUS.paid;
  const values: Record<string, EdmValue> = readValues(orders, propertiesNamed(orders, ['PaymentTransactionId', 'MonetaryPaymentStatus']), body, '');
  if (paid) values.PaymentStatus = PAYMENT_STATUS.paid;
  else if (wasPaid) values.PaymentStatus = PAYMENT_STATUS.withdrawn;
  const changed = await updateChanged(d, order, values);
  const orderId = entityId(order.values);
  if (paid !== wasPaid) await recordPayment(d, orderId, paid, d.now);
  if (changed) await markPlatformChange(d, orderId, d.now);
  return outcome('payment', order, changed);
}

/** The items a shipping event names, or all of the order's items when it names none. */
async function targetItems(d: Delivery, order: EntityRecord, body: Json): Promise<EntityRecord[]> {
  const items = await findBy(d, typeOf(d, 'SalesOrderItem'), 'SalesOrderId', order.values.Id!);
  if (body.SalesOrderItems === undefined) return items;
  return (body.SalesOrderItems as Json[]).map((key, i) => {
    const matches = items.filter((item) => item.values.PlatformItemId === key.PlatformItemId && (key.TransactionId === undefined || item.values.TransactionId === key.TransactionId));
    if (matches.length !== 1) {
      throw badRequest(`'/SalesOrderItems/${i}' names ${matches.length === 0 ? 'no item' : 'more than one item'} of order '${String(order.values.PlatformOrderId)}'${matches.length > 1 ? ': add its TransactionId' : ''}.`);
    }
    return matches[0]!;
  });
}

/**
 * ShippingStatus (and CarrierUsed, TrackingNumbers when given) of the named items, through the
 * same update as a seller's MERGE of the item: the same rules hold and the same history lines
 * (`Versandstatus:<value>`) are written.
 */
export async function deliverShipment(d: Delivery, body: Json): Promise<DeliveryOutcome> {
  const order = await orderOf(d, body);
  const itemType = typeOf(d, 'SalesOrderItem');
  const sent = readValues(itemType, propertiesNamed(itemType, ['ShippingStatus', 'CarrierUsed', 'TrackingNumbers']), body, '');
  let changed = false;
  for (const item of await targetItems(d, order, body)) {
    const differing = new Map(Object.entries(sent).filter(([name, value]) => (item.values[name] ?? null) !== value));
    if (differing.size === 0) continue;
    await d.writes.update(d.tx, d.accountId, itemType, entityId(item.values), { values: differing, bindings: new Map() }, 'merge');
    changed = true;
  }
  if (changed) await markPlatformChange(d, entityId(order.values), d.now);
  return outcome('shipment', order, changed);
}
