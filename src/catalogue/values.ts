/**
 * Turns a request payload into the row to store, following the model: what a seller may set,
 * what is read-only, defaults, required properties, lengths and bounds. Nothing here touches the
 * database; the rules that need it are in ./rules.ts.
 */
import type { EntityTypeDef, PropertyDef } from '../model/types';
import { invalid } from '../model/rule-violation';
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
 * Values in their internal forms are canonical (Decimal text without trailing zeros, Int64 as
 * bigint, DateTime as ms) whether they come from a request body or from the store, so equality
 * is exact; a String that merely looks numeric ("007") is compared as the text it is.
 */
function sameValue(a: EdmValue, b: EdmValue): boolean {
  return a === b;
}

/**
 * The complete row after the write: for create every property, for replace and merge the stored
 * row with the changes applied. Read-only properties sent with the stored value are ignored;
 * with another value they are refused, naming the property.
 */
export function applyPayload(
  type: EntityTypeDef,
  payload: ReadonlyMap<string, EdmValue>,
  mode: WriteMode,
  stored: EntityRecord | undefined,
  now: number,
): Record<string, EdmValue> {
  const row: Record<string, EdmValue> = {};
  for (const p of type.properties) {
    const sent = payload.has(p.name);
    const value = payload.get(p.name) ?? null;
    const before = stored ? stored.values[p.name]! : undefined;
    if (p.access === 'key') {
      if (stored && sent && value !== null && !sameValue(value, before!)) {
        throw invalid(`The key property '${p.name}' cannot be changed.`);
      }
      row[p.name] = before ?? null;
      continue;
    }
    // CreationDate is read-only like the others: the stored value is ignored, another one refused.
    // ModificationDate is ignored whatever it holds: every write changes it, so a client that
    // sends back an entity it read before its own last update (datajs, UI5) holds an old one.
    if (p.access === 'readOnly' && p.timestamp !== 'modified' && sent && !sameValue(value, before ?? defaultOf(p))) {
      throw invalid(`The property '${p.name}' of ${QUALIFIED(type)} is read-only and cannot be set to another value.`);
    }
    if (p.timestamp) {
      row[p.name] = p.timestamp === 'modified' || !stored ? now : before!;
      continue;
    }
    if (p.access === 'readOnly') {
      row[p.name] = before !== undefined ? before : defaultOf(p);
      continue;
    }
    if (sent) row[p.name] = value;
    else if (mode === 'merge') row[p.name] = before!;
    else {
      if (mode === 'create' && p.requiredOnCreate) throw invalid(`The property '${p.name}' is required to create a ${QUALIFIED(type)}.`);
      row[p.name] = defaultOf(p);
    }
  }
  checkValues(type, row);
  return row;
}

const codePoints = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** Nullability, lengths and bounds of every writable property of a row. */
export function checkValues(type: EntityTypeDef, row: Readonly<Record<string, EdmValue>>): void {
  for (const p of type.properties) {
    if (p.access !== 'writable') continue;
    const v = row[p.name] ?? null;
    if (v === null) {
      if (!p.nullable) throw invalid(`The property '${p.name}' of ${QUALIFIED(type)} cannot be null.`);
      continue;
    }
    // PostgreSQL text cannot hold U+0000; refused on every engine so that both keep the same data.
    if (typeof v === 'string' && p.type === 'Edm.String' && v.includes('\u0000')) {
      throw invalid(`The property '${p.name}' must not contain the character U+0000 (NUL).`);
    }
    if (typeof v === 'string' && p.type === 'Edm.String' && p.maxLength !== undefined && codePoints(v) > p.maxLength) {
      throw invalid(`The property '${p.name}' is longer than its maximum length of ${p.maxLength} characters.`);
    }
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
