/**
 * Functions over every property of an entity type, compiled once per type, for the paths that
 * run per row: the row decoder (store/entities.ts) and the property sections of the JSON and
 * Atom writers (odata/json/writer.ts, odata/atom/writer.ts).
 * Written as loops over the property list, they read and write `values[name]` with a computed
 * name; such a keyed access V8 cannot specialise (the name differs on every turn), and it
 * cost more than the work around it. Compiled, each property is a plain member (`values.Title`),
 * and the objects one decoder builds all share one shape.
 */
import type { EntityTypeDef, PropertyDef } from './types';

/** An OData simple identifier, as every property name of the model is. */
const PROPERTY_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The property's name as JavaScript source, for `values.<name>` or `{ <name>: … }`. The names
 * come from the model, not from input; one that is not a plain identifier, or `__proto__`
 * (which in a literal sets the prototype), is refused rather than compiled.
 */
export function memberSource(type: EntityTypeDef, p: PropertyDef): string {
  if (!PROPERTY_NAME.test(p.name) || p.name === '__proto__') throw new Error(`${type.name}.${p.name} is not a property name a compiled function can hold`);
  return p.name;
}

/**
 * Compiles `body` (JavaScript source of a function expression) with the named arguments bound:
 * the per-property helpers the body calls by index.
 */
export function compileOver<F>(bindings: Readonly<Record<string, unknown>>, body: string): F {
  const names = Object.keys(bindings);
  return new Function(...names, `return ${body};`)(...names.map((n) => bindings[n])) as F;
}

/**
 * `(value) => before0 + value + after0 + before1 + value + after1 + …`, compiled once, with the
 * constant text between two values joined into one string: a concatenation of fewer pieces costs
 * less to flatten when it is encoded (the writers' navigation links, one per navigation).
 */
export function compileAround(parts: readonly (readonly [before: string, after: string])[]): (value: string) => string {
  const texts = [''];
  for (const [before, after] of parts) {
    texts[texts.length - 1] += before;
    texts.push(after);
  }
  return compileOver({}, `(value) => ${texts.map((text) => JSON.stringify(text)).join(' + value + ')}`);
}
