/**
 * $select: comma-separated items `*`, `Prop`, `Nav`, `Nav/*`, `Nav/Prop`, `Nav/Nav2/…`, each
 * checked against the model. As in WCF Data Services, a path may go through a navigation only when
 * $expand expands it at that level. The result is the set of items as written (trimmed), which the
 * writers consume as it is.
 */
import { findNavigation, findProperty } from '../../model/define';
import type { EntityTypeDef, Model } from '../../model/types';
import { badRequest } from '../errors';
import type { ExpandNode } from './ast';
import { qualifiedName } from '../../model/define';
import { show } from './show';

export function parseSelect(model: Model, type: EntityTypeDef, text: string, expand: readonly ExpandNode[]): ReadonlySet<string> {
  if (text.trim() === '') throw badRequest('The $select option is empty; name at least one property, navigation property or *.');
  const selected = new Set<string>();
  text.split(',').forEach((raw, index) => {
    const item = raw.trim();
    if (item === '') throw badRequest(`The $select option has an empty item (item ${index + 1}).`);
    checkItem(model, type, item, expand);
    selected.add(item);
  });
  return selected;
}

function checkItem(model: Model, type: EntityTypeDef, item: string, expand: readonly ExpandNode[]): void {
  const segments = item.split('/');
  let current = type;
  let expanded = expand;
  for (let i = 0; i < segments.length; i++) {
    const name = segments[i] ?? '';
    const last = i === segments.length - 1;
    const typeName = qualifiedName(model, current);
    if (name === '') throw badRequest(`The $select item '${show(item)}' has an empty segment.`);
    if (name === '*') {
      if (last) return;
      throw badRequest(`In the $select item '${show(item)}', '*' may only be the last segment.`);
    }
    if (findProperty(current, name)) {
      if (last) return;
      throw badRequest(
        `In the $select item '${show(item)}', '${show(name)}' is a property of type '${typeName}', not a navigation property; ` +
          "it cannot be followed by '/'.",
      );
    }
    const navigation = findNavigation(current, name);
    if (!navigation) {
      throw badRequest(`No property or navigation property '${show(name)}' exists in type '${typeName}' (in the $select item '${show(item)}').`);
    }
    if (last) return;
    const node = expanded.find((n) => n.navigation === navigation);
    if (!node) {
      throw badRequest(
        `The $select item '${show(item)}' selects inside the navigation property '${show(name)}', which $expand does not expand ` +
          'at that level; add it to $expand.',
      );
    }
    const target = model.typeByName.get(navigation.target);
    if (!target) throw badRequest(`The navigation property '${show(name)}' of type '${typeName}' leads to no known type.`);
    expanded = node.children;
    current = target;
  }
}
