/**
 * The business rules of each entity set (listed in docs/entity-sets.md), checked inside the
 * write transaction, so that the check and the write are one atomic step: the SQLite store runs
 * one write transaction at a time, and a limit cannot be passed by two requests together.
 * Limits answer 400 and uniqueness conflicts 409, each naming its rule.
 */
import type { EntityTypeDef, Model } from '../model/types';
import { badRequest, ODataError } from '../odata/errors';
import type { EdmValue } from '../odata/edm';
import type { EntityRecord } from '../odata/entity';
import { versionBumpFor, type EntityStore } from '../store/entities';
import type { SqlExecutor } from '../store/store';
import { recordSellerItemUpdate, recordSellerOrderUpdate } from './order-history';

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
  readonly entities: EntityStore;
  readonly model: Model;
  readonly type: EntityTypeDef;
  /** The row as it will be stored. */
  readonly row: Readonly<Record<string, EdmValue>>;
  /** The row before the write (updates only). */
  readonly stored?: EntityRecord;
}

const conflict = (message: string) => new ODataError(409, message);

/** Whether the write sets `name` to something other than what is stored (always on create). */
const changes = (ctx: RuleContext, ...names: string[]) =>
  !ctx.stored || names.some((n) => (ctx.stored!.values[n] ?? null) !== (ctx.row[n] ?? null));

const id = (ctx: RuleContext) => ctx.row.Id as bigint;

/** Foreign keys must name an existing row of the same account. */
async function checkReferences(ctx: RuleContext): Promise<void> {
  for (const r of ctx.model.relations) {
    if (r.kind !== 'reference' || r.dependent !== ctx.type.name) continue;
    const value = ctx.row[r.foreignKey] ?? null;
    if (value === null || !changes(ctx, r.foreignKey)) continue;
    const principal = ctx.model.typeByName.get(r.principal)!;
    if (!(await ctx.entities.exists(ctx.tx, ctx.accountId, principal, value as bigint))) {
      throw badRequest(`${r.foreignKey} ${String(value)} does not refer to an existing ${principal.name}.`);
    }
  }
}

/**
 * Each name in `key` together may occur once per account (null members never collide). A
 * duplicate is a 409 conflict unless the set's own rule says 400 (ProductRelations).
 */
async function unique(ctx: RuleContext, key: readonly string[], rule: string, status: 400 | 409 = 409): Promise<void> {
  if (!changes(ctx, ...key)) return;
  const equal: Record<string, EdmValue> = {};
  for (const name of key) {
    const v = ctx.row[name] ?? null;
    if (v === null) return;
    equal[name] = v;
  }
  if ((await ctx.entities.countWhere(ctx.tx, ctx.accountId, ctx.type, equal, ctx.stored ? id(ctx) : undefined)) > 0) {
    throw status === 409 ? conflict(rule) : badRequest(rule);
  }
}

