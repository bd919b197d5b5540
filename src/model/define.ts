/**
 * Small builders that turn the terse declarations of the catalogue model into the full model:
 * column names, navigation properties and CSDL role names are derived here, never written twice.
 */
import type {
  AssociationDef,
  EdmType,
  EntityTypeDef,
  Model,
  NavigationDef,
  PropertyDef,
  RelationDef,
  RelationEnd,
  ServiceOperationDef,
  SetAccess,
  UniqueKey,
} from './types';

export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

type PropertyOptions = Partial<Omit<PropertyDef, 'name' | 'type' | 'column' | 'concurrencyToken'>>;

/** A property declaration before it knows its name (the key of the declaring object). */
export interface PropertySpec {
  readonly type: EdmType;
  readonly options: PropertyOptions;
}

function spec(type: EdmType, options: PropertyOptions = {}): PropertySpec {
  return { type, options };
}

/** Property builders. Every property is non-nullable and writable unless said otherwise. */
export const p = {
  key: (): PropertySpec => spec('Edm.Int64', { access: 'key' }),
  int64: (o?: PropertyOptions) => spec('Edm.Int64', o),
  int32: (o?: PropertyOptions) => spec('Edm.Int32', o),
  decimal: (o?: PropertyOptions) => spec('Edm.Decimal', o),
  string: (o?: PropertyOptions) => spec('Edm.String', o),
  boolean: (o?: PropertyOptions) => spec('Edm.Boolean', o),
  dateTime: (o?: PropertyOptions) => spec('Edm.DateTime', o),
  created: () => spec('Edm.DateTime', { access: 'readOnly', timestamp: 'created' }),
  modified: () => spec('Edm.DateTime', { access: 'readOnly', timestamp: 'modified' }),
};

/** The property, watched: its changes are events (PropertyDef.watched). */
export function watched(s: PropertySpec): PropertySpec {
  return { type: s.type, options: { ...s.options, watched: true } };
}

export interface EntitySpec {
  readonly name: string;
  readonly setName: string;
  readonly setAliases?: readonly string[];
  readonly access: SetAccess;
  readonly properties: Readonly<Record<string, PropertySpec>>;
  /** Property names (a default message), or the key with its own message. */
  readonly uniqueKeys?: readonly (readonly string[] | UniqueKeySpec)[];
}

export interface UniqueKeySpec {
  readonly properties: readonly string[];
  /** See UniqueKey.message. */
  readonly message: string;
}

function buildUniqueKey(setName: string, spec: readonly string[] | UniqueKeySpec): UniqueKey {
  if ('properties' in spec) return { properties: spec.properties, message: spec.message };
  const properties = spec as readonly string[];
  const values = properties.map((name) => `${name} {${name}}`).join(', ');
  return { properties, message: `Another entity of ${setName} has ${values}: (${properties.join(', ')}) is unique per account.` };
}

/** A unique key's message for a write's values, each shown by `show` (the caller's quoting). */
export function uniqueKeyMessage(key: UniqueKey, values: Readonly<Record<string, unknown>>, show: (value: string) => string = (v) => v): string {
  return key.message.replace(/\{(\w+)\}/g, (_, name: string) => show(String(values[name] ?? null)));
}

export interface ModelSpec {
  readonly namespace: string;
  readonly containerName: string;
  readonly entities: readonly EntitySpec[];
  readonly relations: readonly RelationDef[];
  readonly operations: readonly ServiceOperationDef[];
}

function buildProperty(name: string, s: PropertySpec): PropertyDef {
  const o = s.options;
  const access = o.access ?? 'writable';
  return {
    name,
    type: s.type,
    nullable: o.nullable ?? false,
    access,
    // The ETag covers what a client may write (see PropertyDef.concurrencyToken).
    concurrencyToken: access === 'writable',
    column: snakeCase(name),
    ...(o.maxLength !== undefined ? { maxLength: o.maxLength } : {}),
    ...(o.textComparison ? { textComparison: o.textComparison } : {}),
    ...(o.blankIsNull ? { blankIsNull: true } : {}),
    ...(o.requiredOnCreate ? { requiredOnCreate: true } : {}),
    ...(o.defaultValue !== undefined ? { defaultValue: o.defaultValue } : {}),
    ...(o.min !== undefined ? { min: o.min } : {}),
    ...(o.max !== undefined ? { max: o.max } : {}),
    ...(o.timestamp ? { timestamp: o.timestamp } : {}),
    ...(o.indexed ? { indexed: true } : {}),
    ...(o.watched ? { watched: true } : {}),
  };
}

