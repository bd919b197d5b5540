/**
 * The rows of a deep insert's tree that are checked but not stored yet, together with the stored
 * rows, as one view for the rules (RuleRows). A deep insert checks every entity of its tree with
 * the rules of any create, in document order, each seeing the entities before it, as if they had
 * been stored one by one; then store() writes them all in one multi-row INSERT per type and
 * depth, instead of a round trip or more per entity.
 *
 * Every query is answered from memory and from the database, and the database part is skipped
 * only where it cannot hold a match: a row with a fresh id, or rows whose foreign key names a
 * fresh row (nothing stored can point at a row that is not stored yet). The root is stored
 * before its children are checked (with its links, as any create), and counts as fresh all the
 * same: no stored row points at it yet. Fresh ids come from the id sequence after every stored
 * one, so stored rows come first in id order.
 */
import { foreignKeysOf } from '../model/define';
import type { EntityTypeDef, Model } from '../model/types';
import { comparisonKey } from '../model/text';
import type { EdmValue } from '../odata/edm';
import type { EntityRecord } from '../odata/entity';
import type { Characteristic, CatalogueQueries, CharacteristicsLeftOut, ProductOf } from '../store/catalogue-queries';
import type { EntityStore } from '../store/entities';
import { sentBehind, type SqlExecutor, type SqlValue } from '../store/store';
import type { RuleRows } from './rule-rows';

interface FreshRow {
  readonly type: EntityTypeDef;
  readonly values: Record<string, EdmValue>;
  /** 0 for the root (stored already), 1 for its children: a row is stored after its parent, one depth after another. */
  readonly depth: number;
}

export class TreeRows implements RuleRows {
  /** By id, in the order the rows were checked (their ids ascend in that order). */
  private readonly fresh = new Map<bigint, FreshRow>();
  /** The fresh rows of each type, and of each type by foreign key and value: a tree of thousands is checked in linear time. */
  private readonly byType = new Map<EntityTypeDef, Record<string, EdmValue>[]>();
  private readonly byForeignKey = new RowsByForeignKey();
  /** The root's values: in the database too, so not counted again where the database is asked. */
  private storedRoot: Record<string, EdmValue> | undefined;
  /** Per fresh row, the values its properties compare by (see EntityStore.comparedValue), as asked. */
  private readonly compared = new WeakMap<Record<string, EdmValue>, Map<string, SqlValue>>();
  /** Per fresh characteristic, its comparison keys. */
  private readonly characteristics = new WeakMap<Record<string, EdmValue>, Characteristic>();
  /** Per product, the fresh characteristics of its fresh variations, in id order. */
  private readonly freshCharacteristics = new Map<bigint, Record<string, EdmValue>[]>();
  /** The stored characteristics of a stored product, read once per tree: the tree changes none of them. */
  private readonly storedCharacteristics = new Map<string, Promise<Characteristic[]>>();

  constructor(
    private readonly model: Model,
    private readonly entities: EntityStore,
    private readonly queries: CatalogueQueries,
  ) {}

  /**
   * The tree's root, stored just now: nothing stored points at it yet, so it counts as fresh for
   * the questions about its children, but store() leaves it out.
   */
  addStoredRoot(type: EntityTypeDef, values: Record<string, EdmValue>): void {
    this.add(type, values, 0);
    this.storedRoot = values;
  }

  /** A row whose rules passed: the rows checked after it see it. */
  add(type: EntityTypeDef, values: Record<string, EdmValue>, depth: number): void {
    this.fresh.set(values.Id as bigint, { type, values, depth });
    listIn(this.byType, type).push(values);
    for (const name of foreignKeysOf(this.model, type)) {
      const value = values[name];
      if (typeof value === 'bigint') this.byForeignKey.add(type, name, value, values);
    }
    // A fresh characteristic's variation is its parent in the tree, so fresh too.
    if (type.name === 'ProductVariationSpecific') {
      const productId = this.fresh.get(values.ProductVariationId as bigint)?.values.ProductId;
      if (typeof productId === 'bigint') listIn(this.freshCharacteristics, productId).push(values);
    }
  }

