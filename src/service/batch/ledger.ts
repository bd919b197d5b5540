/**
 * What one $batch changeset has done so far, for the operations after it:
 * - the entity each Content-ID created or changed, which a later `$n` target refers to;
 * - the entities and link-table pairs it removed (directly, or by a delete's cascade).
 *
 * The second list exists for the connector's product deletion: one changeset that deletes the
 * product's parts (listing each ProductSpecifics DELETE twice) and then the product (docs/protocol.md):
 * the original service (WCF Data Services over Entity Framework) applied a changeset to its
 * context and saved once at the end, so a DELETE of an entity that an earlier operation of the
 * same changeset had deleted still succeeded. Here every operation writes at once, so the ledger
 * remembers what is gone and such a DELETE answers 204 without touching the database.
 */
import type { EntityTypeDef, LinkTableRelation, NavigationDef } from '../../model/types';
import type { DeletionScope } from '../../store/cascade';

export interface EntityRef {
  readonly type: EntityTypeDef;
  readonly id: bigint;
}

const entityKey = (type: EntityTypeDef, id: bigint) => `${type.name}(${id})`;
const linkKey = (relation: LinkTableRelation, left: bigint, right: bigint) => `${relation.name}(${left},${right})`;

/** The pair a `$links` navigation names, as (left, right) of its link table; undefined for other relations. */
export function linkPair(navigation: NavigationDef, sourceId: bigint, targetId: bigint): { relation: LinkTableRelation; left: bigint; right: bigint } | undefined {
  const relation = navigation.relation;
  if (relation.kind !== 'linkTable') return undefined;
  // Navigation names tell the two ends apart, also for the catalog tree (Catalog to Catalog).
  return navigation.name === relation.leftNav ? { relation, left: sourceId, right: targetId } : { relation, left: targetId, right: sourceId };
}

export class ChangesetLedger {
  /** Content-ID -> the entity its operation created or changed; undefined when it touched none. */
  private readonly byContentId = new Map<string, EntityRef | undefined>();
  private readonly removedEntities = new Set<string>();
  private readonly removedLinks = new Set<string>();

  /** Records that the operation with `contentId` ran and what entity it created or changed. */
  recordOutcome(contentId: string, entity: EntityRef | undefined): void {
    this.byContentId.set(contentId, entity);
  }

  /** Whether the operation with `contentId` has run. */
  ran(contentId: string): boolean {
    return this.byContentId.has(contentId);
  }

  /** The entity behind `$contentId`; undefined when its operation created or changed none. */
  entityOf(contentId: string): EntityRef | undefined {
    return this.byContentId.get(contentId);
  }

  recordDeletion(scope: DeletionScope): void {
    for (const { type, id } of scope.entities) this.removedEntities.add(entityKey(type, id));
    for (const { relation, left, right } of scope.links) this.removedLinks.add(linkKey(relation, left, right));
  }

  recordRemovedLink(relation: LinkTableRelation, left: bigint, right: bigint): void {
    this.removedLinks.add(linkKey(relation, left, right));
  }

  wasRemoved(type: EntityTypeDef, id: bigint): boolean {
    return this.removedEntities.has(entityKey(type, id));
  }

  wasLinkRemoved(relation: LinkTableRelation, left: bigint, right: bigint): boolean {
    return this.removedLinks.has(linkKey(relation, left, right));
  }
}
