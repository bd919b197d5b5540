/**
 * Entity sets, entities, navigations, properties, $count and $links: resolves a parsed resource
 * path against the caller's account, runs the read or the write, and answers in the negotiated
 * format.
 *
 * Reads run inside one snapshot (Store.read) and stream collections as rows are read. Writes run
 * inside one transaction (Store.write) that produces the reply; the reply is sent only after
 * COMMIT. writeResource() takes the transaction from its caller, so that a $batch changeset can
 * run several writes in one.
 */
import type { EntityTypeDef, NavigationDef } from '../model/types';
import { badRequest, methodNotAllowed, notFound, ODataError } from '../odata/errors';
import { toXmlText, type EdmValue } from '../odata/edm';
import { entityPath, entityUri, etagOf, type EntityPayload, type EntityRecord, type WriteContext } from '../odata/entity';
import { wireFormatFor, type WireFormat } from '../odata/formats';
import { chooseResponseVersion, MEDIA, negotiate, type ProtocolVersion } from '../odata/negotiate';
import { allowOnly } from '../odata/uri/query-options';
import { readJsonEntity, readJsonLink } from '../odata/json/reader';
import { readAtomEntry, readXmlLink } from '../odata/atom/reader';
import type { SqlExecutor } from '../store/store';
import { bodyCharsetOf, bodyMediaTypeOf, type ODataRequest, type ResourcePathOf } from './odata-request';
import type { Reply } from './responder';
import { ChunkedOutput } from './chunked-output';
import { idempotencyKeyOf, once, requestHash } from './idempotency';
import type { ReadSource } from '../odata/plan';
import { planRead, type PlannedRead, type ReadTarget } from '../odata/read-options';
import type { LiteralExpr } from '../odata/expr/ast';
import { formatUriLiteral } from '../odata/expr';
import type { StreamEnd } from '../store/reads';

export type ResourcePath = ResourcePathOf<'resource'>;

/** What a resolved path addresses: a collection (of a set or through a navigation) or one entity. */
export type Resolved =
  | { readonly kind: 'collection'; readonly type: EntityTypeDef; readonly source?: { readonly record: EntityRecord; readonly nav: NavigationDef; readonly name: string } }
  | { readonly kind: 'entity'; readonly record: EntityRecord };

function missing(segment: string): ODataError {
  return notFound(`Resource not found for the segment '${segment}'.`);
}

async function first<T>(items: AsyncIterable<T>): Promise<T | undefined> {
  for await (const item of items) return item;
  return undefined;
}

