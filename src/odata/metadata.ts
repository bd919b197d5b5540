/**
 * $metadata: the EDMX 1.0 / CSDL 2.0 document of the service, generated from the entity model.
 * It is computed once (callers cache the string); nothing here runs per request.
 *
 * Not shown in $metadata, by design: set aliases (the set ProductVariationPictures answers like
 * ProductVariationImages, but the container names only the latter, as the service document does).
 * The navigation ProductVariationPictures is a navigation of its own and is declared.
 */
import type {
  AssociationDef,
  EntityTypeDef,
  Model,
  Multiplicity,
  NavigationDef,
  PropertyDef,
  ServiceOperationDef,
} from '../model/types';
import { escapeXml } from './xml-escape';

export const EDMX_NS = 'http://schemas.microsoft.com/ado/2007/06/edmx';
export const EDM_NS = 'http://schemas.microsoft.com/ado/2008/09/edm';
export const DATA_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices';
export const METADATA_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices/metadata';

/** Facets of Edm.Decimal properties: every money and quantity value fits. */
const DECIMAL_PRECISION = 18;
const DECIMAL_SCALE = 6;

/** ` name="value"` with the value escaped. */
function attr(name: string, value: string | number): string {
  return ` ${name}="${escapeXml(String(value))}"`;
}

function renderProperty(prop: PropertyDef): string {
  let facets = '';
  if (prop.type === 'Edm.String') {
    // Strings without a length limit carry no MaxLength at all.
    if (prop.maxLength !== undefined) facets += attr('MaxLength', prop.maxLength);
    facets += attr('Unicode', 'true') + attr('FixedLength', 'false');
  } else if (prop.type === 'Edm.Decimal') {
    facets += attr('Precision', DECIMAL_PRECISION) + attr('Scale', DECIMAL_SCALE);
  }
  // Generated clients send If-Match for an entity whose type has a Fixed property.
  const concurrency = prop.concurrencyToken ? attr('ConcurrencyMode', 'Fixed') : '';
  return `<Property${attr('Name', prop.name)}${attr('Type', prop.type)}${attr('Nullable', String(prop.nullable))}${facets}${concurrency}/>`;
}

function renderNavigation(ns: string, nav: NavigationDef): string {
  return (
    `<NavigationProperty${attr('Name', nav.name)}${attr('Relationship', `${ns}.${nav.association}`)}` +
    `${attr('FromRole', nav.fromRole)}${attr('ToRole', nav.toRole)}/>`
  );
}

/**
 * An element with its children one per line, indented two spaces below it (people read the
 * document too). `open` is the start tag; without children it becomes an empty-element tag.
 */
function element(open: string, close: string, children: readonly string[]): string {
  if (children.length === 0) return open.replace(/>$/, '/>');
  return `${open}\n${children.join('\n').replace(/^/gm, '  ')}\n${close}`;
}

function renderEntityType(ns: string, t: EntityTypeDef): string {
  const key = t.properties.filter((x) => x.access === 'key');
  return element(
    `<EntityType${attr('Name', t.name)}>`,
    '</EntityType>',
    [
      `<Key>${key.map((x) => `<PropertyRef${attr('Name', x.name)}/>`).join('')}</Key>`,
      ...t.properties.map(renderProperty),
      ...t.navigations.map((n) => renderNavigation(ns, n)),
    ],
  );
}

interface AssociationEnd {
  readonly type: EntityTypeDef;
  readonly role: string;
  readonly multiplicity: Multiplicity;
}

/** Both ends of an association with their types and multiplicities (roles come from the model). */
function associationEnds(model: Model, a: AssociationDef): readonly [AssociationEnd, AssociationEnd] {
  const r = a.relation;
  const [first, second] = a.ends;
  const typeOf = (name: string): EntityTypeDef => {
    const t = model.typeByName.get(name);
    if (!t) throw new Error(`relation ${r.name} names unknown type ${name}`);
    return t;
  };
  if (r.kind === 'reference') {
    const fk = typeOf(r.dependent).properties.find((x) => x.name === r.foreignKey);
    if (!fk) throw new Error(`relation ${r.name}: ${r.dependent} has no property ${r.foreignKey}`);
    return [
      // A required foreign key always points at exactly one principal; a nullable one at most one.
      { type: typeOf(first.type), role: first.role, multiplicity: fk.nullable ? '0..1' : '1' },
      { type: typeOf(second.type), role: second.role, multiplicity: '*' },
    ];
  }
  return [
    { type: typeOf(first.type), role: first.role, multiplicity: '*' },
    { type: typeOf(second.type), role: second.role, multiplicity: '*' },
  ];
}

