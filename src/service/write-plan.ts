/**
 * A write request turned into a plan before any database work, as PostgREST's MutatePlan: what it
 * does (create, update, delete, add or remove a link), its body read into a payload by its
 * Content-Type, and its preconditions (If-Match). Everything that can refuse the request on its
 * own (a malformed body, an unsupported Content-Type, a format or version the answer cannot take)
 * refuses it here, so that SQLite's single writer never waits on JSON or XML parsing, and a bad
 * request is answered at once even while another process holds the write lock. The method was
 * admitted before (odata/uri/uri-kind.ts); the transaction only executes plans (write.ts).
 */
import { checkDeepInsert, refuseInlineInUpdate, type CheckedRows } from '../catalogue/deep-insert';
import type { EntityTypeDef, PropertyDef } from '../model/types';
import { readAtomEntry, readXmlLink, readXmlProperty } from '../odata/atom/reader';
import type { EdmValue } from '../odata/edm';
import { readRawValue } from '../odata/raw-value';
import { inlineCount, type EntityPayload } from '../odata/entity';
import { badRequest, ODataError } from '../odata/errors';
import { readJsonEntity, readJsonLink, readJsonProperty } from '../odata/json/reader';
import { addressedType, uriKindOf } from '../odata/uri/uri-kind';
import { bodyCharsetOf, bodyMediaTypeOf, type ODataRequest } from './request';
import { entityFormat, responseVersion, tagsOf, type ResourcePath } from './resources';

/** If-Match: the entity tags the client read; the write goes ahead only if one names the stored version. */
export type Precondition = { readonly header: string; readonly tags: readonly string[] } | undefined;

export type WritePlan =
  /** POST to a collection (of a set, or through a navigation of one entity). */
  | { readonly kind: 'create'; readonly type: EntityTypeDef; readonly payload: EntityPayload; readonly checked: CheckedRows }
  /** PUT replaces, MERGE and PATCH merge. */
  | { readonly kind: 'update'; readonly type: EntityTypeDef; readonly mode: 'replace' | 'merge'; readonly payload: EntityPayload; readonly ifMatch: Precondition }
  | { readonly kind: 'delete'; readonly type: EntityTypeDef; readonly ifMatch: Precondition }
  /** PUT (MERGE, PATCH) of entity/Property or PUT of entity/Property/$value; DELETE of …/$value writes null. */
  | { readonly kind: 'setProperty'; readonly type: EntityTypeDef; readonly property: PropertyDef; readonly value: EdmValue; readonly ifMatch: Precondition }
  /** POST to entity/$links/ToMany, PUT of entity/$links/ToOne: the body names the entity to link. */
  | { readonly kind: 'addLink'; readonly uri: string }
  /** DELETE of entity/$links/ToMany(key). */
  | { readonly kind: 'removeLink'; readonly key: bigint }
  /** DELETE of entity/$links/ToOne: the entity then points nowhere. */
  | { readonly kind: 'clearLink' };

/**
 * The entity ids the plan's transaction will take: a create's own and those of the entities sent
 * inline under it (a deep insert). Drawn with the transaction's first statements
 * (WriteOptions.newIds), they cost no round trip of their own.
 */
export function idsNeeded(plan: WritePlan): number {
  return plan.kind === 'create' ? 1 + inlineCount(plan.payload) : 0;
}

