/**
 * The business rules of each entity set (docs/entity-sets.md), checked inside the write
 * transaction, so that the check and the write are one atomic step: the SQLite store runs one
 * write transaction at a time, and a limit cannot be passed by two requests together. A broken
 * rule is a RuleViolation (data: a kind and a message naming the rule); the service edge answers
 * 'invalid' with 400 and 'conflict' with 409. The unique keys of the model are checked here
 * generically, each with the message and status the model gives it.
 */
import type { EntityTypeDef, Model, ReferenceRelation } from '../model/types';
import { clientSets, uniqueKeyMessage } from '../model/define';
import { conflict, invalid, UniqueKeyViolation } from '../model/rule-violation';
import type { EdmValue } from '../odata/edm';
import { entityId, type EntityRecord } from '../odata/entity';
import { CatalogueQueries, type Characteristic } from '../store/catalogue-queries';
import type { EntityStore } from '../store/entities';
import type { RuleRows } from './rule-rows';
import type { SqlExecutor } from '../store/store';
import { closeImageGap, placeImage } from './image-numbering';
import { recordSellerItemUpdate, recordSellerOrderUpdate } from './order-history';
import { quote } from '../odata/quote';
import { comparisonKey, isBlank } from '../model/text';

export const LIMITS = {
  specificValues: 20,
  specificValueLength: 50,
  variationsPerProduct: 120,
  characteristicNamesPerProduct: 5,
  valuesPerCharacteristic: 30,
  trackingNumbers: 8,
} as const;

export interface RuleContext {
  readonly tx: SqlExecutor;
  readonly accountId: number;
  /** The store's rows, for follow-ups (order history): they run for updates only. */
  readonly entities: EntityStore;
  /** The rows the rules read and the placements write: see RuleRows. */
  readonly rows: RuleRows;
  readonly model: Model;
  readonly type: EntityTypeDef;
  /** The row as it will be stored. */
  readonly row: Readonly<Record<string, EdmValue>>;
  /** The row before the write (updates only). */
  readonly stored?: EntityRecord;
  /** The properties the request body sent (updates only): what a PUT leaves out, it resets. */
  readonly sent?: ReadonlySet<string>;
}

/** Whether the write sets `name` to something other than what is stored (always on create). */
const changes = (ctx: RuleContext, ...names: string[]) =>
  !ctx.stored || names.some((n) => (ctx.stored!.values[n] ?? null) !== (ctx.row[n] ?? null));

const id = (ctx: RuleContext) => entityId(ctx.row);

const referencesByType = new WeakMap<EntityTypeDef, readonly ReferenceRelation[]>();

/** The references whose dependent is `type`: worked out once per type, as every create asks. */
function referencesOf(model: Model, type: EntityTypeDef): readonly ReferenceRelation[] {
  let references = referencesByType.get(type);
  if (!references) {
    references = model.relations.filter((r): r is ReferenceRelation => r.kind === 'reference' && r.dependent === type.name);
    referencesByType.set(type, references);
  }
  return references;
}

/** Foreign keys must name an existing row of the same account. */
async function checkReferences(ctx: RuleContext, references: readonly ReferenceRelation[]): Promise<void> {
  for (const r of references) {
    const value = ctx.row[r.foreignKey] ?? null;
    if (value === null || !changes(ctx, r.foreignKey)) continue;
    const principal = ctx.model.typeByName.get(r.principal)!;
    if (!(await ctx.rows.exists(ctx.tx, ctx.accountId, principal, value as bigint))) {
      throw invalid(`${r.foreignKey} ${String(value)} does not refer to an existing ${principal.name}.`);
    }
  }
}

/**
 * Every unique key of the row's set, as the model declares it: the names of a key together may
 * occur once per account (a null member never collides). A key needs no code of its own here.
 */
async function checkUniqueKeys(ctx: RuleContext): Promise<void> {
  for (const key of ctx.type.uniqueKeys) {
    if (!changes(ctx, ...key.properties)) continue;
    const equal: Record<string, EdmValue> = {};
    for (const name of key.properties) equal[name] = ctx.row[name] ?? null;
    if (Object.values(equal).some((v) => v === null)) continue;
    if ((await ctx.rows.countWhere(ctx.tx, ctx.accountId, ctx.type, equal, ctx.stored ? id(ctx) : undefined)) > 0) {
      throw new UniqueKeyViolation(ctx.type, key, uniqueKeyMessage(key, ctx.row, (v) => quote(v)));
    }
  }
}