interface NavEnd {
  readonly owner: string;
  readonly name: string;
  readonly target: string;
  readonly many: boolean;
  readonly relation: RelationDef;
  readonly association: string;
  readonly fromRole: string;
  readonly toRole: string;
}

/**
 * The two ends of an association with their CSDL role names: the only place role names are
 * derived (navigations and $metadata both read them from here).
 *
 * - reference: [principal end, dependent end], roles `${name}_${principal}` and
 *   `${name}_${dependent}`; a self-reference would give both one name, so the dependent's
 *   gets the suffix `_Dependent`.
 * - linkTable / throughEntity: [left end, right end]. Each role is named after the navigation
 *   that leads to it: the left type plays `${name}_${rightNav}` (rightNav, on the right type,
 *   leads to left entities) and the right type plays `${name}_${leftNav}`. E.g. in
 *   Catalog_ChildCatalogs the child end is Catalog_ChildCatalogs_ChildCatalogs.
 */
function associationEnds(name: string, r: RelationDef): readonly [RelationEnd, RelationEnd] {
  if (r.kind === 'reference') {
    const principalRole = `${name}_${r.principal}`;
    const dependentRole = `${name}_${r.dependent}`;
    return [
      { type: r.principal, role: principalRole },
      { type: r.dependent, role: principalRole === dependentRole ? `${dependentRole}_Dependent` : dependentRole },
    ];
  }
  return [
    { type: r.left, role: `${name}_${r.rightNav}` },
    { type: r.right, role: `${name}_${r.leftNav}` },
  ];
}

/** The association of a relation (named after it), then one per twin navigation of a reference. */
function associationsOf(r: RelationDef): AssociationDef[] {
  const own: AssociationDef = { name: r.name, relation: r, ends: associationEnds(r.name, r) };
  if (r.kind !== 'reference') return [own];
  const twins = (r.principalNavTwins ?? []).map((twin): AssociationDef => {
    const name = `${r.principal}_${twin}`;
    return { name, relation: r, ends: associationEnds(name, r) };
  });
  return [own, ...twins];
}

/** Both ends of a relation, as navigations (an end without a navigation name is skipped). */
function navigationEnds(r: RelationDef): NavEnd[] {
  const ends: NavEnd[] = [];
  const [own, ...twins] = associationsOf(r);
  const [first, second] = own!.ends;
  if (r.kind === 'reference') {
    // first = principal, second = dependent.
    if (r.principalNav) {
      ends.push({ owner: r.principal, name: r.principalNav, target: r.dependent, many: true, relation: r, association: r.name, fromRole: first.role, toRole: second.role });
    }
    // A twin is one more to-many navigation on the principal, with an association of its own.
    for (const [i, twin] of (r.principalNavTwins ?? []).entries()) {
      const a = twins[i]!;
      ends.push({ owner: r.principal, name: twin, target: r.dependent, many: true, relation: r, association: a.name, fromRole: a.ends[0].role, toRole: a.ends[1].role });
    }
    if (r.dependentNav) {
      ends.push({ owner: r.dependent, name: r.dependentNav, target: r.principal, many: false, relation: r, association: r.name, fromRole: second.role, toRole: first.role });
    }
  } else {
    // first = left, second = right; a navigation goes from the role its owner plays to the other.
    ends.push({ owner: r.left, name: r.leftNav, target: r.right, many: true, relation: r, association: r.name, fromRole: first.role, toRole: second.role });
    ends.push({ owner: r.right, name: r.rightNav, target: r.left, many: true, relation: r, association: r.name, fromRole: second.role, toRole: first.role });
  }
  return ends;
}

export function defineModel(m: ModelSpec): Model {
  const ends = m.relations.flatMap(navigationEnds);
  const entityTypes: EntityTypeDef[] = m.entities.map((e) => {
    const navigations: NavigationDef[] = ends
      .filter((end) => end.owner === e.name)
      .map((end) => ({
        name: end.name,
        target: end.target,
        many: end.many,
        relation: end.relation,
        association: end.association,
        fromRole: end.fromRole,
        toRole: end.toRole,
      }));
    return {
      name: e.name,
      setName: e.setName,
      setAliases: e.setAliases ?? [],
      table: snakeCase(e.setName),
      access: e.access,
      properties: Object.entries(e.properties).map(([name, s]) => buildProperty(name, s)),
      navigations,
      uniqueKeys: (e.uniqueKeys ?? []).map((key) => buildUniqueKey(e.setName, key)),
    };
  });

  const typeByName = new Map(entityTypes.map((t) => [t.name, t] as const));
  const typeBySetName = new Map<string, EntityTypeDef>();
  for (const t of entityTypes) {
    for (const name of [t.setName, ...t.setAliases]) typeBySetName.set(name, t);
  }
  const model: Model = {
    namespace: m.namespace,
    containerName: m.containerName,
    entityTypes,
    relations: m.relations,
    associations: m.relations.flatMap(associationsOf),
    operations: m.operations,
    typeByName,
    typeBySetName,
    operationByName: new Map(m.operations.map((o) => [o.name, o] as const)),
  };
  checkModel(model);
  return model;
}

