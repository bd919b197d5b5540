/** The entity model's types by name, for tests: an unknown name is the test's mistake, said at once. */
import { model } from '../../src/model/catalogue-model';
import type { EntityTypeDef } from '../../src/model/types';

/** The entity type named `name` (`ProductVariation`). */
export function entityType(name: string): EntityTypeDef {
  const type = model.typeByName.get(name);
  if (!type) throw new Error(`the model has no entity type ${name}`);
  return type;
}

/** The entity type behind the set (or set alias) `setName` (`ProductVariations`). */
export function setType(setName: string): EntityTypeDef {
  const type = model.typeBySetName.get(setName);
  if (!type) throw new Error(`the model has no entity set ${setName}`);
  return type;
}