/** The plan of an admitted write of `path`; `body` was read before (empty for DELETE). */
export function planWrite(r: ODataRequest, path: ResourcePath, body: Buffer): WritePlan {
  const kind = uriKindOf(path);
  const type = addressedType(path, r.app.model);
  if (kind === 'collection' && r.method === 'POST' && type) {
    // The 201 carries the entity: its format and version are settled before the write.
    entityFormat(r);
    responseVersion(r, 1);
    const payload = readEntityBody(r, type, body);
    // A deep insert's whole tree is judged now, before the transaction.
    return { kind: 'create', type, payload, checked: checkDeepInsert(r.app.model, type, payload) };
  }
  if (kind === 'entity' && type) {
    const ifMatch = preconditionOf(r);
    if (r.method === 'DELETE') return { kind: 'delete', type, ifMatch };
    if (r.method === 'PUT' || r.method === 'MERGE' || r.method === 'PATCH') {
      const payload = readEntityBody(r, type, body);
      refuseInlineInUpdate(type, payload);
      return { kind: 'update', type, mode: r.method === 'PUT' ? 'replace' : 'merge', payload, ifMatch };
    }
  }
  const target = path.target;
  if (target.kind === 'property' && type) {
    const ifMatch = preconditionOf(r);
    const { property } = target;
    // Admission let through writes of writable properties only (uri-kind.ts).
    if (kind === 'propertyValue' && r.method === 'DELETE') return { kind: 'setProperty', type, property, value: null, ifMatch };
    const value = kind === 'propertyValue' ? readRawValueBody(r, property, body) : readPropertyBody(r, property, body);
    return { kind: 'setProperty', type, property, value, ifMatch };
  }
  if (target.kind === 'links') {
    if (kind === 'links' && r.method === 'POST') return { kind: 'addLink', uri: readLinkBody(r, body) };
    if (kind === 'link' && r.method === 'PUT' && !target.navigation.many) return { kind: 'addLink', uri: readLinkBody(r, body) };
    if (kind === 'link' && r.method === 'DELETE' && target.key !== undefined) return { kind: 'removeLink', key: target.key };
    if (kind === 'link' && r.method === 'DELETE' && !target.navigation.many) return { kind: 'clearLink' };
  }
  // Admission lets through only the writes above.
  throw new Error(`${r.method} of a ${kind} was admitted but has no plan`);
}

function preconditionOf(r: ODataRequest): Precondition {
  const header = r.header('if-match');
  return header === undefined ? undefined : { header, tags: tagsOf(header) };
}

/** The payload of a create or update body, read by its Content-Type. */
function readEntityBody(r: ODataRequest, type: EntityTypeDef, body: Buffer): EntityPayload {
  const contentType = bodyMediaTypeOf(r);
  if (contentType === 'application/json') return readJsonEntity(type, body);
  if (contentType === 'application/atom+xml' || contentType === 'application/xml' || contentType === 'text/xml') return readAtomEntry(type, body, bodyCharsetOf(r));
  if (contentType === '') throw badRequest('The request body needs a Content-Type: application/json or application/atom+xml.');
  throw new ODataError(415, `The Content-Type '${contentType}' is not supported for entities: use application/json or application/atom+xml.`);
}

/** A property body: `{"Title":…}` in JSON or `<d:Title>…</d:Title>` in XML, as a GET of it answers. */
function readPropertyBody(r: ODataRequest, property: PropertyDef, body: Buffer): EdmValue {
  const contentType = bodyMediaTypeOf(r);
  if (contentType === 'application/json') return readJsonProperty(property, body);
  if (contentType === 'application/xml' || contentType === 'text/xml') return readXmlProperty(property, body, bodyCharsetOf(r));
  if (contentType === '') throw badRequest('The property body needs a Content-Type: application/json or application/xml.');
  throw new ODataError(415, `The Content-Type '${contentType}' is not supported for a property: use application/json or application/xml.`);
}

/** A raw value body: text/plain, as a GET of the $value answers it. */
function readRawValueBody(r: ODataRequest, property: PropertyDef, body: Buffer): EdmValue {
  const contentType = bodyMediaTypeOf(r);
  if (contentType === 'text/plain') return readRawValue(property, body, bodyCharsetOf(r));
  if (contentType === '') throw badRequest('A raw value body needs the Content-Type text/plain.');
  throw new ODataError(415, `The Content-Type '${contentType}' is not supported for a raw value: use text/plain.`);
}

function readLinkBody(r: ODataRequest, body: Buffer): string {
  const contentType = bodyMediaTypeOf(r);
  if (contentType === 'application/json') return readJsonLink(body);
  if (contentType === 'application/xml' || contentType === 'text/xml' || contentType === 'application/atom+xml') return readXmlLink(body, bodyCharsetOf(r));
  if (contentType === '') throw badRequest('The link body needs a Content-Type: application/json or application/xml.');
  throw new ODataError(415, `The Content-Type '${contentType}' is not supported for links: use application/json or application/xml.`);
}
