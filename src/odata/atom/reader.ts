/**
 * Atom and plain-XML request bodies (docs/protocol.md): an entry to create or update an
 * entity, and the `<uri>` document of $links requests.
 *
 * Parsed with saxes, namespace-aware and order-agnostic: clients differ in element order
 * (.NET puts category first, datajs writes author, title, content, category, links), in whether
 * m:type is present, and in where m:properties sits. Values are typed from the model, never from
 * m:type; an m:type or a category term that disagrees with the model is a 400.
 *
 * Hostile input first: no DOCTYPE at all (so no entity expansion, no external entities), only the
 * XML declaration as processing instruction, at most 64 levels of elements, and every failure is
 * an ODataError 400 with a short message.
 */
import { SaxesParser, type SaxesAttributeNS, type SaxesTagNS } from 'saxes';

import { clientSets, findNavigation, qualifiedName } from '../../model/define';
import type { EntityTypeDef, NavigationDef, PropertyDef } from '../../model/types';
import { model } from '../../model/catalogue-model';
import { fromXmlText, ValueError, type EdmValue } from '../edm';
import type { EntityPayload } from '../entity';
import { badRequest, ODataError } from '../errors';
import { quote } from '../quote';
import { xmlBodyText } from '../xml-body-text';

const ATOM_NS = 'http://www.w3.org/2005/Atom';
const D_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices';
const M_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices/metadata';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const RELATED_PREFIX = 'http://schemas.microsoft.com/ado/2007/08/dataservices/related/';

/** Deepest element nesting accepted (the root is level 1). */
export const MAX_XML_DEPTH = 64;

const DOCTYPE = /<!DOCTYPE/i;

// ---------------------------------------------------------------------------------------------
// Shared parsing frame

/** The body as text, in the encoding the request names (`charset`: the Content-Type's). */
function decode(body: Buffer, charset: string | undefined): string {
  const text = xmlBodyText(body, charset);
  if (text.trim() === '') throw badRequest('The request body is empty.');
  if (DOCTYPE.test(text)) throw doctypeError();
  return text;
}

const doctypeError = () => badRequest('XML with a DOCTYPE is not accepted.');

function clip(text: string, max = 40): string {
  return quote(text, max);
}

interface Handlers {
  open(tag: SaxesTagNS, depth: number): void;
  close(tag: SaxesTagNS, depth: number): void;
  text(text: string): void;
}

/**
 * Runs saxes over `text` with the security rules and hands elements to `h`. Every error becomes
 * an ODataError 400 (ODataErrors thrown by the handlers pass through).
 */
function parse(text: string, h: Handlers): void {
  const parser = new SaxesParser({ xmlns: true, position: false });
  let depth = 0;
  parser.on('doctype', () => {
    throw doctypeError();
  });
  parser.on('processinginstruction', (pi) => {
    throw badRequest(`Processing instructions are not accepted ('${clip(pi.target)}').`);
  });
  parser.on('opentag', (tag) => {
    depth += 1;
    if (depth > MAX_XML_DEPTH) throw badRequest(`The XML is nested deeper than ${MAX_XML_DEPTH} levels.`);
    h.open(tag, depth);
  });
  parser.on('closetag', (tag) => {
    h.close(tag, depth);
    depth -= 1;
  });
  parser.on('text', h.text);
  parser.on('cdata', h.text);
  try {
    parser.write(text).close();
  } catch (e) {
    if (e instanceof ODataError) throw e;
    const message = e instanceof Error ? e.message : String(e);
    throw badRequest(`The request body is not well-formed XML: ${clip(message, 80)}`);
  }
}

