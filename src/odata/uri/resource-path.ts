/** Splits the resource path below the service root into percent-decoded segments. */
import { badRequest } from '../errors';

export function splitResourcePath(rest: string): string[] {
  const trimmed = rest.replace(/^\/+/, '');
  if (trimmed === '') return [];
  return trimmed.split('/').map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw badRequest(`The resource path segment '${segment.slice(0, 60)}' has malformed percent-encoding.`);
    }
  });
}
