/**
 * Turns a request payload into the row to store, following the model: what a seller may set,
 * what is read-only, defaults, required properties, lengths and bounds. Nothing here touches the
 * database; the rules that need it are in ./rules.ts.
 */
import { clientSets } from '../model/define';
import type { EntityTypeDef, PropertyDef } from '../model/types';
import { invalid } from '../model/rule-violation';
import { codePointName, isBlank, refusedCharacter } from '../model/text';
import { compareDecimal, parseDecimalText, type EdmValue } from '../odata/edm';
import type { EntityRecord } from '../odata/entity';

export type WriteMode = 'create' | 'replace' | 'merge';

const QUALIFIED = (type: EntityTypeDef) => `CatalogueService.${type.name}`;

/** The model's default for a property, in its internal form. */
export function defaultOf(p: PropertyDef): EdmValue {
  if (p.defaultValue === undefined) return null;
  return p.type === 'Edm.Decimal' ? parseDecimalText(String(p.defaultValue)) : p.defaultValue;
}

/**
 * The complete row after the write: for create every property, for replace and merge the stored
 * row with the changes applied. The key and read-only properties are never taken from the payload
 * (the readers already leave them out): a client sending them back, stale or as
 * 0001-01-01T00:00:00, changes nothing and is not refused. The key stays the stored one (the URI
 * names the entity, as in WCF Data Services); on create the store assigns it. `parentKey`, when
 * given, is taken in place of what the payload holds for that property (the parent's key).
 */
export function applyPayload(
  type: EntityTypeDef,
  payload: ReadonlyMap<string, EdmValue>,
  mode: WriteMode,
  stored: EntityRecord | undefined,
  now: number,
  parentKey?: { readonly name: string; readonly value: EdmValue },
): Record<string, EdmValue> {
  const row: Record<string, EdmValue> = {};
  for (const p of type.properties) {
    const before = stored ? stored.values[p.name]! : undefined;
    if (p.timestamp) {
      row[p.name] = p.timestamp === 'modified' || !stored ? now : before!;
      continue;
    }
    if (!clientSets(p)) {
      row[p.name] = before !== undefined ? before : p.access === 'key' ? null : defaultOf(p);
      continue;
    }
    if (p.name === parentKey?.name) row[p.name] = parentKey.value;
    else if (payload.has(p.name)) row[p.name] = sentValue(p, payload.get(p.name) ?? null);
    else if (mode === 'merge') row[p.name] = before!;
    else {
      if (mode === 'create' && p.requiredOnCreate) throw invalid(`The property '${p.name}' is required to create a ${QUALIFIED(type)}.`);
      row[p.name] = defaultOf(p);
    }
  }
  checkValues(type, row);
  return row;
}

/** The names of a type's timestamp properties (PropertyDef.timestamp), worked out once per type. */
const timestampNames = new WeakMap<EntityTypeDef, readonly string[]>();

/**
 * The row applyPayload answers for a create at `now`, from the row it answered for the same
 * payload at another time: on create the time is in the timestamps alone.
 */
export function createdAt(type: EntityTypeDef, created: Readonly<Record<string, EdmValue>>, now: number): Record<string, EdmValue> {
  let names = timestampNames.get(type);
  if (!names) timestampNames.set(type, (names = type.properties.filter((p) => p.timestamp).map((p) => p.name)));
  const row = { ...created };
  for (const name of names) row[name] = now;
  return row;
}

/** A sent value as the property takes it: blank text is no value where the model says so (an empty Sku). */
function sentValue(p: PropertyDef, value: EdmValue): EdmValue {
  return p.blankIsNull && typeof value === 'string' && isBlank(value) ? null : value;
}

/**
 * What a text value must be: characters both formats carry (model/text.ts), within its length as
 * .NET counts it (UTF-16 code units: a character beyond U+FFFF counts 2, JavaScript's length), and
 * not blank where the property is required: empty or blank text is no value.
 */
function checkText(type: EntityTypeDef, p: PropertyDef, v: string): void {
  const refused = refusedCharacter(v);
  if (refused !== undefined) {
    throw invalid(`The property '${p.name}' must not contain the character ${codePointName(refused)} (a control character or non-character that Atom and JSON cannot both carry).`);
  }
  if (p.maxLength !== undefined && v.length > p.maxLength) {
    throw invalid(`The property '${p.name}' is longer than its maximum length of ${p.maxLength} characters.`);
  }
  if (!p.nullable && isBlank(v)) throw invalid(`The property '${p.name}' of ${QUALIFIED(type)} is required and cannot be empty or blank.`);
}

/** Nullability, lengths and bounds of every writable property of a row. */
export function checkValues(type: EntityTypeDef, row: Readonly<Record<string, EdmValue>>): void {
  for (const p of type.properties) {
    if (p.access !== 'writable') continue;
    const v = row[p.name] ?? null;
    if (v === null) {
      if (!p.nullable) throw invalid(`The property '${p.name}' of ${QUALIFIED(type)} cannot be null.`);
      continue;
    }
    if (typeof v === 'string' && p.type === 'Edm.String') checkText(type, p, v);
    if (p.min !== undefined || p.max !== undefined) {
      const below = p.type === 'Edm.Decimal' ? p.min !== undefined && compareDecimal(v as string, String(p.min)) < 0 : p.min !== undefined && (v as number) < p.min;
      const above = p.type === 'Edm.Decimal' ? p.max !== undefined && compareDecimal(v as string, String(p.max)) > 0 : p.max !== undefined && (v as number) > p.max;
      if (below || above) {
        const range = p.max === undefined ? `at least ${p.min}` : p.min === undefined ? `at most ${p.max}` : `from ${p.min} to ${p.max}`;
        throw invalid(`The property '${p.name}' must be ${range}; ${String(v)} is out of range.`);
      }
    }
  }
}
