/**
 * The resource path below the service root, parsed against the model (docs/protocol.md,
 * "Service root and addressing"): service document, $metadata, $batch, a service operation, or a
 * resource addressed from an entity set through keys, navigations, a property, $links and $count.
 *
 * Every problem is an ODataError: 404 "Resource not found for the segment 'X'." for an unknown
 * set, operation, navigation or property name (WCF's wording), 400 naming the segment for
 * anything malformed. Nothing else is thrown, whatever the input.
 */
import { findNavigation, findProperty } from '../../model/define';
import type { EntityTypeDef, Model, NavigationDef, PropertyDef, ServiceOperationDef } from '../../model/types';
import { parseInt64Text } from '../edm';
import { badRequest, type ODataError } from '../errors';
import { quote } from '../quote';
import { resourceNotFound } from '../not-found';

/** At most this many segments in one resource path. */
export const MAX_SEGMENTS = 32;
/** At most this many characters between the parentheses of a key predicate. */
export const MAX_KEY_PREDICATE = 40;

export interface KeyedStep {
  readonly key?: bigint;
}

export interface NavigationStep extends KeyedStep {
  readonly navigation: NavigationDef;
  /** The navigation's name, as written in the URI. */
  readonly name: string;
}

export type ResourceTarget =
  /** The last step is a set or a to-many navigation without key. */
  | { readonly kind: 'collection' }
  /** A keyed set or to-many step, or a to-one navigation. */
  | { readonly kind: 'entity' }
  /** A collection followed by /$count. */
  | { readonly kind: 'count' }
  /** entity/Prop[/$value]. */
  | { readonly kind: 'property'; readonly property: PropertyDef; readonly rawValue: boolean }
  /** entity/$links/Nav[(key)][/$count]. */
  | {
      readonly kind: 'links';
      readonly navigation: NavigationDef;
      /** The navigation's name, as written. */
      readonly name: string;
      readonly key?: bigint;
      readonly count: boolean;
    };

export type ResourcePath =
  | { readonly kind: 'serviceDocument' }
  | { readonly kind: 'metadata' }
  | { readonly kind: 'batch' }
  | { readonly kind: 'operation'; readonly operation: ServiceOperationDef }
  | {
      readonly kind: 'resource';
      readonly set: EntityTypeDef;
      /** As written; may be an alias (ProductVariationPictures). */
      readonly setName: string;
      readonly key?: bigint;
      readonly steps: readonly NavigationStep[];
      readonly target: ResourceTarget;
    };

/** The canonical key predicate of an entity: `(42L)`. */
export function formatKey(id: bigint): string {
  return `(${id}L)`;
}

/** One segment: decoded text, the name before '(' and what stands between the parentheses. */
interface Segment {
  /** Decoded, whole (for messages). */
  readonly text: string;
  readonly name: string;
  /** Between the parentheses; undefined without parentheses, '' for `()`. */
  readonly predicate?: string;
}

