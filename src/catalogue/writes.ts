/**
 * Creating, updating and deleting entities and links: each call applies a payload to the model,
 * checks the set's rules and writes the rows, all inside the caller's transaction (`tx`, from
 * Store.write). One request is one transaction; a $batch changeset runs several calls in one.
 * The caller answers the client only after the transaction has committed.
 */
import type { Clock } from '../clock';
import type { EntityTypeDef, Model, NavigationDef } from '../model/types';
import { EntityMissing, invalid, RuleViolation } from '../model/rule-violation';
import type { EdmValue } from '../odata/edm';
import { entityId, inlineCount, type EntityPayload, type EntityRecord } from '../odata/entity';
import type { EntityStore } from '../store/entities';
import { sentBehind, type SqlExecutor, type Store } from '../store/store';
import { findNavigation } from '../model/define';
import { takesInlineEntities, type CheckedRows } from './deep-insert';
import { applyDeleteFollowUps, applyFollowUps, catalogCycle, checkRules, followUpsRewrite, hasDeleteFollowUps, placementsRewrite, queriesOf } from './rules';
import type { RuleRows } from './rule-rows';
import { TreeRows } from './tree-rows';
import { applyPayload, createdAt, type WriteMode } from './values';

/** The other end of a binding or $link: an entity of a given set, named by its URI. */
export type UriResolver = (uri: string, expected: EntityTypeDef) => bigint;

/** What a create knows besides its payload. */
export interface CreateOptions {
  /** The entity a POST through its navigation belongs to (POST to Products(1L)/ProductImages). */
  readonly parent?: { readonly nav: NavigationDef; readonly id: bigint };
  /** The rows the tree's inline entities were checked as before the transaction (checkDeepInsert). */
  readonly checked?: CheckedRows;
}

export interface Created {
  readonly record: EntityRecord;
  /** False when an identical entity existed and was answered instead (idempotent CarParts). */
  readonly created: boolean;
}

/**
 * The entity URIs among a navigation's bindings. An entry read from the service and sent back
 * carries its deferred navigation links (`ProductSpecifics(5L)/Product`): they name a navigation,
 * not an entity, and bind nothing.
 */
export function bindingUris(uris: readonly string[]): string[] {
  return uris.filter((uri) => !/\)\/[A-Za-z_]\w*\/?$/.test(uri.split('?')[0]!));
}

/** Sets whose POST of an entity identical to an existing one answers the existing one. */
const IDEMPOTENT_CREATE = new Set(['CarPart']);

export class CatalogueWrites {
  constructor(
    private readonly model: Model,
    private readonly store: Store,
    private readonly entities: EntityStore,
    private readonly clock: Clock,
    private readonly resolve: UriResolver,
  ) {}

  /** The foreign keys named by to-one bindings ("Product": {"__metadata":{"uri":…}}). */
  private withBindings(type: EntityTypeDef, payload: EntityPayload): Map<string, EdmValue> {
    const values = new Map(payload.values);
    for (const [navName, sent] of payload.bindings) {
      const nav = type.navigations.find((n) => n.name === navName)!;
      const r = nav.relation;
      const uris = bindingUris(sent);
      if (uris.length === 0) continue;
      if (r.kind === 'reference' && !nav.many) {
        if (uris.length !== 1) throw invalid(`The navigation '${navName}' binds exactly one entity.`);
        const target = this.model.typeByName.get(nav.target)!;
        const boundId = this.resolve(uris[0]!, target);
        const sent = values.get(r.foreignKey);
        if (isSet(sent) && sent !== boundId) {
          throw invalid(`${r.foreignKey} ${String(sent)} contradicts the binding of '${navName}' to ${String(boundId)}.`);
        }
        values.set(r.foreignKey, boundId);
      } else if (r.kind !== 'linkTable') {
        throw invalid(`The navigation '${navName}' cannot be bound in a request body.`);
      }
    }
    return values;
  }

  /** Many-to-many bindings sent with a create are added as links after the insert. */
  private async addBoundLinks(tx: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint, payload: EntityPayload): Promise<void> {
    for (const [navName, sent] of payload.bindings) {
      const nav = type.navigations.find((n) => n.name === navName)!;
      if (nav.relation.kind !== 'linkTable') continue;
      for (const uri of bindingUris(sent)) await this.link(tx, accountId, type, id, nav, this.resolve(uri, this.model.typeByName.get(nav.target)!));
    }
  }