function renderAssociation(model: Model, a: AssociationDef): string {
  const ns = model.namespace;
  const r = a.relation;
  const ends = associationEnds(model, a);
  const children = ends.map(
    (end) => `<End${attr('Type', `${ns}.${end.type.name}`)}${attr('Role', end.role)}${attr('Multiplicity', end.multiplicity)}/>`,
  );
  if (r.kind === 'reference') {
    const [principal, dependent] = ends;
    children.push(
      `<ReferentialConstraint>` +
        `<Principal${attr('Role', principal.role)}><PropertyRef${attr('Name', 'Id')}/></Principal>` +
        `<Dependent${attr('Role', dependent.role)}><PropertyRef${attr('Name', r.foreignKey)}/></Dependent>` +
        `</ReferentialConstraint>`,
    );
  }
  return element(`<Association${attr('Name', a.name)}>`, '</Association>', children);
}

function renderAssociationSet(model: Model, a: AssociationDef): string {
  return element(
    `<AssociationSet${attr('Name', a.name)}${attr('Association', `${model.namespace}.${a.name}`)}>`,
    '</AssociationSet>',
    associationEnds(model, a).map((end) => `<End${attr('Role', end.role)}${attr('EntitySet', end.type.setName)}/>`),
  );
}

/**
 * CSDL 2.0 allows a FunctionImport parameter only Name, Type, Mode, MaxLength, Precision and
 * Scale: strict readers and code generators refuse a document whose parameters say Nullable, so
 * which parameters may be left out is the operation's own rule and not declared here.
 */
function renderFunctionImport(op: ServiceOperationDef): string {
  return element(
    `<FunctionImport${attr('Name', op.name)}${attr('ReturnType', op.returnType)}${attr('m:HttpMethod', op.httpMethod)}>`,
    '</FunctionImport>',
    op.parameters.map(
      (p) => `<Parameter${attr('Name', p.name)}${attr('Type', p.type)}${attr('Mode', 'In')}/>`,
    ),
  );
}

/** The complete $metadata document (EDMX 1.0, CSDL 2008/09, DataServiceVersion 1.0). */
export function renderMetadata(model: Model): string {
  const ns = model.namespace;
  const container = element(
    `<EntityContainer${attr('Name', model.containerName)}${attr('m:IsDefaultEntityContainer', 'true')}>`,
    '</EntityContainer>',
    [
      ...model.entityTypes.map((t) => `<EntitySet${attr('Name', t.setName)}${attr('EntityType', `${ns}.${t.name}`)}/>`),
      ...model.associations.map((a) => renderAssociationSet(model, a)),
      ...model.operations.map((op) => renderFunctionImport(op)),
    ],
  );
  const schema = element(
    `<Schema${attr('Namespace', ns)}${attr('xmlns', EDM_NS)}${attr('xmlns:d', DATA_NS)}${attr('xmlns:m', METADATA_NS)}>`,
    '</Schema>',
    [
      ...model.entityTypes.map((t) => renderEntityType(ns, t)),
      ...model.associations.map((a) => renderAssociation(model, a)),
      container,
    ],
  );
  return (
    `<?xml version="1.0" encoding="utf-8" standalone="yes"?>\n` +
    element(
      `<edmx:Edmx${attr('Version', '1.0')}${attr('xmlns:edmx', EDMX_NS)}>`,
      '</edmx:Edmx>',
      [element(`<edmx:DataServices${attr('xmlns:m', METADATA_NS)}${attr('m:DataServiceVersion', '1.0')}>`, '</edmx:DataServices>', [schema])],
    ) +
    '\n'
  );
}
