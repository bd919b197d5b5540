/**
 * What every document handler works with: one account's write transaction, the catalogue's
 * services, and the time of the delivery; and the row helpers that make a delivery idempotent:
 * a row is written only where a value differs from what is stored, so delivering the same
 * document again writes nothing.
 */
import type { CatalogueWrites } from '../catalogue/writes';
import type { OrderScope } from '../catalogue/order-history';
import type { EntityStore } from '../store/entities';
import { defaultOf } from '../catalogue/values';
import { compileOver, memberSource } from '../model/compiled-access';
import type { EntityTypeDef } from '../model/types';
import type { EdmValue } from '../odata/edm';
import { entityId, type EntityRecord } from '../odata/entity';
import type { DocumentKind } from './documents';

/** What the row helpers below and an order document work with. */
export interface RowDelivery extends OrderScope {
  /** The time of the delivery (the service clock): every date it sets. */
  readonly now: number;
  /** Where new rows take their ids when many documents share the transaction (else one each). */
  readonly ids?: IdBlock;
}

/** What every other document works with: the store's rows and the catalogue's writes. */
export interface Delivery extends RowDelivery {
  readonly entities: EntityStore;
  readonly writes: CatalogueWrites;
}

/** Ids drawn at most at once. */
const MAX_BLOCK = 4096;

/**
 * Ids for the rows of many documents in one transaction, drawn from the id sequence in blocks:
 * one statement for many rows instead of one each. The first block is as large as the caller
 * expects to need, each further one twice the one before. Ids a block leaves unused are gaps in
 * the sequence, as a rolled-back insert leaves.
 */
export class IdBlock {
  private ids: bigint[] = [];
  private taken = 0;
  private size: number;

  constructor(
    private readonly store: RowDelivery['entities']['store'],
    private readonly tx: RowDelivery['tx'],
    expected: number,
  ) {
    this.size = Math.max(8, Math.min(MAX_BLOCK, Math.ceil(expected)));
  }

  async next(): Promise<bigint> {
    if (this.taken === this.ids.length) {
      this.ids = await this.store.nextIds(this.tx, this.size);
      this.taken = 0;
      this.size = Math.min(this.size * 2, MAX_BLOCK);
    }
    return this.ids[this.taken++]!;
  }
}

export type Outcome = 'created' | 'updated' | 'unchanged';

/** The answer to one delivered document. */
export interface DeliveryOutcome {
  readonly kind: DocumentKind;
  /** The platform id the document is about (PlatformOrderId or the listing's PlatformItemId). */
  readonly key: string;
  /** The Id of the SalesOrder or Listing in the service, as a string (Int64). */
  readonly id: string;
  readonly outcome: Outcome;
}

export function typeOf(d: RowDelivery, name: string): EntityTypeDef {
  return d.model.typeByName.get(name)!;
}

/** Rows of a type whose property equals a value, by id. */
export function findBy(d: RowDelivery, type: EntityTypeDef, property: string, value: EdmValue): Promise<EntityRecord[]> {
  return d.entities.findWhere(d.tx, d.accountId, type, property, value);
}

/** An id for a new row: from the delivery's block when it has one, else from the sequence. */
export function newId(d: RowDelivery): Promise<bigint> {
  return d.ids ? d.ids.next() : d.entities.store.nextId(d.tx);
}

/** A new row as insertRow() stores it: the given values, the model's defaults for the rest, dates at the delivery's time. */
export function newRow(d: RowDelivery, type: EntityTypeDef, id: bigint, values: Readonly<Record<string, EdmValue>>): Record<string, EdmValue> {
  let make = rowMakers.get(type);
  if (!make) rowMakers.set(type, (make = rowMaker(type)));
  return make(id, values, d.now);
}

type RowMaker = (id: bigint, values: Readonly<Record<string, EdmValue>>, now: number) => Record<string, EdmValue>;

const rowMakers = new WeakMap<EntityTypeDef, RowMaker>();

/**
 * newRow() of one type, compiled into one object literal in model order (../model/compiled-access.ts):
 * built in a loop with computed names, an order import's rows were slow to make, and slow again
 * at every later copy and read of them.
 */
function rowMaker(type: EntityTypeDef): RowMaker {
  const members = type.properties.map((p, i) => {
    const name = memberSource(type, p);
    if (p.access === 'key') return `${name}: id`;
    const otherwise = p.timestamp ? 'now' : `defaults[${i}]`;
    return `${name}: hasOwn(values, '${name}') ? values.${name} : ${otherwise}`;
  });
  return compileOver<RowMaker>(
    { defaults: type.properties.map((p) => defaultOf(p)), hasOwn: (o: object, name: string) => Object.prototype.hasOwnProperty.call(o, name) },
    `(id, values, now) => ({ ${members.join(', ')} })`,
  );
}

/** Inserts a row (newRow) under a new id, or under `id` when the caller drew it already; its id. */
export async function insertRow(d: RowDelivery, type: EntityTypeDef, values: Readonly<Record<string, EdmValue>>, id?: bigint): Promise<bigint> {
  const rowId = id ?? (await newId(d));
  await d.entities.insert(d.tx, d.accountId, type, newRow(d, type, rowId, values));
  return rowId;
}

/**
 * Writes the values that differ from the stored row (and its ModificationDate, where the type has
 * one); whether anything differed. Values are in their canonical internal forms, so equal means equal.
 */
export async function updateChanged(d: RowDelivery, stored: EntityRecord, values: Readonly<Record<string, EdmValue>>): Promise<boolean> {
  const changed: Record<string, EdmValue> = {};
  for (const [name, value] of Object.entries(values)) if ((stored.values[name] ?? null) !== value) changed[name] = value;
  if (Object.keys(changed).length === 0) return false;
  const modified = stored.type.properties.find((p) => p.timestamp === 'modified');
  if (modified) changed[modified.name] = d.now;
  await d.entities.update(d.tx, d.accountId, stored.type, entityId(stored.values), changed);
  return true;
}