export function parseResourcePath(model: Model, rest: string): ResourcePath {
  const segments = readSegments(rest);
  const first = segments[0];
  if (first === undefined) return { kind: 'serviceDocument' };

  if (first.name === '$metadata' || first.name === '$batch') {
    noParentheses(first);
    nothingAfter(segments, 0);
    return { kind: first.name === '$metadata' ? 'metadata' : 'batch' };
  }

  const operation = model.operationByName.get(first.name);
  if (operation) {
    if (first.predicate !== undefined && first.predicate.trim() !== '') {
      throw badRequest(
        `The segment '${quote(first.text)}' is a service operation: it takes its parameters in the query string, not in parentheses.`,
      );
    }
    nothingAfter(segments, 0);
    return { kind: 'operation', operation };
  }

  const set = model.typeBySetName.get(first.name);
  if (!set) throw resourceNotFound(first.name);
  const setKey = keyOf(first, set);
  const steps: NavigationStep[] = [];
  const resource = (target: ResourceTarget): ResourcePath => ({
    kind: 'resource',
    set,
    setName: first.name,
    ...(setKey !== undefined ? { key: setKey } : {}),
    steps,
    target,
  });

  let type = set;
  let single = setKey !== undefined;
  let previous = first;
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i];
    if (segment === undefined) break;

    if (!single) {
      if (segment.name === '$count') {
        noParentheses(segment);
        nothingAfter(segments, i);
        return resource({ kind: 'count' });
      }
      throw badRequest(
        `The segment '${quote(segment.text)}' cannot navigate from a collection; address one entity with a key ` +
          `(the segment '${quote(previous.text)}' refers to a collection, so only $count may follow it).`,
      );
    }

    switch (segment.name) {
      case '$count':
        throw badRequest(
          `The segment '${quote(segment.text)}' cannot follow the single entity '${quote(previous.text)}': ` +
            'counting one entity is not supported; $count follows a collection.',
        );
      case '$value':
        throw badRequest(
          `The segment '${quote(segment.text)}' cannot follow the entity '${quote(previous.text)}': ` +
            'entities here have no media resource; $value follows a property.',
        );
      case '$links':
        return resource(readLinks(model, segments, i, type));
    }

    const property = findProperty(type, segment.name);
    if (property) {
      noParentheses(segment);
      const next = segments[i + 1];
      if (next === undefined) return resource({ kind: 'property', property, rawValue: false });
      if (next.name !== '$value') {
        throw badRequest(
          `The segment '${quote(next.text)}' cannot follow the property '${quote(segment.text)}'; only $value may.`,
        );
      }
      noParentheses(next);
      nothingAfter(segments, i + 1);
      return resource({ kind: 'property', property, rawValue: true });
    }

    const navigation = findNavigation(type, segment.name);
    const target = navigation && model.typeByName.get(navigation.target);
    if (!navigation || !target) throw resourceNotFound(segment.name);
    const key = stepKey(segment, navigation, target, 'navigation');
    steps.push({ navigation, name: segment.name, ...(key !== undefined ? { key } : {}) });
    type = target;
    single = !navigation.many || key !== undefined;
    previous = segment;
  }
  return resource({ kind: single ? 'entity' : 'collection' });
}

/** The key of a navigation (or $links) segment: to-many ones may take one, to-one ones none. */
function stepKey(segment: Segment, navigation: NavigationDef, target: EntityTypeDef, what: 'navigation' | 'link'): bigint | undefined {
  if (navigation.many) return keyOf(segment, target);
  if (segment.predicate !== undefined) {
    throw badRequest(`The segment '${quote(segment.text)}' is a ${what} to a single entity: it takes no key predicate or parentheses.`);
  }
  return undefined;
}

/** entity/$links/Nav[(key)][/$count]; `at` is the index of the $links segment. */
function readLinks(model: Model, segments: readonly Segment[], at: number, type: EntityTypeDef): ResourceTarget {
  const links = segments[at];
  if (links) noParentheses(links);
  const segment = segments[at + 1];
  if (segment === undefined) {
    throw badRequest(`The segment '$links' must be followed by a navigation property of ${type.name}.`);
  }
  const navigation = findNavigation(type, segment.name);
  const target = navigation && model.typeByName.get(navigation.target);
  if (!navigation || !target) {
    if (findProperty(type, segment.name) || segment.name.startsWith('$')) {
      throw badRequest(
        `The segment '${quote(segment.text)}' is not a navigation property of ${type.name}; '$links' must be followed by one.`,
      );
    }
    throw resourceNotFound(segment.name);
  }
  const key = stepKey(segment, navigation, target, 'link');
  const after = segments[at + 2];
  let count = false;
  if (after !== undefined) {
    if (after.name !== '$count' || !navigation.many || key !== undefined) {
      throw badRequest(
        `The segment '${quote(after.text)}' cannot follow '${quote(segment.text)}' in a $links path; ` +
          'only $count may, and only after an unkeyed to-many navigation.',
      );
    }
    noParentheses(after);
    nothingAfter(segments, at + 2);
    count = true;
  }
  return { kind: 'links', navigation, name: segment.name, ...(key !== undefined ? { key } : {}), count };
}

/**
 * The key of a set or to-many segment: undefined without parentheses or with `()` (the
 * collection). Accepts 42, 42L, 42l, -42L, Id=42L, with whitespace around the parts.
 */
