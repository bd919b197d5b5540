/**
 * The entity a URI in a request body names ($links bodies, navigation bindings): absolute
 * (http://host/publicapi/v1/api.svc/Catalogs(5L)), absolute-path, or relative to the service root.
 */
import type { EntityTypeDef, Model } from '../../model/types';
import { badRequest, ODataError } from '../errors';
import { parseResourcePath } from './resource-path';
import { quote } from '../quote';

const SERVICE_MARKER = /\/publicapi\/v1\/api\.svc(?=\/|$)/i;

/**
 * The Content-ID a body URI refers to when it is a `$n` reference and nothing else: `$2` (what
 * the .NET client writes as a $links body or a binding's href inside a changeset), or `$2` as
 * the first and only segment below the service root of an absolute URI. Undefined for any other
 * URI. Only an operation of a $batch changeset can resolve it (service/batch/changeset.ts).
 */
export function contentIdReference(uri: string): string | undefined {
  const trimmed = uri.trim();
  const marker = SERVICE_MARKER.exec(trimmed);
  const rest = marker ? trimmed.slice(marker.index + marker[0].length + 1) : trimmed;
  const m = /^\$([^/?#$]+)$/.exec(rest);
  // $metadata and $batch are resources of the service root, not references.
  return m && m[1] !== 'metadata' && m[1] !== 'batch' ? m[1] : undefined;
}

export function resolveEntityUri(model: Model, uri: string, expected: EntityTypeDef): bigint {
  const trimmed = uri.trim();
  const reference = contentIdReference(trimmed);
  if (reference !== undefined) {
    throw badRequest(`The URI '${quote(trimmed, 100)}' refers to Content-ID '${quote(reference, 40)}', which only an operation of the same $batch changeset can refer to.`);
  }
  const marker = SERVICE_MARKER.exec(trimmed);
  let rest: string;
  if (marker) rest = trimmed.slice(marker.index + marker[0].length);
  else if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed) || trimmed.startsWith('/')) throw badRequest(`The URI '${quote(trimmed, 100)}' is not an address of this service.`);
  else rest = '/' + trimmed;
  let path;
  try {
    path = parseResourcePath(model, rest.split('?')[0]!);
  } catch (error) {
    if (error instanceof ODataError) throw badRequest(`The URI '${quote(trimmed, 100)}' does not name an entity: ${error.message}`);
    throw error;
  }
  if (path.kind !== 'resource' || path.key === undefined || path.steps.length > 0 || path.target.kind !== 'entity' || path.set !== expected) {
    throw badRequest(`The URI '${quote(trimmed, 100)}' does not name one entity of the set ${expected.setName}.`);
  }
  return path.key;
}