function absoluteHttpUrl(value: EdmValue, property: string): void {
  let ok = false;
  try {
    const url = new URL(String(value));
    ok = (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    ok = false;
  }
  if (!ok) throw badRequest(`The property '${property}' must be an absolute http or https URL.`);
}

const q = (name: string) => `"${name}"`;

type Rule = (ctx: RuleContext) => Promise<void>;

/**
 * A variation moved to another product takes its characteristics along: the target product's
 * limits of names and of values per name hold for them as for new ones.
 */
async function checkMovedCharacteristics(ctx: RuleContext): Promise<void> {
  const variations = q(ctx.type.table);
  const specifics = q(ctx.model.typeByName.get('ProductVariationSpecific')!.table);
  const moving = await ctx.tx.all<{ name: string; value: string }>(
    `SELECT name, value FROM ${specifics} WHERE account_id = ? AND product_variation_id = ? ORDER BY id`,
    [ctx.accountId, id(ctx)],
  );
  if (moving.length === 0) return;
  const present = await ctx.tx.all<{ name: string; value: string }>(
    `SELECT DISTINCT s.name AS name, s.value AS value FROM ${specifics} s JOIN ${variations} v ON v.account_id = s.account_id AND v.id = s.product_variation_id ` +
      'WHERE s.account_id = ? AND v.product_id = ? AND v.id <> ?',
    [ctx.accountId, ctx.row.ProductId as bigint, id(ctx)],
  );
  const valuesByName = new Map<string, Set<string>>();
  for (const r of present) valuesByName.set(r.name, (valuesByName.get(r.name) ?? new Set<string>()).add(r.value));
  for (const { name, value } of moving) {
    if (!valuesByName.has(name) && valuesByName.size >= LIMITS.characteristicNamesPerProduct) {
      throw badRequest(`A product has at most ${LIMITS.characteristicNamesPerProduct} characteristic names across its variations (${[...valuesByName.keys()].join(', ')}); '${name}' would be one more.`);
    }
    const values = valuesByName.get(name) ?? new Set<string>();
    if (!values.has(value) && values.size >= LIMITS.valuesPerCharacteristic) {
      throw badRequest(`A product has at most ${LIMITS.valuesPerCharacteristic} values for the characteristic '${name}'; '${value}' would be one more.`);
    }
    valuesByName.set(name, values.add(value));
  }
}

const rules: Readonly<Record<string, Rule>> = {
  async ProductSpecific(ctx) {
    const values = String(ctx.row.Value).split('|');
    if (values.length > LIMITS.specificValues) {
      throw badRequest(`A ProductSpecific Value holds at most ${LIMITS.specificValues} values separated by '|'; this one has ${values.length}.`);
    }
    for (const v of values) {
      const length = [...v].length;
      if (length === 0 || length > LIMITS.specificValueLength) {
        throw badRequest(`Each '|'-separated value of a ProductSpecific Value must be 1 to ${LIMITS.specificValueLength} characters; '${v.slice(0, 60)}' has ${length}.`);
      }
    }
    await unique(ctx, ['ProductId', 'Name'], `The product already has a ProductSpecific named '${String(ctx.row.Name)}': a Name may be used once per product.`);
  },

  async ProductImage(ctx) {
    absoluteHttpUrl(ctx.row.ImageUrl!, 'ImageUrl');
    await unique(ctx, ['ProductId', 'Type'], `The product already has an image of Type ${String(ctx.row.Type)}: each Type slot (1 list image, 2 offer image, 3 to 12 further images) holds one image.`);
  },

  async ProductVariation(ctx) {
    if (changes(ctx, 'ProductId')) {
      const count = await ctx.entities.countWhere(ctx.tx, ctx.accountId, ctx.type, { ProductId: ctx.row.ProductId! });
      if (count >= LIMITS.variationsPerProduct) {
        throw badRequest(`A product has at most ${LIMITS.variationsPerProduct} variations; product ${String(ctx.row.ProductId)} has ${count} already.`);
      }
      if (ctx.stored) await checkMovedCharacteristics(ctx);
    }
    await unique(ctx, ['ProductId', 'Sku'], `The product already has a variation with Sku '${String(ctx.row.Sku)}': Sku values are unique per product.`);
  },

  async ProductVariationSpecific(ctx) {
    await unique(ctx, ['ProductVariationId', 'Name'], `The variation already has a characteristic named '${String(ctx.row.Name)}'.`);
    if (!changes(ctx, 'ProductVariationId', 'Name', 'Value')) return;
    // Per product, across all its variations: at most 5 names, and 30 values per name.
    const variations = q(ctx.model.typeByName.get('ProductVariation')!.table);
    const specifics = q(ctx.type.table);
    const ofProduct =
      `FROM ${specifics} s JOIN ${variations} v ON v.account_id = s.account_id AND v.id = s.product_variation_id ` +
      `WHERE s.account_id = ? AND v.product_id = (SELECT product_id FROM ${variations} WHERE account_id = ? AND id = ?)` +
      (ctx.stored ? ' AND s.id <> ?' : '');
    const params = [ctx.accountId, ctx.accountId, ctx.row.ProductVariationId as bigint, ...(ctx.stored ? [id(ctx)] : [])];
    const names = (await ctx.entities.distinct(ctx.tx, `SELECT DISTINCT s.name AS v ${ofProduct}`, params)).map(String);
    const name = String(ctx.row.Name);
    if (!names.includes(name) && names.length >= LIMITS.characteristicNamesPerProduct) {
      throw badRequest(`A product has at most ${LIMITS.characteristicNamesPerProduct} characteristic names across its variations (${names.join(', ')}); '${name}' would be one more.`);
    }
    const values = (await ctx.entities.distinct(ctx.tx, `SELECT DISTINCT s.value AS v ${ofProduct} AND s.name = ?`, [...params, name])).map(String);
    const value = String(ctx.row.Value);
    if (!values.includes(value) && values.length >= LIMITS.valuesPerCharacteristic) {
      throw badRequest(`A product has at most ${LIMITS.valuesPerCharacteristic} values for the characteristic '${name}'; '${value}' would be one more.`);
    }
  },

  async ProductVariationImage(ctx) {
    absoluteHttpUrl(ctx.row.ImageUrl!, 'ImageUrl');
    await unique(ctx, ['ProductVariationId', 'ImagePosition'], `The variation already has an image at ImagePosition ${String(ctx.row.ImagePosition)}.`);
  },

  async OptionalProductAttribute(ctx) {
    await unique(ctx, ['ProductId', 'Name'], `The product already has an OptionalProductAttribute named '${String(ctx.row.Name)}'.`);
  },

  async DiscountOffer(ctx) {
    const variationId = ctx.row.ProductVariationId ?? null;
    if (variationId !== null && changes(ctx, 'ProductId', 'ProductVariationId')) {
      const variation = await ctx.entities.find(ctx.tx, ctx.accountId, ctx.model.typeByName.get('ProductVariation')!, variationId as bigint);
      if (variation && variation.values.ProductId !== ctx.row.ProductId) {
        throw badRequest(`ProductVariationId ${String(variationId)} belongs to another product than ProductId ${String(ctx.row.ProductId)}.`);
      }
    }
    if (!changes(ctx, 'ProductId', 'ProductVariationId', 'Type')) return;
    const same = await ctx.entities.countWhere(
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
    if (parent === child) throw badRequest('A product cannot be related to itself.');
    // No self-relation, no duplicate pair, no cycle: each a 400, a duplicate pair included.
    await unique(ctx, ['ParentProductId', 'ChildProductId'], `Product ${String(parent)} is already the parent of product ${String(child)}.`, 400);
    if (!changes(ctx, 'ParentProductId', 'ChildProductId')) return;
    // Adding parent -> child closes a cycle when the parent is already below the child. The row
    // itself is left out: an update replaces it (reversing a relation is no cycle).
    const pairs = { table: ctx.type.table, parentColumn: 'parent_product_id', childColumn: 'child_product_id' };
    const below = await reachesDown(ctx.tx, ctx.entities, ctx.accountId, pairs, child, parent, id(ctx));
    if (below) throw badRequest(`Relating product ${String(parent)} to child ${String(child)} would make a cycle.`);
  },

  async SalesOrderItem(ctx) {
    const tracking = ctx.row.TrackingNumbers ?? null;
    if (tracking === null || tracking === '') return;
    const numbers = String(tracking).split(';');
    if (numbers.length > LIMITS.trackingNumbers || numbers.some((n) => n.trim() === '')) {
      throw badRequest(`TrackingNumbers holds 1 to ${LIMITS.trackingNumbers} non-empty numbers separated by ';'.`);
    }
    const carrier = ctx.row.CarrierUsed ?? null;
    if (carrier === null || String(carrier).trim() === '') throw badRequest('TrackingNumbers needs CarrierUsed, in the same request or already stored.');
  },
};

/** Updates that keep related rows consistent with a write, in the same transaction. */
const followUps: Readonly<Record<string, Rule>> = {
  async ProductVariation(ctx) {
    // A variation moved to another product takes its variation-level discount offers along, so
    // an offer's ProductId and ProductVariationId never name two different products.
    if (!ctx.stored || !changes(ctx, 'ProductId')) return;
    const offer = ctx.model.typeByName.get('DiscountOffer')!;
    const offerProduct = offer.properties.find((p) => p.name === 'ProductId')!;
    await ctx.tx.run(`UPDATE ${q(offer.table)} SET ${q(offerProduct.column)} = ?${versionBumpFor([offerProduct])} WHERE account_id = ? AND product_variation_id = ?`, [ctx.row.ProductId as bigint, ctx.accountId, id(ctx)]);
  },

  // Order history, flags and the order's dates (README "Order history"), at the write's
  // own time: the ModificationDate that applyPayload stamped on the row.
  async SalesOrder(ctx) {
    if (ctx.stored) await recordSellerOrderUpdate(ctx, ctx.stored.values, ctx.row, ctx.row.ModificationDate as number);
  },

  async SalesOrderItem(ctx) {
    if (ctx.stored) await recordSellerItemUpdate(ctx, ctx.stored.values, ctx.row, ctx.row.ModificationDate as number);
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

/** Every rule of the row's set, after the references are checked. */
export async function checkRules(ctx: RuleContext): Promise<void> {
  await checkReferences(ctx);
  await rules[ctx.type.name]?.(ctx);
}

/** A table of parent -> child pairs (ProductRelations, the catalog tree). */
interface PairTable {
  readonly table: string;
  readonly parentColumn: string;
  readonly childColumn: string;
}

/** Whether `target` lies below `from` along the pairs, leaving out the row `excludeId` if given. */
async function reachesDown(tx: SqlExecutor, entities: EntityStore, accountId: number, pairs: PairTable, from: bigint, target: bigint, excludeId?: bigint): Promise<boolean> {
  const [table, parent, child] = [q(pairs.table), q(pairs.parentColumn), q(pairs.childColumn)];
  const skip = excludeId === undefined ? '' : ' AND id <> ?';
  const skipParam = excludeId === undefined ? [] : [excludeId];
  const found = await entities.distinct(
    tx,
    `WITH RECURSIVE below(id) AS (SELECT ${child} FROM ${table} WHERE account_id = ? AND ${parent} = ?${skip}` +
      ` UNION SELECT p.${child} FROM ${table} p JOIN below b ON p.${parent} = b.id WHERE p.account_id = ?${skip.replace('id', 'p.id')})` +
      ' SELECT id AS v FROM below WHERE id = ?',
    [accountId, from, ...skipParam, accountId, ...skipParam, target],
  );
  return found.length > 0;
}

/** Whether adding parent -> child to the catalog tree would make a catalog its own ancestor. */
export async function catalogCycle(tx: SqlExecutor, entities: EntityStore, accountId: number, table: string, parentColumn: string, childColumn: string, parent: bigint, child: bigint): Promise<boolean> {
  return parent === child || reachesDown(tx, entities, accountId, { table, parentColumn, childColumn }, child, parent);
}
