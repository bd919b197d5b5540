/**
 * How a version-2-only OData client library reads JSON verbose answers: the typed-client
 * generators and SAP's SDK among them. Written from their documented reading rules, not from
 * their code:
 *
 * - A collection is `d.results` when that is an array. Anything else (the version 1.0 array
 *   `{"d":[…]}` included) is read as an empty list, without an error.
 * - A single entity is `d`. In a `$batch` the library tells a list from an entity by the same
 *   test, so a version 1.0 list inside a batch becomes one "entity" whose members are the rows
 *   under the keys "0", "1", ….
 * - An expanded to-many navigation is `<Nav>.results` when that is an array; anything else is
 *   read as no related entities.
 * - `__count` is a string holding a whole number.
 *
 * The requests it sends carry `Accept: application/json` and no DataServiceVersion or
 * MaxDataServiceVersion header.
 */
export type Entity = Record<string, unknown>;

function dataOf(body: string): unknown {
  const parsed = JSON.parse(body) as { d?: unknown };
  return parsed.d;
}

function resultsOf(value: unknown): Entity[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const results = (value as { results?: unknown }).results;
  return Array.isArray(results) ? (results as Entity[]) : undefined;
}

/** The rows of a collection answer: `d.results`, or none. */
export function readCollection(body: string): Entity[] {
  return resultsOf(dataOf(body)) ?? [];
}

/** The inline count of a collection answer, when there is one. */
export function readCount(body: string): number | undefined {
  const d = dataOf(body) as { __count?: unknown } | undefined;
  return typeof d?.__count === 'string' && /^\d+$/.test(d.__count) ? Number(d.__count) : undefined;
}

/** A single-entity answer: `d`. */
export function readEntity(body: string): Entity {
  return (dataOf(body) ?? {}) as Entity;
}

/** The related entities of an expanded to-many navigation: `<nav>.results`, or none. */
export function readExpanded(entity: Entity, nav: string): Entity[] {
  return resultsOf(entity[nav]) ?? [];
}

/** A query part's answer in a `$batch`: a list when `d.results` is one, otherwise one entity. */
export type BatchRead = { readonly kind: 'collection'; readonly rows: Entity[] } | { readonly kind: 'entity'; readonly entity: Entity };

export function readBatchQueryPart(body: string): BatchRead {
  const rows = resultsOf(dataOf(body));
  // An array is an object to the library: its rows become members named "0", "1", ….
  return rows !== undefined ? { kind: 'collection', rows } : { kind: 'entity', entity: { ...(dataOf(body) as Entity) } };
}
