/**
 * The event types a subscription chooses from, and which events one change-log row
 * (entity_changes, written in the change's own transaction) stands for. The change log names the
 * entity set, the kind of change and the watched properties that changed; everything else a
 * receiver wants it reads from the entity's URI.
 */
import type { ChangeRow } from '../store/change-log';

export const EVENT_TYPES = [
  'order.created',
  'order.paid',
  'order.shipping_status_changed',
  'order.deleted',
  'listing.changed',
  'listing_item.changed',
  'product.changed',
  'product.deleted',
  'stock.changed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (name: string): name is EventType => (EVENT_TYPES as readonly string[]).includes(name);

const PAYMENT = new Set(['MarkedAsPayed', 'PaymentStatus', 'MonetaryPaymentStatus', 'PaidAmount', 'PaidDate']);
const ORDER_SHIPPING = new Set(['ShippingStatus', 'MarkedAsShipped']);

const any = (properties: readonly string[], of: ReadonlySet<string>) => properties.some((p) => of.has(p));

/** The events one change stands for (none for a change no event type covers). */
export function eventsOf(change: ChangeRow): EventType[] {
  const { entitySet, kind, changedProperties: properties } = change;
  switch (entitySet) {
    case 'SalesOrders':
      if (kind === 'created') return ['order.created'];
      if (kind === 'deleted') return ['order.deleted'];
      return [...(any(properties, PAYMENT) ? (['order.paid'] as const) : []), ...(any(properties, ORDER_SHIPPING) ? (['order.shipping_status_changed'] as const) : [])];
    case 'SalesOrderItems':
      return kind === 'changed' && properties.includes('ShippingStatus') ? ['order.shipping_status_changed'] : [];
    case 'Products':
      if (kind === 'deleted') return ['product.deleted'];
      return kind === 'changed' && properties.includes('StockAmount') ? ['product.changed', 'stock.changed'] : ['product.changed'];
    case 'ProductVariations':
      return kind === 'changed' && properties.includes('StockAmount') ? ['stock.changed'] : [];
    case 'Listings':
      return ['listing.changed'];
    case 'ListingItems':
      return ['listing_item.changed'];
    default:
      return [];
  }
}

/** A subscription's event types from their stored (comma-separated) form. */
export const parseEventTypes = (stored: string): EventType[] => stored.split(',').filter(isEventType);