/**
 * An image address the platform can fetch: an absolute http or https URL as written, with '//'
 * and a host, and no blank anywhere. The WHATWG parser alone is too forgiving: it reads
 * 'http:/x.jpg' as http://x.jpg/, drops leading blanks and encodes inner spaces, so a value it
 * accepts may not be the address the seller meant.
 */
function absoluteHttpUrl(value: EdmValue, property: string): void {
  const text = String(value);
  let ok = /^https?:\/\/[^\s/?#\\]+([/?#][^\s]*)?$/i.test(text);
  if (ok) {
    try {
      ok = new URL(text).hostname !== '';
    } catch {
      ok = false;
    }
  }
  if (!ok) throw invalid(`The property '${property}' must be an absolute http or https URL without blanks (such as https://example.com/image.jpg); '${quote(text)}' is not.`);
}

type Rule = (ctx: RuleContext) => Promise<void>;

/**
 * A variation moved to another product takes its characteristics along: the target product's
 * limits of names and of values per name hold for them as for new ones.
 */
async function checkMovedCharacteristics(ctx: RuleContext): Promise<void> {
  const queries = queriesOf(ctx.model);
  const moving = await queries.characteristicsOfVariation(ctx.tx, ctx.accountId, id(ctx));
  if (moving.length === 0) return;
  const present = await queries.characteristicsOfProduct(ctx.tx, ctx.accountId, { productId: ctx.row.ProductId as bigint }, { variationId: id(ctx) });
  const tally = new CharacteristicTally(present);
  for (const c of moving) tally.admit(c);
}

/**
 * The characteristic names of one product with their values, compared as the rules compare text
 * (case-insensitive, trailing spaces ignored: by comparison key), each shown as first written.
 * admit() refuses a characteristic that would be a sixth name or a 31st value of its name.
 */
class CharacteristicTally {
  /** Name key -> the name as first written, and value key -> value. */
  private readonly names = new Map<string, { name: string; values: Map<string, string> }>();

  constructor(present: readonly Characteristic[]) {
    for (const c of present) this.add(c);
  }

  private add(c: Characteristic): { name: string; values: Map<string, string> } {
    let entry = this.names.get(c.nameKey);
    if (!entry) this.names.set(c.nameKey, (entry = { name: c.name, values: new Map() }));
    if (!entry.values.has(c.valueKey)) entry.values.set(c.valueKey, c.value);
    return entry;
  }

  admit(c: Characteristic): void {
    const entry = this.names.get(c.nameKey);
    if (!entry && this.names.size >= LIMITS.characteristicNamesPerProduct) {
      const names = [...this.names.values()].map((n) => n.name).join(', ');
      throw invalid(`A product has at most ${LIMITS.characteristicNamesPerProduct} characteristic names across its variations (${names}); '${c.name}' would be one more (names compare ignoring case and trailing spaces).`);
    }
    if (entry && !entry.values.has(c.valueKey) && entry.values.size >= LIMITS.valuesPerCharacteristic) {
      throw invalid(`A product has at most ${LIMITS.valuesPerCharacteristic} values for the characteristic '${entry.name}'; '${c.value}' would be one more (values compare ignoring case and trailing spaces).`);
    }
    this.add(c);
  }
}

const rules: Readonly<Record<string, Rule>> = {
  async ProductSpecific(ctx) {
    const values = String(ctx.row.Value).split('|');
    if (values.length > LIMITS.specificValues) {
      throw invalid(`A ProductSpecific Value holds at most ${LIMITS.specificValues} values separated by '|'; this one has ${values.length}.`);
    }
    // An empty or blank piece ('a||b', 'a|') is no value: refused, not dropped, so that what is
    // stored is what the seller sent. Lengths count UTF-16 code units, as .NET's did.
    for (const v of values) {
      if (isBlank(v)) throw invalid(`Each '|'-separated value of a ProductSpecific Value must be 1 to ${LIMITS.specificValueLength} characters and not blank; '${quote(String(ctx.row.Value))}' has an empty or blank one.`);
      if (v.length > LIMITS.specificValueLength) {
        throw invalid(`Each '|'-separated value of a ProductSpecific Value must be 1 to ${LIMITS.specificValueLength} characters; '${quote(v)}' has ${v.length}.`);
      }
    }
  },

  async ProductImage(ctx) {
    absoluteHttpUrl(ctx.row.ImageUrl!, 'ImageUrl');
  },

  async ProductVariation(ctx) {
    if (changes(ctx, 'ProductId')) {
      const count = await ctx.rows.countWhere(ctx.tx, ctx.accountId, ctx.type, { ProductId: ctx.row.ProductId! });
      if (count >= LIMITS.variationsPerProduct) {
        throw invalid(`A product has at most ${LIMITS.variationsPerProduct} variations; product ${String(ctx.row.ProductId)} has ${count} already.`);
      }
      if (ctx.stored) await checkMovedCharacteristics(ctx);
    }
  },

  async ProductVariationSpecific(ctx) {
    if (!changes(ctx, 'ProductVariationId', 'Name', 'Value')) return;
    // Per product, across all its variations: at most 5 names, and 30 values per name.
    const present = await (ctx.rows.characteristicsOfProduct ? ctx.rows : queriesOf(ctx.model)).characteristicsOfProduct!(
      ctx.tx,
      ctx.accountId,
      { ofVariation: ctx.row.ProductVariationId as bigint },
      ctx.stored ? { specificId: id(ctx) } : {},
    );
    const [name, value] = [String(ctx.row.Name), String(ctx.row.Value)];
    new CharacteristicTally(present).admit({ name, value, nameKey: comparisonKey(name), valueKey: comparisonKey(value) });
  },

  async ProductVariationImage(ctx) {
    absoluteHttpUrl(ctx.row.ImageUrl!, 'ImageUrl');
  },

  async OptionalProductAttribute(ctx) {
  },

  async DiscountOffer(ctx) {
    const variationId = ctx.row.ProductVariationId ?? null;
    if (variationId !== null && changes(ctx, 'ProductId', 'ProductVariationId')) {
      const variation = await ctx.rows.find(ctx.tx, ctx.accountId, ctx.model.typeByName.get('ProductVariation')!, variationId as bigint);
      if (variation && variation.values.ProductId !== ctx.row.ProductId) {
        throw invalid(`ProductVariationId ${String(variationId)} belongs to another product than ProductId ${String(ctx.row.ProductId)}.`);
      }
    }
    if (!changes(ctx, 'ProductId', 'ProductVariationId', 'Type')) return;
    const same = await ctx.rows.countWhere(
      ctx.tx,
      ctx.accountId,
      ctx.type,
      { ProductId: ctx.row.ProductId!, ProductVariationId: variationId, Type: ctx.row.Type! },
      ctx.stored ? id(ctx) : undefined,
    );
    if (same > 0) throw conflict(`A DiscountOffer of Type ${String(ctx.row.Type)} exists already for this product${variationId === null ? '' : ' variation'}.`);
  },

  async ProductRelation(ctx) {
    const parent = ctx.row.ParentProductId as bigint;
    const child = ctx.row.ChildProductId as bigint;
    if (parent === child) throw invalid('A product cannot be related to itself.');
    // No self-relation and no cycle (400); a duplicate pair is its unique key's conflict (409).
    if (!changes(ctx, 'ParentProductId', 'ChildProductId')) return;
    // Adding parent -> child closes a cycle when the parent is already below the child. The row
    // itself is left out: an update replaces it (reversing a relation is no cycle).
    const queries = queriesOf(ctx.model);
    const below = await queries.reachesDown(ctx.tx, ctx.accountId, queries.pairsOf(ctx.type, 'ParentProductId', 'ChildProductId'), child, parent, id(ctx));
    if (below) throw invalid(`Relating product ${String(parent)} to child ${String(child)} would make a cycle.`);
  },

  async SalesOrderItem(ctx) {
    const tracking = ctx.row.TrackingNumbers ?? null;
    if (tracking === null || tracking === '') return;
    const numbers = String(tracking).split(';');
    if (numbers.length > LIMITS.trackingNumbers || numbers.some((n) => n.trim() === '')) {
      throw invalid(`TrackingNumbers holds 1 to ${LIMITS.trackingNumbers} non-empty numbers separated by ';'.`);
    }
    const carrier = ctx.row.CarrierUsed ?? null;
    if (carrier === null || String(carrier).trim() === '') throw invalid('TrackingNumbers needs CarrierUsed, in the same request or already stored.');
  },
};

/**
 * The stored row changed only by what the body sent: the row a MERGE of the same body would
 * store. For a MERGE it is the row itself; for a PUT, the properties it resets by leaving them
 * out keep their stored values here.
 */
function asSent(ctx: RuleContext): Readonly<Record<string, EdmValue>> {
  if (!ctx.stored || !ctx.sent) return ctx.row;
  const row: Record<string, EdmValue> = { ...ctx.row };
  for (const p of ctx.type.properties) if (clientSets(p) && !ctx.sent.has(p.name)) row[p.name] = ctx.stored.values[p.name] ?? null;
  return row;
}

/** Updates that keep related rows consistent with a write, in the same transaction. */
const followUps: Readonly<Record<string, Rule>> = {
  async ProductVariation(ctx) {
    // A variation moved to another product takes its variation-level discount offers along, so
    // an offer's ProductId and ProductVariationId never name two different products.
    if (!ctx.stored || !changes(ctx, 'ProductId')) return;
    await queriesOf(ctx.model).moveOffersWithVariation(ctx.tx, ctx.accountId, id(ctx), ctx.row.ProductId as bigint);
  },

  // Order history, flags and the order's dates, at the write's own time: the ModificationDate
  // that applyPayload stamped on the row. Only what the body sent is a seller's action: the
  // properties a PUT resets because the body leaves them out change this row and nothing else.
  async SalesOrder(ctx) {
    if (ctx.stored) await recordSellerOrderUpdate(ctx, ctx.stored.values, asSent(ctx), ctx.row.ModificationDate as number);
  },

  async SalesOrderItem(ctx) {
    if (ctx.stored) await recordSellerItemUpdate(ctx, ctx.stored.values, asSent(ctx), ctx.row.ModificationDate as number);
  },
};

/** The types whose follow-ups may write their own row again (and so move its version). */
const FOLLOW_UPS_REWRITING_THE_ROW = new Set(['SalesOrder']);

/** Whether a write of this type must read its version back after the follow-ups. */
export function followUpsRewrite(type: EntityTypeDef): boolean {
  return FOLLOW_UPS_REWRITING_THE_ROW.has(type.name);
}

export async function applyFollowUps(ctx: RuleContext): Promise<void> {
  await followUps[ctx.type.name]?.(ctx);
}

/**
 * Writes to other rows that must come before the row is stored: they make the place the row
 * takes, so its unique keys are checked against the places as they will be.
 */
const placements: Readonly<Record<string, Rule>> = {
  // Further images form one run from Type 3 (./image-numbering.ts).
  ProductImage: (ctx) => placeImage({ ...ctx, at: ctx.row.ModificationDate as number }),
};

/**
 * Whether the rules of this type's writes may change the row itself in the database before it is
 * stored (a placement parks an image's Type while it makes room): then the row as read before
 * them no longer tells which columns already hold their new values.
 */
export const placementsRewrite = (type: EntityTypeDef): boolean => placements[type.name] !== undefined;

/** What a delete changes in other rows, by set: only these sets need the row before it goes. */
const deleteFollowUps: Readonly<Record<string, (ctx: RuleContext, at: number) => Promise<void>>> = {
  ProductImage: (ctx, at) => closeImageGap({ ...ctx, at }),
};

export const hasDeleteFollowUps = (type: EntityTypeDef): boolean => deleteFollowUps[type.name] !== undefined;

/** After `ctx.stored` was deleted, at the write's time `at`. */
export async function applyDeleteFollowUps(ctx: RuleContext, at: number): Promise<void> {
  await deleteFollowUps[ctx.type.name]?.(ctx, at);
}

/** Every rule of the row's set, after the references are checked, and then its unique keys. */
export async function checkRules(ctx: RuleContext): Promise<void> {
  const references = referencesOf(ctx.model, ctx.type);
  if (references.length > 0) await checkReferences(ctx, references);
  // Each await costs a deep insert's every entity a turn of the microtask queue: none where no rule is.
  const rule = rules[ctx.type.name];
  if (rule) await rule(ctx);
  const placement = placements[ctx.type.name];
  if (placement) await placement(ctx);
  if (ctx.type.uniqueKeys.length > 0) await checkUniqueKeys(ctx);
}

/** Whether adding parent -> child to the catalog tree would make a catalog its own ancestor. */
export async function catalogCycle(tx: SqlExecutor, model: Model, accountId: number, table: string, parentColumn: string, childColumn: string, parent: bigint, child: bigint): Promise<boolean> {
  return parent === child || queriesOf(model).reachesDown(tx, accountId, { table, parentColumn, childColumn }, child, parent);
}

const queriesByModel = new WeakMap<Model, CatalogueQueries>();
/** The rules' statements, built once per model. */
export function queriesOf(model: Model): CatalogueQueries {
  let queries = queriesByModel.get(model);
  if (!queries) queriesByModel.set(model, (queries = new CatalogueQueries(model)));
  return queries;
}
