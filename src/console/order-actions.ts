/**
 * What a seller does to orders in the console, each as the MERGE a connector sends for it, run
 * by the API's write path (service/write.ts updateRecord) in one write transaction per order:
 * - mark paid: `{"PaidAmount": <TotalPrice>, "PaidDate": <now>}`; mark unpaid: both null
 *   (the history gets `MarkedAsPaid:1` or `:0` per item, MarkedAsPayed follows);
 * - shipping status: `{"ShippingStatus": n}` on the order (`Versandstatus:n` per item);
 * - tracking data: `{"CarrierUsed": …, "TrackingNumbers": …}` on one item;
 * - "mark shipped" for several orders: the shipping MERGE for each, each in its own transaction
 *   (atomic per order: one refused order changes nothing of itself and nothing of the others).
 * A single order's form carries the ETag of the page the seller saw (If-Match); the bulk action
 * skips orders already shipped and otherwise writes the status whatever else changed, as a
 * connector's MERGE without If-Match would.
 */
import { audit } from '../auth/audit';
import { EntityMissing, RuleViolation } from '../model/rule-violation';
import type { EdmValue } from '../odata/edm';
import { etagOf } from '../odata/entity';
import { ODataError } from '../odata/errors';
import { readRawValue } from '../odata/raw-value';
import type { RequestContext } from '../server/context';
import { preconditionOf, updateRecord } from '../service/write';
import type { ConsoleDeps } from './deps';

export type MergeOutcome =
  | { readonly kind: 'saved' }
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'missing' }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'refused'; readonly message: string };

export interface MergeRequest {
  readonly typeName: 'SalesOrder' | 'SalesOrderItem';
  readonly id: bigint;
  /** The values to send; a function of the stored row when they depend on it (TotalPrice). */
  readonly values: (stored: Readonly<Record<string, EdmValue>>) => Map<string, EdmValue>;
  /** The ETag the seller's page carried; undefined: no precondition (the bulk action). */
  readonly etag: string | undefined;
  /** Must this item belong to this order (the tracking form names both)? */
  readonly ofOrder?: bigint;
  /** Skip (unchanged) when the stored row already says so: the bulk action's "already shipped". */
  readonly done?: (stored: Readonly<Record<string, EdmValue>>) => boolean;
}

class Stale extends Error {}

/** One MERGE of one order or item in its own write transaction, audited once committed. */
export async function mergeOne(deps: ConsoleDeps, ctx: RequestContext, accountId: number, request: MergeRequest): Promise<MergeOutcome> {
  const type = deps.model.typeByName.get(request.typeName)!;
  try {
    const sent = await deps.store.write(
      accountId,
      async (tx) => {
        const record = await deps.entities.find(tx, accountId, type, request.id);
        if (!record || (request.ofOrder !== undefined && record.values.SalesOrderId !== request.ofOrder)) throw new EntityMissing(type, request.id);
        if (request.etag !== undefined && etagOf(record.version ?? 0n) !== request.etag) throw new Stale();
        if (request.done?.(record.values)) return [];
        const values = request.values(record.values);
        const changes = new Map([...values].filter(([name, value]) => (record.values[name] ?? null) !== value));
        if (changes.size === 0) return [];
        try {
          await updateRecord(deps.writes, tx, accountId, record, { values: changes, bindings: new Map() }, 'merge', request.etag === undefined ? undefined : preconditionOf(request.etag));
        } catch (error) {
          if (error instanceof ODataError && error.status === 412) throw new Stale();
          throw error;
        }
        return [...changes.keys()];
      },
      { repeatable: true },
    );
    if (sent.length === 0) return { kind: 'unchanged' };
    audit(deps.log, 'console write', { accountId, clientAddress: ctx.clientAddress, reqId: ctx.id, entity: `${type.setName}(${request.id}L)`, properties: sent });
    return { kind: 'saved' };
  } catch (error) {
    if (error instanceof Stale) return { kind: 'conflict' };
    if (error instanceof EntityMissing) return { kind: 'missing' };
    if (error instanceof RuleViolation) return { kind: 'refused', message: error.message };
    if (error instanceof ODataError && error.status < 500) return { kind: 'refused', message: error.message };
    throw error;
  }
}

/** The order's payment as the API records it: paid in full now, or no payment. */
export function paymentValues(paid: boolean, now: number): (stored: Readonly<Record<string, EdmValue>>) => Map<string, EdmValue> {
  return (stored) =>
    paid
      ? new Map<string, EdmValue>([['PaidAmount', stored.PaidAmount ?? stored.TotalPrice ?? '0'], ['PaidDate', stored.PaidDate ?? now]])
      : new Map<string, EdmValue>([['PaidAmount', null], ['PaidDate', null]]);
}

/** Order-level shipping statuses the console offers (the model allows 0 to 2; 2 is kept as the API set it). */
export const SHIPPING_STATUSES: readonly (readonly [number, string])[] = [
  [0, 'Not shipped'],
  [1, 'Shipped'],
  [2, 'Status 2'],
];

/** A form's text as an item's tracking value, read as the API reads the property's raw value ('' is null). */
export function trackingValue(deps: ConsoleDeps, name: 'CarrierUsed' | 'TrackingNumbers', text: string): EdmValue {
  const property = deps.model.typeByName.get('SalesOrderItem')!.properties.find((p) => p.name === name)!;
  const trimmed = text.trim();
  return trimmed === '' ? null : readRawValue(property, Buffer.from(trimmed, 'utf8'), 'utf-8');
}
