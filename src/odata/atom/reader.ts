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

/** A `<link rel="…/related/Nav">` being read. */
interface LinkState {
  readonly nav: NavigationDef;
  readonly href: string | undefined;
  readonly base: string | undefined;
  /** Ids of the inline entries that are bindings; undefined while no m:inline was seen. */
  inline: string[] | undefined;
}

/** An entry inside m:inline: a binding when it has an id and nothing else of substance. */
interface InlineEntryState {
  readonly link: LinkState;
  readonly base: string | undefined;
  id: string | undefined;
  hasData: boolean;
}

type Frame =
  | { readonly k: 'skip' }
  | { readonly k: 'entry' }
  | { readonly k: 'content' }
  | { readonly k: 'properties' }
  | { readonly k: 'property'; readonly prop: PropertyDef; readonly isNull: boolean; text: string }
  | { readonly k: 'link'; readonly link: LinkState }
  | { readonly k: 'inline'; readonly link: LinkState }
  | { readonly k: 'inlineFeed'; readonly link: LinkState }
  | { readonly k: 'inlineEntry'; readonly entry: InlineEntryState }
  | { readonly k: 'inlineId'; readonly entry: InlineEntryState; text: string }
  | { readonly k: 'inlineContent'; readonly entry: InlineEntryState }
  | { readonly k: 'inlineProperties'; readonly entry: InlineEntryState };

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

const deepInsert = () => badRequest('Deep insert is not supported: link existing entities by their URI instead.');

