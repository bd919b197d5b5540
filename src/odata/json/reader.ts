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
 * the canonical navigation name. The key and read-only properties, `{"__deferred":…}` navigations
 * and __metadata (when its type matches) are ignored; inline entity content (deep insert), unknown members and values that are
 * not of their property's type are a 400 that names the member.
 */
export function readJsonEntity(type: EntityTypeDef, body: Buffer): EntityPayload {
  const info = readerInfo(type);
  const root = parseObject(body, `an entity of type '${info.qualifiedName}'`);
  const values = new Map<string, EdmValue>();
  const bindings = new Map<string, readonly string[]>();
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
    const uris = readNavigation(key, member, value, info.qualifiedName);
    if (uris === undefined) continue;
    bindings.set(member.navigation.name, uris);
  }
  return { values, bindings };
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

/** The URIs a navigation member binds to, or undefined when it binds nothing (__deferred). */
function readNavigation(
  key: string,
  member: Extract<Member, { kind: 'navigation' }>,
  value: unknown,
  qualifiedName: string,
): readonly string[] | undefined {
  const nav = member.navigation;
  const where = `navigation property '${key}' of type '${qualifiedName}'`;
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === '__deferred') return undefined;
    if (keys.length === 1 && keys[0] === 'results') {
      const results = value['results'];
      if (!Array.isArray(results)) throw badRequest(`The member 'results' of the ${where} must be an array.`);
      return readBindingList(results, member, where);
    }
    const uri = readBinding(value, member, where);
    return [uri];
  }
  if (Array.isArray(value)) return readBindingList(value, member, where);
  if (value === null) {
    throw badRequest(
      `The ${where} cannot be null: bind an entity with {"__metadata":{"uri":…}}` +
        (nav.many ? '.' : ' or set the foreign-key property to null.'),
    );
  }
  throw badRequest(`The ${where} must hold {"__metadata":{"uri":…}}${nav.many ? ' or an array of such' : ''}.`);
}

function readBindingList(items: readonly unknown[], member: Extract<Member, { kind: 'navigation' }>, where: string): readonly string[] {
  if (!member.navigation.many) {
    throw badRequest(`The ${where} leads to one entity: bind it with one {"__metadata":{"uri":…}}, not an array.`);
  }
  const uris: string[] = [];
  for (const item of items) {
    if (!isObject(item)) throw badRequest(`Every item of the ${where} must be {"__metadata":{"uri":…}}.`);
    uris.push(readBinding(item, member, where));
  }
  return uris;
}

/** `{"__metadata":{"uri":"…"}}` (optionally with the target's type) -> the uri. */
function readBinding(value: JsonObject, member: Extract<Member, { kind: 'navigation' }>, where: string): string {
  const keys = Object.keys(value);
  const metadata = value['__metadata'];
  const uri = isObject(metadata) ? metadata['uri'] : undefined;
  if (keys.length !== 1 || keys[0] !== '__metadata' || uri === undefined) {
    throw badRequest(
      `Deep insert is not supported: send the related entity to its own set, then bind it with {"__metadata":{"uri":…}} (${where}).`,
    );
  }
  if (typeof uri !== 'string' || uri === '') throw badRequest(`The __metadata uri in the ${where} must be a non-empty string.`);
  const type = (metadata as JsonObject)['type'];
  if (type !== undefined && type !== member.targetType) {
    throw badRequest(`The __metadata type in the ${where} must be '${member.targetType}'.`);
  }
  return uri;
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
