/**
 * Where an inner request's target points, below the service root (docs/protocol.md, "$batch"):
 * relative to the service root (`Products(1L)`, what datajs writes), an absolute path
 * (`/publicapi/v1/api.svc/Products(1L)`), an absolute URI (`https://host/publicapi/v1/api.svc/…`,
 * what the connector writes), each of which may start below the service root with a
 * `$<Content-ID>` reference to an entity an earlier operation of the same changeset created
 * (`$1/ProductImages`, `https://host/publicapi/v1/api.svc/$1/ProductImages`).
 *
 * The host of an absolute URI is not compared with anything: behind a proxy the service does not
 * know the name clients use. Nothing is percent-decoded here; the resource path parser does that.
 */
import { badRequest } from '../errors';
import { quote } from '../quote';

export interface ResolvedTarget {
  /** The Content-ID of a `$n` target, without the `$`. */
  readonly reference?: string;
  /** Below the service root (or below the referenced entity), from its `/`: `/Products(1L)`; '' for the root itself. */
  readonly path: string;
  /** The query string without `?`; '' when there is none. */
  readonly query: string;
}

const ABSOLUTE_URI = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/]*)/;
/** `$metadata` and `$batch` are resources of the service root, not Content-ID references. */
const ROOT_SYSTEM_RESOURCES: ReadonlySet<string> = new Set(['$metadata', '$batch']);

export function resolveTarget(target: string, servicePath: string): ResolvedTarget {
  if (target.includes('#')) throw badRequest(`The request target '${quote(target)}' must not contain a fragment ('#').`);
  const questionMark = target.indexOf('?');
  const pathPart = questionMark === -1 ? target : target.slice(0, questionMark);
  const query = questionMark === -1 ? '' : target.slice(questionMark + 1);

  // Below the service root, from its '/' ('' for the root itself), whichever form the target has.
  let below: string;
  const absolute = ABSOLUTE_URI.exec(pathPart);
  if (absolute) {
    const scheme = absolute[1]!.toLowerCase();
    if (scheme !== 'http' && scheme !== 'https') {
      throw badRequest(`The request target '${quote(target)}' is not an http or https URI.`);
    }
    below = belowServicePath(pathPart.slice(absolute[0].length), servicePath, target);
  } else if (pathPart.startsWith('/')) {
    below = belowServicePath(pathPart, servicePath, target);
  } else {
    below = pathPart === '' ? '' : `/${pathPart}`;
  }

  // `$n` is the first segment after the service root in every form: the .NET client writes
  // `http://host/publicapi/v1/api.svc/$1/ProductVariations`, datajs `$1/ProductVariations`.
  let resolved: ResolvedTarget;
  const first = firstSegment(below.slice(1));
  if (first.startsWith('$') && !ROOT_SYSTEM_RESOURCES.has(first)) {
    const reference = first.slice(1);
    if (reference === '') throw badRequest(`The request target '${quote(target)}' has a '$' without a Content-ID after it.`);
    resolved = { reference, path: below.slice(first.length + 1), query };
  } else {
    resolved = { path: below, query };
  }

  // A client or proxy would resolve dot segments and could leave the service that way; the
  // service does not resolve them, so it refuses them.
  if (resolved.path.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw badRequest(`The request target '${quote(target)}' contains '.' or '..' segments.`);
  }
  return resolved;
}

function firstSegment(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? path : path.slice(0, slash);
}

/** The part of the absolute path `path` below `servicePath` (compared case-insensitively); 400 when outside. */
function belowServicePath(path: string, servicePath: string, target: string): string {
  const root = servicePath.replace(/\/+$/, '');
  const prefix = path.slice(0, root.length);
  const rest = path.slice(root.length);
  if (prefix.toLowerCase() !== root.toLowerCase() || (rest !== '' && !rest.startsWith('/'))) {
    throw badRequest(`The request target '${quote(target)}' is not inside the service ${root || '/'}.`);
  }
  return rest;
}
