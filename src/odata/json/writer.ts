/**
 * JSON verbose response bodies (docs/protocol.md): entities, feeds (streamed in pieces),
 * properties, links and service operation results. Everything is built by string concatenation;
 * JSON.stringify is used for strings only (through toJson() for values). What depends only on the
 * entity type (member names, the type name, navigation members) is computed once per type, and
 * what depends only on the WriteContext (the escaped service root, the compiled $select) once per
 * context.
 *
 * Shapes: V1 collections are plain arrays, V2 collections {"results":[…]} (with "__count" before
 * and "__next" after the results at the top level only). Every entity, nested ones included,
 * carries its absolute canonical URI (via its type's entity set, never an alias).
 */
import type { FeedDelta } from '../atom/writer';
import { compileAround, compileOver, memberSource } from '../../model/compiled-access';
import { model } from '../../model/catalogue-model';
import { qualifiedName } from '../../model/define';
import type { EdmType, EntityTypeDef, NavigationDef } from '../../model/types';
import { jsonTextOf, toJson, type EdmValue } from '../edm';
import type { EntityRecord, WriteContext } from '../entity';
import { BytesSink, NON_ASCII, StringSink, type TextSink } from '../text-sink';

// ---------------------------------------------------------------------------------------------
// Per-type constants

interface PropertyInfo {
  readonly name: string;
  /** `,"Name":` */
  readonly member: string;
  /** The value as JSON text (an absent one as null). */
  readonly text: (value: EdmValue | undefined) => string;
}

interface NavigationInfo {
  readonly nav: NavigationDef;
  /** `,"Name":` */
  readonly member: string;
  /** `,"Name":{"__deferred":{"uri":"` (the entity uri follows) */
  readonly deferredHead: string;
  /** `/Name"}}` */
  readonly deferredTail: string;
}

interface TypeInfo {
  /** `/Products(` */
  readonly setPath: string;
  /** `L)","type":"CatalogueService.Product"` (the etag and the closing brace follow) */
  readonly metadataTail: string;
  readonly properties: readonly PropertyInfo[];
  /**
   * Every property's member in model order (`,"Id":"12","ForeignId":…`), compiled once per type
   * (../../model/compiled-access.ts): the entity's values are read as plain members, each
   * converted by a function of its own type.
   */
  readonly allProperties: (values: Readonly<Record<string, EdmValue>>) => string;
  /**
   * allProperties for a sink that encodes as it goes: appended to `out`, except that a String
   * value outside ASCII goes to sink.appendApart() (../text-sink.ts says why). Answers the text
   * not yet given to the sink.
   */
  readonly allPropertiesApart: (values: Readonly<Record<string, EdmValue>>, sink: TextSink, out: string) => string;
  readonly navigations: readonly NavigationInfo[];
  /**
   * Every navigation deferred, given the entity's URI: the constant text between two URIs is one
   * string, so the members are built of fewer pieces (25 instead of 36 for a product; a feed's
   * entities are written this way, and flattening a string costs per piece).
   */
  readonly allDeferred: (entityUri: string) => string;
}

const typeCache = new WeakMap<EntityTypeDef, TypeInfo>();

function typeInfo(type: EntityTypeDef): TypeInfo {
  let info = typeCache.get(type);
  if (info === undefined) {
    const properties: PropertyInfo[] = type.properties.map((p) => ({
      name: p.name,
      member: `,${JSON.stringify(p.name)}:`,
      text: jsonTextOf(p.type),
    }));
    const navigations = type.navigations.map((nav) => {
      const member = `,${JSON.stringify(nav.name)}:`;
      return {
        nav,
        member,
        deferredHead: `${member}{"__deferred":{"uri":"`,
        deferredTail: `${JSON.stringify('/' + nav.name).slice(1, -1)}"}}`,
      };
    });
    const json = properties.map((p) => p.text);
    const member = (i: number) => JSON.stringify(properties[i]!.member);
    // An absent value's member is one constant (`,"Name":null`): fewer pieces in the string.
    const absent = (i: number) => JSON.stringify(properties[i]!.member + 'null');
    const read = (i: number) => `values.${memberSource(type, type.properties[i]!)}`;
    const term = (i: number) => `(${read(i)} == null ? ${absent(i)} : ${member(i)} + json[${i}](${read(i)}))`;
    const terms = type.properties.map((_, i) => term(i));
    // Only a String's text can hold characters outside ASCII.
    const apartSteps = type.properties.map((p, i) =>
      p.type === 'Edm.String'
        ? `t = ${read(i)}; if (t == null) out += ${absent(i)}; else { t = json[${i}](t); if (NON_ASCII.test(t)) { sink.append(out + ${member(i)}); sink.appendApart(t); out = ''; } else out += ${member(i)} + t; }`
        : `out += ${term(i)};`,
    );
    info = {
      setPath: `/${type.setName}(`,
      metadataTail: `L)","type":${JSON.stringify(qualifiedName(model, type))}`,
      properties,
      allProperties: compileOver(
        { json },
        `(values) => ${terms.length > 0 ? terms.join(' + ') : "''"}`,
      ),
      allPropertiesApart: compileOver(
        { json, NON_ASCII },
        `(values, sink, out) => { let t; ${apartSteps.join(' ')} return out; }`,
      ),
      navigations,
      allDeferred: compileAround(navigations.map((n) => [n.deferredHead, n.deferredTail])),
    };
    typeCache.set(type, info);
  }
  return info;
}

