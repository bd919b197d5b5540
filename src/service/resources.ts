/**
 * Entity sets, entities, navigations, properties, $count and $links: resolves a parsed resource
 * path against the caller's account, runs the read, and answers in the negotiated format.
 *
 * Reads run inside one snapshot (Store.read) and stream collections as rows are read. Writes are
 * planned (write-plan.ts) and executed (write.ts) with the helpers here.
 */
import type { EntityTypeDef, NavigationDef } from '../model/types';
import { badRequest, notFound } from '../odata/errors';
import { toXmlText, type EdmValue } from '../odata/edm';
import { entityId, entityPath, entityUri, etagOf, type EntityRecord, type WriteContext } from '../odata/entity';
import { wireFormatFor, type WireFormat } from '../odata/formats';
import { chooseResponseVersion, MEDIA, negotiate, type ProtocolVersion } from '../odata/negotiate';
import type { ReadCost, ReadExtent, SqlExecutor } from '../store/store';
import type { ODataRequest, ResourcePathOf } from './request';
import type { Reply } from './responder';
import { ChunkedOutput } from './chunked-output';
import type { ReadSource } from '../odata/plan';
import { planRead, type PlannedRead } from '../odata/read-options';
import type { LiteralExpr } from '../odata/expr/ast';
import { formatUriLiteral } from '../odata/expr';
import { MoreRowsThanProbed, type StreamEnd } from '../store/reads';
import { entityNotFound, resourceNotFound } from '../odata/not-found';
import { trackedRead, trackingOf, type TrackedRead } from './delta';
import { DELTA_TOKEN_OPTION } from './delta-token';

export type ResourcePath = ResourcePathOf<'resource'>;

/** What a resolved path addresses: a collection (of a set or through a navigation) or one entity. */
export type Resolved =
  | { readonly kind: 'collection'; readonly type: EntityTypeDef; readonly source?: { readonly record: EntityRecord; readonly nav: NavigationDef; readonly name: string } }
  | { readonly kind: 'entity'; readonly record: EntityRecord };

async function first<T>(items: AsyncIterable<T>): Promise<T | undefined> {
  for await (const item of items) return item;
  return undefined;
}

