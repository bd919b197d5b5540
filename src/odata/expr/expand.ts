/**
 * $expand: comma-separated paths of navigation properties (`ProductVariations/ProductVariationPictures`),
 * merged into one tree in which each navigation appears once per level. Both to-one and to-many
 * navigations may be expanded. The limits (depth of a path, number of paths) are checked before
 * any name is looked up.
 */
import { findNavigation, findProperty } from '../../model/define';
import type { EntityTypeDef, Model, NavigationDef } from '../../model/types';
import { badRequest } from '../errors';
import { DEFAULT_EXPAND_LIMITS, type ExpandLimits, type ExpandNode } from './ast';
import { qualifiedName } from '../../model/define';
import { show } from './show';

/** An ExpandNode while the tree is built. */
interface Building {
  readonly navigation: NavigationDef;
  readonly name: string;
  readonly children: Building[];
}

export function parseExpand(model: Model, type: EntityTypeDef, text: string, limits: ExpandLimits = DEFAULT_EXPAND_LIMITS): ExpandNode[] {
  // An empty $expand expands nothing, as WCF Data Services treats it.
  if (text.trim() === '') return [];
  const items = text.split(',');
  if (items.length > limits.maxPaths) {
    throw badRequest(`The $expand option has ${items.length} paths, more than the ${limits.maxPaths} allowed.`);
  }
  const roots: Building[] = [];
  items.forEach((item, index) => {
    const path = item.trim();
    if (path === '') throw badRequest(`The $expand option has an empty path (item ${index + 1}).`);
    const segments = path.split('/');
    if (segments.length > limits.maxDepth) {
      throw badRequest(
        `The $expand path '${show(path)}' has ${segments.length} segments, more than the ${limits.maxDepth} navigations allowed in one path.`,
      );
    }
    let level = roots;
    let current = type;
    for (const name of segments) {
      if (name === '') throw badRequest(`The $expand path '${show(path)}' has an empty segment.`);
      const typeName = qualifiedName(model, current);
      const navigation = findNavigation(current, name);
      if (!navigation) {
        if (findProperty(current, name)) {
          throw badRequest(
            `'${show(name)}' in the $expand path '${show(path)}' is a property of type '${typeName}', not a navigation property; ` +
              '$expand names navigation properties only.',
          );
        }
        throw badRequest(`No navigation property '${show(name)}' exists in type '${typeName}' (in the $expand path '${show(path)}').`);
      }
      const target = model.typeByName.get(navigation.target);
      if (!target) throw badRequest(`The navigation property '${show(name)}' of type '${typeName}' leads to no known type.`);
      // A navigation written twice at one level is one node.
      let node = level.find((n) => n.navigation === navigation);
      if (!node) {
        node = { navigation, name, children: [] };
        level.push(node);
      }
      level = node.children;
      current = target;
    }
  });
  return roots;
}
