/**
 * The statements the catalogue's rules need beyond reading and writing one entity: the
 * characteristics of a product across its variations, moving a variation's discount offers with
 * it, and walking parent -> child pairs for cycles. Table and column names come from the model
 * (each property's column), so a renamed property cannot leave a statement behind. Every
 * statement is scoped by account_id and takes its values as bound parameters.
 */
import type { EntityTypeDef, LinkTableRelation, Model, PropertyDef } from '../model/types';
import { columnOf, findProperty } from '../model/define';
import type { SqlExecutor, SqlValue, ValueCodec } from './store';
import { ACCOUNT_COLUMN, comparedColumn, versionBumpFor } from './schema';

const q = (name: string) => `"${name}"`;

function typeOf(model: Model, name: string): EntityTypeDef {
  const type = model.typeByName.get(name);
  if (!type) throw new Error(`the model has no entity type ${name}`);
  return type;
}

/** The quoted column of a property. */
function propertyOf(type: EntityTypeDef, property: string): PropertyDef {
  const p = findProperty(type, property);
  if (!p) throw new Error(`${type.name} has no property ${property}`);
  return p;
}

function column(type: EntityTypeDef, property: string): string {
  return q(propertyOf(type, property).column);
}

/**
 * A characteristic of a variation: a ProductVariationSpecific's Name and Value, each with what the
 * rules compare (its comparison key, model/text.ts).
 */
export interface Characteristic {
  readonly name: string;
  readonly value: string;
  readonly nameKey: string;
  readonly valueKey: string;
}

type CharacteristicRow = { name: unknown; value: unknown; name_key: unknown; value_key: unknown };
const characteristic = (r: CharacteristicRow): Characteristic => ({ name: String(r.name), value: String(r.value), nameKey: String(r.name_key), valueKey: String(r.value_key) });

/** A product, by its id or as the product of a variation. */
export type ProductOf = { readonly productId: bigint } | { readonly ofVariation: bigint };
/** What a count of a product's characteristics leaves out: the variation moving, or the characteristic being written. */
export interface CharacteristicsLeftOut {
  readonly variationId?: bigint;
  readonly specificId?: bigint;
}

/** A table of parent -> child pairs (ProductRelations, the catalog tree of a link table). */
export interface PairTable {
  readonly table: string;
  readonly parentColumn: string;
  readonly childColumn: string;
}

export class CatalogueQueries {
  private readonly variations: EntityTypeDef;
  private readonly specifics: EntityTypeDef;
  private readonly offers: EntityTypeDef;
  private readonly products: EntityTypeDef;
  private readonly listings: EntityTypeDef;
  private readonly listingItems: EntityTypeDef;

  constructor(model: Model) {
    this.variations = typeOf(model, 'ProductVariation');
    this.specifics = typeOf(model, 'ProductVariationSpecific');
    this.offers = typeOf(model, 'DiscountOffer');
    this.products = typeOf(model, 'Product');
    this.listings = typeOf(model, 'Listing');
    this.listingItems = typeOf(model, 'ListingItem');
  }

  /** Whether an active listing (Status 1) is of the product, or lists it as one of its items. */
  async productIsListed(tx: SqlExecutor, accountId: number, productId: bigint): Promise<boolean> {
    const [l, i, account] = [this.listings, this.listingItems, q(ACCOUNT_COLUMN)];
    const found = await tx.get(
      `SELECT 1 AS found FROM ${q(l.table)} l WHERE l.${account} = ? AND l.${column(l, 'Status')} = 1 AND (l.${column(l, 'ProductId')} = ? OR EXISTS ` +
        `(SELECT 1 FROM ${q(i.table)} i WHERE i.${account} = l.${account} AND i.${column(i, 'ListingId')} = l.${column(l, 'Id')} AND i.${column(i, 'ProductId')} = ?)) LIMIT 1`,
      [accountId, productId, productId],
    );
    return found !== undefined;
  }

  /**
   * Sets the profile property (an Int64 or null) and ModificationDate on every product linked
   * to the catalog through `links` (the link table of Catalog.Products).
   */
  async setProfileOfCatalogProducts(tx: SqlExecutor, codec: ValueCodec, accountId: number, links: LinkTableRelation, catalogId: bigint, property: string, profileId: bigint | null, now: number): Promise<void> {
    const p = this.products;
    const account = q(ACCOUNT_COLUMN);
    await tx.run(
      `UPDATE ${q(p.table)} SET ${column(p, property)} = ?, ${column(p, 'ModificationDate')} = ?${versionBumpFor([propertyOf(p, property)])} ` +
        `WHERE ${account} = ? AND ${column(p, 'Id')} IN (SELECT ${q(links.leftColumn)} FROM ${q(links.table)} WHERE ${account} = ? AND ${q(links.rightColumn)} = ?)`,
      [codec.encode('Edm.Int64', profileId), codec.encode('Edm.DateTime', now), accountId, accountId, catalogId],
    );
  }