  async create(tx: SqlExecutor, accountId: number, type: EntityTypeDef, payload: EntityPayload, options: CreateOptions = {}): Promise<Created> {
    const { parent, checked } = options;
    const values = this.withBindings(type, payload);
    if (parent) {
      // POST to Products(1L)/ProductImages: the new entity belongs to that product.
      const r = parent.nav.relation;
      if (r.kind !== 'reference' || !parent.nav.many) throw invalid(`Entities cannot be created through the navigation '${parent.nav.name}'.`);
      setParent(values, r.foreignKey, parent.id);
    }
    const row = applyPayload(type, values, 'create', undefined, this.clock.now());
    if (IDEMPOTENT_CREATE.has(type.name)) {
      const existing = await this.findIdentical(tx, accountId, this.entities, type, row);
      if (existing) return { record: existing, created: false };
    }
    row.Id = await this.store.nextId(tx);
    await checkRules({ tx, accountId, entities: this.entities, rows: this.entities, model: this.model, type, row });
    // Its rules were checked: nothing that follows needs the INSERT's answer.
    await sentBehind(tx, this.entities.insert(tx, accountId, type, row));
    await this.addBoundLinks(tx, accountId, type, row.Id, payload);
    if (payload.inline && payload.inline.size > 0) await this.createTree(tx, accountId, type, row, payload, checked);
    // A new row starts at version 1 (the column's default).
    return { record: { type, values: row, version: 1n }, created: true };
  }

  /**
   * Deep insert: the entities sent inline are created after their parent (the root is stored
   * already, with its links), in document order, each with every rule of its set as create()
   * applies them, so that the counting limits and unique keys see the siblings made before.
   * They are checked against a view that holds them in memory (tree-rows.ts) and stored together
   * at the end, a multi-row INSERT per type and depth; their many-to-many bindings are linked
   * after that. The tree's shape was checked before the transaction (deep-insert.ts). A foreign
   * key sent in a nested entity cannot name the parent, which had no key when it was sent: it is
   * replaced.
   */
  private async createTree(tx: SqlExecutor, accountId: number, rootType: EntityTypeDef, rootRow: Record<string, EdmValue>, root: EntityPayload, checked: CheckedRows | undefined): Promise<void> {
    const tree = new TreeRows(this.model, this.entities, queriesOf(this.model));
    tree.addStoredRoot(rootType, rootRow);
    const ids = await this.store.nextIds(tx, inlineCount(root));
    let next = 0;
    const boundLinks: (() => Promise<void>)[] = [];
    const createChildren = async (type: EntityTypeDef, id: bigint, payload: EntityPayload, depth: number): Promise<void> => {
      for (const [navName, children] of payload.inline ?? []) {
        const nav = findNavigation(type, navName)!;
        if (!takesInlineEntities(this.model, nav)) throw invalid(`Entities cannot be created inline under '${navName}'.`);
        const target = this.model.typeByName.get(nav.target)!;
        const foreignKey = (nav.relation as { foreignKey: string }).foreignKey;
        for (const child of children) {
          const row = this.childRow(target, child, foreignKey, id, checked);
          if (IDEMPOTENT_CREATE.has(target.name) && (await this.findIdentical(tx, accountId, tree, target, row))) continue;
          row.Id = ids[next++]!;
          await checkRules({ tx, accountId, entities: this.entities, rows: tree, model: this.model, type: target, row });
          tree.add(target, row, depth);
          if (child.bindings.size > 0) boundLinks.push(() => this.addBoundLinks(tx, accountId, target, row.Id as bigint, child));
          if (child.inline) await createChildren(target, row.Id, child, depth + 1);
        }
      }
    };
    await createChildren(rootType, rootRow.Id as bigint, root, 1);
    await tree.store(tx, accountId);
    for (const link of boundLinks) await link();
  }

  /**
   * The row of an inline entity under the parent `parentId`. One without bindings was checked
   * before the transaction with a stand-in for the parent's key (deep-insert.ts): that row,
   * with the key and the write's time, is the row applyPayload would make.
   */
  private childRow(type: EntityTypeDef, child: EntityPayload, foreignKey: string, parentId: bigint, checkedRows: CheckedRows | undefined): Record<string, EdmValue> {
    const checked = child.bindings.size === 0 ? checkedRows?.get(child) : undefined;
    if (checked) {
      const row = createdAt(type, checked, this.clock.now());
      row[foreignKey] = parentId;
      return row;
    }
    const sent = new Map(child.values);
    sent.delete(foreignKey);
    const values = this.withBindings(type, { ...child, values: sent });
    setParent(values, foreignKey, parentId);
    return applyPayload(type, values, 'create', undefined, this.clock.now());
  }

