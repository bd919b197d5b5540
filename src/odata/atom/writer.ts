/**
 * Atom and plain-XML response bodies (docs/protocol.md, "Formats"), written as strings.
 *
 * Everything that depends only on the entity type (category, edit link, navigation links, the
 * property element tags with their m:type) is built once per type and cached; writing an entry
 * then only concatenates those pieces with the escaped values. No whitespace between elements.
 *
 * Feeds are written in pieces so that a caller can stream them:
 *   atomFeedStart(ctx, …) + records.map((r) => atomEntry(ctx, r)).join('') + atomFeedEnd(…)
 */
import { compileAround, compileOver, memberSource } from '../../model/compiled-access';
import { model } from '../../model/catalogue-model';
import { qualifiedName } from '../../model/define';
import type { EdmType, EntityTypeDef, NavigationDef, PropertyDef } from '../../model/types';
import { toXmlText, type EdmValue } from '../edm';
import { entityPath, type EntityRecord, type WriteContext } from '../entity';
import { escapeXml, xmlText } from '../xml-escape';
import { BytesSink, NON_ASCII, StringSink, type TextSink } from '../text-sink';

export const ATOM_NS = 'http://www.w3.org/2005/Atom';
export const D_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices';
export const M_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices/metadata';
export const SCHEME = 'http://schemas.microsoft.com/ado/2007/08/dataservices/scheme';
export const RELATED_PREFIX = 'http://schemas.microsoft.com/ado/2007/08/dataservices/related/';

export const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8" standalone="yes"?>';
const ROOT_NAMESPACES = `xmlns="${ATOM_NS}" xmlns:d="${D_NS}" xmlns:m="${M_NS}"`;

const EDGE_WHITESPACE = /^\s|\s$/;

// ---------------------------------------------------------------------------------------------
// Per-type templates

interface PropertyTemplate {
  readonly def: PropertyDef;
  readonly isString: boolean;
  /** `<d:Name m:type="Edm.Int32">` (`<d:Name>` for strings). */
  readonly open: string;
  /** `<d:Name xml:space="preserve">`: strings with leading or trailing whitespace. */
  readonly openPreserve: string;
  readonly close: string;
  /** `<d:Name m:type="Edm.Int32" m:null="true" />`. */
  readonly nullElement: string;
}

interface NavLinkTemplate {
  /** `<link rel="…/related/Name" type="application/atom+xml;type=feed" title="Name" href="` */
  readonly open: string;
  /** `/Name` (escaped), appended to the entity path inside href. */
  readonly hrefSuffix: string;
}

interface NavigationTemplate {
  readonly def: NavigationDef;
  readonly link: NavLinkTemplate;
}

interface TypeTemplate {
  readonly keyName: string;
  readonly qualifiedName: string;
  /** `<link rel="edit" title="TypeName" href="` */
  readonly editOpen: string;
  readonly category: string;
  readonly properties: readonly PropertyTemplate[];
  /**
   * Every property's element in model order, compiled once per type
   * (../../model/compiled-access.ts): the entity's values are read as plain members.
   */
  readonly allProperties: (values: Readonly<Record<string, EdmValue>>) => string;
  /**
   * allProperties for a sink that encodes as it goes: appended to `out`, except that a String
   * element holding text outside ASCII goes to sink.appendApart() (../text-sink.ts says why).
   * Answers the text not yet given to the sink.
   */
  readonly allPropertiesApart: (values: Readonly<Record<string, EdmValue>>, sink: TextSink, out: string) => string;
  readonly navigations: readonly NavigationTemplate[];
  /**
   * Every navigation's link, none expanded, given the entry's path: the constant text between two
   * paths is one string, so the entry is built of fewer pieces (flattening costs per piece).
   */
  readonly allLinks: (path: string) => string;
  /** Name -> navigation. */
  readonly navigationByName: ReadonlyMap<string, NavigationTemplate>;
}

const templates = new WeakMap<EntityTypeDef, TypeTemplate>();