/** The attribute `local` in namespace `uri` (null: no namespace). */
function attr(tag: SaxesTagNS, uri: string, local: string): string | undefined {
  for (const key in tag.attributes) {
    const a = tag.attributes[key] as SaxesAttributeNS;
    if (a.local === local && a.uri === uri) return a.value;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Entries

/** An entry being read: the request's entry, or one inside an m:inline of it (deep insert). */
interface EntryState {
  readonly type: EntityTypeDef;
  readonly values: Map<string, EdmValue>;
  readonly bindings: Map<string, string[]>;
  readonly inline: Map<string, EntityPayload[]>;
  /** For an inline entry: the link it is inside and what decides whether it binds or inserts. */
  readonly nested?: {
    readonly link: LinkState;
    readonly base: string | undefined;
    id: string | undefined;
    /** Properties or navigation links seen: the entry is a new entity, not a binding. */
    hasData: boolean;
  };
}

/** A `<link rel="…/related/Nav">` being read. */
interface LinkState {
  readonly owner: EntryState;
  readonly nav: NavigationDef;
  readonly href: string | undefined;
  readonly base: string | undefined;
  /** Ids of the inline entries that are bindings; undefined while no m:inline was seen. */
  inline: string[] | undefined;
  /** Inline entries with content: entities to create with the owner. */
  readonly entries: EntityPayload[];
}

type Frame =
  | { readonly k: 'skip' }
  | { readonly k: 'entry'; readonly entry: EntryState }
  | { readonly k: 'content'; readonly entry: EntryState }
  | { readonly k: 'properties'; readonly entry: EntryState }
  | { readonly k: 'property'; readonly entry: EntryState; readonly prop: PropertyDef; readonly isNull: boolean; text: string }
  | { readonly k: 'link'; readonly link: LinkState }
  | { readonly k: 'inline'; readonly link: LinkState }
  | { readonly k: 'inlineFeed'; readonly link: LinkState }
  | { readonly k: 'inlineId'; readonly entry: EntryState; text: string };

const SKIP: Frame = { k: 'skip' };

/** Resolves `uri` against an xml:base in scope (kept as sent when there is none or it fails). */
function resolve(uri: string, base: string | undefined): string {
  if (base === undefined) return uri;
  try {
    return new URL(uri, base).href;
  } catch {
    return uri;
  }
}

const newEntry = (type: EntityTypeDef, nested?: EntryState['nested']): EntryState => ({
  type,
  values: new Map(),
  bindings: new Map(),
  inline: new Map(),
  ...(nested ? { nested } : {}),
});

const payloadOf = (entry: EntryState): EntityPayload =>
  entry.inline.size > 0 ? { values: entry.values, bindings: entry.bindings, inline: entry.inline } : { values: entry.values, bindings: entry.bindings };

const SCHEME = 'http://schemas.microsoft.com/ado/2007/08/dataservices/scheme';

/**
 * An entry's `<category term="…" scheme="…/scheme">` names its entity type: it must be the type
 * of the target set (the model has no derived types), as WCF Data Services requires and as the
 * JSON reader checks `__metadata.type`. A category of another scheme is no type statement.
 */
function checkCategory(tag: SaxesTagNS, type: EntityTypeDef): void {
  if (attr(tag, '', 'scheme') !== SCHEME) return;
  const term = attr(tag, '', 'term');
  const expected = qualifiedName(model, type);
  if (term !== undefined && term !== expected) {
    throw badRequest(`The entry's category term '${clip(term)}' does not match the entity type '${expected}' of the target set.`);
  }
}

/**
 * A property's `m:type`, when present, must be the model's type of the property: values are
 * read by the model's type, so a disagreeing m:type is a client's mistake, not a conversion.
 */
function checkPropertyType(tag: SaxesTagNS, prop: PropertyDef, type: EntityTypeDef): void {
  const sent = attr(tag, M_NS, 'type');
  if (sent !== undefined && sent !== prop.type) {
    throw badRequest(`The property '${prop.name}' of type '${qualifiedName(model, type)}' is of type '${prop.type}', but the entry gives m:type '${clip(sent)}'.`);
  }
}

/**
 * Reads an Atom entry sent to create or update an entity of `type`: its properties (typed from
 * the model), its navigation bindings, and the entries sent inline under its navigations (deep
 * insert: an `m:inline` entry or feed whose entries have content), each read against the
 * navigation's target type. An inline entry with nothing but an id binds the entity it names.
 * `charset` is the Content-Type's charset parameter. Throws ODataError 400 for anything malformed
 * (415 for an encoding the service does not know).
 */
export function readAtomEntry(type: EntityTypeDef, body: Buffer, charset?: string): EntityPayload {
  try {
    return readEntry(type, decode(body, charset));
  } catch (e) {
    if (e instanceof ODataError) throw e;
    throw badRequest('The request body is not a valid Atom entry.');
  }
}

function readEntry(type: EntityTypeDef, text: string): EntityPayload {
  const root = newEntry(type);
  const frames: Frame[] = [];
  const bases: (string | undefined)[] = [];
  let top: Frame = SKIP;

  const addBinding = (entry: EntryState, nav: NavigationDef, uri: string) => {
    const list = entry.bindings.get(nav.name);
    if (list) list.push(uri);
    else entry.bindings.set(nav.name, [uri]);
  };

  const inlineEntry = (link: LinkState, base: string | undefined): Frame => ({
    k: 'entry',
    entry: newEntry(model.typeByName.get(link.nav.target)!, { link, base, id: undefined, hasData: false }),
  });

  const childFrame = (parent: Frame | undefined, tag: SaxesTagNS, base: string | undefined): Frame => {
    const uri = tag.uri;
    const local = tag.local;
    if (parent === undefined) {
      if (uri !== ATOM_NS || local !== 'entry') {
        throw badRequest(`The request body must be an Atom entry, not '${clip(tag.name)}'.`);
      }
      return { k: 'entry', entry: root };
    }
    switch (parent.k) {
      case 'skip':
        return SKIP;
      case 'entry':
        if (uri === ATOM_NS && local === 'content') return { k: 'content', entry: parent.entry };
        if (uri === M_NS && local === 'properties') return { k: 'properties', entry: parent.entry };
        if (uri === ATOM_NS && local === 'link') return linkFrame(parent.entry, tag, base);
        if (uri === ATOM_NS && local === 'id' && parent.entry.nested) return { k: 'inlineId', entry: parent.entry, text: '' };
        if (uri === ATOM_NS && local === 'category') checkCategory(tag, parent.entry.type);
        return SKIP; // id, title, updated, author, category, anything foreign
      case 'content':
        return uri === M_NS && local === 'properties' ? { k: 'properties', entry: parent.entry } : SKIP;
      case 'properties': {
        if (uri !== D_NS) return SKIP;
        const entry = parent.entry;
        if (entry.nested) entry.nested.hasData = true;
        const prop = entry.type.properties.find((p) => p.name === local);
        if (!prop) throw badRequest(`The property '${clip(local)}' does not exist on type '${qualifiedName(model, entry.type)}'.`);
        checkPropertyType(tag, prop, entry.type);
        // The key and read-only properties are ignored unread: their values never fail a write.
        if (!clientSets(prop)) return SKIP;
        if (entry.values.has(prop.name)) throw badRequest(`The property '${prop.name}' appears more than once.`);
        return { k: 'property', entry, prop, isNull: attr(tag, M_NS, 'null') === 'true', text: '' };
      }
      case 'property':
        throw badRequest(`The property '${parent.prop.name}' must hold a ${parent.prop.type} value, not XML elements.`);
      case 'link':
        if (uri !== M_NS || local !== 'inline') return SKIP;
        parent.link.inline ??= []; // an empty m:inline (a null entry) binds nothing, whatever href says
        return { k: 'inline', link: parent.link };
      case 'inline':
        if (uri === ATOM_NS && local === 'entry') return inlineEntry(parent.link, base);
        if (uri === ATOM_NS && local === 'feed') return { k: 'inlineFeed', link: parent.link };
        return SKIP;
      case 'inlineFeed':
        if (uri === ATOM_NS && local === 'entry') return inlineEntry(parent.link, base);
        return SKIP;
      case 'inlineId':
        throw badRequest('The id of an inline entry must be text.');
    }
  };

  const linkFrame = (owner: EntryState, tag: SaxesTagNS, base: string | undefined): Frame => {
    const rel = attr(tag, '', 'rel');
    if (rel === undefined || !rel.startsWith(RELATED_PREFIX)) return SKIP; // edit, self, …
    const name = rel.slice(RELATED_PREFIX.length);
    const nav = findNavigation(owner.type, name);
    if (!nav) throw badRequest(`The navigation property '${clip(name)}' does not exist on type '${qualifiedName(model, owner.type)}'.`);
    // A navigation link inside an inline entry makes it a new entity (a nested insert or binding).
    if (owner.nested) owner.nested.hasData = true;
    return { k: 'link', link: { owner, nav, href: attr(tag, '', 'href'), base, inline: undefined, entries: [] } };
  };

  parse(text, {
    open(tag) {
      const parentBase = bases.length > 0 ? bases[bases.length - 1] : undefined;
      const xmlBase = attr(tag, XML_NS, 'base');
      const base = xmlBase === undefined ? parentBase : resolve(xmlBase, parentBase);
      const frame = childFrame(frames.length > 0 ? top : undefined, tag, base);
      frames.push(frame);
      bases.push(base);
      top = frame;
    },
    close() {
      const frame = frames.pop() as Frame;
      bases.pop();
      top = frames[frames.length - 1] ?? SKIP;
      switch (frame.k) {
        case 'property': {
          const prop = frame.prop;
          if (frame.isNull) {
            frame.entry.values.set(prop.name, null);
            break;
          }
          try {
            frame.entry.values.set(prop.name, fromXmlText(prop.type, frame.text));
          } catch (e) {
            if (e instanceof ValueError) throw badRequest(`Invalid value for property '${prop.name}' (${prop.type}): ${e.message}.`);
            throw e;
          }
          break;
        }
        case 'entry': {
          const nested = frame.entry.nested;
          if (!nested) break;
          // An entry with nothing but its id names an existing entity; any other is a new one.
          if (!nested.hasData && nested.id !== undefined && nested.id !== '') (nested.link.inline ??= []).push(resolve(nested.id, nested.base));
          else nested.link.entries.push(payloadOf(frame.entry));
          break;
        }
        case 'inlineId':
          frame.entry.nested!.id = frame.text.trim();
          break;
        case 'link': {
          const link = frame.link;
          if (link.inline !== undefined) {
            // m:inline is authoritative: its entries are the bindings (none for a null entry).
            for (const uri of link.inline) addBinding(link.owner, link.nav, uri);
          } else if (link.href !== undefined && link.href.trim() !== '') {
            addBinding(link.owner, link.nav, resolve(link.href.trim(), link.base));
          }
          if (link.entries.length > 0) {
            const list = link.owner.inline.get(link.nav.name);
            if (list) list.push(...link.entries);
            else link.owner.inline.set(link.nav.name, [...link.entries]);
          }
          break;
        }
        default:
          break;
      }
    },
    text(t) {
      if (top.k === 'property' || top.k === 'inlineId') top.text += t;
    },
  });

  return payloadOf(root);
}

// ---------------------------------------------------------------------------------------------
// Properties

/**
 * The body of `PUT Set(key)/Property` in XML: the element a GET of the property answers,
 * `<d:Title xmlns:d="…/dataservices">x</d:Title>` (`m:null="true"` for null; an m:type is
 * ignored, the model types the value). Throws ODataError 400 for anything else.
 */
export function readXmlProperty(property: PropertyDef, body: Buffer, charset?: string): EdmValue {
  try {
    let isNull = false;
    let text = '';
    parse(decode(body, charset), {
      open(tag, depth) {
        if (depth > 1) throw badRequest(`The property '${property.name}' must hold a ${property.type} value, not XML elements.`);
        if (tag.uri !== D_NS || tag.local !== property.name) {
          throw badRequest(`The request body must be the element '${property.name}' in the namespace ${D_NS}, not '${clip(tag.name)}'.`);
        }
        isNull = attr(tag, M_NS, 'null') === 'true';
      },
      close() {},
      text(t) {
        text += t;
      },
    });
    if (isNull) return null;
    try {
      return fromXmlText(property.type, text);
    } catch (e) {
      if (e instanceof ValueError) throw badRequest(`Invalid value for property '${property.name}' (${property.type}): ${e.message}.`);
      throw e;
    }
  } catch (e) {
    if (e instanceof ODataError) throw e;
    throw badRequest(`The request body is not a valid '${property.name}' element.`);
  }
}

// ---------------------------------------------------------------------------------------------
// $links

/**
 * Reads the body of `POST/PUT …/$links/Nav`: `<uri xmlns="…/dataservices">uri</uri>`, answering the
 * trimmed URI. Throws ODataError 400 for anything else. The uri element may also be in the
 * metadata namespace: the .NET WCF Data Services client writes it there (AddLink, SetLink), and
 * ODataLib, WCF Data Services 5's reader, accepts both namespaces for that reason.
 */
export function readXmlLink(body: Buffer, charset?: string): string {
  try {
    let uri: string | undefined;
    let text = '';
    parse(decode(body, charset), {
      open(tag, depth) {
        if (depth > 1) throw badRequest('The uri element must hold only text.');
        if ((tag.uri !== D_NS && tag.uri !== M_NS) || tag.local !== 'uri') {
          throw badRequest(`The request body must be a uri element in the namespace ${D_NS} (or ${M_NS}).`);
        }
      },
      close() {
        uri = text.trim();
      },
      text(t) {
        text += t;
      },
    });
    if (!uri) throw badRequest('The uri element is empty.');
    return uri;
  } catch (e) {
    if (e instanceof ODataError) throw e;
    throw badRequest('The request body is not a valid uri document.');
  }
}
