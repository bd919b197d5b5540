/**
 * Order history: every change of an order's payment or shipping
 * state appends lines that GetSalesOrderHistory returns, and keeps the order's own flags and dates
 * in step. Seller updates (through the follow-ups of ./rules.ts) and platform events
 * (src/platform/) call the same functions, inside the transaction of the change itself.
 *
 * Lines are stored one per item and action (store/order-history-lines.ts) and rendered as
 * `dd.MM.yyyy HH:mm:ss - ItemId <PlatformItemId> - Aktion <Action>:<value>`, oldest first,
 * separated by CR LF, in the service's UTC clock.
 */
import type { Model } from '../model/types';
import type { EdmValue } from '../odata/edm';
import { entityId, type EntityRecord } from '../odata/entity';
import type { EntityStore } from '../store/entities';
import { appendHistoryLine, historyLinesOf } from '../store/order-history-lines';
import type { SqlExecutor } from '../store/store';

export type HistoryAction = 'MarkedAsPaid' | 'Versandstatus';

/**
 * The row operations an order change uses: the EntityStore's, or a view that holds many
 * documents' rows for one multi-row write (src/platform/buffered-rows.ts).
 */
export type RowAccess = Pick<EntityStore, 'store' | 'find' | 'findWhere' | 'insert' | 'update'>;

/** Where an order change happens: one account, inside one write transaction. */
export interface OrderScope {
  readonly tx: SqlExecutor;
  readonly accountId: number;
  readonly entities: RowAccess;
  readonly model: Model;
}

const LINE_SEPARATOR = '\r\n';

/** The item ShippingStatus values an order-level status can be copied to (items hold 0 or 1). */
const ITEM_SHIPPING_STATUSES = new Set([0, 1]);

const orderType = (scope: OrderScope) => scope.model.typeByName.get('SalesOrder')!;
const itemType = (scope: OrderScope) => scope.model.typeByName.get('SalesOrderItem')!;

function itemsOf(scope: OrderScope, orderId: bigint): Promise<EntityRecord[]> {
  return scope.entities.findWhere(scope.tx, scope.accountId, itemType(scope), 'SalesOrderId', orderId);
}

async function appendLine(scope: OrderScope, orderId: bigint, platformItemId: string, action: HistoryAction, value: number, at: number): Promise<void> {
  await appendHistoryLine(scope.entities.store, scope.tx, scope.accountId, orderId, { platformItemId, action, value, recordedAt: at });
}

/**
 * ModificationDate changes on every change to an order or its items; MarkedAsShipped is true
 * once the order has items and every one of them has ShippingStatus 1.
 */
async function refreshOrder(scope: OrderScope, orderId: bigint, at: number): Promise<void> {
  const items = await itemsOf(scope, orderId);
  const shipped = items.length > 0 && items.every((i) => i.values.ShippingStatus === 1);
  await scope.entities.update(scope.tx, scope.accountId, orderType(scope), orderId, { ModificationDate: at, MarkedAsShipped: shipped });
}

/** The platform delivered a change to the order: clients poll EbayModificationDate for these. */
export async function markPlatformChange(scope: OrderScope, orderId: bigint, at: number): Promise<void> {
  await scope.entities.update(scope.tx, scope.accountId, orderType(scope), orderId, { ModificationDate: at, EbayModificationDate: at });
}

/** Payment recorded (`MarkedAsPaid:1` per item) or withdrawn (`MarkedAsPaid:0`); MarkedAsPayed follows. */
export async function recordPayment(scope: OrderScope, orderId: bigint, paid: boolean, at: number): Promise<void> {
  for (const item of await itemsOf(scope, orderId)) {
    await appendLine(scope, orderId, String(item.values.PlatformItemId), 'MarkedAsPaid', paid ? 1 : 0, at);
  }
  await scope.entities.update(scope.tx, scope.accountId, orderType(scope), orderId, { MarkedAsPayed: paid, ModificationDate: at });
}

/** An item's ShippingStatus has changed (and is stored): `Versandstatus:<new>` for that item. */
export async function recordItemShipping(scope: OrderScope, item: Readonly<Record<string, EdmValue>>, at: number): Promise<void> {
  const orderId = item.SalesOrderId as bigint;
  const status = item.ShippingStatus as number;
  await appendLine(scope, orderId, String(item.PlatformItemId), 'Versandstatus', status, at);
  await refreshOrder(scope, orderId, at);
}

/**
 * The order-level ShippingStatus has changed: it is recorded for each item, and items take the
 * new status where they can hold it (0 or 1), so that MarkedAsShipped agrees with the history.
 */
export async function recordOrderShipping(scope: OrderScope, orderId: bigint, status: number, at: number): Promise<void> {
  for (const item of await itemsOf(scope, orderId)) {
    await appendLine(scope, orderId, String(item.values.PlatformItemId), 'Versandstatus', status, at);
    if (ITEM_SHIPPING_STATUSES.has(status) && item.values.ShippingStatus !== status) {
      await scope.entities.update(scope.tx, scope.accountId, itemType(scope), entityId(item.values), { ShippingStatus: status, ModificationDate: at });
    }
  }
  await refreshOrder(scope, orderId, at);
}

const hasPayment = (order: Readonly<Record<string, EdmValue>>) => (order.PaidAmount ?? null) !== null || (order.PaidDate ?? null) !== null;

/**
 * The history side effects of a seller's PUT/MERGE/PATCH of a SalesOrder, after the row is
 * stored: PaidAmount or PaidDate set to a new value records payment; both cleared withdraws it;
 * a new ShippingStatus is recorded for every item.
 */
export async function recordSellerOrderUpdate(scope: OrderScope, before: Readonly<Record<string, EdmValue>>, after: Readonly<Record<string, EdmValue>>, at: number): Promise<void> {
  const orderId = entityId(after);
  const paymentSet = ['PaidAmount', 'PaidDate'].some((name) => (after[name] ?? null) !== null && after[name] !== before[name]);
  if (paymentSet) await recordPayment(scope, orderId, true, at);
  else if (hasPayment(before) && !hasPayment(after)) await recordPayment(scope, orderId, false, at);
  if (after.ShippingStatus !== before.ShippingStatus) await recordOrderShipping(scope, orderId, after.ShippingStatus as number, at);
}

/** The side effects of a seller's update of a SalesOrderItem, after the row is stored. */
export async function recordSellerItemUpdate(scope: OrderScope, before: Readonly<Record<string, EdmValue>>, after: Readonly<Record<string, EdmValue>>, at: number): Promise<void> {
  if (after.ShippingStatus !== before.ShippingStatus) await recordItemShipping(scope, after, at);
  // Any other change of an item (CarrierUsed, TrackingNumbers) is still a change of its order.
  else await refreshOrder(scope, after.SalesOrderId as bigint, at);
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `dd.MM.yyyy HH:mm:ss` in UTC. */
export function formatHistoryTime(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCDate())}.${pad(d.getUTCMonth() + 1)}.${pad(d.getUTCFullYear(), 4)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** The history of one order as GetSalesOrderHistory answers it: '' when there is none. */
export async function orderHistoryText(exec: SqlExecutor, entities: EntityStore, accountId: number, orderId: bigint): Promise<string> {
  const lines = await historyLinesOf(entities.store, exec, accountId, orderId);
  return lines.map((l) => `${formatHistoryTime(l.recordedAt)} - ItemId ${l.platformItemId} - Aktion ${l.action}:${String(l.value)}`).join(LINE_SEPARATOR);
}