function typeAttribute(type: EdmType): string {
  return type === 'Edm.String' ? '' : ` m:type="${type}"`;
}

function buildTemplate(type: EntityTypeDef): TypeTemplate {
  const key = type.properties.find((p) => p.access === 'key');
  if (!key) throw new Error(`entity type ${type.name} has no key property`);
  const typeName = qualifiedName(model, type);
  const properties = type.properties.map((def): PropertyTemplate => {
    const tag = `d:${escapeXml(def.name)}`;
    const mType = typeAttribute(def.type);
    return {
      def,
      isString: def.type === 'Edm.String',
      open: `<${tag}${mType}>`,
      openPreserve: `<${tag}${mType} xml:space="preserve">`,
      close: `</${tag}>`,
      nullElement: `<${tag}${mType} m:null="true" />`,
    };
  });
  const element = properties.map((p) => (value: EdmValue | undefined) => propertyElement(p, value));
  const elementOf = (i: number) => `element[${i}](values.${memberSource(type, type.properties[i]!)})`;
  // Only a String's text can hold characters outside ASCII.
  const apartSteps = type.properties.map((def, i) =>
    def.type === 'Edm.String'
      ? `e = ${elementOf(i)}; if (NON_ASCII.test(e)) { sink.append(out); sink.appendApart(e); out = ''; } else out += e;`
      : `out += ${elementOf(i)};`,
  );
  const navigationByName = new Map<string, NavigationTemplate>();
  const navigations = type.navigations.map((def): NavigationTemplate => {
    const linkType = def.many ? 'feed' : 'entry';
    const n = escapeXml(def.name);
    const t: NavigationTemplate = {
      def,
      link: {
        open: `<link rel="${RELATED_PREFIX}${n}" type="application/atom+xml;type=${linkType}" title="${n}" href="`,
        hrefSuffix: `/${n}`,
      },
    };
    navigationByName.set(def.name, t);
    return t;
  });
  return {
    keyName: key.name,
    qualifiedName: typeName,
    editOpen: `<link rel="edit" title="${escapeXml(type.name)}" href="`,
    category: `<category term="${escapeXml(typeName)}" scheme="${SCHEME}" />`,
    properties,
    allProperties: compileOver({ element }, `(values) => ${type.properties.length > 0 ? type.properties.map((_, i) => elementOf(i)).join(' + ') : "''"}`),
    allPropertiesApart: compileOver({ element, NON_ASCII }, `(values, sink, out) => { let e; ${apartSteps.join(' ')} return out; }`),
    navigations,
    allLinks: compileAround(navigations.map((n) => [n.link.open, `${n.link.hrefSuffix}" />`])),
    navigationByName,
  };
}