/** Fails at start-up, not at request time, when the declarations contradict each other. */
function checkModel(model: Model): void {
  const problems: string[] = [];
  for (const t of model.entityTypes) {
    const names = new Set<string>();
    for (const member of [...t.properties.map((x) => x.name), ...t.navigations.map((n) => n.name)]) {
      if (names.has(member)) problems.push(`${t.name}.${member} is declared twice`);
      names.add(member);
    }
    for (const key of t.uniqueKeys) {
      for (const name of key.properties) if (!t.properties.some((x) => x.name === name)) problems.push(`${t.name} unique key names unknown ${name}`);
    }
    if (t.properties[0]?.access !== 'key' || t.properties[0].name !== 'Id') problems.push(`${t.name} must start with its key Id`);
  }
  for (const r of model.relations) {
    const typesOf = r.kind === 'reference' ? [r.principal, r.dependent] : [r.left, r.right];
    for (const name of typesOf) if (!model.typeByName.has(name)) problems.push(`relation ${r.name} names unknown type ${name}`);
    if (r.kind === 'reference') {
      const fk = model.typeByName.get(r.dependent)?.properties.find((x) => x.name === r.foreignKey);
      if (!fk || fk.type !== 'Edm.Int64') problems.push(`relation ${r.name}: ${r.dependent}.${r.foreignKey} is not an Int64 property`);
      if (r.onDelete === 'setNull' && fk && !fk.nullable) problems.push(`relation ${r.name}: setNull needs a nullable ${r.foreignKey}`);
    }
  }
  const associationNames = new Set<string>();
  for (const a of model.associations) {
    if (associationNames.has(a.name)) problems.push(`association ${a.name} is declared twice`);
    associationNames.add(a.name);
  }
  if (problems.length) throw new Error(`The entity model is inconsistent:\n${problems.join('\n')}`);
}

/** A type's name as $metadata and the payloads qualify it: CatalogueService.Product. */
export function qualifiedName(model: Pick<Model, 'namespace'>, type: { readonly name: string } | string): string {
  return `${model.namespace}.${typeof type === 'string' ? type : type.name}`;
}

/** The navigation named `name` of a type. */
export function findNavigation(t: EntityTypeDef, name: string): NavigationDef | undefined {
  return t.navigations.find((n) => n.name === name);
}

/**
 * Whether a value a client sends for the property is applied. Only writable properties: the key
 * and the read-only properties (server-managed dates, platform data, values set by operations)
 * are ignored when sent, whatever they hold, in every write. The .NET WCF client sends every
 * property of its class, unset dates as 0001-01-01T00:00:00, and re-sends whole entities it read
 * earlier; WCF Data Services likewise ignores a key sent in an update.
 */
export function clientSets(property: PropertyDef): boolean {
  return property.access === 'writable';
}

const propertiesByName = new WeakMap<EntityTypeDef, ReadonlyMap<string, PropertyDef>>();

/** A type's property by name, from a map made once per type (the rules ask for every row they check). */
export function findProperty(t: EntityTypeDef, name: string): PropertyDef | undefined {
  let byName = propertiesByName.get(t);
  if (!byName) propertiesByName.set(t, (byName = new Map(t.properties.map((p) => [p.name, p]))));
  return byName.get(name);
}

/** The column of a type's property, by the property's name (which must exist). */
export function columnOf(t: EntityTypeDef, name: string): string {
  return findProperty(t, name)!.column;
}

const foreignKeysByType = new WeakMap<EntityTypeDef, ReadonlySet<string>>();

/** The properties of a type that hold a reference's foreign key (a parent's id); worked out once per type. */
export function foreignKeysOf(model: Pick<Model, 'relations'>, type: EntityTypeDef): ReadonlySet<string> {
  let keys = foreignKeysByType.get(type);
  if (!keys) {
    keys = new Set(model.relations.flatMap((r) => (r.kind === 'reference' && r.dependent === type.name ? [r.foreignKey] : [])));
    foreignKeysByType.set(type, keys);
  }
  return keys;
}
