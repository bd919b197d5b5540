/**
 * Content negotiation ($format wins over Accept) and the DataServiceVersion headers.
 * Media-type parameters other than q (odata=verbose, type=feed, charset) do not take part in
 * matching, as OData v1/v2 clients expect; the Negotiator library does the q-value ranking.
 */
import Negotiator from 'negotiator';
import { badRequest, ODataError, type ErrorFormat } from './errors';

/** What a resource can be written as, the first being its default. */
export const MEDIA = {
  /** Feeds and entries. */
  entity: ['application/atom+xml', 'application/json', 'application/xml', 'text/xml'],
  serviceDocument: ['application/xml', 'application/atomsvc+xml', 'application/json'],
  /** Properties, $links and service operation results. */
  xmlOrJson: ['application/xml', 'text/xml', 'application/json'],
  metadata: ['application/xml'],
  text: ['text/plain'],
} as const;

const FORMAT_ALIASES: Readonly<Record<string, string>> = {
  json: 'application/json',
  atom: 'application/atom+xml',
  xml: 'application/xml',
};

/** Accept with every parameter but q removed. */
function normaliseAccept(accept: string): string {
  return accept
    .split(',')
    .map((range) => {
      const [type, ...params] = range.split(';');
      const q = params.map((x) => x.trim()).find((x) => /^q=/i.test(x));
      return q ? `${type!.trim()};${q}` : type!.trim();
    })
    .filter((range) => range.length > 0)
    .join(', ');
}

/** The media type named by $format, or undefined when there is none. */
function formatOption(format: string | undefined): string | undefined {
  if (format === undefined) return undefined;
  const alias = FORMAT_ALIASES[format.toLowerCase()];
  if (alias) return alias;
  if (/^[\w.+-]+\/[\w.+-]+(;.*)?$/.test(format)) return format.split(';')[0]!.trim().toLowerCase();
  throw badRequest(`The $format value '${format}' is not supported. Use json, atom or xml.`);
}

/** The response media type for a resource that can be written as `available`, or a 406. */
export function negotiate(accept: string | undefined, format: string | undefined, available: readonly string[]): string {
  const wanted = formatOption(format);
  if (wanted !== undefined) {
    if (available.includes(wanted)) return wanted;
    throw new ODataError(406, `The $format '${format}' cannot be used for this resource. Available: ${available.join(', ')}.`);
  }
  if (accept === undefined || accept.trim() === '') return available[0]!;
  const chosen = negotiated(accept, available);
  if (!chosen) {
    throw new ODataError(406, `None of the media types in the Accept header can be produced. Available: ${available.join(', ')}.`);
  }
  return chosen;
}

/**
 * Per list of available types, the choice for each Accept text seen: a connector sends the same
 * header on every request, and ranking it again each time cost about 3% of a POST. Bounded: a
 * client that varies its header only refills the table.
 */
const negotiatedByList = new WeakMap<readonly string[], Map<string, string | false>>();
const NEGOTIATED_PER_LIST = 256;

function negotiated(accept: string, available: readonly string[]): string | undefined {
  let byAccept = negotiatedByList.get(available);
  if (byAccept === undefined) negotiatedByList.set(available, (byAccept = new Map()));
  let chosen = byAccept.get(accept);
  if (chosen === undefined) {
    chosen = new Negotiator({ headers: { accept: normaliseAccept(accept) } }).mediaType([...available]) ?? false;
    if (byAccept.size >= NEGOTIATED_PER_LIST) byAccept.clear();
    byAccept.set(accept, chosen);
  }
  return chosen === false ? undefined : chosen;
}

/** Errors are written as JSON when the client asked for JSON, otherwise as XML. */
export function errorFormatOf(accept: string | undefined, format: string | undefined): ErrorFormat {
  if (format !== undefined) return format.toLowerCase() === 'json' || format.toLowerCase().startsWith('application/json') ? 'json' : 'xml';
  if (!accept) return 'xml';
  const chosen = new Negotiator({ headers: { accept: normaliseAccept(accept) } }).mediaType(['application/xml', 'application/json']);
  return chosen === 'application/json' ? 'json' : 'xml';
}

export type ProtocolVersion = 1 | 2;

const MAX_SUPPORTED = 2;

/**
 * Which version an answer takes when the request allows more than one. `lowest`: the lowest
 * that can express it (1.0 unless a 2.0 feature is used), as WCF Data Services answered and as
 * the existing connectors read. `highest`: the highest the request allows (2.0 unless
 * MaxDataServiceVersion says 1.0), for clients that read only 2.0 shapes and send no headers.
 * `auto` (the default): `highest` for a request that declares no version at all (no
 * DataServiceVersion, MaxDataServiceVersion or MinDataServiceVersion), `lowest` for one that
 * declares any. Typed V2 clients (SAP's Cloud SDK) send none of the three and read collections
 * only as 2.0 `results` objects; the connectors that read 1.0 arrays all declare their versions.
 */
export type ResponseVersionPolicy = 'auto' | 'lowest' | 'highest';

/** "2.0", "1.0;NetFx", "2.0;" -> major.minor as a number; undefined when absent. */
function parseVersion(name: string, value: string | undefined): number | undefined {
  // An empty header says nothing, like an absent one.
  if (value === undefined || value.trim() === '') return undefined;
  const m = /^\s*(\d{1,3})\.(\d{1,3})\s*(;.*)?$/.exec(value);
  if (!m) throw badRequest(`The ${name} header value '${value.slice(0, 40)}' is not a valid version (expected e.g. 1.0 or 2.0).`);
  return Number(m[1]) + Number(m[2]) / 1000;
}