function templateOf(type: EntityTypeDef): TypeTemplate {
  let t = templates.get(type);
  if (!t) {
    t = buildTemplate(type);
    templates.set(type, t);
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// $select

/**
 * A $select set read once: `Prop`, `Nav`, `*`, `Nav/Prop`, `Nav/*`. `*` selects every property
 * (navigation links stay limited to the selected navigations); a navigation is selected by its
 * name or a path through it.
 */
interface Selection {
  readonly allProperties: boolean;
  readonly names: ReadonlySet<string>;
  /**
   * Per first segment that had further segments or stood alone: the selection inside that
   * navigation, undefined when the whole navigation is selected (bare `Nav`).
   */
  readonly inner: ReadonlyMap<string, ReadonlySet<string> | undefined>;
}

const selections = new WeakMap<ReadonlySet<string>, Selection>();

function selectionOf(select: ReadonlySet<string>): Selection {
  let s = selections.get(select);
  if (s) return s;
  const names = new Set<string>();
  const paths = new Map<string, Set<string>>();
  const bare = new Set<string>();
  for (const item of select) {
    const slash = item.indexOf('/');
    if (slash < 0) {
      names.add(item);
      bare.add(item);
    } else {
      const head = item.slice(0, slash);
      names.add(head);
      let rest = paths.get(head);
      if (!rest) paths.set(head, (rest = new Set()));
      rest.add(item.slice(slash + 1));
    }
  }
  const inner = new Map<string, ReadonlySet<string> | undefined>();
  for (const name of names) inner.set(name, bare.has(name) ? undefined : paths.get(name));
  s = { allProperties: select.has('*'), names, inner };
  selections.set(select, s);
  return s;
}

const innerContexts = new WeakMap<WriteContext, Map<string, WriteContext>>();

/** The context for the entities expanded under navigation `name` (same response, inner $select). */
function innerContext(ctx: WriteContext, selection: Selection | undefined, name: string): WriteContext {
  if (!selection) return ctx;
  let byName = innerContexts.get(ctx);
  if (!byName) innerContexts.set(ctx, (byName = new Map()));
  let inner = byName.get(name);
  if (!inner) {
    const select = selection.inner.get(name);
    inner = { serviceRoot: ctx.serviceRoot, version: ctx.version, updated: ctx.updated, ...(select ? { select } : {}) };
    byName.set(name, inner);
  }
  return inner;
}

// ---------------------------------------------------------------------------------------------
// Entries

function keyOf(rec: EntityRecord, t: TypeTemplate): bigint {
  const id = rec.values[t.keyName];
  if (typeof id !== 'bigint') throw new Error(`${rec.type.name} record without an Int64 ${t.keyName}`);
  return id;
}

function propertyElement(p: PropertyTemplate, value: EdmValue | undefined): string {
  if (value === null || value === undefined) return p.nullElement;
  if (p.isString) {
    const s = value as string;
    return (EDGE_WHITESPACE.test(s) ? p.openPreserve : p.open) + xmlText(s) + p.close;
  }
  // The text of a number, a Boolean or a date holds nothing XML would escape.
  return p.open + toXmlText(p.def.type, value) + p.close;
}

type Expanded = EntityRecord | null | readonly EntityRecord[];

const PROPERTIES_OPEN = '<content type="application/xml"><m:properties>';
const PROPERTIES_CLOSE = '</m:properties></content>';

/**
 * Writes one entry to the sink: its own elements as one string, each m:inline's entries written
 * the same way in between, so no string holds more than one entry's own elements.
 */
function writeEntry(ctx: WriteContext, rec: EntityRecord, rootAttributes: string, sink: TextSink): void {
  const t = templateOf(rec.type);
  const path = entityPath(rec.type, keyOf(rec, t));
  const root = escapeXml(ctx.serviceRoot);
  const updated = escapeXml(ctx.updated);
  const selection = ctx.select ? selectionOf(ctx.select) : undefined;

  const etag = rec.version === undefined ? '' : ` m:etag="W/&quot;${rec.version}&quot;"`;
  let out = `<entry${etag}${rootAttributes}><id>${root}/${path}</id><title type="text" /><updated>${updated}</updated><author><name /></author>`;
  out += `${t.editOpen}${path}" />`;

  const expanded = rec.expanded;
  if (expanded) {
    for (const name of expanded.keys()) {
      if (!t.navigationByName.has(name)) throw new Error(`${rec.type.name} has no navigation ${name} to expand`);
    }
  }
  if (!expanded && !selection) out += t.allLinks(path);
  else {
    for (const nav of t.navigations) {
      const name = nav.def.name;
      if (selection && !selection.names.has(name)) continue;
      const link = nav.link;
      if (!expanded || !expanded.has(name)) {
        out += `${link.open}${path}${link.hrefSuffix}" />`;
        continue;
      }
      const value = expanded.get(name) as Expanded;
      out += `${link.open}${path}${link.hrefSuffix}">`;
      if (value === null) {
        out += '<m:inline /></link>';
        continue;
      }
      sink.append(out + '<m:inline>');
      out = '';
      inlineContent(innerContext(ctx, selection, name), value, link, name, root, path, updated, sink);
      out += '</m:inline></link>';
    }
  }

  out += t.category;
  const values = rec.values;
  if (sink.appendApart !== undefined && (!selection || selection.allProperties) && t.properties.length > 0) {
    out = t.allPropertiesApart(values, sink, out + PROPERTIES_OPEN);
    sink.append(out + PROPERTIES_CLOSE + '</entry>');
    return;
  }
  let props = '';
  if (!selection || selection.allProperties) props = t.allProperties(values);
  else {
    for (const p of t.properties) if (selection.names.has(p.def.name)) props += propertyElement(p, values[p.def.name]);
  }
  out += props ? PROPERTIES_OPEN + props + PROPERTIES_CLOSE : '<content type="application/xml" />';
  sink.append(out + '</entry>');
}

function inlineContent(
  ctx: WriteContext,
  value: EntityRecord | readonly EntityRecord[],
  link: NavLinkTemplate,
  name: string,
  root: string,
  path: string,
  updated: string,
  sink: TextSink,
): void {
  if (!Array.isArray(value)) {
    writeEntry(ctx, value as EntityRecord, '', sink);
    return;
  }
  const title = escapeXml(name);
  let head = `<feed><title type="text">${title}</title><id>${root}/${path}${link.hrefSuffix}</id><updated>${updated}</updated>`;
  head += `<link rel="self" title="${title}" href="${path}${link.hrefSuffix}" />`;
  sink.append(head);
  for (const child of value as readonly EntityRecord[]) writeEntry(ctx, child, '', sink);
  sink.append('</feed>');
}

/** An `<entry>` for use inside a feed (no xml declaration, no namespace declarations). */
export function atomEntry(ctx: WriteContext, rec: EntityRecord): string {
  const sink = new StringSink();
  writeEntry(ctx, rec, '', sink);
  return sink.text;
}

/** atomEntry, written piece by piece to a sink (a streamed feed). */
export function atomEntryTo(ctx: WriteContext, rec: EntityRecord, sink: TextSink): void {
  writeEntry(ctx, rec, '', sink);
}

function rootAttributes(ctx: WriteContext): string {
  return ` xml:base="${escapeXml(ctx.serviceRoot)}/" ${ROOT_NAMESPACES}`;
}

/** A single-entity response: xml declaration and the entry with xml:base and the namespaces. */
export function atomEntryDocument(ctx: WriteContext, rec: EntityRecord): string {
  const sink = new StringSink();
  sink.append(XML_DECLARATION);
  writeEntry(ctx, rec, rootAttributes(ctx), sink);
  return sink.text;
}

/** atomEntryDocument as UTF-8 bytes, encoded piece by piece (BytesSink): a response body. */
export function atomEntryDocumentBytes(ctx: WriteContext, rec: EntityRecord): Buffer {
  const sink = new BytesSink();
  sink.append(XML_DECLARATION);
  writeEntry(ctx, rec, rootAttributes(ctx), sink);
  return sink.bytes();
}

// ---------------------------------------------------------------------------------------------
// Feeds

export interface AtomFeedStartOptions {
  /** Set or navigation name. */
  readonly title: string;
  /** Absolute URI of the collection. */
  readonly id: string;
  /** The request's resource path (with query), relative to xml:base (the service root). */
  readonly selfHref: string;
  /** $inlinecount=allpages: written as m:count before the entries. */
  readonly count?: bigint | number;
  /** A feed that tracks changes: it declares the tombstone namespace (RFC 6721) its end may use. */
  readonly tracking?: boolean;
}

/** RFC 6721's namespace of deleted entries, with the prefix Apache Olingo gives it. */
export const TOMBSTONE_NS = 'http://purl.org/atompub/tombstones/1.0';

/** The end of a feed that tracks changes (a delta link, or a page of one). */
export interface FeedDelta {
  /** Entities removed since the delta link followed (deleted, or no longer matching the filter). */
  readonly removed: readonly RemovedEntity[];
  /** The delta link, on the last page only. */
  readonly link?: string;
  /** Whether the feed wrote any entry (JSON needs a separator before the first removal). */
  readonly anyEntries: boolean;
}

export interface RemovedEntity {
  /** The entity's URI (its id in the feeds). */
  readonly uri: string;
  /** UTC ms. */
  readonly when: number;
}

export function atomFeedStart(ctx: WriteContext, opts: AtomFeedStartOptions): string {
  const title = escapeXml(opts.title);
  const tombstones = opts.tracking ? ` xmlns:at="${TOMBSTONE_NS}"` : '';
  let out = `${XML_DECLARATION}<feed${rootAttributes(ctx)}${tombstones}><title type="text">${title}</title><id>${escapeXml(opts.id)}</id>`;
  out += `<updated>${escapeXml(ctx.updated)}</updated><link rel="self" title="${title}" href="${escapeXml(opts.selfHref)}" />`;
  if (opts.count !== undefined) out += `<m:count>${String(opts.count)}</m:count>`;
  return out;
}

export function atomFeedEnd(opts: { readonly next?: string; readonly delta?: FeedDelta } = {}): string {
  let out = '';
  // As Apache Olingo writes them: the tombstones after the entries, then the delta link.
  if (opts.delta) {
    for (const removed of opts.delta.removed) out += `<at:deleted-entry ref="${escapeXml(removed.uri)}" when="${new Date(removed.when).toISOString()}" />`;
    if (opts.delta.link !== undefined) out += `<link rel="delta" href="${escapeXml(opts.delta.link)}" />`;
  }
  return opts.next !== undefined ? `${out}<link rel="next" href="${escapeXml(opts.next)}" /></feed>` : `${out}</feed>`;
}

// ---------------------------------------------------------------------------------------------
// application/xml documents (§2.6)

function valueDocument(name: string, type: EdmType, value: EdmValue): string {
  const tag = escapeXml(name);
  let attrs = ` xmlns="${D_NS}"`;
  if (type !== 'Edm.String' || value === null) attrs += ` xmlns:m="${M_NS}"${typeAttribute(type)}`;
  if (value === null) return `${XML_DECLARATION}<${tag}${attrs} m:null="true" />`;
  if (type === 'Edm.String') {
    const s = value as string;
    if (EDGE_WHITESPACE.test(s)) attrs += ' xml:space="preserve"';
    return `${XML_DECLARATION}<${tag}${attrs}>${xmlText(s)}</${tag}>`;
  }
  return `${XML_DECLARATION}<${tag}${attrs}>${escapeXml(toXmlText(type, value))}</${tag}>`;
}

/** A single property (`GET Products(1L)/Title`): `<Title xmlns="…/dataservices">…</Title>`. */
export function xmlPropertyDocument(name: string, type: EdmType, value: EdmValue): string {
  return valueDocument(name, type, value);
}

/** A service operation's primitive result: a root element named after the operation. */
export function xmlOperationResult(name: string, type: EdmType, value: EdmValue): string {
  return valueDocument(name, type, value);
}

/** A single link (`GET Products(1L)/$links/Product`): `<uri xmlns="…/dataservices">…</uri>`. */
export function xmlLinkDocument(uri: string): string {
  return `${XML_DECLARATION}<uri xmlns="${D_NS}">${escapeXml(uri)}</uri>`;
}

/**
 * A links collection (`GET Products(1L)/$links/Catalogs`): `<links xmlns="…/dataservices">` with
 * `<m:count>` first when count is given and `<next>` last when next is given (V2 paging).
 */
export function xmlLinksDocument(
  uris: Iterable<string>,
  opts: { readonly count?: bigint | number; readonly next?: string } = {},
): string {
  let out = XML_DECLARATION;
  if (opts.count !== undefined) out += `<links xmlns="${D_NS}" xmlns:m="${M_NS}"><m:count>${String(opts.count)}</m:count>`;
  else out += `<links xmlns="${D_NS}">`;
  for (const uri of uris) out += `<uri>${escapeXml(uri)}</uri>`;
  if (opts.next !== undefined) out += `<next>${escapeXml(opts.next)}</next>`;
  return out + '</links>';
}