  /**
   * Writes every fresh row, parents before children, in one multi-row INSERT per depth and type,
   * all sent at once (one round trip for the tree).
   */
  async store(tx: SqlExecutor, accountId: number): Promise<void> {
    const byDepth = new Map<number, Map<EntityTypeDef, Record<string, EdmValue>[]>>();
    for (const row of this.fresh.values()) {
      if (row.depth === 0) continue;
      let byType = byDepth.get(row.depth);
      if (!byType) byDepth.set(row.depth, (byType = new Map()));
      let rows = byType.get(row.type);
      if (!rows) byType.set(row.type, (rows = []));
      rows.push(row.values);
    }
    const batches = [...byDepth.keys()].sort((a, b) => a - b).flatMap((depth) => [...byDepth.get(depth)!].map(([type, rows]) => ({ type, rows })));
    await sentBehind(tx, this.entities.insertManyTogether(tx, accountId, batches));
  }

  async exists(tx: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint): Promise<boolean> {
    const row = this.fresh.get(id);
    return row ? row.type === type : this.entities.exists(tx, accountId, type, id);
  }

  async find(tx: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint): Promise<EntityRecord | undefined> {
    const row = this.fresh.get(id);
    if (row) return row.type === type ? { type, values: row.values, version: 1n } : undefined;
    return this.entities.find(tx, accountId, type, id);
  }

  async findWhere(tx: SqlExecutor, accountId: number, type: EntityTypeDef, name: string, value: EdmValue): Promise<EntityRecord[]> {
    const equal = { [name]: value };
    const askStored = !this.pointsAtFresh(type, equal);
    const stored = askStored ? await this.entities.findWhere(tx, accountId, type, name, value) : [];
    return [...stored, ...this.freshMatching(type, equal, askStored).map((values) => ({ type, values, version: 1n }))];
  }

  async countWhere(tx: SqlExecutor, accountId: number, type: EntityTypeDef, equal: Readonly<Record<string, EdmValue>>, excludeId?: bigint): Promise<number> {
    const askStored = !this.pointsAtFresh(type, equal);
    const stored = askStored ? await this.entities.countWhere(tx, accountId, type, equal, excludeId) : 0;
    return stored + this.freshMatching(type, equal, askStored).filter((values) => values.Id !== excludeId).length;
  }

  /**
   * A placement renumbering a fresh image changes it in memory; a stored one, in the database.
   * (Placements change an image's Type, never a foreign key, which byForeignKey indexes.)
   */
  async update(tx: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint, values: Readonly<Record<string, EdmValue>>, stored?: Readonly<Record<string, EdmValue>>): Promise<bigint | undefined> {
    const row = this.fresh.get(id);
    if (!row || row.values === this.storedRoot) {
      const version = await this.entities.update(tx, accountId, type, id, values, stored);
      if (row) this.assign(row, values);
      return version;
    }
    if (row.type !== type) return undefined;
    this.assign(row, values);
    return 1n;
  }

  private assign(row: FreshRow, values: Readonly<Record<string, EdmValue>>): void {
    Object.assign(row.values, values);
    this.compared.delete(row.values);
  }

  /**
   * CatalogueQueries.characteristicsOfProduct over stored and fresh rows: the characteristics
   * of every variation of the product, stored ones first, each in id order.
   */
  async characteristicsOfProduct(tx: SqlExecutor, accountId: number, product: ProductOf, exclude: CharacteristicsLeftOut = {}): Promise<Characteristic[]> {
    const variations = this.typeNamed('ProductVariation');
    const productId = 'productId' in product ? product.productId : (await this.find(tx, accountId, variations, product.ofVariation))?.values.ProductId;
    if (typeof productId !== 'bigint') return [];
    const stored = this.fresh.has(productId) ? [] : await this.storedCharacteristicsOf(tx, accountId, productId, exclude);
    const fresh = (this.freshCharacteristics.get(productId) ?? []).filter((row) => row.Id !== exclude.specificId && row.ProductVariationId !== exclude.variationId);
    return [...stored, ...fresh.map((row) => this.characteristicOf(row))];
  }