// ---------------------------------------------------------------------------------------------
// Per-context constants

/** A compiled $select. */
interface Selection {
  /** `*` was selected: every property and navigation. */
  readonly star: boolean;
  /** Entries without a slash: whole properties and navigations. */
  readonly whole: ReadonlySet<string>;
  /** First segments of all entries: the navigations that are written at all. */
  readonly heads: ReadonlySet<string>;
  /** Navigation name -> the entries under it (`Nav/Prop` -> `Prop`). */
  readonly nested: ReadonlyMap<string, readonly string[]>;
}

interface Ctx {
  /** The service root, JSON-escaped, without quotes. */
  readonly root: string;
  readonly v2: boolean;
  readonly selection: Selection | undefined;
  /** Contexts for entities expanded under a navigation name (only when selection is set). */
  readonly children: Map<string, Ctx>;
}

const ctxCache = new WeakMap<WriteContext, Ctx>();

function compileSelection(select: ReadonlySet<string>): Selection {
  const whole = new Set<string>();
  const heads = new Set<string>();
  const nested = new Map<string, string[]>();
  for (const entry of select) {
    const slash = entry.indexOf('/');
    if (slash < 0) {
      whole.add(entry);
      heads.add(entry);
    } else {
      const head = entry.slice(0, slash);
      heads.add(head);
      let list = nested.get(head);
      if (list === undefined) nested.set(head, (list = []));
      list.push(entry.slice(slash + 1));
    }
  }
  return { star: whole.has('*'), whole, heads, nested };
}

function makeCtx(root: string, v2: boolean, select: ReadonlySet<string> | undefined): Ctx {
  return { root, v2, selection: select === undefined ? undefined : compileSelection(select), children: new Map() };
}

/**
 * Contexts without $select, by version and service root: a request makes a new WriteContext,
 * but nearly all of them write the same root, and escaping it again cost several µs per GET.
 */
const plainCtxByRoot = new Map<string, Ctx>();
const PLAIN_CONTEXTS = 64;

/** The last context asked for and its Ctx: a feed asks once per entity, with the same context. */
let lastContext: WriteContext | undefined;
let lastCtx: Ctx | undefined;

function ctxOf(ctx: WriteContext): Ctx {
  if (ctx === lastContext) return lastCtx!;
  const c = compiledCtx(ctx);
  lastContext = ctx;
  lastCtx = c;
  return c;
}

function compiledCtx(ctx: WriteContext): Ctx {
  if (ctx.select === undefined) {
    const key = (ctx.version === 2 ? '2' : '1') + ctx.serviceRoot;
    let plain = plainCtxByRoot.get(key);
    if (plain === undefined) {
      plain = makeCtx(JSON.stringify(ctx.serviceRoot).slice(1, -1), ctx.version === 2, undefined);
      // Roots come from the Host header: a client that varies it only refills the table.
      if (plainCtxByRoot.size >= PLAIN_CONTEXTS) plainCtxByRoot.clear();
      plainCtxByRoot.set(key, plain);
    }
    return plain;
  }
  let c = ctxCache.get(ctx);
  if (c === undefined) {
    c = makeCtx(JSON.stringify(ctx.serviceRoot).slice(1, -1), ctx.version === 2, ctx.select);
    ctxCache.set(ctx, c);
  }
  return c;
}

