/**
 * What kind of resource a parsed path addresses, and for each kind which system query options and
 * which methods it takes: one table, as Apache Olingo V2's UriType, checked once before anything
 * runs (for a request on its own, a query part and every changeset operation of a $batch alike).
 * An option a kind does not take is a 400 naming it; a method is a 405 with Allow.
 *
 * The options follow WCF Data Services: $format everywhere a body in a chosen format comes back;
 * the read options where a collection is read; $count and raw $value take no $format (their
 * answer is text/plain). Which methods a collection or entity takes follows its set's access in
 * the model; a property takes writes when the seller writes it; which links may be written
 * follows the relation (model/link-access.ts): POST adds to a to-many link collection, PUT sets a
 * to-one link, DELETE removes a link where the relation allows it.
 */
import { linkAccess, type LinkAccess } from '../../model/link-access';
import type { EntityTypeDef, Model } from '../../model/types';
import { badRequest, methodNotAllowed } from '../errors';
import type { QueryOptions, SystemQueryOption } from './query-options';
import type { ResourcePath } from './resource-path';

export type UriKind =
  | 'serviceDocument'
  | 'metadata'
  | 'batch'
  | 'operation'
  /** A set, or a to-many navigation without key. */
  | 'collection'
  /** A keyed set or to-many step, or a to-one navigation. */
  | 'entity'
  /** collection/$count */
  | 'count'
  /** entity/Property */
  | 'property'
  /** entity/Property/$value */
  | 'propertyValue'
  /** entity/$links/ToMany */
  | 'links'
  /** entity/$links/ToMany(key) or entity/$links/ToOne */
  | 'link'
  /** entity/$links/ToMany/$count */
  | 'linksCount';

export function uriKindOf(path: ResourcePath): UriKind {
  if (path.kind !== 'resource') return path.kind;
  const target = path.target;
  switch (target.kind) {
    case 'property':
      return target.rawValue ? 'propertyValue' : 'property';
    case 'links':
      return target.count ? 'linksCount' : target.key !== undefined || !target.navigation.many ? 'link' : 'links';
    default:
      return target.kind;
  }
}

const READ = ['GET', 'HEAD'] as const;

interface KindRule {
  /** How a 400 for an option it does not take names the resource. */
  readonly description: string | ((path: ResourcePath) => string);
  readonly options: readonly SystemQueryOption[];
  readonly methods: readonly string[] | ((path: ResourcePath, model: Model) => readonly string[]);
}

export const URI_KINDS: Readonly<Record<UriKind, KindRule>> = {
  serviceDocument: { description: 'the service document', options: ['$format'], methods: READ },
  metadata: { description: '$metadata', options: ['$format'], methods: READ },
  batch: { description: '$batch', options: [], methods: ['POST'] },
  operation: {
    description: (path) => `the service operation ${path.kind === 'operation' ? path.operation.name : ''}`,
    options: ['$format'],
    methods: (path) => (path.kind !== 'operation' || path.operation.httpMethod === 'GET' ? READ : [path.operation.httpMethod]),
  },
  collection: {
    description: 'a collection',
    options: ['$format', '$filter', '$orderby', '$top', '$skip', '$skiptoken', '$expand', '$select', '$inlinecount'],
    methods: (path, model) => {
      const access = addressedType(path, model)?.access;
      return access === 'catalogue' ? ['GET', 'HEAD', 'POST'] : READ;
    },
  },
  entity: {
    description: 'a single entity',
    options: ['$format', '$filter', '$expand', '$select'],
    methods: (path, model) => {
      const access = addressedType(path, model)?.access;
      if (access === 'catalogue') return ['GET', 'HEAD', 'PUT', 'MERGE', 'PATCH', 'DELETE'];
      return access === 'updatable' ? ['GET', 'HEAD', 'PUT', 'MERGE', 'PATCH'] : READ;
    },
  },
  count: { description: '$count', options: ['$filter', '$orderby', '$top', '$skip'], methods: READ },
  property: {
    description: 'a property',
    options: ['$format'],
    methods: (path, model) => (writableProperty(path, model) ? ['GET', 'HEAD', 'PUT', 'MERGE', 'PATCH'] : READ),
  },
  propertyValue: {
    description: 'a raw $value',
    options: [],
    // DELETE writes null: a property that cannot be null answers 400 then, as any write of null.
    methods: (path, model) => (writableProperty(path, model) ? ['GET', 'HEAD', 'PUT', 'DELETE'] : READ),
  },
  links: {
    description: '$links',
    options: ['$format', '$filter', '$orderby', '$top', '$skip', '$skiptoken', '$inlinecount'],
    methods: (path, model) => (linkWrites(path, model).add ? ['GET', 'HEAD', 'POST'] : READ),
  },
  link: {
    description: 'a single $link',
    options: ['$format'],
    methods: (path, model) => {
      const access = linkWrites(path, model);
      const toOne = path.kind === 'resource' && path.target.kind === 'links' && !path.target.navigation.many;
      return [...READ, ...(toOne && access.add ? ['PUT'] : []), ...(access.remove ? ['DELETE'] : [])];
    },
  },
  linksCount: { description: '$count of $links', options: ['$filter', '$orderby', '$top', '$skip'], methods: READ },
};

/** The entity type at the end of the path's navigations (the owner of a property or $links). */
export function addressedType(path: ResourcePath, model: Model): EntityTypeDef | undefined {
  if (path.kind !== 'resource') return undefined;
  const last = path.steps[path.steps.length - 1];
  return last === undefined ? path.set : model.typeByName.get(last.navigation.target);
}

/**
 * A property the seller writes, of an entity the seller may update: only those take PUT (and
 * MERGE, PATCH) on the property and PUT and DELETE on its $value. The key, server-managed dates,
 * what operations and the platform set are read-only: 405, with GET and HEAD in Allow.
 */
function writableProperty(path: ResourcePath, model: Model): boolean {
  if (path.kind !== 'resource' || path.target.kind !== 'property') return false;
  const access = addressedType(path, model)?.access;
  return (access === 'catalogue' || access === 'updatable') && path.target.property.access === 'writable';
}

/** What the seller may write through the path's $links (nothing when it is no $links path). */
function linkWrites(path: ResourcePath, model: Model): LinkAccess {
  if (path.kind !== 'resource' || path.target.kind !== 'links') return { add: false, remove: false };
  return linkAccess(model, path.target.navigation);
}

/** The methods a path takes (for Allow). */
export function methodsOf(path: ResourcePath, model: Model): readonly string[] {
  const { methods } = URI_KINDS[uriKindOf(path)];
  return typeof methods === 'function' ? methods(path, model) : methods;
}

/**
 * Refuses a method (405) or a system query option (400) the path's kind does not take; the
 * method first, as WCF does. Returns the kind.
 */
export function admitRequest(model: Model, path: ResourcePath, method: string, options: QueryOptions): UriKind {
  const kind = uriKindOf(path);
  const rule = URI_KINDS[kind];
  const methods = methodsOf(path, model);
  if (!methods.includes(method)) throw methodNotAllowed(method, methods);
  for (const name of options.system.keys()) {
    if (!rule.options.includes(name)) {
      const resource = typeof rule.description === 'function' ? rule.description(path) : rule.description;
      throw badRequest(`The query option '${name}' cannot be applied to ${resource}.`);
    }
  }
  return kind;
}
