/**
 * The entity sets as the generators see them, read from the service's own model: each set's
 * properties by Edm type, its navigations, and the paths through its to-one navigations, so that
 * generated expressions name real members (and then break them on purpose).
 */
import { model } from '../../../src/model/catalogue-model';
import type { EdmType, EntityTypeDef } from '../../../src/model/types';

export interface SetShape {
  readonly name: string;
  readonly type: EntityTypeDef;
  /** Property paths by type: own properties and those through one to-one navigation. */
  readonly paths: ReadonlyMap<EdmType, readonly string[]>;
  readonly navigations: readonly string[];
  readonly properties: readonly string[];
}

function shapeOf(type: EntityTypeDef): SetShape {
  const paths = new Map<EdmType, string[]>();
  const add = (path: string, edm: EdmType) => paths.set(edm, [...(paths.get(edm) ?? []), path]);
  for (const p of type.properties) add(p.name, p.type);
  for (const nav of type.navigations.filter((n) => !n.many)) {
    const target = model.typeByName.get(nav.target);
    for (const p of target?.properties ?? []) add(`${nav.name}/${p.name}`, p.type);
  }
  return {
    name: type.setName,
    type,
    paths,
    navigations: type.navigations.map((n) => n.name),
    properties: type.properties.map((p) => p.name),
  };
}

export const SETS: readonly SetShape[] = model.entityTypes.map(shapeOf);

export const OPERATIONS = model.operations;
