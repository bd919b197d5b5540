/**
 * The console's edits of catalogue data: a product's and a variation's title, price, stock,
 * EAN, Sku / ForeignId and strike-through price; a catalog's name and parent. An edit is the
 * MERGE a connector would send, run by the API's own write path (service/write.ts
 * updateRecord: the If-Match check, then the catalogue's update with every rule of the set) in
 * one write transaction of the seller's account:
 * - each form field is read as the API reads a property's raw value (`PUT …/Title/$value`):
 *   same conversions, same messages;
 * - only the properties whose value differs from the stored one are sent;
 * - the form carries the ETag of the page the seller saw as the MERGE's If-Match: when the
 *   entity changed since (a connector synced in between), nothing is written and the seller
 *   sees the current values (the same holds for the strike-through offer's own ETag);
 * - the strike-through price is ReviseInventoryStatus's DiscountOffer; a catalog's parent is
 *   its ParentCatalogs link, written as the API's $links writes (cycles refused alike);
 * - a rule the write breaks is answered at the field it concerns, with the service's message.
 */
import { audit } from '../auth/audit';
import type { EntityTypeDef, PropertyDef } from '../model/types';
import { EntityMissing, RuleViolation, UniqueKeyViolation } from '../model/rule-violation';
import type { EdmValue } from '../odata/edm';
import { entityId, etagOf, type EntityRecord } from '../odata/entity';
import { ODataError } from '../odata/errors';
import { readRawValue } from '../odata/raw-value';
import type { RequestContext } from '../server/context';
import { preconditionOf, updateRecord } from '../service/write';
import type { SqlExecutor } from '../store/store';
import type { ConsoleDeps } from './deps';

export type EditKind = 'product' | 'variation' | 'catalog';

export interface EditField {
  /** The form field's name: a property of the type, or one of the pseudo-fields below. */
  readonly name: string;
  readonly label: string;
  readonly inputMode?: 'numeric' | 'decimal';
}

/** The strike-through price (a DiscountOffer of Type 1) of a product or variation. */
export const STRIKE_THROUGH = 'StrikeThroughPrice';
/** A catalog's parent catalog (its ParentCatalogs link); '' for none (a top-level catalog). */
export const PARENT = 'ParentCatalog';

export interface EditDef {
  readonly type: string;
  /** How a missing one is named ("Product 12 does not exist in your account"). */
  readonly what: string;
  readonly fields: readonly EditField[];
}

const PRICE: EditField = { name: 'Price', label: 'Price', inputMode: 'decimal' };
const STOCK: EditField = { name: 'StockAmount', label: 'Stock', inputMode: 'numeric' };
const STRIKE: EditField = { name: STRIKE_THROUGH, label: 'Strike-through price (empty: none)', inputMode: 'decimal' };
const EAN: EditField = { name: 'Ean', label: 'EAN' };

export const EDITS: Readonly<Record<EditKind, EditDef>> = {
  product: { type: 'Product', what: 'Product', fields: [{ name: 'Title', label: 'Title' }, PRICE, STOCK, STRIKE, { name: 'ForeignId', label: 'Sku / ForeignId' }, EAN] },
  variation: { type: 'ProductVariation', what: 'Variation', fields: [{ name: 'Sku', label: 'Sku' }, PRICE, STOCK, STRIKE, EAN] },
  catalog: { type: 'Catalog', what: 'Catalog', fields: [{ name: 'Name', label: 'Name' }, { name: PARENT, label: 'Parent catalog' }] },
};

/** A form value is at most this long: longer than any property the console edits may hold, so the rule's own message answers. */
const MAX_FIELD_CHARS = 4000;

