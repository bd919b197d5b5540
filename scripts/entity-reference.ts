/**
 * Writes docs/entity-sets.md, the entity set reference, from the entity model (src/model/): every
 * set, property, type, nullability, length, bound, default, access, key, uniqueness key, foreign
 * key and navigation, and the service operations. The few rules the model does not hold as data
 * (counting limits, value formats, cycles) are described below in words, with their numbers taken
 * from the code that checks them.
 *
 *   npm run docs           regenerates the file
 *
 * test/scripts/entity-reference.test.ts renders the reference in memory and fails when the
 * committed file differs, so the reference cannot fall behind the model.
 */
import fs from 'node:fs';
import path from 'node:path';
import { model as catalogueModel } from '../src/model/catalogue-model';
import type { EntityTypeDef, Model, NavigationDef, PropertyDef, RelationDef, SetAccess } from '../src/model/types';
import { LIMITS } from '../src/catalogue/rules';
import { takesInlineEntities } from '../src/catalogue/deep-insert';
import { linkAccess } from '../src/model/link-access';

/** Where the reference lives, relative to the repository root. */
export const REFERENCE_PATH = path.join('docs', 'entity-sets.md');

/**
 * Rules that src/catalogue/rules.ts checks in code because they are not a property's facet or a
 * uniqueness key. When a rule is added there, describe it here (and run `npm run docs`).
 */
const URL_RULE = '`ImageUrl` must be an absolute `http` or `https` URL as written, with `//` and a host and no blank anywhere: `http:/x.jpg`, a leading blank or a space inside are refused (400).';

const RULES_IN_WORDS: Readonly<Record<string, readonly string[]>> = {
  Catalog: [
    'A catalog cannot become its own ancestor through `ParentCatalogs` / `ChildCatalogs` links (400).',
    'Deleting a catalog removes its links to products and to parent and child catalogs; it deletes no product and no other catalog.',
  ],
  ProductSpecific: [
    `\`Value\` holds at most ${LIMITS.specificValues} values separated by \`|\`, each of 1 to ${LIMITS.specificValueLength} characters and not blank: \`a||b\` and \`a| |b\` are refused, not shortened (400).`,
  ],
  ProductImage: [
    URL_RULE,
    '`Type` 1 (list image) and 2 (offer image) are slots of one image each per product: a second one answers 409.',
    '`Type` 3 to 12 are the further images, numbered consecutively beginning with 3: one ordered run without gaps, at most 10 per product. A write that places an image at a further `Type` inserts it there (the images from that place on move up by one); a `Type` past the end of the run would leave a gap and answers 400 naming the next free `Type`, as does an 11th further image. An image that leaves the run (deleted, moved to another product, given `Type` 1 or 2) closes its gap: the images after it move down by one and keep their order. Renumbered images get a new `ModificationDate` and ETag.',
  ],
  ProductVariation: [
    `A product has at most ${LIMITS.variationsPerProduct} variations (400).`,
    'A variation moved to another product takes its characteristics (and its variation-level discount offers) along; the characteristic limits of `ProductVariationSpecifics` hold for them in the new product.',
  ],
  ProductVariationSpecific: [
    `Across all variations of one product: at most ${LIMITS.characteristicNamesPerProduct} distinct characteristic names, and at most ${LIMITS.valuesPerCharacteristic} distinct values per name (400); names and values count as distinct as the rules compare them (ignoring case and trailing spaces).`,
  ],
  ProductVariationImage: [URL_RULE],
  DiscountOffer: [
    'One offer per product, variation (none for a product-level offer) and `Type` (409).',
    '`ProductVariationId`, when set, must be a variation of `ProductId` (400).',
  ],
  ProductRelation: ['A product cannot be related to itself, and relations cannot form a cycle (400).'],
  SalesOrder: ['A change of `PaidAmount`, `PaidDate` or `ShippingStatus` adds lines to the order history (`GetSalesOrderHistory`) and moves the order\'s flags and `ModificationDate`.'],
  SalesOrderItem: [
    `\`TrackingNumbers\` holds 1 to ${LIMITS.trackingNumbers} non-empty numbers separated by \`;\`, and needs \`CarrierUsed\`, in the same request or already stored (400).`,
    'A change of `ShippingStatus` adds a line to the order history.',
  ],
};

const METHODS: Readonly<Record<SetAccess, string>> = {
  catalogue: 'GET, POST, PUT, MERGE, PATCH, DELETE (sellers own these rows)',
  updatable: 'GET; PUT, MERGE and PATCH of the writable properties (the platform delivers these rows)',
  readOnly: 'GET only; any other method answers 405 (the platform delivers these rows)',
};