const shown = (value: string) => value.trim().slice(0, 40);

export interface VersionHeaders {
  /** Highest response version the client can read (capped at what the service speaks). */
  readonly maxResponseVersion: ProtocolVersion;
  /**
   * Lowest response version the answer may have: 2.0 when the client sent MinDataServiceVersion
   * 2.0 or the service answers the highest version allowed; never above maxResponseVersion.
   */
  readonly minResponseVersion: ProtocolVersion;
}

/** A request header by lower-case name. */
export type HeaderLookup = (name: string) => string | undefined;

/**
 * Checks DataServiceVersion (the version the request was written for: at most 2.0), reads
 * MaxDataServiceVersion (clients send 3.0; that only means they can read anything we write;
 * absent, the client reads every version the service writes) and MinDataServiceVersion (a WCF
 * Data Services 5 header: the client reads nothing older, so 2.0 asks for 2.0 shapes).
 */
export function readVersionHeaders(header: HeaderLookup, policy: ResponseVersionPolicy = 'auto'): VersionHeaders {
  const dataServiceVersion = header('dataserviceversion');
  const maxHeader = header('maxdataserviceversion');
  const minHeader = header('mindataserviceversion');
  // A client sends the same few values on every request: each combination is read once. Each
  // value is prefixed with its length (-1: absent), so no two combinations share a key.
  const key = `${policy} ${lengthPrefixed(dataServiceVersion)} ${lengthPrefixed(maxHeader)} ${lengthPrefixed(minHeader)}`;
  const known = versionsByHeaders.get(key);
  if (known !== undefined) return known;
  // Throws on a value it refuses: only accepted combinations are kept.
  const versions = Object.freeze(versionsOf(dataServiceVersion, maxHeader, minHeader, policy));
  if (key.length <= MAX_REMEMBERED_KEY) {
    if (versionsByHeaders.size >= MAX_REMEMBERED_VERSIONS) versionsByHeaders.clear();
    versionsByHeaders.set(key, versions);
  }
  return versions;
}

const lengthPrefixed = (value: string | undefined): string => (value === undefined ? '-1:' : `${value.length}:${value}`);

/** readVersionHeaders() by its header values: bounded, since the values are the client's. */
const versionsByHeaders = new Map<string, VersionHeaders>();
const MAX_REMEMBERED_VERSIONS = 256;
const MAX_REMEMBERED_KEY = 120;

function versionsOf(dataServiceVersion: string | undefined, maxHeader: string | undefined, minHeader: string | undefined, policy: ResponseVersionPolicy): VersionHeaders {
  const requestVersion = parseVersion('DataServiceVersion', dataServiceVersion);
  if (requestVersion !== undefined && requestVersion > MAX_SUPPORTED) {
    throw badRequest(`The DataServiceVersion '${shown(dataServiceVersion!)}' is not supported: this service speaks versions 1.0 and 2.0.`);
  }
  const maxSent = parseVersion('MaxDataServiceVersion', maxHeader);
  const max = maxSent ?? MAX_SUPPORTED;
  if (max < 1) throw badRequest(`The MaxDataServiceVersion '${shown(maxHeader!)}' is below 1.0, the lowest version this service writes.`);
  const maxResponseVersion: ProtocolVersion = max >= 2 ? 2 : 1;

  const min = parseVersion('MinDataServiceVersion', minHeader);
  let minResponseVersion: ProtocolVersion = min !== undefined && min > 1 ? 2 : 1;
  if (min !== undefined) {
    if (min > MAX_SUPPORTED) {
      throw badRequest(`The MinDataServiceVersion '${shown(minHeader!)}' asks for a version this service does not write: it writes versions 1.0 and 2.0.`);
    }
    // Only a MaxDataServiceVersion that was sent can be below it: absent, it is 2.0.
    if (min > max) {
      throw badRequest(`The MaxDataServiceVersion '${shown(maxHeader!)}' is below the MinDataServiceVersion '${shown(minHeader!)}': no answer can satisfy both.`);
    }
    if (minResponseVersion > maxResponseVersion) {
      throw badRequest(`No version this service writes (1.0 or 2.0) lies between the MinDataServiceVersion '${shown(minHeader!)}' and the MaxDataServiceVersion '${shown(maxHeader!)}'.`);
    }
  }
  // An empty header declares nothing, as parseVersion reads it.
  const declaresNone = requestVersion === undefined && maxSent === undefined && min === undefined;
  if (policy === 'highest' || (policy === 'auto' && declaresNone)) minResponseVersion = maxResponseVersion;
  return { maxResponseVersion, minResponseVersion };
}

/**
 * The version of an answer that `needed` expresses (1.0 unless it uses a 2.0 feature): raised
 * to the floor the request sets, refused (400) above what the client reads.
 */
export function chooseResponseVersion(versions: VersionHeaders, needed: ProtocolVersion): ProtocolVersion {
  if (needed > versions.maxResponseVersion) {
    throw badRequest(`Response requires that version ${needed}.0 of the protocol be used, but the MaxDataServiceVersion header value in the request is set to '${versions.maxResponseVersion}.0'.`);
  }
  return needed > versions.minResponseVersion ? needed : versions.minResponseVersion;
}

/** The header value WCF Data Services wrote: "1.0;" or "2.0;". */
export const versionHeader = (v: ProtocolVersion) => `${v}.0;`;
