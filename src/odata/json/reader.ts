/**
 * JSON verbose request bodies (docs/protocol.md, "Formats"): an entity
 * (insert, update) and a link ($links). Lenient where the real clients need it (a BOM, trailing
 * whitespace such as `\n\r\r\n`, an optional {"d":…} wrapper, loosely typed values coerced by
 * fromJson()), strict everywhere else: every malformed body is an ODataError 400, never a
 * TypeError or SyntaxError.
 *
 * User-supplied keys are only ever looked up in Maps and iterated with Object.keys, so `__proto__`
 * and `constructor` are ordinary (unknown) member names.
 */
import { model } from '../../model/catalogue-model';
import { clientSets, qualifiedName } from '../../model/define';
import type { EntityTypeDef, NavigationDef, PropertyDef } from '../../model/types';
import { isSafeNumber, parse as parseLossless } from 'lossless-json';
import { fromJson, JsonNumberText, ValueError, type EdmValue } from '../edm';
import type { EntityPayload } from '../entity';
import { badRequest, ODataError } from '../errors';
import { quote } from '../quote';

/** Deepest allowed nesting of objects and arrays in a request body. */
export const MAX_JSON_DEPTH = 100;

type JsonObject = Readonly<Record<string, unknown>>;

type Member =
  | { readonly kind: 'property'; readonly property: PropertyDef }
  | { readonly kind: 'navigation'; readonly navigation: NavigationDef; readonly targetType: string };

interface ReaderInfo {
  readonly qualifiedName: string;
  /** Property names and navigation names. */
  readonly members: ReadonlyMap<string, Member>;
}

const readerCache = new WeakMap<EntityTypeDef, ReaderInfo>();

function readerInfo(type: EntityTypeDef): ReaderInfo {
  let info = readerCache.get(type);
  if (info === undefined) {
    const members = new Map<string, Member>();
    for (const property of type.properties) members.set(property.name, { kind: 'property', property });
    for (const navigation of type.navigations) {
      const member: Member = { kind: 'navigation', navigation, targetType: qualifiedName(model, navigation.target) };
      members.set(navigation.name, member);
    }
    info = { qualifiedName: qualifiedName(model, type), members };
    readerCache.set(type, info);
  }
  return info;
}

// ---------------------------------------------------------------------------------------------
// Parsing

const utf8 = new TextDecoder('utf-8', { fatal: true }); // ignoreBOM false: a leading BOM is dropped

function clip(text: string, max = 60): string {
  return quote(text, max);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Most digits a number may have for JSON.parse to read it exactly: a double holds every decimal of
 * up to 15 significant digits (and every integer below 10^15) without change.
 */
const EXACT_DIGITS = 15;

/**
 * One pass over the text before it is parsed: objects and arrays deeper than MAX_JSON_DEPTH are
 * refused, and the answer says whether some number might not survive JSON.parse (more than 15
 * digits, or an exponent), in which case the body is parsed losslessly.
 */
function scan(text: string): { readonly inexactNumber: boolean } {
  let depth = 0;
  let inexactNumber = false;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: to its closing quote, stepping over escapes.
      for (i++; i < length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) throw badRequest(`JSON nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted.`);
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (c >= 0x30 && c <= 0x39 && !inexactNumber) {
      // A number (outside strings, a digit starts or continues one): count its digits.
      let digits = 0;
      for (; i < length; i++) {
        const d = text.charCodeAt(i);
        if (d >= 0x30 && d <= 0x39) digits++;
        else if (d === 0x65 || d === 0x45) inexactNumber = true; // e, E
        else if (d !== 0x2e && d !== 0x2b && d !== 0x2d) break; // . + -
      }
      i--;
      if (digits > EXACT_DIGITS) inexactNumber = true;
    }
  }
  return { inexactNumber };
}

/**
 * A number that a double holds exactly, as a number; any other as the JsonNumberText of its
 * digits (9007199254740993 must not become 9007199254740992).
 */
function exactNumber(text: string): number | JsonNumberText {
  return isSafeNumber(text) ? Number(text) : new JsonNumberText(text);
}

/**
 * JSON.parse when every number survives it (the common body, at JSON.parse's speed), lossless-json
 * otherwise. Both keep the last of repeated member names and treat `__proto__` as a plain name.
 */
function parseJson(text: string): unknown {
  if (!scan(text).inexactNumber) return JSON.parse(text);
  return parseLossless(text, null, { parseNumber: exactNumber, onDuplicateKey: ({ newValue }) => newValue });
}