const cell = (text: string) => text.replace(/\|/g, '\\|');
const code = (text: string) => `\`${text}\``;

function typeText(p: PropertyDef): string {
  const short = p.type.replace(/^Edm\./, '');
  return p.maxLength !== undefined ? `${short}(${p.maxLength})` : short;
}

function accessText(p: PropertyDef, set: EntityTypeDef): string {
  if (p.access === 'key') return 'key, assigned by the service';
  if (p.timestamp === 'created') return 'read-only, set by the service on create';
  if (p.timestamp === 'modified') return 'read-only, set by the service on every change';
  if (p.access === 'readOnly') return set.access === 'catalogue' ? 'read-only, set by a service operation' : 'read-only, delivered by the platform';
  return 'writable';
}

function constraintsText(p: PropertyDef): string {
  const parts: string[] = [];
  if (p.requiredOnCreate) parts.push('required on create');
  if (p.type === 'Edm.String' && p.access === 'writable' && !p.nullable) parts.push('not empty or blank');
  if (p.blankIsNull) parts.push('empty or blank is stored as null');
  if (p.textComparison === 'ignoreCase') parts.push('rules compare it ignoring case and trailing spaces');
  if (p.min !== undefined && p.max !== undefined) parts.push(`${p.min} to ${p.max}`);
  else if (p.min !== undefined) parts.push(`≥ ${p.min}`);
  else if (p.max !== undefined) parts.push(`≤ ${p.max}`);
  if (p.defaultValue !== undefined) parts.push(`default ${code(String(p.defaultValue))}`);
  return parts.join('; ');
}

function propertyTable(t: EntityTypeDef): string[] {
  const rows = t.properties.map((p) =>
    `| ${code(p.name)} | ${typeText(p)} | ${p.nullable ? 'yes' : 'no'} | ${accessText(p, t)} | ${cell(constraintsText(p))} |`,
  );
  return ['| Property | Type | Nullable | Access | Rules |', '|---|---|---|---|---|', ...rows];
}

const setOf = (m: Model, typeName: string) => m.typeByName.get(typeName)!.setName;

const ON_DELETE: Readonly<Record<string, string>> = {
  cascade: 'deleting it deletes this row',
  setNull: 'deleting it clears this pointer',
  restrict: 'it cannot be deleted while this row points at it',
};

function foreignKeys(m: Model, t: EntityTypeDef): string[] {
  return m.relations
    .filter((r): r is Extract<RelationDef, { kind: 'reference' }> => r.kind === 'reference' && r.dependent === t.name)
    .map((r) => {
      const writable = t.properties.find((p) => p.name === r.foreignKey)?.access === 'writable';
      return `- ${code(r.foreignKey)} names a row of ${code(setOf(m, r.principal))} of the same account${writable ? ' (400 otherwise)' : ''}; ${ON_DELETE[r.onDelete]}.`;
    });
}

/** What a seller may write through the navigation's `$links` (model/link-access.ts). */
function linkWrites(m: Model, n: NavigationDef): string {
  const access = linkAccess(m, n);
  const methods = [...(access.add ? [n.many ? 'POST' : 'PUT'] : []), ...(access.remove ? ['DELETE'] : [])];
  return methods.length > 0 ? `${code('$links')}: ${methods.join(', ')}` : `${code('$links')}: read only`;
}

function navigationKind(m: Model, t: EntityTypeDef, n: NavigationDef): string {
  const r = n.relation;
  if (r.kind === 'linkTable') return 'many';
  if (r.kind === 'throughEntity') return `many: the pairs are ${code(setOf(m, r.through))} rows`;
  if (!n.many) return 'one';
  if (r.onDelete !== 'cascade') return 'many';
  return takesInlineEntities(m, n) ? 'many, owned: deleted with this row, created with it inline (deep insert)' : 'many, owned: deleted with this row';
}

function navigationTable(m: Model, t: EntityTypeDef): string[] {
  if (t.navigations.length === 0) return [];
  const rows = t.navigations.map((n) => {
    return `| ${code(n.name)} | ${code(setOf(m, n.target))} | ${navigationKind(m, t, n)} | ${linkWrites(m, n)} |`;
  });
  return ['| Navigation | Leads to | Multiplicity | Link writes |', '|---|---|---|---|', ...rows];
}