/** Walks the path from its set through each navigation; every entity on the way must exist. */
export async function resolve(r: ODataRequest, tx: SqlExecutor, path: ResourcePath): Promise<Resolved> {
  const { app, accountId } = r;
  if (path.key === undefined) return { kind: 'collection', type: path.set };
  let record = await app.entities.find(tx, accountId, path.set, path.key);
  if (!record) throw resourceNotFound(`${path.setName}(${path.key}L)`);
  for (const [i, step] of path.steps.entries()) {
    const last = i === path.steps.length - 1;
    if (step.navigation.many && step.key === undefined) {
      if (!last) throw badRequest(`'${step.name}' is a collection; address one entity with a key.`);
      return { kind: 'collection', type: app.model.typeByName.get(step.navigation.target)!, source: { record, nav: step.navigation, name: step.name } };
    }
    const next: EntityRecord | undefined = await first(app.entities.related(tx, accountId, step.navigation, entityId(record.values), step.key));
    if (!next) throw resourceNotFound(step.key === undefined ? step.name : `${step.name}(${step.key}L)`);
    record = next;
  }
  return { kind: 'entity', record };
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

export function entityReply(r: ODataRequest, status: number, rec: EntityRecord, headers: Record<string, string> = {}, version: ProtocolVersion = 1, select?: ReadonlySet<string>): Reply {
  const format = entityFormat(r);
  const wctx = writeContext(r, responseVersion(r, version), select);
  const etag: Record<string, string> = rec.version === undefined ? {} : { ETag: etagOf(rec.version) };
  return { status, contentType: format.entityContentType, body: format.entry(wctx, rec), version: wctx.version, headers: { ...etag, ...headers } };
}

/** The entity tags of an If-Match or If-None-Match header ('*' matches any). */
export function tagsOf(header: string): string[] {
  return header.split(',').map((t) => t.trim()).filter((t) => t !== '');
}

/** Whether a header's tags name this version; weak and strong forms compare alike. */
export function matches(header: string, version: bigint | undefined): boolean {
  return tagsMatch(tagsOf(header), version);
}

/** Whether entity tags (as tagsOf reads them) name this version. */
export function tagsMatch(tags: readonly string[], version: bigint | undefined): boolean {
  const current = version === undefined ? undefined : `"${version}"`;
  return tags.some((tag) => tag === '*' || (current !== undefined && tag.replace(/^W\//, '') === current));
}

/** A 204: no body, so only its DataServiceVersion header follows the request's versions. */
export function noContent(r: ODataRequest, headers: Record<string, string> = {}): Reply {
  return { status: 204, version: responseVersion(r, 1), headers };
}

// ---------------------------------------------------------------------------------------------
// Reads

function sourceOf(resolved: Extract<Resolved, { kind: 'collection' }>): ReadSource {
  return resolved.source ? { kind: 'navigation', navigation: resolved.source.nav, sourceId: entityId(resolved.source.record.values) } : { kind: 'set' };
}

function plan(r: ODataRequest, type: EntityTypeDef, source: ReadSource): PlannedRead {
  return planRead(r.app.model, type, source, r.options, r.app.config.query);
}

/**
 * The address of the next page: the same request, continuing after the last row delivered (and
 * for a tracked read, with the token that keeps its change tracking).
 */
function nextLink(r: ODataRequest, selfPath: string, planned: PlannedRead, delivered: number, after: readonly LiteralExpr[], deltaToken?: string): string {
  const parts: string[] = [];
  for (const [name, value] of r.options.system) {
    if (name === '$skiptoken' || name === '$skip') continue;
    const v = name === '$top' ? String(Math.max(0, (planned.plan.top ?? 0) - delivered)) : value;
    parts.push(`${name}=${encodeURIComponent(v)}`);
  }
  parts.push(`$skiptoken=${encodeURIComponent(after.map((l) => formatUriLiteral(l.type, l.value)).join(','))}`);
  if (deltaToken !== undefined) parts.push(`${DELTA_TOKEN_OPTION}=${deltaToken}`);
  return `${r.serviceRoot}/${selfPath}?${parts.join('&')}`;
}

/**
 * A feed, streamed: the first page is read before the head goes out, so that a failure of the
 * client's query is still answered with its status; after that, page by page.
 */
async function readCollection(
  r: ODataRequest,
  tx: SqlExecutor,
  path: ResourcePath,
  resolved: Extract<Resolved, { kind: 'collection' }>,
  rowsAtMost: number | undefined,
  tracked?: TrackedRead,
): Promise<void> {
  const planned = plan(r, resolved.type, tracked?.source ?? sourceOf(resolved));
  const pageSize = r.app.config.query.pageSize;
  // A tracked feed ends with V2 members ("__delta" beside "results").
  const version = responseVersion(r, pageSize !== undefined || tracked ? 2 : planned.version);
  const format = entityFormat(r);
  const wctx = writeContext(r, version, planned.select);
  const count = planned.inlineCount ? await r.app.reads.count(tx, r.accountId, planned.plan, false) : undefined;
  const end: { result?: StreamEnd } = {};
  const pages = r.app.reads.stream(tx, r.accountId, planned.plan, { pageSize: pageRowsFor(planned.plan), ...(pageSize !== undefined ? { serverPageSize: pageSize } : {}), ...(rowsAtMost !== undefined ? { rowsAtMost } : {}) }, end)[Symbol.asyncIterator]();
  let next = await pages.next();

  const selfPath = resolved.source ? `${entityPath(resolved.source.record.type, entityId(resolved.source.record.values))}/${resolved.source.name}` : path.setName;
  const out = new ChunkedOutput(r.responder.stream({ status: 200, contentType: format.entityContentType, version: wctx.version, ...(tracked ? { headers: tracked.headers } : {}) }));
  out.append(
    format.feedStart(wctx, {
      title: resolved.source ? resolved.source.name : path.setName,
      id: `${wctx.serviceRoot}/${selfPath}`,
      selfHref: selfPath,
      ...(count !== undefined ? { count } : {}),
      ...(tracked ? { tracking: true } : {}),
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
      next = await pages.next();
      // A turn of the event loop between pages. While the socket takes every write at once,
      // nothing above waits for I/O, so without it a long feed on SQLite (whose reads are
      // synchronous) would keep every other request and timer waiting until its last page.
      // None after the last page: the answer's end then leaves in the same write as its
      // entities (node:http sends what a tick wrote at once), not in a write of its own.
      if (!next.done) await yieldToEventLoop();
    }
  } finally {
    // Ends the row statement when the loop stops early (a write that failed): see EntityReads.stream.
    await pages.return?.();
  }
  const after = end.result?.continueAfter;
  if (!tracked) out.append(format.feedEnd(wctx, after ? nextLink(r, selfPath, planned, delivered, after) : undefined));
  else {
    const ending = await tracked.end(tx, planned, after !== undefined);
    const next = after ? nextLink(r, selfPath, planned, delivered, after, ending.nextToken) : undefined;
    out.append(format.feedEnd(wctx, next, { setName: path.setName, removed: ending.removed, anyEntries: !first, ...(ending.link !== undefined ? { link: ending.link } : {}) }));
  }
  await out.end();
}

/** One entity: as resolved, or read again through a plan when $expand or $filter asks more of it. */
async function readEntity(r: ODataRequest, tx: SqlExecutor, record: EntityRecord): Promise<Reply> {
  const planned = plan(r, record.type, { kind: 'key', id: entityId(record.values) });
  if (!planned.plan.filter && planned.plan.expand.length === 0) return entityReply(r, 200, record, {}, planned.version, planned.select);
  let found: EntityRecord | undefined;
  for await (const page of r.app.reads.stream(tx, r.accountId, planned.plan, { pageSize: 1 })) found ??= page.records[0];
  if (!found) throw entityNotFound(record.type, entityId(record.values));
  return entityReply(r, 200, found, {}, planned.version, planned.select);
}

function readProperty(r: ODataRequest, record: EntityRecord, target: Extract<ResourcePath['target'], { kind: 'property' }>): Reply {
  const value: EdmValue = record.values[target.property.name] ?? null;
  if (target.rawValue) {
    if (value === null) throw notFound(`The value of '${target.property.name}' is null.`);
    return { status: 200, contentType: 'text/plain;charset=utf-8', body: toXmlText(target.property.type, value), version: responseVersion(r, 1) };
  }
  const format = dataFormat(r);
  return { status: 200, contentType: format.dataContentType, body: format.property(target.property.name, target.property.type, value), version: responseVersion(r, 1) };
}

/** `/$count`: the rows the options select, as text/plain (a version 2.0 answer). */
async function readCount(r: ODataRequest, tx: SqlExecutor, type: EntityTypeDef, source: ReadSource): Promise<Reply> {
  const planned = plan(r, type, source);
  const version = responseVersion(r, 2);
  const n = await r.app.reads.count(tx, r.accountId, planned.plan, true);
  return { status: 200, contentType: 'text/plain;charset=utf-8', body: String(n), version };
}

async function readLinks(r: ODataRequest, tx: SqlExecutor, record: EntityRecord, target: Extract<ResourcePath['target'], { kind: 'links' }>): Promise<Reply> {
  const nav = target.navigation;
  const id = entityId(record.values);
  const targetType = r.app.model.typeByName.get(nav.target)!;
  if (target.count) return readCount(r, tx, targetType, { kind: 'navigation', navigation: nav, sourceId: id });
  const format = dataFormat(r);
  if (target.key !== undefined || !nav.many) {
    const wctx = writeContext(r, responseVersion(r, 1));
    let uri: string | undefined;
    for await (const rec of r.app.entities.related(tx, r.accountId, nav, id, target.key)) uri ??= entityUri(wctx.serviceRoot, rec.type, entityId(rec.values));
    if (uri === undefined) throw resourceNotFound(target.key !== undefined ? `${target.name}(${target.key}L)` : target.name);
    return { status: 200, contentType: format.dataContentType, body: format.link(uri), version: wctx.version };
  }
  const planned = plan(r, targetType, { kind: 'navigation', navigation: nav, sourceId: id });
  const wctx = writeContext(r, responseVersion(r, planned.version));
  const count = planned.inlineCount ? await r.app.reads.count(tx, r.accountId, planned.plan, false) : undefined;
  const uris: string[] = [];
  for await (const page of r.app.reads.stream(tx, r.accountId, planned.plan, { pageSize: pageRowsFor(planned.plan) })) {
    for (const rec of page.records) uris.push(entityUri(wctx.serviceRoot, rec.type, entityId(rec.values)));
  }
  return { status: 200, contentType: format.dataContentType, body: format.links(wctx, uris, count), version: wctx.version };
}

/**
 * 'one' when the read is the entity's own row and nothing more: an entity or one of its
 * properties addressed by key alone, without $expand or $filter (readEntity would read again).
 * Anything else (a navigation, a collection, $links, $count) runs more statements.
 */
function readExtentOf(r: ODataRequest, path: ResourcePath): ReadExtent {
  if (path.key === undefined || path.steps.length > 0) return 'any';
  if (path.target.kind !== 'entity' && path.target.kind !== 'property') return 'any';
  return r.options.system.has('$expand') || r.options.system.has('$filter') ? 'any' : 'one';
}

/**
 * The rows a plain collection read takes in one statement before it is read as a stream
 * instead: fewer than a page, so that a larger collection is found out before anything of the
 * answer goes out.
 */
const ROWS_IN_ONE_STATEMENT = PAGE_ROWS - 1;

/**
 * Whether a collection read is tried as one statement first (ReadExtent 'one'): an entity set
 * without $expand or $inlinecount reads nothing but its rows. Most such reads (a connector's
 * filtered page) hold a few rows: as one statement they cost no BEGIN, cursor or COMMIT, and on
 * PostgreSQL share a connection with other reads of one statement; a larger collection costs the
 * first statement's few rows again.
 */
function triesOneStatement(r: ODataRequest, path: ResourcePath): boolean {
  return path.target.kind === 'collection' && path.key === undefined && path.steps.length === 0 && !r.options.system.has('$expand') && !r.options.system.has('$inlinecount');
}

/** Heavy for a read whose $filter or $orderby calls text functions: on SQLite it runs off the event loop. */
function readCostOf(r: ODataRequest): ReadCost {
  return r.weight === 'expressions' ? 'heavy' : 'light';
}

/** GET and HEAD of any resource path, inside one snapshot of the account. */
export async function readResource(r: ODataRequest, path: ResourcePath): Promise<void> {
  const tracking = trackingOf(r, path);
  if (tracking) {
    // Its position and its entities from one snapshot: see service/delta.ts.
    return r.app.store.read(
      r.accountId,
      async (tx) => readCollection(r, tx, path, { kind: 'collection', type: path.set }, undefined, await trackedRead(r, tx, path, tracking)),
      r.credentialGuard,
      'any',
      readCostOf(r),
    );
  }
  if (triesOneStatement(r, path)) {
    try {
      return await r.app.store.read(r.accountId, (tx) => readIn(tx, ROWS_IN_ONE_STATEMENT), r.credentialGuard, 'one', readCostOf(r));
    } catch (error) {
      // Nothing of the answer went out: the collection is read again, as a stream.
      if (!(error instanceof MoreRowsThanProbed)) throw error;
    }
  }
  await r.app.store.read(r.accountId, (tx) => readIn(tx, undefined), r.credentialGuard, readExtentOf(r, path), readCostOf(r));
  async function readIn(tx: SqlExecutor, rowsAtMost: number | undefined): Promise<void> {
    const resolved = await resolve(r, tx, path);
    const target = path.target;
    switch (target.kind) {
      case 'collection':
        if (resolved.kind !== 'collection') throw badRequest('The path addresses one entity, not a collection.');
        return readCollection(r, tx, path, resolved, rowsAtMost);
      case 'count':
        if (resolved.kind !== 'collection') throw badRequest('$count applies to a collection.');
        return r.responder.send(await readCount(r, tx, resolved.type, sourceOf(resolved)));
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
  }
}