/** What went wrong, from a JSON.parse SyntaxError, without the chunk of body V8 quotes. */
function syntaxErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  const position = /at position (\d+)/.exec(message)?.[1];
  // V8 (Node 20+) quotes the body: `Unexpected token 'x', "{"a":x}" is not valid JSON`.
  // lossless-json ends its message with ` at position N`.
  const reason = clip(message.split(/,? "|\s+in JSON at position|\s+at position \d|\s+\(line /)[0] ?? '', 80).trim();
  if (position !== undefined) return `The request body is not valid JSON: ${reason || 'syntax error'} at position ${position}.`;
  return `The request body is not valid JSON${reason ? `: ${reason}` : ''}.`;
}

/** UTF-8 decode, nesting check, exact parse; a top-level object is required. */
function parseObject(body: Buffer, what: string): JsonObject {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw badRequest('The request body is not valid UTF-8.');
  }
  if (/^[ \t\r\n]*$/.test(text)) throw badRequest(`The request body is empty: ${what} was expected.`);
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch (error) {
    if (error instanceof ODataError) throw error;
    throw badRequest(syntaxErrorText(error));
  }
  if (!isObject(parsed)) throw badRequest(`The request body must be a JSON object: ${what} was expected.`);
  // An optional {"d":{…}} wrapper, as responses have it.
  const keys = Object.keys(parsed);
  if (keys.length === 1 && keys[0] === 'd' && isObject(parsed['d'])) return parsed['d'];
  return parsed;
}

// ---------------------------------------------------------------------------------------------
// Entities

/**
 * A JSON entity body read against `type`: properties coerced to their model types, navigation
 * bindings (`{"__metadata":{"uri":…}}`, an array of such, or `{"results":[…]}` of such) keyed by
 * the canonical navigation name, and entities sent inline under a navigation (deep insert: an
 * object with properties, alone, in an array or in `{"results":[…]}`), each read against the
 * navigation's target type. The key and read-only properties, `{"__deferred":…}` navigations and
 * __metadata (when its type matches) are ignored; unknown members and values that are not of
 * their property's type are a 400 that names the member. Whether a navigation takes inline
 * entities is the write's decision, not the reader's.
 */
export function readJsonEntity(type: EntityTypeDef, body: Buffer): EntityPayload {
  const info = readerInfo(type);
  return readEntityObject(type, parseObject(body, `an entity of type '${info.qualifiedName}'`));
}

function readEntityObject(type: EntityTypeDef, root: JsonObject): EntityPayload {
  const info = readerInfo(type);
  const values = new Map<string, EdmValue>();
  const bindings = new Map<string, readonly string[]>();
  const inline = new Map<string, readonly EntityPayload[]>();
  for (const key of Object.keys(root)) {
    const value = root[key];
    if (key === '__metadata') {
      checkMetadata(value, info.qualifiedName);
      continue;
    }
    const member = info.members.get(key);
    if (member === undefined) throw badRequest(`The property '${clip(key)}' does not exist on type '${info.qualifiedName}'.`);
    if (member.kind === 'property') {
      // The key and read-only properties are ignored unread: their values never fail a write.
      if (clientSets(member.property)) values.set(key, readValue(member.property, value));
      continue;
    }
    const content = readNavigation(key, member, value, info.qualifiedName);
    if (content === undefined) continue;
    if (content.uris.length > 0 || content.entities.length === 0) bindings.set(member.navigation.name, content.uris);
    if (content.entities.length > 0) inline.set(member.navigation.name, content.entities);
  }
  return inline.size > 0 ? { values, bindings, inline } : { values, bindings };
}

function checkMetadata(value: unknown, qualifiedName: string): void {
  if (!isObject(value)) throw badRequest(`The member '__metadata' must be an object.`);
  const type = value['type'];
  if (type !== undefined && type !== qualifiedName) {
    const sent = typeof type === 'string' ? `'${clip(type)}'` : 'a non-string value';
    throw badRequest(`The __metadata type ${sent} does not match the entity type '${qualifiedName}' of the target set.`);
  }
}

function readValue(property: PropertyDef, value: unknown): EdmValue {
  try {
    return fromJson(property.type, value);
  } catch (error) {
    const detail =
      error instanceof ValueError
        ? error.message.replace(` is not a valid ${property.type}`, ' was sent')
        : 'the value cannot be read';
    throw badRequest(`The value of property '${property.name}' is not a valid ${property.type}: ${detail}.`);
  }
}