/**
 * The context of entities expanded under `name`: `$select=Nav` (or `*`) selects all of their
 * properties, `$select=Nav/Prop` only Prop, `Nav/*` all of them.
 */
function childCtx(c: Ctx, name: string): Ctx {
  const sel = c.selection;
  if (sel === undefined) return c;
  let child = c.children.get(name);
  if (child === undefined) {
    const entries = sel.nested.get(name);
    const all = sel.whole.has(name) || entries === undefined;
    child = makeCtx(c.root, c.v2, all ? undefined : new Set(entries));
    c.children.set(name, child);
  }
  return child;
}

// ---------------------------------------------------------------------------------------------
// Entities

/**
 * Writes one entity to the sink: its own members as one string, each expanded navigation's
 * entities written the same way in between. No string ever holds more than one entity's own
 * members, so a product with hundreds of expanded entities is never one huge concatenation.
 */
function writeEntity(c: Ctx, rec: EntityRecord, sink: TextSink): void {
  const t = typeInfo(rec.type);
  const values = rec.values;
  const id = values['Id'];
  if (typeof id !== 'bigint') throw new Error(`An entity of type ${rec.type.name} without an Int64 Id cannot be written`);
  const uri = c.root + t.setPath + id.toString();
  let out = '{"__metadata":{"uri":"' + uri + t.metadataTail + (rec.version === undefined ? '}' : ',"etag":"W/\\"' + rec.version.toString() + '\\""}');
  const sel = c.selection;

  if (sel === undefined || sel.star) out = sink.appendApart === undefined ? out + t.allProperties(values) : t.allPropertiesApart(values, sink, out);
  else {
    for (const p of t.properties) if (sel.whole.has(p.name)) out += p.member + p.text(values[p.name]);
  }

  const expanded = rec.expanded;
  const entityUri = uri + 'L)';
  if (expanded === undefined && (sel === undefined || sel.star)) {
    sink.append(out + t.allDeferred(entityUri) + '}');
    return;
  }
  for (const n of t.navigations) {
    const name = n.nav.name;
    if (sel !== undefined && !sel.star && !sel.heads.has(name)) continue;
    const value = expanded === undefined ? undefined : expanded.get(name);
    if (value === undefined) {
      out += n.deferredHead + entityUri + n.deferredTail;
      continue;
    }
    sink.append(out + n.member);
    out = '';
    writeExpanded(childCtx(c, name), n.nav, value, sink);
  }
  sink.append(out + '}');
}

function writeExpanded(c: Ctx, nav: NavigationDef, value: EntityRecord | null | readonly EntityRecord[], sink: TextSink): void {
  if (value === null) {
    if (nav.many) throw new Error(`The to-many navigation ${nav.name} was expanded to null (use an empty array)`);
    sink.append('null');
    return;
  }
  if (isRecordArray(value)) {
    if (!nav.many) throw new Error(`The to-one navigation ${nav.name} was expanded to an array`);
    sink.append(c.v2 ? '{"results":[' : '[');
    for (let i = 0; i < value.length; i++) {
      if (i !== 0) sink.append(',');
      writeEntity(c, value[i]!, sink);
    }
    sink.append(c.v2 ? ']}' : ']');
    return;
  }
  if (nav.many) throw new Error(`The to-many navigation ${nav.name} was expanded to a single entity`);
  writeEntity(c, value, sink);
}

function isRecordArray(value: EntityRecord | readonly EntityRecord[]): value is readonly EntityRecord[] {
  return Array.isArray(value);
}

/**
 * The entity object without the "d" wrapper: __metadata, the properties in model order, then one
 * member per navigation in model order. A navigation is deferred unless rec.expanded holds it
 * under its name. With ctx.select, only selected properties and navigations are written.
 * Properties missing from rec.values are written as null.
 */
export function jsonEntity(ctx: WriteContext, rec: EntityRecord): string {
  const sink = new StringSink();
  writeEntity(ctxOf(ctx), rec, sink);
  return sink.text;
}

/** jsonEntity, written piece by piece to a sink (a streamed feed). */
export function jsonEntityTo(ctx: WriteContext, rec: EntityRecord, sink: TextSink): void {
  writeEntity(ctxOf(ctx), rec, sink);
}