  private storedCharacteristicsOf(tx: SqlExecutor, accountId: number, productId: bigint, exclude: CharacteristicsLeftOut): Promise<Characteristic[]> {
    const key = `${productId} ${exclude.variationId} ${exclude.specificId}`;
    let read = this.storedCharacteristics.get(key);
    if (!read) this.storedCharacteristics.set(key, (read = this.queries.characteristicsOfProduct(tx, accountId, { productId }, exclude)));
    return read;
  }

  private characteristicOf(row: Record<string, EdmValue>): Characteristic {
    let c = this.characteristics.get(row);
    if (!c) {
      const [name, value] = [String(row.Name), String(row.Value)];
      this.characteristics.set(row, (c = { name, value, nameKey: comparisonKey(name), valueKey: comparisonKey(value) }));
    }
    return c;
  }

  private typeNamed(name: string): EntityTypeDef {
    return this.model.typeByName.get(name)!;
  }

  /** The fresh rows that match; without the stored root when the database was asked as well. */
  private freshMatching(type: EntityTypeDef, equal: Readonly<Record<string, EdmValue>>, storedAsked: boolean): Record<string, EdmValue>[] {
    // Asked for every row a tree checks: one pass over `equal`, one over the candidates.
    const keys = foreignKeysOf(this.model, type);
    let candidates: readonly Record<string, EdmValue>[] | undefined;
    const names: string[] = [];
    const wanted: SqlValue[] = [];
    for (const name in equal) {
      const value = equal[name]!;
      if (candidates === undefined && typeof value === 'bigint' && keys.has(name)) candidates = this.byForeignKey.get(type, name, value);
      names.push(name);
      wanted.push(this.entities.comparedValue(type, name, value));
    }
    candidates ??= this.byType.get(type) ?? [];
    const matching: Record<string, EdmValue>[] = [];
    for (const values of candidates) {
      if (storedAsked && values === this.storedRoot) continue;
      let all = true;
      for (let i = 0; all && i < names.length; i++) all = sameValue(this.comparedValueOf(type, values, names[i]!), wanted[i]!);
      if (all) matching.push(values);
    }
    return matching;
  }

  private comparedValueOf(type: EntityTypeDef, values: Record<string, EdmValue>, name: string): SqlValue {
    let byName = this.compared.get(values);
    if (!byName) this.compared.set(values, (byName = new Map()));
    let value = byName.get(name);
    if (value === undefined) byName.set(name, (value = this.entities.comparedValue(type, name, values[name])));
    return value;
  }

  /** Whether `equal` holds a foreign key naming a fresh row: then no stored row can match. */
  private pointsAtFresh(type: EntityTypeDef, equal: Readonly<Record<string, EdmValue>>): boolean {
    const keys = foreignKeysOf(this.model, type);
    for (const name in equal) {
      const value = equal[name];
      if (typeof value === 'bigint' && keys.has(name) && this.fresh.has(value)) return true;
    }
    return false;
  }
}

/** Two compared values equal as countWhere() compares them (null only to null: it asks IS NULL). */
function sameValue(a: SqlValue, b: SqlValue): boolean {
  if (a === null || b === null) return a === b;
  return Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : a === b;
}

/** Fresh rows by type, foreign key and the key's value: asked for every row a tree checks, so no key text is built. */
class RowsByForeignKey {
  private readonly byType = new Map<EntityTypeDef, Map<string, Map<bigint, Record<string, EdmValue>[]>>>();

  add(type: EntityTypeDef, name: string, value: bigint, row: Record<string, EdmValue>): void {
    let byName = this.byType.get(type);
    if (!byName) this.byType.set(type, (byName = new Map()));
    let byValue = byName.get(name);
    if (!byValue) byName.set(name, (byValue = new Map()));
    listIn(byValue, value).push(row);
  }

  get(type: EntityTypeDef, name: string, value: bigint): readonly Record<string, EdmValue>[] {
    return this.byType.get(type)?.get(name)?.get(value) ?? [];
  }
}

function listIn<K>(map: Map<K, Record<string, EdmValue>[]>, key: K): Record<string, EdmValue>[] {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}