/** What a navigation member holds: entity URIs it binds to, and entities sent inline. */
interface NavigationContent {
  readonly uris: string[];
  readonly entities: EntityPayload[];
}

/** The content of a navigation member, or undefined when it holds nothing (__deferred). */
function readNavigation(
  key: string,
  member: Extract<Member, { kind: 'navigation' }>,
  value: unknown,
  qualifiedName: string,
): NavigationContent | undefined {
  const nav = member.navigation;
  const where = `navigation property '${key}' of type '${qualifiedName}'`;
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === '__deferred') return undefined;
    if (keys.length === 1 && keys[0] === 'results') {
      const results = value['results'];
      if (!Array.isArray(results)) throw badRequest(`The member 'results' of the ${where} must be an array.`);
      return readItems(results, member, where);
    }
    const content: NavigationContent = { uris: [], entities: [] };
    readItem(value, member, where, content);
    return content;
  }
  if (Array.isArray(value)) return readItems(value, member, where);
  if (value === null) {
    throw badRequest(
      `The ${where} cannot be null: bind an entity with {"__metadata":{"uri":…}}` +
        (nav.many ? '.' : ' or set the foreign-key property to null.'),
    );
  }
  throw badRequest(`The ${where} must hold {"__metadata":{"uri":…}}${nav.many ? ' or an array of such' : ''}.`);
}

function readItems(items: readonly unknown[], member: Extract<Member, { kind: 'navigation' }>, where: string): NavigationContent {
  if (!member.navigation.many) {
    throw badRequest(`The ${where} leads to one entity: bind it with one {"__metadata":{"uri":…}}, not an array.`);
  }
  const content: NavigationContent = { uris: [], entities: [] };
  for (const item of items) {
    if (!isObject(item)) throw badRequest(`Every item of the ${where} must be an object: {"__metadata":{"uri":…}} or an entity.`);
    readItem(item, member, where, content);
  }
  return content;
}

/**
 * One object under a navigation: `{"__metadata":{"uri":"…"}}` (optionally with the target's
 * type) binds an existing entity; any other object is an entity of the target type sent inline.
 */
function readItem(value: JsonObject, member: Extract<Member, { kind: 'navigation' }>, where: string, into: NavigationContent): void {
  const keys = Object.keys(value);
  const metadata = value['__metadata'];
  const uri = isObject(metadata) ? metadata['uri'] : undefined;
  if (keys.length !== 1 || keys[0] !== '__metadata' || uri === undefined) {
    into.entities.push(readEntityObject(model.typeByName.get(member.navigation.target)!, value));
    return;
  }
  if (typeof uri !== 'string' || uri === '') throw badRequest(`The __metadata uri in the ${where} must be a non-empty string.`);
  const type = (metadata as JsonObject)['type'];
  if (type !== undefined && type !== member.targetType) {
    throw badRequest(`The __metadata type in the ${where} must be '${member.targetType}'.`);
  }
  into.uris.push(uri);
}

// ---------------------------------------------------------------------------------------------
// Properties

/**
 * The body of `PUT Set(key)/Property`: `{"Property":value}`, also inside a `{"d":…}` wrapper (the
 * shape a GET of the property answers), with the value read as the property's type.
 */
export function readJsonProperty(property: PropertyDef, body: Buffer): EdmValue {
  const root = parseObject(body, `{"${property.name}":…}`);
  const keys = Object.keys(root);
  if (keys.length !== 1 || keys[0] !== property.name) {
    throw badRequest(`The body of a write of the property '${property.name}' must be {"${property.name}":<value>}, with no other member.`);
  }
  return readValue(property, root[property.name]);
}

// ---------------------------------------------------------------------------------------------
// Links

/** A $links body `{"uri":"…"}` (also inside a "d" wrapper) -> the uri, not yet resolved. */
export function readJsonLink(body: Buffer): string {
  const root = parseObject(body, 'a link {"uri":"…"}');
  const keys = Object.keys(root);
  const uri = root['uri'];
  if (keys.length !== 1 || keys[0] !== 'uri' || typeof uri !== 'string' || uri === '') {
    throw badRequest('A link body must be {"uri":"<entity URI>"} with the URI as a non-empty string.');
  }
  return uri;
}