  private async findIdentical(tx: SqlExecutor, accountId: number, rows: RuleRows, type: EntityTypeDef, row: Record<string, EdmValue>): Promise<EntityRecord | undefined> {
    for (const candidate of await rows.findWhere(tx, accountId, type, 'ProductId', row.ProductId ?? null)) {
      if (type.properties.every((p) => p.access !== 'writable' || (candidate.values[p.name] ?? null) === (row[p.name] ?? null))) return candidate;
    }
    return undefined;
  }

  /**
   * Answers the entity's new version (its ETag). `read` is the row as the caller read it in this
   * same transaction (it resolved the request's path), which saves reading it again.
   */
  async update(tx: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint, payload: EntityPayload, mode: Exclude<WriteMode, 'create'>, read?: EntityRecord): Promise<bigint> {
    const values = this.withBindings(type, payload);
    const stored = read?.type === type && read.values.Id === id ? read : await this.entities.find(tx, accountId, type, id);
    if (!stored) throw new EntityMissing(type, id);
    const row = applyPayload(type, values, mode, stored, this.clock.now());
    const ctx = { tx, accountId, entities: this.entities, rows: this.entities, model: this.model, type, row, stored, sent: new Set(values.keys()) };
    await checkRules(ctx);
    const version = await this.entities.update(tx, accountId, type, id, row, placementsRewrite(type) ? undefined : stored.values, stored.version);
    await applyFollowUps(ctx);
    // Read back when follow-ups (order history) may have changed the row again.
    if (version !== undefined && !followUpsRewrite(type)) return version;
    return this.entities.versionOf(tx, accountId, type, id);
  }

  async delete(tx: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint): Promise<void> {
    const stored = hasDeleteFollowUps(type) ? await this.entities.find(tx, accountId, type, id) : undefined;
    if (!(await this.entities.delete(tx, accountId, type, id))) throw new EntityMissing(type, id);
    if (stored) {
      await applyDeleteFollowUps({ tx, accountId, entities: this.entities, rows: this.entities, model: this.model, type, row: stored.values, stored }, this.clock.now());
    }
  }

  /** Adds a many-to-many link, refusing catalog cycles; adding an existing link changes nothing. */
  private async link(tx: SqlExecutor, accountId: number, sourceType: EntityTypeDef, sourceId: bigint, nav: NavigationDef, targetId: bigint): Promise<void> {
    const r = nav.relation;
    if (r.kind !== 'linkTable') throw invalid(`Links of '${nav.name}' are not managed with $links.`);
    const target = this.model.typeByName.get(nav.target)!;
    if (!(await this.entities.exists(tx, accountId, target, targetId))) throw new EntityMissing(target, targetId);
    if (r.left === r.right) {
      const [parent, child] = nav.name === r.leftNav ? [sourceId, targetId] : [targetId, sourceId];
      if (await catalogCycle(tx, this.model, accountId, r.table, r.leftColumn, r.rightColumn, parent, child)) {
        throw invalid(`Linking ${sourceType.setName}(${sourceId}L) to ${target.setName}(${targetId}L) through '${nav.name}' would make a ${sourceType.name} its own ancestor.`);
      }
    }
    await this.entities.addLink(tx, accountId, nav, sourceId, targetId);
  }