/** A problem of one field (or of the form, field undefined), with the message the seller sees. */
export class FieldProblem extends Error {
  constructor(
    readonly field: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export type EditOutcome =
  | { readonly kind: 'saved'; readonly changed: readonly string[] }
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'missing' }
  /** The entity changed since the page was read: nothing written. */
  | { readonly kind: 'conflict' }
  | { readonly kind: 'invalid'; readonly problems: ReadonlyMap<string, string>; readonly general: string | undefined };

/** The text the seller typed, per field (what a page shows again after a refusal). */
export function entriesOf(def: EditDef, form: URLSearchParams): Map<string, string> {
  const entries = new Map<string, string>();
  for (const field of def.fields) {
    const value = form.get(field.name);
    if (value !== null) entries.set(field.name, value.slice(0, MAX_FIELD_CHARS));
  }
  return entries;
}

/** A field's text as the property's value: empty is null where the property may be null. */
function valueOf(property: PropertyDef, text: string): EdmValue {
  const trimmed = property.type === 'Edm.String' ? text : text.trim();
  if (trimmed === '' && property.nullable) return null;
  try {
    return readRawValue(property, Buffer.from(trimmed, 'utf8'), 'utf-8');
  } catch (error) {
    if (error instanceof ODataError) throw new FieldProblem(property.name, error.message);
    throw error;
  }
}

function sameValue(property: PropertyDef, a: EdmValue | undefined, b: EdmValue | undefined): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (property.type === 'Edm.Decimal') return Number(a) === Number(b);
  return a === b;
}

/** The field a rule's refusal concerns: the unique key's property, or the property its message names. */
function fieldOf(error: RuleViolation, fields: readonly string[]): string | undefined {
  if (error instanceof UniqueKeyViolation) return error.key.properties.find((p) => fields.includes(p));
  return fields.find((f) => new RegExp(`\\b${f}\\b`).test(error.message));
}

/** Runs `fn`, answering a rule's refusal as a problem of `field`. */
async function atField<T>(field: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof RuleViolation && !(error instanceof EntityMissing)) throw new FieldProblem(field, error.message);
    throw error;
  }
}

class Stale extends Error {}

export interface EditRequest {
  readonly kind: EditKind;
  readonly id: bigint;
  readonly form: URLSearchParams;
}

/** The strike-through offer's ETag as a form carries it ('' for none). */
export function offerTag(offer: EntityRecord | undefined): string {
  return offer ? etagOf(offer.version ?? 0n) : '';
}

/** The product and variation ids a strike-through price belongs to. */
function offerLevel(kind: EditKind, record: EntityRecord): [bigint, bigint | null] {
  return kind === 'variation' ? [record.values.ProductId as bigint, entityId(record.values)] : [entityId(record.values), null];
}

/** The parent catalogs a catalog has (usually one). */
async function parentsOf(deps: ConsoleDeps, tx: SqlExecutor, accountId: number, catalogType: EntityTypeDef, id: bigint): Promise<bigint[]> {
  const nav = catalogType.navigations.find((n) => n.name === 'ParentCatalogs')!;
  const ids: bigint[] = [];
  for await (const row of deps.entities.related(tx, accountId, nav, id)) ids.push(entityId(row.values));
  return ids;
}

