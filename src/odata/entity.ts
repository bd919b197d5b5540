/**
 * What the protocol layer passes between its stages: entities read from the store (for the
 * writers) and payloads read from request bodies (from the readers). Values are in the internal
 * forms of ./edm.ts.
 */
import type { EntityTypeDef } from '../model/types';
import type { EdmValue } from './edm';

/** One entity as the writers serialise it. */
export interface EntityRecord {
  readonly type: EntityTypeDef;
  /** Every property of the type, by name (null where null). */
  readonly values: Readonly<Record<string, EdmValue>>;
  /** The row's version, written as the entity's ETag (absent for entities not read from the store). */
  readonly version?: bigint;
  /**
   * Navigations that were expanded ($expand), by navigation name as requested: a to-one
   * navigation holds a record or null, a to-many an array. Navigations not here are deferred.
   */
  readonly expanded?: ReadonlyMap<string, EntityRecord | null | readonly EntityRecord[]>;
}

/** What a writer needs to know about the response it writes into. */
export interface WriteContext {
  /** Absolute service root without a trailing slash: http://host/publicapi/v1/api.svc */
  readonly serviceRoot: string;
  /** The DataServiceVersion of the response: decides the JSON collection shapes. */
  readonly version: 1 | 2;
  /** Atom <updated> of everything in this response (one timestamp per response, ISO, with Z). */
  readonly updated: string;
  /** Only these properties are written when set ($select); navigations listed are kept deferred. */
  readonly select?: ReadonlySet<string>;
}

/** A request body read against an entity type. */
export interface EntityPayload {
  /** The properties present in the body, by name, already read as their model type. */
  readonly values: ReadonlyMap<string, EdmValue>;
  /**
   * Navigation bindings by navigation name: the entity URIs the body links to
   * (`{"__metadata":{"uri":…}}` in JSON, `<link rel=…/related/Nav href=…>` in Atom), absolute or
   * relative to the service root, not yet resolved.
   */
  readonly bindings: ReadonlyMap<string, readonly string[]>;
  /**
   * Entities sent inline under a navigation, to be created with this one (deep insert): JSON
   * objects with properties (an array, or `{"results":[…]}`), Atom `m:inline` entries with content,
   * each read against the navigation's target type, by navigation name. Absent when none was sent.
   */
  readonly inline?: ReadonlyMap<string, readonly EntityPayload[]>;
}

/** The entities sent inline under a payload, at every depth. */
export function inlineCount(payload: EntityPayload): number {
  let count = 0;
  for (const children of payload.inline?.values() ?? []) for (const child of children) count += 1 + inlineCount(child);
  return count;
}

/**
 * The key of an entity, from its record's or row's values: every entity type has the single key
 * Id, an Edm.Int64 (see model/define.ts). Undefined before a new row has one.
 */
export function entityId(values: Readonly<Record<string, EdmValue>>): bigint {
  return values.Id as bigint;
}

/** Ids in ascending order (a sort comparator: Int64 ids are bigints, which `-` cannot compare). */
export function compareIds(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Relative URI of an entity: Products(42L) (Int64 keys carry the L suffix, as WCF wrote them). */
export function entityPath(type: EntityTypeDef, id: bigint): string {
  return `${type.setName}(${id}L)`;
}

export function entityUri(serviceRoot: string, type: EntityTypeDef, id: bigint): string {
  return `${serviceRoot}/${entityPath(type, id)}`;
}

/** The ETag of an entity version: a weak tag, opaque to clients. */
export function etagOf(version: bigint): string {
  return `W/"${version}"`;
}
