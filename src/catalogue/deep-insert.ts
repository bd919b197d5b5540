/**
 * Deep insert: a POST whose body carries new entities inline under its navigations (a product
 * with its specifics, images and variations, each variation with its characteristics and
 * pictures). The tree is checked here as a whole before the write's transaction, so that a
 * malformed tree never takes the writer: which navigations take inline entities, how many, and
 * each entity's own values (required properties, lengths, bounds). The rules that need the
 * database (unique keys, counting limits across stored rows) are checked inside the transaction
 * for every entity of the tree as it is created (CatalogueWrites.create), so the tree is stored
 * whole or not at all.
 */
import { findNavigation, qualifiedName } from '../model/define';
import type { EntityTypeDef, Model, NavigationDef } from '../model/types';
import { invalid } from '../model/rule-violation';
import type { EdmValue } from '../odata/edm';
import type { EntityPayload } from '../odata/entity';
import { LIMITS } from './rules';
import { applyPayload } from './values';

/** Most entities of one type a single parent may own, where a rule caps them (checked early). */
const CHILDREN_PER_PARENT: Readonly<Record<string, number>> = { ProductVariation: LIMITS.variationsPerProduct };

/**
 * The row each inline entity of a tree was checked as, by its payload: with a stand-in for the
 * parent's key and at time 0. The write makes its row from it (createdAt) instead of applying the
 * payload again. A map of the request's own, not a module-wide WeakMap: a long-lived WeakMap
 * costs every write a slow insertion and the collector extra work for each of its entries.
 */
export type CheckedRows = ReadonlyMap<EntityPayload, Readonly<Record<string, EdmValue>>>;

/** Most entities one deep insert may create, the top-level one included. */
export const MAX_DEEP_INSERT_ENTITIES = 5000;

/**
 * Whether entities may be created inline under `nav`: a to-many navigation to the dependents an
 * entity owns (their foreign key names it, deleting it deletes them), in a set the seller writes.
 * Everything else (catalog links, relations, orders, listings) is linked, not created inline.
 */
export function takesInlineEntities(model: Model, nav: NavigationDef): boolean {
  const r = nav.relation;
  return nav.many && r.kind === 'reference' && r.onDelete === 'cascade' && model.typeByName.get(nav.target)!.access === 'catalogue';
}

/**
 * Checks the tree of a create before its transaction; throws a RuleViolation ('invalid', a 400)
 * naming the navigation or the entity at fault. The top-level entity is checked in the
 * transaction as any create is. Answers the row each inline entity was checked as.
 */
export function checkDeepInsert(model: Model, type: EntityTypeDef, payload: EntityPayload): CheckedRows {
  const checked = new Map<EntityPayload, Readonly<Record<string, EdmValue>>>();
  if (!payload.inline) return checked;
  let count = 1;
  const walk = (parentType: EntityTypeDef, parent: EntityPayload, where: string): void => {
    for (const [navName, children] of parent.inline ?? []) {
      const nav = findNavigation(parentType, navName)!;
      const at = `${where}/${navName}`;
      if (!takesInlineEntities(model, nav)) {
        throw invalid(`Entities cannot be created inline under '${at}': send them to their own set and link them by URI.`);
      }
      const target = model.typeByName.get(nav.target)!;
      const cap = CHILDREN_PER_PARENT[target.name];
      if (cap !== undefined && children.length > cap) {
        throw invalid(`A ${parentType.name} has at most ${cap} ${nav.name}; '${at}' holds ${children.length}.`);
      }
      count += children.length;
      if (count > MAX_DEEP_INSERT_ENTITIES) throw invalid(`A deep insert creates at most ${MAX_DEEP_INSERT_ENTITIES} entities.`);
      // The parent's key is not known yet: a stand-in lets the values be judged now.
      const parentKey = { name: (nav.relation as { foreignKey: string }).foreignKey, value: 0n };
      for (let i = 0; i < children.length; i++) {
        const child = children[i]!;
        try {
          checked.set(child, applyPayload(target, child.values, 'create', undefined, 0, parentKey));
        } catch (error) {
          if (error instanceof Error) error.message = `${at}[${i}] (${qualifiedName(model, target)}): ${error.message}`;
          throw error;
        }
        if (child.inline) walk(target, child, `${at}[${i}]`);
      }
    }
  };
  walk(type, payload, type.setName);
  return checked;
}

/** Inline entities belong to a POST only: an update never creates entities (WCF's rule too). */
export function refuseInlineInUpdate(type: EntityTypeDef, payload: EntityPayload): void {
  const names = [...(payload.inline?.keys() ?? [])];
  if (names.length > 0) {
    throw invalid(`An update of a ${type.name} cannot carry entities inline ('${names.join("', '")}'): deep insert is for POST only; create them in their own sets.`);
  }
}