  /**
   * Links `sourceId` to the entity `targetUri` names through `nav` (POST of a to-many $links, PUT
   * of a to-one): a link table gets the pair; a through entity (ChildProducts) is created with
   * its defaults; a reference sets the dependent's foreign key, as a MERGE of it would, with
   * every rule of the dependent's set (a variation moved to another product counts there).
   * Admission let through only the links model/link-access.ts allows.
   */
  async addLink(tx: SqlExecutor, accountId: number, sourceType: EntityTypeDef, sourceId: bigint, nav: NavigationDef, targetUri: string): Promise<void> {
    const target = this.model.typeByName.get(nav.target)!;
    const targetId = this.resolve(targetUri, target);
    if (!(await this.entities.exists(tx, accountId, sourceType, sourceId))) throw new EntityMissing(sourceType, sourceId);
    const r = nav.relation;
    switch (r.kind) {
      case 'linkTable':
        return this.link(tx, accountId, sourceType, sourceId, nav, targetId);
      case 'throughEntity': {
        if (!(await this.entities.exists(tx, accountId, target, targetId))) throw new EntityMissing(target, targetId);
        const [left, right] = nav.name === r.leftNav ? [sourceId, targetId] : [targetId, sourceId];
        const values = new Map<string, EdmValue>([[r.leftKey, left], [r.rightKey, right]]);
        await this.create(tx, accountId, this.model.typeByName.get(r.through)!, { values, bindings: new Map() });
        return;
      }
      case 'reference': {
        if (!(await this.entities.exists(tx, accountId, target, targetId))) throw new EntityMissing(target, targetId);
        // The principal's to-many link names a dependent to take over; the dependent's to-one link names its new principal.
        if (nav.many) await this.setForeignKey(tx, accountId, target, targetId, r.foreignKey, sourceId);
        else await this.setForeignKey(tx, accountId, sourceType, sourceId, r.foreignKey, targetId);
        return;
      }
    }
  }

  /** DELETE of `source/$links/Nav(targetId)`: the link must exist (else 404). */
  async removeLink(tx: SqlExecutor, accountId: number, sourceType: EntityTypeDef, sourceId: bigint, nav: NavigationDef, targetId: bigint): Promise<void> {
    if (!(await this.entities.exists(tx, accountId, sourceType, sourceId))) throw new EntityMissing(sourceType, sourceId);
    const missing = () => new RuleViolation('notFound', `${sourceType.setName}(${sourceId}L) has no link '${nav.name}' to ${String(targetId)}.`);
    const r = nav.relation;
    switch (r.kind) {
      case 'linkTable':
        if (!(await this.entities.removeLink(tx, accountId, nav, sourceId, targetId))) throw missing();
        return;
      case 'throughEntity': {
        const through = this.model.typeByName.get(r.through)!;
        const [left, right] = nav.name === r.leftNav ? [sourceId, targetId] : [targetId, sourceId];
        const pairs = (await this.entities.findWhere(tx, accountId, through, r.leftKey, left)).filter((row) => row.values[r.rightKey] === right);
        if (pairs.length === 0) throw missing();
        for (const pair of pairs) await this.entities.delete(tx, accountId, through, entityId(pair.values));
        return;
      }
      case 'reference': {
        // A principal's to-many link: the dependent is unlinked by clearing its foreign key.
        const dependent = this.model.typeByName.get(r.dependent)!;
        const row = await this.entities.find(tx, accountId, dependent, targetId);
        if (!nav.many || !row || row.values[r.foreignKey] !== sourceId) throw missing();
        await this.setForeignKey(tx, accountId, dependent, targetId, r.foreignKey, null);
        return;
      }
    }
  }

  /** DELETE of `source/$links/ToOne`: the foreign key is cleared (admitted only where it may be null). */
  async clearLink(tx: SqlExecutor, accountId: number, sourceType: EntityTypeDef, sourceId: bigint, nav: NavigationDef): Promise<void> {
    const r = nav.relation;
    if (r.kind !== 'reference' || nav.many) throw invalid(`The link '${nav.name}' is not a single link.`);
    await this.setForeignKey(tx, accountId, sourceType, sourceId, r.foreignKey, null);
  }

  /** A link written as a MERGE of the foreign key: the same rules, follow-ups and ETag. */
  private async setForeignKey(tx: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint, foreignKey: string, value: bigint | null): Promise<void> {
    await this.update(tx, accountId, type, id, { values: new Map([[foreignKey, value]]), bindings: new Map() }, 'merge');
  }
}

/**
 * Whether a foreign key sent names an entity. 0 does not: no entity has the key 0, and the .NET
 * client's generated classes hold every foreign key as a non-nullable long that is 0 until set,
 * so a child it creates under a parent named by the URI or by a binding arrives with 0.
 */
function isSet(foreignKey: EdmValue | undefined): boolean {
  return foreignKey !== undefined && foreignKey !== null && foreignKey !== 0n;
}

/** The entity under a parent names that parent: a foreign key sent that names another is refused. */
function setParent(values: Map<string, EdmValue>, foreignKey: string, parentId: bigint): void {
  const sent = values.get(foreignKey);
  if (isSet(sent) && sent !== parentId) throw invalid(`${foreignKey} ${String(sent)} contradicts the parent ${String(parentId)} in the URI.`);
  values.set(foreignKey, parentId);
}
