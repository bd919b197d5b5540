/**
 * The entity a URI in a request body names ($links bodies, navigation bindings): absolute
 * (http://host/publicapi/v1/api.svc/Catalogs(5L)), absolute-path, or relative to the service root.
 */
import type { EntityTypeDef, Model } from '../../model/types';
import { badRequest, ODataError } from '../errors';
import { parseResourcePath } from './resource-path';
import { quote } from '../quote';

const SERVICE_MARKER = /\/publicapi\/v1\/api\.svc(?=\/|$)/i;

export function resolveEntityUri(model: Model, uri: string, expected: EntityTypeDef): bigint {
  const trimmed = uri.trim();
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
