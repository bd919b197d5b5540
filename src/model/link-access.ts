/**
 * Which links a seller may write through `$links`, derived from the model's access rules (one
 * answer for every relation `$metadata` declares, so the URI-kind table and the writes agree):
 *
 * - a reference (a foreign key on the dependent): writable where the dependent's set is seller
 *   data and its foreign key is writable; removable only where that key may be null. Writing it
 *   sets the key: PUT of the dependent's to-one link, POST of the principal's to-many link.
 * - a link table (Products–Catalogs, the catalog tree): added and removed when both ends are
 *   seller data.
 * - a through entity (ChildProducts/ParentProducts, kept as ProductRelations): added and removed
 *   when the through set is seller data; adding creates the relation entity with its defaults.
 *
 * Links whose foreign key the platform sets (orders, order items, buyers, addresses, listings)
 * are read only.
 */
import type { Model, NavigationDef } from './types';

export interface LinkAccess {
  /** POST of a to-many link, PUT of a to-one link. */
  readonly add: boolean;
  /** DELETE of a link. */
  readonly remove: boolean;
}

export function linkAccess(model: Model, nav: NavigationDef): LinkAccess {
  const r = nav.relation;
  switch (r.kind) {
    case 'reference': {
      const dependent = model.typeByName.get(r.dependent)!;
      const foreignKey = dependent.properties.find((p) => p.name === r.foreignKey)!;
      const add = dependent.access === 'catalogue' && foreignKey.access === 'writable';
      return { add, remove: add && foreignKey.nullable };
    }
    case 'linkTable': {
      const both = model.typeByName.get(r.left)!.access === 'catalogue' && model.typeByName.get(r.right)!.access === 'catalogue';
      return { add: both, remove: both };
    }
    case 'throughEntity': {
      const writable = model.typeByName.get(r.through)!.access === 'catalogue';
      return { add: writable, remove: writable };
    }
  }
}
