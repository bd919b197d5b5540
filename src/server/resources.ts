/**
 * Entity sets, entities, navigations, properties, $count and $links: resolves a parsed resource
 * path against the caller's account, runs the read or the write, and writes the answer in the
 * negotiated format. Collections are streamed to the socket as rows are read.
 */
import type { ServerResponse } from 'node:http';
import type { EntityTypeDef, NavigationDef } from '../model/types';
import { badRequest, methodNotAllowed, notFound, ODataError } from '../odata/errors';
import { toXmlText, type EdmValue } from '../odata/edm';
import { entityPath, entityUri, type EntityPayload, type EntityRecord, type WriteContext } from '../odata/entity';
import { wireFormatFor, type WireFormat } from '../odata/formats';
import { MEDIA, negotiate, versionHeader, type ProtocolVersion, type VersionHeaders } from '../odata/negotiate';
import { allowOnly, type QueryOptions } from '../odata/uri/query-options';
import type { ResourcePath } from '../odata/uri/resource-path';
import { readJsonEntity, readJsonLink } from '../odata/json/reader';
import { readAtomEntry, readXmlLink } from '../odata/atom/reader';
import type { App } from './app';
import { bodyMediaType, headerOf, type RequestContext } from './context';
import { readBody } from './body';
import { send } from './respond';
import { serviceRootOf } from './service-root';

type Resource = Extract<ResourcePath, { kind: 'resource' }>;

/** What a resolved path addresses: a collection (of a set or through a navigation) or one entity. */
type Resolved =
  | { readonly kind: 'collection'; readonly type: EntityTypeDef; readonly source?: { readonly record: EntityRecord; readonly nav: NavigationDef; readonly name: string } }
  | { readonly kind: 'entity'; readonly record: EntityRecord };

export interface ResourceRequest {
  readonly app: App;
  readonly ctx: RequestContext;
  readonly accountId: number;
  readonly path: Resource;
  readonly options: QueryOptions;
  readonly method: string;
  readonly versions: VersionHeaders;
}

function missing(segment: string): ODataError {
  return notFound(`Resource not found for the segment '${segment}'.`);
}

async function first<T>(items: AsyncIterable<T>): Promise<T | undefined> {
  for await (const item of items) return item;
  return undefined;
}

/** Walks the path from its set through each navigation; every entity on the way must exist. */
async function resolve(r: ResourceRequest): Promise<Resolved> {
  const { app, accountId, path } = r;
  const reader = app.store.reader;
  if (path.key === undefined) return { kind: 'collection', type: path.set };
  let record = await app.entities.find(reader, accountId, path.set, path.key);
  if (!record) throw missing(`${path.setName}(${path.key}L)`);
  for (const [i, step] of path.steps.entries()) {
    const last = i === path.steps.length - 1;
    if (step.navigation.many && step.key === undefined) {
      if (!last) throw badRequest(`'${step.name}' is a collection; address one entity with a key.`);
      return { kind: 'collection', type: app.model.typeByName.get(step.navigation.target)!, source: { record, nav: step.navigation, name: step.name } };
    }
    const next: EntityRecord | undefined = await first(app.entities.related(reader, accountId, step.navigation, record.values.Id as bigint, step.key));
    if (!next) throw missing(step.key === undefined ? step.name : `${step.name}(${step.key}L)`);
    record = next;
  }
  return { kind: 'entity', record };
}

function allowedMethods(type: EntityTypeDef, target: 'collection' | 'entity'): string[] {
  if (type.access === 'readOnly') return ['GET', 'HEAD'];
  if (type.access === 'updatable') return target === 'entity' ? ['GET', 'HEAD', 'PUT', 'MERGE', 'PATCH'] : ['GET', 'HEAD'];
  return target === 'entity' ? ['GET', 'HEAD', 'PUT', 'MERGE', 'PATCH', 'DELETE'] : ['GET', 'HEAD', 'POST'];
}

function requireMethod(method: string, allowed: readonly string[]): void {
  if (!allowed.includes(method)) throw methodNotAllowed(method, allowed);
}

/** The response version a resource needs, refused when the client cannot read it. */
function responseVersion(r: ResourceRequest, needed: ProtocolVersion): ProtocolVersion {
  if (needed > r.versions.maxResponseVersion) {
    throw badRequest(`Response requires that version ${needed}.0 of the protocol be used, but the MaxDataServiceVersion header value in the request is set to '${r.versions.maxResponseVersion}.0'.`);
  }
  return needed;
}