function entitySetSection(m: Model, t: EntityTypeDef): string[] {
  const aliases = t.setAliases.length ? ` (also answers as ${t.setAliases.map(code).join(', ')})` : '';
  const lines = [
    `## ${t.setName}`,
    '',
    `Entity type ${code(`${m.namespace}.${t.name}`)}${aliases}; table ${code(t.table)}.`,
    `Methods: ${METHODS[t.access]}.`,
    `Key: ${code('Id')} (Int64), addressed as ${code(`${t.setName}(42L)`)}.`,
    '',
    ...propertyTable(t),
  ];
  const rules = [
    ...t.uniqueKeys.map((key) => `- Unique within the account: (${key.properties.map(code).join(', ')}); a null member never collides; a duplicate answers 409.`),
    ...foreignKeys(m, t),
    ...(RULES_IN_WORDS[t.name] ?? []).map((rule) => `- ${rule}`),
  ];
  if (rules.length) lines.push('', 'Rules:', '', ...rules);
  const navigations = navigationTable(m, t);
  if (navigations.length) lines.push('', ...navigations);
  return lines;
}

function operationsSection(m: Model): string[] {
  const rows = m.operations.map((o) => {
    const params = o.parameters.map((p) => `${code(p.name)} ${p.type.replace(/^Edm\./, '')}${p.min !== undefined ? ` ≥ ${p.min}` : ''}${p.required ? '' : ' (optional)'}`).join(', ');
    return `| ${code(o.name)} | ${o.httpMethod} | ${params} | ${o.returnType.replace(/^Edm\./, '')} |`;
  });
  return [
    '## Service operations',
    '',
    'Parameters come from the query string; the README describes what each operation does.',
    '',
    'A parameter given twice answers 400; an id parameter (`…Id`, `categoryId1`, `profileId`) must be 1 or more.',
    '',
    '| Operation | Method | Parameters | Result |',
    '|---|---|---|---|',
    ...rows,
  ];
}

/** The whole reference, as Markdown. */
export function renderEntityReference(m: Model = catalogueModel): string {
  const lines = [
    '# Entity set reference',
    '',
    '<!-- Generated from src/model/ by scripts/entity-reference.ts: do not edit, run `npm run docs`. -->',
    '',
    `Every entity set of the service at \`/publicapi/v1/api.svc\`, generated from the entity model. ${m.entityTypes.length} sets,`,
    `namespace ${code(m.namespace)}, container ${code(m.containerName)}.`,
    '',
    'For every set:',
    '',
    '- Every row belongs to one seller account, which is never a visible property. A row of another',
    '  account answers exactly like a row that does not exist.',
    '- `Id` is assigned by the service, unique across the whole service and never reused.',
    '- Types: Int64 and Decimal are exact (written as JSON strings); DateTime is UTC with',
    '  millisecond precision; String lengths count UTF-16 code units, as .NET does (a character',
    '  beyond U+FFFF, such as an emoji, counts 2).',
    '- Text holds no control character but tab, CR and LF, and no U+FFFE, U+FFFF or lone surrogate',
    '  (400 naming the property): Atom could not carry them as JSON does.',
    '- Text compares exactly (by code point) unless a property says "rules compare it ignoring case',
    '  and trailing spaces": then its uniqueness keys and counting limits compare it as the original',
    "  service's SQL Server did under its default collation (`Brand`, `brand` and `Brand ` are one",
    '  name; leading spaces count, so ` Brand` is another).',
    '- "Writable" is what a seller may set with POST, PUT, MERGE or PATCH. A write cannot change a',
    '  read-only property. A broken length, bound or required property answers 400 naming the',
    '  property; a uniqueness conflict answers 409, naming the rule; nothing is written.',
    '- "Nullable: no" on a writable property without a default means a create must send it.',
    '',
    '| Set | Type | Methods |',
    '|---|---|---|',
    ...m.entityTypes.map((t) => `| [${t.setName}](#${t.setName.toLowerCase()}) | ${code(t.name)} | ${t.access === 'catalogue' ? 'all' : t.access === 'updatable' ? 'GET, update' : 'GET'} |`),
    '',
  ];
  for (const t of m.entityTypes) lines.push(...entitySetSection(m, t), '');
  lines.push(...operationsSection(m), '');
  return lines.join('\n');
}

if (require.main === module) {
  const root = path.join(__dirname, '..', '..');
  const target = path.join(root, REFERENCE_PATH);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, renderEntityReference());
  console.log(`wrote ${REFERENCE_PATH}`);
}