/** Walks the path from its set through each navigation; every entity on the way must exist. */
export async function resolve(r: ODataRequest, tx: SqlExecutor, path: ResourcePath): Promise<Resolved> {
  const { app, accountId } = r;
  if (path.key === undefined) return { kind: 'collection', type: path.set };
  let record = await app.entities.find(tx, accountId, path.set, path.key);
  if (!record) throw missing(`${path.setName}(${path.key}L)`);
  for (const [i, step] of path.steps.entries()) {
    const last = i === path.steps.length - 1;
    if (step.navigation.many && step.key === undefined) {
      if (!last) throw badRequest(`'${step.name}' is a collection; address one entity with a key.`);
      return { kind: 'collection', type: app.model.typeByName.get(step.navigation.target)!, source: { record, nav: step.navigation, name: step.name } };
    }
    const next: EntityRecord | undefined = await first(app.entities.related(tx, accountId, step.navigation, record.values.Id as bigint, step.key));
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

function linkMethods(record: EntityRecord, target: Extract<ResourcePath['target'], { kind: 'links' }>): string[] {
  const managed = target.navigation.relation.kind === 'linkTable' && record.type.access === 'catalogue';
  return !managed ? ['GET', 'HEAD'] : target.key === undefined ? ['GET', 'HEAD', 'POST'] : ['GET', 'HEAD', 'DELETE'];
}

function requireMethod(method: string, allowed: readonly string[]): void {
  if (!allowed.includes(method)) throw methodNotAllowed(method, allowed);
}

/**
 * The version of an answer that needs `needed`: raised to what the request asks for at least
 * (MinDataServiceVersion, RESPONSE_VERSION=highest), refused when the client cannot read it.
 */
export function responseVersion(r: ODataRequest, needed: ProtocolVersion): ProtocolVersion {
  return chooseResponseVersion(r.versions, needed);
}

/** Atom's <updated>: whole seconds, formatted once per second rather than once per request. */
let updatedSecond = NaN;
let updatedText = '';
function atomUpdated(now: number): string {
  const second = Math.floor(now / 1000);
  if (second !== updatedSecond) {
    updatedSecond = second;
    updatedText = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return updatedText;
}

export function writeContext(r: ODataRequest, version: ProtocolVersion, select?: ReadonlySet<string>): WriteContext {
  return {
    serviceRoot: r.serviceRoot,
    version,
    updated: atomUpdated(r.app.clock.now()),
    ...(select ? { select } : {}),
  };
}

export function entityFormat(r: ODataRequest): WireFormat {
  return wireFormatFor(negotiate(r.header('accept'), r.options.system.get('$format'), MEDIA.entity));
}

function dataFormat(r: ODataRequest): WireFormat {
  return wireFormatFor(negotiate(r.header('accept'), r.options.system.get('$format'), MEDIA.xmlOrJson));
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Rows read (and expanded) per round: bounds memory whatever the size of the collection. */
const PAGE_ROWS = 256;
/**
 * Rows per round when the rows carry expansions. A product of the connector's export expands to
 * about 50 entities, so a round of 256 keeps some 13,000 records alive across the writes that
 * follow: they outlive young-generation collections, fill the old space with garbage, and the
 * peak RSS of a 10,000-product export was 185–215 MB. Rounds of 16 stay young and keep it at
 * about 130 MB, steadily, for more (fixed-text) expansion statements: 10 per 16 products.
 */
const EXPANDED_PAGE_ROWS = 16;

function pageRowsFor(plan: { readonly expand: readonly unknown[] }): number {
  return plan.expand.length > 0 ? EXPANDED_PAGE_ROWS : PAGE_ROWS;
}

function entityReply(r: ODataRequest, status: number, rec: EntityRecord, headers: Record<string, string> = {}, version: ProtocolVersion = 1, select?: ReadonlySet<string>): Reply {
  const format = entityFormat(r);
  const wctx = writeContext(r, responseVersion(r, version), select);
  const etag: Record<string, string> = rec.version === undefined ? {} : { ETag: etagOf(rec.version) };
  return { status, contentType: format.entityContentType, body: format.entry(wctx, rec), version: wctx.version, headers: { ...etag, ...headers } };
}

/** The entity tags of an If-Match or If-None-Match header ('*' matches any). */
function tagsOf(header: string): string[] {
  return header.split(',').map((t) => t.trim()).filter((t) => t !== '');
}

/** Whether a header's tags name this version; weak and strong forms compare alike. */
function matches(header: string, version: bigint | undefined): boolean {
  const current = version === undefined ? undefined : `"${version}"`;
  return tagsOf(header).some((tag) => tag === '*' || (current !== undefined && tag.replace(/^W\//, '') === current));
}

/** If-Match: the client changes only the version it read, else 412 and nothing is written. */
function checkIfMatch(r: ODataRequest, record: EntityRecord): void {
  const header = r.header('if-match');
  if (header === undefined) return;
  if (!matches(header, record.version)) {
    throw new ODataError(412, `The entity ${entityPath(record.type, record.values.Id as bigint)} has changed: its ETag is ${etagOf(record.version ?? 0n)}, not ${header.slice(0, 60)}. Read it again and repeat the change.`);
  }
}

/** A 204: no body, so only its DataServiceVersion header follows the request's versions. */
function noContent(r: ODataRequest, headers: Record<string, string> = {}): Reply {
  return { status: 204, version: responseVersion(r, 1), headers };
}

// ---------------------------------------------------------------------------------------------
// Reads

function sourceOf(resolved: Extract<Resolved, { kind: 'collection' }>): ReadSource {
  return resolved.source ? { kind: 'navigation', navigation: resolved.source.nav, sourceId: resolved.source.record.values.Id as bigint } : { kind: 'set' };
}

function plan(r: ODataRequest, type: EntityTypeDef, source: ReadSource, target: ReadTarget): PlannedRead {
  return planRead(r.app.model, type, source, target, r.options, r.app.config.query);
}

/** The address of the next page: the same request, continuing after the last row delivered. */
function nextLink(r: ODataRequest, selfPath: string, planned: PlannedRead, delivered: number, after: readonly LiteralExpr[]): string {
  const parts: string[] = [];
  for (const [name, value] of r.options.system) {
    if (name === '$skiptoken' || name === '$skip') continue;
    const v = name === '$top' ? String(Math.max(0, (planned.plan.top ?? 0) - delivered)) : value;
    parts.push(`${name}=${encodeURIComponent(v)}`);
  }
  parts.push(`$skiptoken=${encodeURIComponent(after.map((l) => formatUriLiteral(l.type, l.value)).join(','))}`);
  return `${r.serviceRoot}/${selfPath}?${parts.join('&')}`;
}

/**
 * A feed, streamed: the first page is read before the head goes out, so that a failure of the
 * client's query is still answered with its status; after that, page by page.
 */
async function readCollection(r: ODataRequest, tx: SqlExecutor, path: ResourcePath, resolved: Extract<Resolved, { kind: 'collection' }>): Promise<void> {
  const planned = plan(r, resolved.type, sourceOf(resolved), 'collection');
  const pageSize = r.app.config.query.pageSize;
  const version = responseVersion(r, pageSize !== undefined ? 2 : planned.version);
  const format = entityFormat(r);
  const wctx = writeContext(r, version, planned.select);
  const count = planned.inlineCount ? await r.app.reads.count(tx, r.accountId, planned.plan, false) : undefined;
  const end: { result?: StreamEnd } = {};
  const pages = r.app.reads.stream(tx, r.accountId, planned.plan, { pageSize: pageRowsFor(planned.plan), ...(pageSize !== undefined ? { serverPageSize: pageSize } : {}) }, end)[Symbol.asyncIterator]();
  let next = await pages.next();

  const selfPath = resolved.source ? `${entityPath(resolved.source.record.type, resolved.source.record.values.Id as bigint)}/${resolved.source.name}` : path.setName;
  const out = new ChunkedOutput(r.responder.stream({ status: 200, contentType: format.entityContentType, version: wctx.version }));
  out.append(
    format.feedStart(wctx, {
      title: resolved.source ? resolved.source.name : path.setName,
      id: `${wctx.serviceRoot}/${selfPath}`,
      selfHref: selfPath,
      ...(count !== undefined ? { count } : {}),
    }),
  );
  let first = true;
  let delivered = 0;
  try {
    while (!next.done) {
      for (const rec of next.value.records) {
        format.feedEntry(wctx, rec, first, out);
        first = false;
        await out.drain();
      }
      delivered += next.value.records.length;
      // A turn of the event loop between pages. While the socket takes every write at once,
      // nothing above waits for I/O, so without it a long feed on SQLite (whose reads are
      // synchronous) would keep every other request and timer waiting until its last page.
      await yieldToEventLoop();
      next = await pages.next();
    }
  } finally {
    // Ends the row statement when the loop stops early (a write that failed): see EntityReads.stream.
    await pages.return?.();
  }
  const after = end.result?.continueAfter;
  out.append(format.feedEnd(wctx, after ? nextLink(r, selfPath, planned, delivered, after) : undefined));
  await out.end();
}

/** One entity: as resolved, or read again through a plan when $expand or $filter asks more of it. */
async function readEntity(r: ODataRequest, tx: SqlExecutor, record: EntityRecord): Promise<Reply> {
  const planned = plan(r, record.type, { kind: 'key', id: record.values.Id as bigint }, 'entity');
  if (!planned.plan.filter && planned.plan.expand.length === 0) return entityReply(r, 200, record, {}, planned.version, planned.select);
  let found: EntityRecord | undefined;
  for await (const page of r.app.reads.stream(tx, r.accountId, planned.plan, { pageSize: 1 })) found ??= page.records[0];
  if (!found) throw missing(entityPath(record.type, record.values.Id as bigint));
  return entityReply(r, 200, found, {}, planned.version, planned.select);
}

function readProperty(r: ODataRequest, record: EntityRecord, target: Extract<ResourcePath['target'], { kind: 'property' }>): Reply {
  const value: EdmValue = record.values[target.property.name] ?? null;
  if (target.rawValue) {
    allowOnly(r.options, [], 'a raw $value');
    if (value === null) throw notFound(`The value of '${target.property.name}' is null.`);
    return { status: 200, contentType: 'text/plain;charset=utf-8', body: toXmlText(target.property.type, value), version: responseVersion(r, 1) };
  }
  allowOnly(r.options, ['$format'], 'a property');
  const format = dataFormat(r);
  return { status: 200, contentType: format.dataContentType, body: format.property(target.property.name, target.property.type, value), version: responseVersion(r, 1) };
}

/** `/$count`: the rows the options select, as text/plain (a version 2.0 answer). */
async function readCount(r: ODataRequest, tx: SqlExecutor, type: EntityTypeDef, source: ReadSource, target: 'count' | 'linksCount'): Promise<Reply> {
  const planned = plan(r, type, source, target);
  const version = responseVersion(r, 2);
  const n = await r.app.reads.count(tx, r.accountId, planned.plan, true);
  return { status: 200, contentType: 'text/plain;charset=utf-8', body: String(n), version };
}

async function readLinks(r: ODataRequest, tx: SqlExecutor, record: EntityRecord, target: Extract<ResourcePath['target'], { kind: 'links' }>): Promise<Reply> {
  const nav = target.navigation;
  const id = record.values.Id as bigint;
  const targetType = r.app.model.typeByName.get(nav.target)!;
  if (target.count) return readCount(r, tx, targetType, { kind: 'navigation', navigation: nav, sourceId: id }, 'linksCount');
  const format = dataFormat(r);
  if (target.key !== undefined || !nav.many) {
    allowOnly(r.options, ['$format'], 'a single $link');
    const wctx = writeContext(r, responseVersion(r, 1));
    let uri: string | undefined;
    for await (const rec of r.app.entities.related(tx, r.accountId, nav, id, target.key)) uri ??= entityUri(wctx.serviceRoot, rec.type, rec.values.Id as bigint);
    if (uri === undefined) throw missing(target.key !== undefined ? `${target.name}(${target.key}L)` : target.name);
    return { status: 200, contentType: format.dataContentType, body: format.link(uri), version: wctx.version };
  }
  const planned = plan(r, targetType, { kind: 'navigation', navigation: nav, sourceId: id }, 'links');
  const wctx = writeContext(r, responseVersion(r, planned.version));
  const count = planned.inlineCount ? await r.app.reads.count(tx, r.accountId, planned.plan, false) : undefined;
  const uris: string[] = [];
  for await (const page of r.app.reads.stream(tx, r.accountId, planned.plan, { pageSize: pageRowsFor(planned.plan) })) {
    for (const rec of page.records) uris.push(entityUri(wctx.serviceRoot, rec.type, rec.values.Id as bigint));
  }
  return { status: 200, contentType: format.dataContentType, body: format.links(wctx, uris, count), version: wctx.version };
}

/** GET and HEAD of any resource path, inside one snapshot of the account. */
export async function readResource(r: ODataRequest, path: ResourcePath): Promise<void> {
  await r.app.store.read(r.accountId, async (tx) => {
    const resolved = await resolve(r, tx, path);
    const target = path.target;
    switch (target.kind) {
      case 'collection':
        if (resolved.kind !== 'collection') throw badRequest('The path addresses one entity, not a collection.');
        return readCollection(r, tx, path, resolved);
      case 'count':
        if (resolved.kind !== 'collection') throw badRequest('$count applies to a collection.');
        return r.responder.send(await readCount(r, tx, resolved.type, sourceOf(resolved), 'count'));
      case 'entity': {
        if (resolved.kind !== 'entity') throw badRequest('The path addresses a collection, not one entity.');
        const ifNoneMatch = r.header('if-none-match');
        if (ifNoneMatch !== undefined && matches(ifNoneMatch, resolved.record.version)) {
          return r.responder.send({ status: 304, version: responseVersion(r, 1), headers: { ETag: etagOf(resolved.record.version!) } });
        }
        return r.responder.send(await readEntity(r, tx, resolved.record));
      }
      case 'property':
        if (resolved.kind !== 'entity') throw badRequest('A property belongs to one entity.');
        return r.responder.send(readProperty(r, resolved.record, target));
      case 'links':
        if (resolved.kind !== 'entity') throw badRequest('$links belongs to one entity.');
        return r.responder.send(await readLinks(r, tx, resolved.record, target));
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Writes

/** The payload of a create or update body, read by its Content-Type. */
function readEntityBody(r: ODataRequest, type: EntityTypeDef, body: Buffer): EntityPayload {
  const contentType = bodyMediaTypeOf(r);
  if (contentType === 'application/json') return readJsonEntity(type, body);
  if (contentType === 'application/atom+xml' || contentType === 'application/xml' || contentType === 'text/xml') return readAtomEntry(type, body, bodyCharsetOf(r));
  if (contentType === '') throw badRequest('The request body needs a Content-Type: application/json or application/atom+xml.');
  throw new ODataError(415, `The Content-Type '${contentType}' is not supported for entities: use application/json or application/atom+xml.`);
}

function readLinkBody(r: ODataRequest, body: Buffer): string {
  const contentType = bodyMediaTypeOf(r);
  if (contentType === 'application/json') return readJsonLink(body);
  if (contentType === 'application/xml' || contentType === 'text/xml' || contentType === 'application/atom+xml') return readXmlLink(body, bodyCharsetOf(r));
  if (contentType === '') throw badRequest('The link body needs a Content-Type: application/json or application/xml.');
  throw new ODataError(415, `The Content-Type '${contentType}' is not supported for links: use application/json or application/xml.`);
}

/** The entity a write created or changed, for callers that refer to it later ($batch `$n`). */
export interface WriteOutcome {
  readonly reply: Reply;
  readonly entity?: { readonly type: EntityTypeDef; readonly id: bigint };
}

/**
 * POST, PUT, MERGE, PATCH and DELETE of a resource path inside the caller's transaction. The
 * body was read before the transaction began (a slow client must not hold the writer).
 */
export async function writeResource(r: ODataRequest, tx: SqlExecutor, path: ResourcePath, body: Buffer): Promise<WriteOutcome> {
  const { app, accountId } = r;
  const resolved = await resolve(r, tx, path);
  const target = path.target;
  if (target.kind === 'links') {
    if (resolved.kind !== 'entity') throw badRequest('$links belongs to one entity.');
    const record = resolved.record;
    requireMethod(r.method, linkMethods(record, target));
    const id = record.values.Id as bigint;
    if (r.method === 'POST') await app.writes.addLink(tx, accountId, record.type, id, target.navigation, readLinkBody(r, body));
    else await app.writes.removeLink(tx, accountId, record.type, id, target.navigation, target.key!);
    return { reply: noContent(r) };
  }
  if (target.kind === 'property' || target.kind === 'count') throw methodNotAllowed(r.method, ['GET', 'HEAD']);
  if (resolved.kind === 'collection') {
    if (target.kind !== 'collection') throw badRequest('The path addresses a collection, not one entity.');
    requireMethod(r.method, allowedMethods(resolved.type, 'collection'));
    const parent = resolved.source ? { nav: resolved.source.nav, id: resolved.source.record.values.Id as bigint } : undefined;
    const { record } = await app.writes.create(tx, accountId, resolved.type, readEntityBody(r, resolved.type, body), parent);
    const id = record.values.Id as bigint;
    return { reply: entityReply(r, 201, record, { Location: entityUri(r.serviceRoot, record.type, id) }), entity: { type: record.type, id } };
  }
  if (target.kind !== 'entity') throw badRequest('The path addresses one entity, not a collection.');
  const record = resolved.record;
  requireMethod(r.method, allowedMethods(record.type, 'entity'));
  checkIfMatch(r, record);
  const id = record.values.Id as bigint;
  switch (r.method) {
    case 'PUT':
    case 'MERGE':
    case 'PATCH': {
      const mode = r.method === 'PUT' ? 'replace' : 'merge';
      const version = await app.writes.update(tx, accountId, record.type, id, readEntityBody(r, record.type, body), mode, record);
      return { reply: noContent(r, { ETag: etagOf(version) }), entity: { type: record.type, id } };
    }
    case 'DELETE':
      await app.writes.delete(tx, accountId, record.type, id);
      break;
  }
  return { reply: noContent(r), entity: { type: record.type, id } };
}

const BODYLESS = new Set(['GET', 'HEAD', 'DELETE']);

export async function handleResource(r: ODataRequest, path: ResourcePath, rawPath: string): Promise<void> {
  if (r.method === 'GET' || r.method === 'HEAD') return readResource(r, path);
  const key = r.method === 'POST' ? idempotencyKeyOf(r.header('idempotency-key')) : undefined;
  const body = BODYLESS.has(r.method) ? Buffer.alloc(0) : await r.body();
  const reply = await r.app.store.write(r.accountId, async (tx) => {
    if (key === undefined) return (await writeResource(r, tx, path, body)).reply;
    const hash = requestHash(r.method, rawPath, body);
    return once(tx, r.app.store.codec, r.accountId, key, hash, r.app.clock.now(), async () => (await writeResource(r, tx, path, body)).reply);
  });
  r.responder.send(reply);
}