function writeContext(r: ResourceRequest, version: ProtocolVersion): WriteContext {
  return {
    serviceRoot: serviceRootOf(r.ctx.req, r.app.config.publicUrl, r.app.listenHost()),
    version,
    updated: new Date(r.app.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
}

function entityFormat(r: ResourceRequest): WireFormat {
  return wireFormatFor(negotiate(headerOf(r.ctx, 'accept'), r.options.system.get('$format'), MEDIA.entity));
}

function dataFormat(r: ResourceRequest): WireFormat {
  return wireFormatFor(negotiate(headerOf(r.ctx, 'accept'), r.options.system.get('$format'), MEDIA.xmlOrJson));
}

/** Writes a collection entity by entity, in chunks, waiting whenever the socket is full. */
async function streamFeed(res: ServerResponse, format: WireFormat, wctx: WriteContext, records: AsyncIterable<EntityRecord>, opts: Parameters<WireFormat['feedStart']>[1]): Promise<void> {
  res.statusCode = 200;
  res.setHeader('DataServiceVersion', versionHeader(wctx.version));
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Content-Type', format.entityContentType);
  let chunk = format.feedStart(wctx, opts);
  let firstEntry = true;
  for await (const rec of records) {
    chunk += format.feedEntry(wctx, rec, firstEntry);
    firstEntry = false;
    if (chunk.length >= 16384) {
      const flushed = res.write(chunk);
      chunk = '';
      if (!flushed) await new Promise<void>((resolveDrain, reject) => {
        const onClose = () => reject(new Error('client went away'));
        res.once('drain', () => {
          res.off('close', onClose);
          resolveDrain();
        });
        res.once('close', onClose);
      });
    }
  }
  res.end(chunk + format.feedEnd(wctx));
}

/** The payload of a create or update body, read by its Content-Type. */
async function readEntityBody(r: ResourceRequest, type: EntityTypeDef): Promise<EntityPayload> {
  const body = await readBody(r.ctx.req, r.app.config.limits.maxBodyBytes);
  const contentType = bodyMediaType(r.ctx);
  if (contentType === 'application/json') return readJsonEntity(type, body);
  if (contentType === 'application/atom+xml' || contentType === 'application/xml' || contentType === 'text/xml') return readAtomEntry(type, body);
  if (contentType === '') throw badRequest('The request body needs a Content-Type: application/json or application/atom+xml.');
  throw new ODataError(415, `The Content-Type '${contentType}' is not supported for entities: use application/json or application/atom+xml.`);
}

async function readLinkBody(r: ResourceRequest): Promise<string> {
  const body = await readBody(r.ctx.req, r.app.config.limits.maxBodyBytes);
  const contentType = bodyMediaType(r.ctx);
  if (contentType === 'application/json') return readJsonLink(body);
  if (contentType === 'application/xml' || contentType === 'text/xml' || contentType === 'application/atom+xml') return readXmlLink(body);
  if (contentType === '') throw badRequest('The link body needs a Content-Type: application/json or application/xml.');
  throw new ODataError(415, `The Content-Type '${contentType}' is not supported for links: use application/json or application/xml.`);
}

function sendEntity(r: ResourceRequest, status: number, rec: EntityRecord, headers: Record<string, string> = {}): void {
  const format = entityFormat(r);
  const wctx = writeContext(r, responseVersion(r, 1));
  send(r.ctx.res, { status, contentType: format.entityContentType, body: format.entry(wctx, rec), version: wctx.version, headers });
}

const noContent = (r: ResourceRequest) => send(r.ctx.res, { status: 204 });

async function collection(r: ResourceRequest, target: Extract<Resolved, { kind: 'collection' }>): Promise<void> {
  requireMethod(r.method, allowedMethods(target.type, 'collection'));
  if (r.method === 'POST') {
    const payload = await readEntityBody(r, target.type);
    const parent = target.source ? { nav: target.source.nav, id: target.source.record.values.Id as bigint } : undefined;
    const { record } = await r.app.writes.create(r.accountId, target.type, payload, parent);
    const root = serviceRootOf(r.ctx.req, r.app.config.publicUrl, r.app.listenHost());
    return sendEntity(r, 201, record, { Location: entityUri(root, record.type, record.values.Id as bigint) });
  }
  allowOnly(r.options, ['$format'], 'this collection in this build');
  const format = entityFormat(r);
  const wctx = writeContext(r, responseVersion(r, 1));
  const reader = r.app.store.reader;
  if (target.source) {
    const { record, nav, name } = target.source;
    const sourcePath = entityPath(record.type, record.values.Id as bigint);
    return streamFeed(r.ctx.res, format, wctx, r.app.entities.related(reader, r.accountId, nav, record.values.Id as bigint), {
      title: name,
      id: `${wctx.serviceRoot}/${sourcePath}/${name}`,
      selfHref: `${sourcePath}/${name}`,
    });
  }
  return streamFeed(r.ctx.res, format, wctx, r.app.entities.iterateAll(reader, r.accountId, target.type), {
    title: r.path.setName,
    id: `${wctx.serviceRoot}/${r.path.setName}`,
    selfHref: r.path.setName,
  });
}

async function entity(r: ResourceRequest, record: EntityRecord): Promise<void> {
  requireMethod(r.method, allowedMethods(record.type, 'entity'));
  const id = record.values.Id as bigint;
  switch (r.method) {
    case 'GET':
    case 'HEAD':
      allowOnly(r.options, ['$format'], 'an entity in this build');
      return sendEntity(r, 200, record);
    case 'PUT':
      await r.app.writes.update(r.accountId, record.type, id, await readEntityBody(r, record.type), 'replace');
      return noContent(r);
    case 'MERGE':
    case 'PATCH':
      await r.app.writes.update(r.accountId, record.type, id, await readEntityBody(r, record.type), 'merge');
      return noContent(r);
    case 'DELETE':
      await r.app.writes.delete(r.accountId, record.type, id);
      return noContent(r);
  }
}

function property(r: ResourceRequest, record: EntityRecord, target: Extract<Resource['target'], { kind: 'property' }>): void {
  requireMethod(r.method, ['GET', 'HEAD']);
  const value: EdmValue = record.values[target.property.name] ?? null;
  if (target.rawValue) {
    allowOnly(r.options, [], 'a raw $value');
    if (value === null) throw notFound(`The value of '${target.property.name}' is null.`);
    send(r.ctx.res, { status: 200, contentType: 'text/plain;charset=utf-8', body: toXmlText(target.property.type, value) });
    return;
  }
  allowOnly(r.options, ['$format'], 'a property');
  const format = dataFormat(r);
  send(r.ctx.res, { status: 200, contentType: format.dataContentType, body: format.property(target.property.name, target.property.type, value) });
}

async function count(r: ResourceRequest, target: Extract<Resolved, { kind: 'collection' }>): Promise<void> {
  requireMethod(r.method, ['GET', 'HEAD']);
  allowOnly(r.options, [], '$count in this build');
  const version = responseVersion(r, 2);
  const reader = r.app.store.reader;
  const n = target.source
    ? await r.app.entities.countRelated(reader, r.accountId, target.source.nav, target.source.record.values.Id as bigint)
    : await r.app.entities.countAll(reader, r.accountId, target.type);
  send(r.ctx.res, { status: 200, contentType: 'text/plain;charset=utf-8', body: String(n), version });
}

async function links(r: ResourceRequest, record: EntityRecord, target: Extract<Resource['target'], { kind: 'links' }>): Promise<void> {
  const nav = target.navigation;
  const id = record.values.Id as bigint;
  const managed = nav.relation.kind === 'linkTable' && record.type.access === 'catalogue';
  const allowed = !managed ? ['GET', 'HEAD'] : target.key === undefined ? ['GET', 'HEAD', 'POST'] : ['GET', 'HEAD', 'DELETE'];
  requireMethod(r.method, allowed);
  if (r.method === 'POST') {
    await r.app.writes.addLink(r.accountId, record.type, id, nav, await readLinkBody(r));
    return noContent(r);
  }
  if (r.method === 'DELETE') {
    await r.app.writes.removeLink(r.accountId, record.type, id, nav, target.key!);
    return noContent(r);
  }
  allowOnly(r.options, ['$format'], '$links in this build');
  const reader = r.app.store.reader;
  if (target.count) {
    const version = responseVersion(r, 2);
    const n = await r.app.entities.countRelated(reader, r.accountId, nav, id);
    return send(r.ctx.res, { status: 200, contentType: 'text/plain;charset=utf-8', body: String(n), version });
  }
  const format = dataFormat(r);
  const wctx = writeContext(r, responseVersion(r, 1));
  const uris: string[] = [];
  for await (const rec of r.app.entities.related(reader, r.accountId, nav, id, target.key)) uris.push(entityUri(wctx.serviceRoot, rec.type, rec.values.Id as bigint));
  if (target.key !== undefined) {
    if (uris.length === 0) throw missing(`${target.name}(${target.key}L)`);
    return send(r.ctx.res, { status: 200, contentType: format.dataContentType, body: format.link(uris[0]!) });
  }
  if (!nav.many) {
    if (uris.length === 0) throw missing(target.name);
    return send(r.ctx.res, { status: 200, contentType: format.dataContentType, body: format.link(uris[0]!) });
  }
  send(r.ctx.res, { status: 200, contentType: format.dataContentType, body: format.links(wctx, uris), version: wctx.version });
}

export async function handleResource(r: ResourceRequest): Promise<void> {
  const resolved = await resolve(r);
  const target = r.path.target;
  switch (target.kind) {
    case 'collection':
      if (resolved.kind !== 'collection') throw badRequest('The path addresses one entity, not a collection.');
      return collection(r, resolved);
    case 'count':
      if (resolved.kind !== 'collection') throw badRequest('$count applies to a collection.');
      return count(r, resolved);
    case 'entity':
      if (resolved.kind !== 'entity') throw badRequest('The path addresses a collection, not one entity.');
      return entity(r, resolved.record);
    case 'property':
      if (resolved.kind !== 'entity') throw badRequest('A property belongs to one entity.');
      return property(r, resolved.record, target);
    case 'links':
      if (resolved.kind !== 'entity') throw badRequest('$links belongs to one entity.');
      return links(r, resolved.record, target);
  }
}
