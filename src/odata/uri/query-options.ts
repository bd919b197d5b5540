/**
 * Splits a query string into system query options ($…) and custom ones. Unknown or repeated
 * system options are a 400, as in WCF Data Services; '+' reads as a space (form decoding).
 */
import { badRequest } from '../errors';
import { quote } from '../quote';

export const SYSTEM_QUERY_OPTIONS = [
  '$format',
  '$filter',
  '$orderby',
  '$top',
  '$skip',
  '$skiptoken',
  '$expand',
  '$select',
  '$inlinecount',
] as const;

export type SystemQueryOption = (typeof SYSTEM_QUERY_OPTIONS)[number];

export interface QueryOptions {
  readonly system: ReadonlyMap<SystemQueryOption, string>;
  /** Service operation parameters and anything else a client adds (the first of repeated ones). */
  readonly custom: ReadonlyMap<string, string>;
  /** Custom option names given more than once: an operation refuses a repeated parameter. */
  readonly repeated?: ReadonlySet<string>;
}

const known = new Set<string>(SYSTEM_QUERY_OPTIONS);

function decode(part: string): string {
  // Most names and many values are plain text: nothing to replace or decode.
  if (!part.includes('%') && !part.includes('+')) return part;
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw badRequest(`The query string contains malformed percent-encoding near '${quote(part)}'.`);
  }
}

export function parseQueryOptions(query: string): QueryOptions {
  const system = new Map<SystemQueryOption, string>();
  const custom = new Map<string, string>();
  const repeated = new Set<string>();
  if (query === '') return { system, custom, repeated };
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decode(pair.slice(eq + 1));
    if (name.startsWith('$')) {
      if (!known.has(name)) {
        throw badRequest(`The query parameter '${quote(name)}' begins with a system-reserved '$' character but is not recognized.`);
      }
      if (system.has(name as SystemQueryOption)) throw badRequest(`The query parameter '${quote(name)}' is given more than once.`);
      system.set(name as SystemQueryOption, value);
    } else if (custom.has(name)) {
      repeated.add(name);
    } else {
      custom.set(name, value);
    }
  }
  return { system, custom, repeated };
}
