/**
 * What deleting one entity removes with it: the entity, every row its 'cascade' relations own
 * (a product's images, specifics, variations and their parts, …) and every link-table pair any
 * of those rows was part of (a product's catalog links). Read inside the caller's transaction
 * just before the delete, so that a $batch changeset knows which entities it has removed (a
 * second DELETE of one of them answers 204, as the original service did).
 *
 * One statement per cascade path from the deleted type (nested IN sub-selects, plain `?`
 * parameters, portable SQL), not one per row: a product with 120 variations costs a dozen
 * statements, not hundreds.
 */
import type { EntityTypeDef, LinkTableRelation, Model, ReferenceRelation } from '../model/types';
import type { SqlExecutor, SqlValue } from './store';

const q = (name: string) => `"${name}"`;

export interface RemovedEntity {
  readonly type: EntityTypeDef;
  readonly id: bigint;
}

/** One pair of a link table, as (left id, right id) of its relation. */
export interface RemovedLink {
  readonly relation: LinkTableRelation;
  readonly left: bigint;
  readonly right: bigint;
}

export interface DeletionScope {
  /** The deleted entity first, then what its cascades take along. */
  readonly entities: readonly RemovedEntity[];
  readonly links: readonly RemovedLink[];
}

/** The ids of `type` rows selected by the SQL `ids` (a sub-select with its parameters). */
interface Selection {
  readonly type: EntityTypeDef;
  readonly sql: string;
  readonly params: readonly SqlValue[];
}

/**
 * Cascades nest only a few levels in the model (Product -> ProductVariation -> its parts); the
 * bound keeps a model mistake (a cascade cycle) from recursing without end.
 */
const MAX_CASCADE_DEPTH = 8;

function foreignKeyColumn(dependent: EntityTypeDef, relation: ReferenceRelation): string {
  return dependent.properties.find((p) => p.name === relation.foreignKey)!.column;
}

export async function deletionScope(tx: SqlExecutor, model: Model, accountId: number, type: EntityTypeDef, id: bigint): Promise<DeletionScope> {
  const entities: RemovedEntity[] = [{ type, id }];
  const selections: Selection[] = [{ type, sql: '?', params: [id] }];
  // Breadth first along the owning relations: each level's rows selected through the previous one.
  for (let level = 0, current = selections.slice(); current.length > 0 && level < MAX_CASCADE_DEPTH; level++) {
    const next: Selection[] = [];
    for (const parent of current) {
      for (const relation of model.relations) {
        if (relation.kind !== 'reference' || relation.onDelete !== 'cascade' || relation.principal !== parent.type.name) continue;
        const dependent = model.typeByName.get(relation.dependent)!;
        const selection: Selection = {
          type: dependent,
          sql: `SELECT id FROM ${q(dependent.table)} WHERE account_id = ? AND ${q(foreignKeyColumn(dependent, relation))} IN (${parent.sql})`,
          params: [accountId, ...parent.params],
        };
        const rows = await tx.all<{ id: bigint | number }>(selection.sql, selection.params);
        if (rows.length === 0) continue;
        for (const row of rows) entities.push({ type: dependent, id: BigInt(row.id) });
        next.push(selection);
      }
    }
    selections.push(...next);
    current = next;
  }
  return { entities, links: await linksOf(tx, model, accountId, selections) };
}

/** Every link-table pair that has one of the selected entities on either side. */
async function linksOf(tx: SqlExecutor, model: Model, accountId: number, selections: readonly Selection[]): Promise<RemovedLink[]> {
  const links: RemovedLink[] = [];
  for (const relation of model.relations) {
    if (relation.kind !== 'linkTable') continue;
    for (const selection of selections) {
      for (const [side, column] of [
        [relation.left, relation.leftColumn],
        [relation.right, relation.rightColumn],
      ] as const) {
        if (side !== selection.type.name) continue;
        const rows = await tx.all<{ l: bigint | number; r: bigint | number }>(
          `SELECT ${q(relation.leftColumn)} AS l, ${q(relation.rightColumn)} AS r FROM ${q(relation.table)} WHERE account_id = ? AND ${q(column)} IN (${selection.sql})`,
          [accountId, ...selection.params],
        );
        for (const row of rows) links.push({ relation, left: BigInt(row.l), right: BigInt(row.r) });
      }
    }
  }
  return links;
}