/**
 * Reads an Atom entry sent to create or update an entity of `type`: its properties (typed from
 * the model) and its navigation bindings. `charset` is the Content-Type's charset parameter.
 * Throws ODataError 400 for anything malformed (415 for an encoding the service does not know).
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
  const values = new Map<string, EdmValue>();
  const bindings = new Map<string, string[]>();
  const frames: Frame[] = [];
  const bases: (string | undefined)[] = [];
  let top: Frame = SKIP;

  const addBinding = (nav: NavigationDef, uri: string) => {
    const list = bindings.get(nav.name);
    if (list) list.push(uri);
    else bindings.set(nav.name, [uri]);
  };

  const childFrame = (parent: Frame | undefined, tag: SaxesTagNS, base: string | undefined): Frame => {
    const uri = tag.uri;
    const local = tag.local;
    if (parent === undefined) {
      if (uri !== ATOM_NS || local !== 'entry') {
        throw badRequest(`The request body must be an Atom entry, not '${clip(tag.name)}'.`);
      }
      return { k: 'entry' };
    }
    switch (parent.k) {
      case 'skip':
        return SKIP;
      case 'entry':
        if (uri === ATOM_NS && local === 'content') return { k: 'content' };
        if (uri === M_NS && local === 'properties') return { k: 'properties' };
        if (uri === ATOM_NS && local === 'link') return linkFrame(tag, base);
        if (uri === ATOM_NS && local === 'category') checkCategory(tag, type);
        return SKIP; // id, title, updated, author, category, anything foreign
      case 'content':
        return uri === M_NS && local === 'properties' ? { k: 'properties' } : SKIP;
      case 'properties': {
        if (uri !== D_NS) return SKIP;
        const prop = type.properties.find((p) => p.name === local);
        if (!prop) throw badRequest(`The property '${clip(local)}' does not exist on type '${qualifiedName(model, type)}'.`);
        checkPropertyType(tag, prop, type);
        // The key and read-only properties are ignored unread: their values never fail a write.
        if (!clientSets(prop)) return SKIP;
        if (values.has(prop.name)) throw badRequest(`The property '${prop.name}' appears more than once.`);
        return { k: 'property', prop, isNull: attr(tag, M_NS, 'null') === 'true', text: '' };
      }
      case 'property':
        throw badRequest(`The property '${parent.prop.name}' must hold a ${parent.prop.type} value, not XML elements.`);
      case 'link':
        if (uri !== M_NS || local !== 'inline') return SKIP;
        parent.link.inline ??= []; // an empty m:inline (a null entry) binds nothing, whatever href says
        return { k: 'inline', link: parent.link };
      case 'inline':
        if (uri === ATOM_NS && local === 'entry') return { k: 'inlineEntry', entry: { link: parent.link, base, id: undefined, hasData: false } };
        if (uri === ATOM_NS && local === 'feed') return { k: 'inlineFeed', link: parent.link };
        return SKIP;
      case 'inlineFeed':
        if (uri === ATOM_NS && local === 'entry') return { k: 'inlineEntry', entry: { link: parent.link, base, id: undefined, hasData: false } };
        return SKIP;
      case 'inlineEntry':
        if (uri === ATOM_NS && local === 'id') return { k: 'inlineId', entry: parent.entry, text: '' };
        if (uri === ATOM_NS && local === 'content') return { k: 'inlineContent', entry: parent.entry };
        if (uri === M_NS && local === 'properties') return { k: 'inlineProperties', entry: parent.entry };
        if (uri === ATOM_NS && local === 'link') {
          // A navigation link inside the inline entry is a nested insert or binding: deep insert.
          if ((attr(tag, '', 'rel') ?? '').startsWith(RELATED_PREFIX)) parent.entry.hasData = true;
          return SKIP;
        }
        return SKIP;
      case 'inlineContent':
        return uri === M_NS && local === 'properties' ? { k: 'inlineProperties', entry: parent.entry } : SKIP;
      case 'inlineProperties':
        parent.entry.hasData = true;
        return SKIP;
      case 'inlineId':
        throw badRequest('The id of an inline entry must be text.');
    }
  };

  const linkFrame = (tag: SaxesTagNS, base: string | undefined): Frame => {
    const rel = attr(tag, '', 'rel');
    if (rel === undefined || !rel.startsWith(RELATED_PREFIX)) return SKIP; // edit, self, …
    const name = rel.slice(RELATED_PREFIX.length);
    const nav = findNavigation(type, name);
    if (!nav) throw badRequest(`The navigation property '${clip(name)}' does not exist on type '${qualifiedName(model, type)}'.`);
    return { k: 'link', link: { nav, href: attr(tag, '', 'href'), base, inline: undefined } };
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
            values.set(prop.name, null);
            break;
          }
          try {
            values.set(prop.name, fromXmlText(prop.type, frame.text));
          } catch (e) {
            if (e instanceof ValueError) throw badRequest(`Invalid value for property '${prop.name}' (${prop.type}): ${e.message}.`);
            throw e;
          }
          break;
        }
        case 'inlineEntry': {
          const entry = frame.entry;
          if (entry.hasData || entry.id === undefined || entry.id === '') throw deepInsert();
          (entry.link.inline ??= []).push(resolve(entry.id, entry.base));
          break;
        }
        case 'inlineId':
          frame.entry.id = frame.text.trim();
          break;
        case 'link': {
          const link = frame.link;
          if (link.inline !== undefined) {
            // m:inline is authoritative: its entries are the bindings (none for a null entry).
            for (const uri of link.inline) addBinding(link.nav, uri);
          } else if (link.href !== undefined && link.href.trim() !== '') {
            addBinding(link.nav, resolve(link.href.trim(), link.base));
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

  return { values, bindings };
}

// ---------------------------------------------------------------------------------------------
// $links

/**
 * Reads the body of `POST/PUT …/$links/Nav`: `<uri xmlns="…/dataservices">uri</uri>`, answering the
 * trimmed URI. Throws ODataError 400 for anything else.
 */
export function readXmlLink(body: Buffer, charset?: string): string {
  try {
    let uri: string | undefined;
    let text = '';
    parse(decode(body, charset), {
      open(tag, depth) {
        if (depth > 1) throw badRequest('The uri element must hold only text.');
        if (tag.uri !== D_NS || tag.local !== 'uri') {
          throw badRequest(`The request body must be a uri element in the namespace ${D_NS}.`);
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