/** Applies one edit form in one write transaction; what happened. */
export async function applyEdit(deps: ConsoleDeps, ctx: RequestContext, accountId: number, edit: EditRequest): Promise<EditOutcome> {
  const def = EDITS[edit.kind];
  const type = deps.model.typeByName.get(def.type)!;
  const etag = edit.form.get('etag') ?? '';
  const entries = entriesOf(def, edit.form);
  // Every field is read before the transaction: a value the API would refuse is refused here.
  const problems = new Map<string, string>();
  const values = new Map<string, EdmValue>();
  let strikeThrough: EdmValue | undefined;
  let parent: bigint | null | undefined;
  for (const field of def.fields) {
    const text = entries.get(field.name);
    if (text === undefined) continue;
    try {
      if (field.name === STRIKE_THROUGH) {
        strikeThrough = valueOf({ ...deps.model.typeByName.get('DiscountOffer')!.properties.find((p) => p.name === 'Price')!, nullable: true }, text);
      } else if (field.name === PARENT) {
        if (text !== '' && !/^[1-9]\d{0,17}$/.test(text)) throw new FieldProblem(PARENT, 'Choose a catalog of the list.');
        parent = text === '' ? null : BigInt(text);
      } else {
        values.set(field.name, valueOf(type.properties.find((p) => p.name === field.name)!, text));
      }
    } catch (error) {
      if (!(error instanceof FieldProblem)) throw error;
      problems.set(field.name, error.message.replace(/^Invalid value for property '[^']+' \([^)]*\): /, ''));
    }
  }
  if (problems.size > 0) return { kind: 'invalid', problems, general: undefined };
  try {
    const changed = await deps.store.write(
      accountId,
      async (tx) => {
        const record = await deps.entities.find(tx, accountId, type, edit.id);
        if (!record) throw new EntityMissing(type, edit.id);
        if (etag === '' || etagOf(record.version ?? 0n) !== etag) throw new Stale();
        const changes = new Map([...values].filter(([name, value]) => !sameValue(type.properties.find((p) => p.name === name)!, record.values[name], value)));
        const done: string[] = [...changes.keys()];
        if (changes.size > 0) {
          try {
            await updateRecord(deps.writes, tx, accountId, record, { values: changes, bindings: new Map() }, 'merge', preconditionOf(etag));
          } catch (error) {
            if (error instanceof ODataError && error.status === 412) throw new Stale();
            if (error instanceof RuleViolation && !(error instanceof EntityMissing)) throw new FieldProblem(fieldOf(error, [...changes.keys()]), error.message);
            throw error;
          }
        }
        if (strikeThrough !== undefined) {
          const [productId, variationId] = offerLevel(edit.kind, record);
          const offer = await deps.operations.strikeThroughOffer({ tx, accountId }, productId, variationId);
          if (offerTag(offer) !== (edit.form.get('offerEtag') ?? '')) throw new Stale();
          if (!sameValue(offer?.type.properties.find((p) => p.name === 'Price') ?? ({ type: 'Edm.Decimal' } as PropertyDef), offer?.values.Price ?? null, strikeThrough)) {
            await atField(STRIKE_THROUGH, () => deps.operations.reviseStrikeThroughPrice(tx, accountId, productId, variationId, strikeThrough!));
            done.push(STRIKE_THROUGH);
          }
        }
        if (parent !== undefined) {
          const nav = type.navigations.find((n) => n.name === 'ParentCatalogs')!;
          const current = await parentsOf(deps, tx, accountId, type, edit.id);
          if (parent === edit.id) throw new FieldProblem(PARENT, 'A catalog cannot be its own parent.');
          if (!(current.length === 1 && current[0] === parent) && !(current.length === 0 && parent === null)) {
            await atField(PARENT, async () => {
              for (const old of current) await deps.writes.removeLink(tx, accountId, type, edit.id, nav, old);
              if (parent !== null) await deps.writes.addLink(tx, accountId, type, edit.id, nav, `${type.setName}(${parent}L)`);
            });
            done.push(PARENT);
          }
        }
        return done;
      },
      // fn keeps nothing outside its transaction: it may run again.
      { repeatable: true },
    );
    if (changed.length === 0) return { kind: 'unchanged' };
    audit(deps.log, 'console write', { accountId, clientAddress: ctx.clientAddress, reqId: ctx.id, entity: `${type.setName}(${edit.id}L)`, properties: changed });
    return { kind: 'saved', changed };
  } catch (error) {
    if (error instanceof Stale) return { kind: 'conflict' };
    if (error instanceof EntityMissing) return error.type === type && error.id === edit.id ? { kind: 'missing' } : { kind: 'invalid', problems: new Map(), general: error.message };
    if (error instanceof FieldProblem) {
      return error.field === undefined ? { kind: 'invalid', problems: new Map(), general: error.message } : { kind: 'invalid', problems: new Map([[error.field, error.message]]), general: undefined };
    }
    // A refusal the store's unique index made (a race the rule check did not see) names its key too.
    if (error instanceof RuleViolation) {
      const field = fieldOf(error, def.fields.map((f) => f.name));
      return field === undefined ? { kind: 'invalid', problems: new Map(), general: error.message } : { kind: 'invalid', problems: new Map([[field, error.message]]), general: undefined };
    }
    throw error;
  }
}
