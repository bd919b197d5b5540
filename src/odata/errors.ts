/**
 * One error type for everything the client did wrong (or may not do). Anything else that is
 * thrown is a fault: answered as a 500 that names only the request id, and logged.
 */
import { xmlText } from './xml-escape';

export class ODataError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Service-defined sub-status; WCF left it empty. */
    readonly code: string = '',
    /** Extra response headers (Allow, Retry-After, …). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, code = '') => new ODataError(400, message, code);
export const notFound = (message: string) => new ODataError(404, message);
export const methodNotAllowed = (method: string, allow: readonly string[]) =>
  new ODataError(405, `The HTTP method '${method}' is not allowed on this resource. Allowed: ${allow.join(', ')}.`, '', {
    Allow: allow.join(', '),
  });
/**
 * The challenge every 401 of the OData service carries (RFC 7235 requires one; some HTTP clients
 * fail on a 401 without it). The scheme is named after the header that carries the credential,
 * `SubscriptionToken`: it is not Bearer or Basic, which would invite clients (and browsers) to
 * send an Authorization header the service does not read. The session cookie from the login is
 * needed as well; the error message says so.
 */
export const SUBSCRIPTION_TOKEN_CHALLENGE = 'SubscriptionToken realm="publicapi"';

export const unauthorized = (message = 'Authentication required: send a valid SubscriptionToken header and .ASPXAUTH cookie of one account.') =>
  new ODataError(401, message, '', { 'WWW-Authenticate': SUBSCRIPTION_TOKEN_CHALLENGE });

export type ErrorFormat = 'json' | 'xml';

export interface RenderedError {
  readonly contentType: string;
  readonly body: string;
}

const METADATA_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices/metadata';

/** The OData error document of [MS-ODATA] 2.2.8.1, never wrapped in "d". */
export function renderError(format: ErrorFormat, code: string, message: string): RenderedError {
  if (format === 'json') {
    return {
      contentType: 'application/json;charset=utf-8',
      body: JSON.stringify({ error: { code, message: { lang: 'en-US', value: message } } }),
    };
  }
  return {
    contentType: 'application/xml;charset=utf-8',
    body:
      '<?xml version="1.0" encoding="utf-8" standalone="yes"?>' +
      `<error xmlns="${METADATA_NS}"><code>${xmlText(code)}</code>` +
      // Messages may quote request text: any character, including ones XML cannot hold.
      `<message xml:lang="en-US">${xmlText(message)}</message></error>`,
  };
}