  /** The characteristics of one variation, in the order they were created. */
  async characteristicsOfVariation(tx: SqlExecutor, accountId: number, variationId: bigint): Promise<Characteristic[]> {
    const s = this.specifics;
    const rows = await tx.all<CharacteristicRow>(
      `SELECT ${this.characteristicColumns('')} FROM ${q(s.table)} ` +
        `WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${column(s, 'ProductVariationId')} = ? ORDER BY ${column(s, 'Id')}`,
      [accountId, variationId],
    );
    return rows.map(characteristic);
  }

  /** Name and Value of a characteristic with the columns rules compare (their comparison keys). */
  private characteristicColumns(alias: string): string {
    const s = this.specifics;
    const compared = (name: string) => q(comparedColumn(propertyOf(s, name)));
    return `${alias}${column(s, 'Name')} AS name, ${alias}${column(s, 'Value')} AS value, ${alias}${compared('Name')} AS name_key, ${alias}${compared('Value')} AS value_key`;
  }

  /**
   * The characteristics of a product's variations, leaving out one variation (the one
   * moving) or one characteristic row (the one being written), when given.
   */
  async characteristicsOfProduct(tx: SqlExecutor, accountId: number, product: ProductOf, exclude: CharacteristicsLeftOut = {}): Promise<Characteristic[]> {
    const [s, v] = [this.specifics, this.variations];
    const params: SqlValue[] = [accountId];
    let productCondition: string;
    if ('productId' in product) {
      productCondition = `v.${column(v, 'ProductId')} = ?`;
      params.push(product.productId);
    } else {
      productCondition = `v.${column(v, 'ProductId')} = (SELECT ${column(v, 'ProductId')} FROM ${q(v.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${column(v, 'Id')} = ?)`;
      params.push(accountId, product.ofVariation);
    }
    // The product's variations first, then their characteristics by index. CROSS JOIN keeps
    // that order in SQLite, whose planner (without statistics) would otherwise walk every
    // characteristic of the account in id order to spare the sort; PostgreSQL plans it as a join.
    let sql =
      `SELECT ${this.characteristicColumns('s.')} FROM ${q(v.table)} v CROSS JOIN ${q(s.table)} s ` +
      `WHERE s.${q(ACCOUNT_COLUMN)} = ? AND v.${q(ACCOUNT_COLUMN)} = s.${q(ACCOUNT_COLUMN)} AND v.${column(v, 'Id')} = s.${column(s, 'ProductVariationId')} AND ${productCondition}`;
    if (exclude.variationId !== undefined) {
      sql += ` AND v.${column(v, 'Id')} <> ?`;
      params.push(exclude.variationId);
    }
    if (exclude.specificId !== undefined) {
      sql += ` AND s.${column(s, 'Id')} <> ?`;
      params.push(exclude.specificId);
    }
    // In the order written, so that a message names a characteristic as it was first written.
    sql += ` ORDER BY s.${column(s, 'Id')}`;
    return (await tx.all<CharacteristicRow>(sql, params)).map(characteristic);
  }

  /** A variation moved to another product takes its variation-level discount offers along. */
  async moveOffersWithVariation(tx: SqlExecutor, accountId: number, variationId: bigint, productId: bigint): Promise<void> {
    const o = this.offers;
    await tx.run(
      `UPDATE ${q(o.table)} SET ${column(o, 'ProductId')} = ?${versionBumpFor([propertyOf(o, 'ProductId')])} ` +
        `WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${column(o, 'ProductVariationId')} = ?`,
      [productId, accountId, variationId],
    );
  }

  /** The parent -> child pairs of an entity type's two reference properties. */
  pairsOf(type: EntityTypeDef, parent: string, child: string): PairTable {
    return { table: type.table, parentColumn: columnOf(type, parent), childColumn: columnOf(type, child) };
  }

  /** Whether `target` lies below `from` along the pairs, leaving out the row `excludeId` if given. */
  async reachesDown(tx: SqlExecutor, accountId: number, pairs: PairTable, from: bigint, target: bigint, excludeId?: bigint): Promise<boolean> {
    const [table, parent, child, account] = [q(pairs.table), q(pairs.parentColumn), q(pairs.childColumn), q(ACCOUNT_COLUMN)];
    const skip = excludeId === undefined ? '' : ' AND id <> ?';
    const skipParam = excludeId === undefined ? [] : [excludeId];
    const found = await tx.all(
      `WITH RECURSIVE below(id) AS (SELECT ${child} FROM ${table} WHERE ${account} = ? AND ${parent} = ?${skip}` +
        ` UNION SELECT p.${child} FROM ${table} p JOIN below b ON p.${parent} = b.id WHERE p.${account} = ?${skip.replace('id', 'p.id')})` +
        ' SELECT id AS v FROM below WHERE id = ?',
      [accountId, from, ...skipParam, accountId, ...skipParam, target],
    );
    return found.length > 0;
  }
}