function keyOf(segment: Segment, type: EntityTypeDef): bigint | undefined {
  const predicate = segment.predicate;
  if (predicate === undefined) return undefined;
  // Only for messages: quoting costs more than parsing a valid key, which every GET by key does.
  const where = () => `the key predicate of the segment '${quote(segment.text)}'`;
  if (predicate.length > MAX_KEY_PREDICATE) {
    throw badRequest(`The key predicate of the segment '${quote(segment.text)}' is longer than ${MAX_KEY_PREDICATE} characters.`);
  }
  let literal = predicate.trim();
  if (literal === '') return undefined;
  const keyName = type.properties.find((x) => x.access === 'key')?.name ?? 'Id';
  if (literal.includes(',')) {
    throw badRequest(`The segment '${quote(segment.text)}' names more than one key value; ${type.name} has the single key ${keyName}.`);
  }
  const eq = literal.indexOf('=');
  if (eq >= 0) {
    const name = literal.slice(0, eq).trim();
    if (name !== keyName) {
      throw badRequest(
        `In ${where()}, '${quote(name)}' is not the key of ${type.name}; write (42L) or (${keyName}=42L).`,
      );
    }
    literal = literal.slice(eq + 1).trim();
    if (literal === '') throw badRequest(`In ${where()}, the key ${keyName} has no value.`);
  }
  const m = /^(-?)([0-9]+)[Ll]?$/.exec(literal);
  if (!m) {
    throw badRequest(
      `In ${where()}, '${quote(literal)}' is not an Int64 key literal; keys are written (42L) or (${keyName}=42L).`,
    );
  }
  const digits = (m[2] ?? '').replace(/^0+(?=[0-9])/, '');
  try {
    if (digits.length > 19) throw new RangeError();
    return parseInt64Text(`${m[1] ?? ''}${digits}`);
  } catch {
    throw badRequest(`The key in the segment '${quote(segment.text)}' is outside the Int64 range.`);
  }
}

/** Splits, checks the count, percent-decodes and separates name and parentheses. */
function readSegments(rest: string): Segment[] {
  const path = rest.startsWith('/') ? rest.slice(1) : rest;
  if (path === '') return [];
  const raw = path.split('/');
  // One trailing slash is tolerated: /Products/ reads as /Products.
  if (raw.length > 1 && raw[raw.length - 1] === '') raw.pop();
  if (raw.length > MAX_SEGMENTS) {
    throw badRequest(
      `The resource path has ${raw.length} segments, more than the ${MAX_SEGMENTS} allowed; ` +
        `the segment '${quote(raw[MAX_SEGMENTS] ?? '')}' is one too many.`,
    );
  }
  const segments: Segment[] = [];
  for (const part of raw) {
    if (part === '') {
      const before = segments[segments.length - 1];
      throw badRequest(
        before
          ? `The resource path has an empty segment after '${quote(before.text)}'.`
          : 'The resource path starts with an empty segment.',
      );
    }
    segments.push(splitSegment(decodeSegment(part)));
  }
  return segments;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`The resource path segment '${quote(segment)}' has malformed percent-encoding.`);
  }
}

/** `Name`, `Name()` or `Name(predicate)`; anything else with parentheses is a 400. */
function splitSegment(text: string): Segment {
  const open = text.indexOf('(');
  if (open < 0) {
    if (text.includes(')')) throw unbalanced(text);
    return { text, name: text };
  }
  const name = text.slice(0, open);
  if (!text.endsWith(')') || text.length < open + 2) throw unbalanced(text);
  const predicate = text.slice(open + 1, -1);
  if (name.includes(')') || predicate.includes('(') || predicate.includes(')')) throw unbalanced(text);
  if (name === '') throw badRequest(`The segment '${quote(text)}' has parentheses but no name before them.`);
  return { text, name, predicate };
}

function unbalanced(text: string): ODataError {
  return badRequest(`The segment '${quote(text)}' has unbalanced or misplaced parentheses.`);
}

function noParentheses(segment: Segment): void {
  if (segment.predicate !== undefined) {
    throw badRequest(`The segment '${quote(segment.text)}' takes no key predicate or parentheses.`);
  }
}

/** A 400 when anything follows segments[at] (which must be the last one). */
function nothingAfter(segments: readonly Segment[], at: number): void {
  const next = segments[at + 1];
  if (next !== undefined) {
    throw badRequest(
      `The segment '${quote(next.text)}' cannot follow '${quote(segments[at]?.text ?? '')}', which must be the last segment.`,
    );
  }
}