/** `{"d":<entity>}`: single-entity responses (GET by key, 201 of an insert). */
export function jsonEntityDocument(ctx: WriteContext, rec: EntityRecord): string {
  return '{"d":' + jsonEntity(ctx, rec) + '}';
}

/** jsonEntityDocument as UTF-8 bytes, encoded piece by piece (BytesSink): a response body. */
export function jsonEntityDocumentBytes(ctx: WriteContext, rec: EntityRecord): Buffer {
  const sink = new BytesSink();
  sink.append('{"d":');
  writeEntity(ctxOf(ctx), rec, sink);
  sink.append('}');
  return sink.bytes();
}

// ---------------------------------------------------------------------------------------------
// Feeds, streamed: jsonFeedStart, then the entities (jsonEntity) separated by jsonFeedSeparator,
// then jsonFeedEnd.

/** V1 `{"d":[`; V2 `{"d":{"__count":"N","results":[` (__count only when count is given). */
export function jsonFeedStart(ctx: WriteContext, opts: { count?: bigint | number } = {}): string {
  if (ctx.version !== 2) return '{"d":[';
  return opts.count === undefined ? '{"d":{"results":[' : '{"d":{"__count":"' + countText(opts.count) + '","results":[';
}

export const jsonFeedSeparator = ',';

/**
 * V1 `]}`; V2 `]` + `,"__next":"…"` (when next is given) + `}}`. A feed that tracks changes
 * (always V2) ends as Apache Olingo's V2 JSON does: its removed entities at the end of `results`
 * as `{"@odata.context":"$metadata#<Set>/$deletedEntity","id":"<entity URI>"}` (OData 4's deleted
 * entity, lightly), and `"__delta":"…"` beside `results` on the last page.
 */
export function jsonFeedEnd(ctx: WriteContext, opts: { next?: string; delta?: FeedDelta & { readonly setName: string } } = {}): string {
  if (ctx.version !== 2) return ']}';
  let out = '';
  if (opts.delta) {
    const context = JSON.stringify(`$metadata#${opts.delta.setName}/$deletedEntity`);
    opts.delta.removed.forEach((removed, i) => {
      out += `${i > 0 || opts.delta!.anyEntries ? ',' : ''}{"@odata.context":${context},"id":${JSON.stringify(removed.uri)}}`;
    });
  }
  out += ']';
  if (opts.next !== undefined) out += ',"__next":' + JSON.stringify(opts.next);
  if (opts.delta?.link !== undefined) out += ',"__delta":' + JSON.stringify(opts.delta.link);
  return out + '}}';
}

function countText(count: bigint | number): string {
  if (typeof count === 'number' && !Number.isSafeInteger(count)) throw new Error(`Invalid inline count ${count}`);
  return count.toString();
}

// ---------------------------------------------------------------------------------------------
// Properties, links, operation results

/** `{"d":{"<Name>":<value>}}`: a top-level property (GET Products(1L)/Title). */
export function jsonPropertyDocument(name: string, type: EdmType, value: EdmValue): string {
  return '{"d":{' + JSON.stringify(name) + ':' + toJson(type, value) + '}}';
}

/** `{"d":{"uri":"…"}}`: a to-one $links answer. */
export function jsonLinkDocument(uri: string): string {
  return '{"d":{"uri":' + JSON.stringify(uri) + '}}';
}

/** V1 `{"d":[{"uri":…},…]}`; V2 `{"d":{"__count":"N","results":[…]}}` (__count only when given). */
export function jsonLinksDocument(ctx: WriteContext, uris: readonly string[], opts: { count?: bigint | number } = {}): string {
  let items = '';
  for (let i = 0; i < uris.length; i++) items += (i === 0 ? '{"uri":' : ',{"uri":') + JSON.stringify(uris[i]!) + '}';
  if (ctx.version !== 2) return '{"d":[' + items + ']}';
  return (opts.count === undefined ? '{"d":{"results":[' : '{"d":{"__count":"' + countText(opts.count) + '","results":[') + items + ']}}';
}

/** `{"d":{"<OperationName>":<value>}}`: a service operation returning one primitive. */
export function jsonOperationResult(name: string, type: EdmType, value: EdmValue): string {
  return '{"d":{' + JSON.stringify(name) + ':' + toJson(type, value) + '}}';
}
