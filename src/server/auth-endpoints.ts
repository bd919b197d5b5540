/**
 * The ASP.NET authentication service that existing clients call before anything else:
 * POST /Authentication_JSON_AppService.axd/Login | Logout | IsLoggedIn, answering {"d":…}.
 *
 * Login accepts only application/json, as the ASP.NET service did: a cross-site HTML form can
 * post text/plain, form-urlencoded or multipart without asking, so accepting those would let
 * any page log a seller's browser into the attacker's account (login CSRF). A request the
 * browser marks as cross-site (Sec-Fetch-Site) or as from a foreign Origin is refused as well,
 * for Login and for Logout (a forced logout). Logout keeps accepting any Content-Type: it reads
 * no body, and connectors post it empty. Clients that are not browsers send neither header.
 */
import { parse as parseCookies } from 'cookie';
import { bodyMediaType, headerOf, type Handler, type RequestContext } from './context';
import { charsetOf } from '../odata/batch/media-type';
import { readBody } from './body';
import { send } from './respond';
import { badRequest, methodNotAllowed, notFound, ODataError } from '../odata/errors';
import type { SessionService } from '../auth/sessions';
import { noActivity, type Activity } from '../auth/activity';
import { audit as auditEvent, type AuditEvent } from '../auth/audit';
import { quote } from '../odata/quote';

function audit(ctx: RequestContext, event: AuditEvent, fields: Record<string, unknown>): void {
  auditEvent(ctx.log, event, { reqId: ctx.id, clientAddress: ctx.clientAddress, ...fields });
}

export const SESSION_COOKIE = '.ASPXAUTH';
/** Login bodies are tiny; anything bigger is not a login. */
const MAX_LOGIN_BODY_BYTES = 16 * 1024;

export interface AuthEndpointOptions {
  readonly sessions: SessionService;
  readonly secureCookies: boolean;
  readonly absoluteTimeoutMs: number;
  readonly now: () => number;
  /** Told how each login ended (the metrics). */
  readonly activity?: Activity;
  /** PUBLIC_URL: its origin is this service's own too (behind a proxy that rewrites Host). */
  readonly publicUrl?: string;
}

/** Sec-Fetch-Site values of a request that did not come from another site. */
const OWN_SITE = new Set(['same-origin', 'same-site', 'none']);

/** A URL's protocol and host (host lower-case, a default port left out); undefined when it is not one. */
function originOf(url: string): { protocol: string; host: string } | undefined {
  try {
    const { protocol, host } = new URL(url);
    return host === '' ? undefined : { protocol, host };
  } catch {
    return undefined;
  }
}

/**
 * Refuses (403) a request the browser says comes from another site: Sec-Fetch-Site other than
 * same-origin, same-site or none, or an Origin whose host is neither the request's Host nor
 * PUBLIC_URL's ("null", the origin of sandboxed and local documents, is foreign too).
 */
function refuseCrossSite(ctx: RequestContext, options: AuthEndpointOptions, what: string): void {
  const site = headerOf(ctx, 'sec-fetch-site')?.trim().toLowerCase();
  if (site !== undefined && !OWN_SITE.has(site)) {
    throw new ODataError(403, `A ${what} from another site is refused (Sec-Fetch-Site: ${quote(site, 40)}).`);
  }
  const origin = headerOf(ctx, 'origin');
  if (origin === undefined) return;
  const from = originOf(origin.trim());
  const host = headerOf(ctx, 'host')?.trim();
  // The Host header read with the Origin's scheme, so that a default port written out compares equal.
  const own = [
    from && host ? originOf(`${from.protocol}//${host}`)?.host : undefined,
    options.publicUrl === undefined ? undefined : originOf(options.publicUrl)?.host,
  ];
  if (from === undefined || !own.includes(from.host)) {
    throw new ODataError(403, `A ${what} from another origin is refused (Origin: ${quote(origin, 100)}).`);
  }
}

/** Refuses (415) a login body that is not JSON in UTF-8 by its Content-Type, before reading it. */
function requireJsonBody(ctx: RequestContext): void {
  const type = bodyMediaType(ctx);
  if (type !== 'application/json') {
    throw new ODataError(415, `A login is sent as application/json, not ${type ? `'${quote(type, 100)}'` : 'without a Content-Type'}.`);
  }
  const charset = charsetOf(headerOf(ctx, 'content-type'));
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new ODataError(415, `A login is sent as application/json in UTF-8, not in '${quote(charset, 40)}'.`);
  }
}

function json(ctx: RequestContext, value: unknown, headers: Record<string, string> = {}): void {
  send(ctx.res, { status: 200, contentType: 'application/json;charset=utf-8', body: JSON.stringify({ d: value }), headers });
}

/** The .ASPXAUTH value of the request's Cookie header (echoed attribute junk is ignored). */
export function sessionCookieOf(ctx: RequestContext): string | undefined {
  const raw = ctx.req.headers.cookie;
  return raw ? parseCookies(raw)[SESSION_COOKIE] : undefined;
}

/** Set-Cookie exactly as the ASP.NET service wrote it, plus SameSite (and Secure over TLS). */
function cookieHeader(value: string, options: AuthEndpointOptions, expires?: Date): string {
  return (
    `${SESSION_COOKIE}=${value}; ` +
    (expires ? `expires=${expires.toUTCString()}; ` : '') +
    `path=/; HttpOnly; SameSite=Lax${options.secureCookies ? '; Secure' : ''}`
  );
}

export interface LoginRequest {
  readonly userName: string;
  readonly password: string;
  readonly persistent: boolean;
}

function parseLogin(body: Buffer): LoginRequest {
  let data: unknown;
  try {
    data = JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('The login body must be JSON: {"userName":"…","password":"…","createPersistentCookie":false}.');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw badRequest('The login body must be a JSON object.');
  const { userName, password, createPersistentCookie } = data as Record<string, unknown>;
  if (typeof userName !== 'string') throw badRequest('The login body needs userName as a string.');
  if (typeof password !== 'string') throw badRequest('The login body needs password as a string.');
  // Clients send the flag as a boolean or as the string "true"/"false".
  let persistent = false;
  if (createPersistentCookie === true || createPersistentCookie === 'true') persistent = true;
  else if (createPersistentCookie !== undefined && createPersistentCookie !== null && createPersistentCookie !== false && createPersistentCookie !== 'false') {
    throw badRequest('createPersistentCookie must be true or false.');
  }
  return { userName, password, persistent };
}

/** How a login ended: a new session (its Set-Cookie), wrong credentials, or too many failures. */
export type LoginOutcome =
  | { readonly kind: 'ok'; readonly accountId: number; readonly setCookie: string }
  | { readonly kind: 'failed' }
  | { readonly kind: 'throttled'; readonly retryAfterSeconds: number };

/**
 * A login with its throttling, metrics and audit line: the JSON endpoint below and the seller
 * console's form login (src/console/) both run this, each after its own checks of where the
 * request comes from.
 */
export async function logIn(ctx: RequestContext, options: AuthEndpointOptions, request: LoginRequest): Promise<LoginOutcome> {
  const result = await options.sessions.login(request.userName, request.password, ctx.clientAddress);
  const activity = options.activity ?? noActivity;
  if ('throttled' in result) {
    activity.login('throttled');
    audit(ctx, 'login throttled', { userName: request.userName.slice(0, 100) });
    return { kind: 'throttled', retryAfterSeconds: result.retryAfterSeconds };
  }
  if (!result.ok) {
    activity.login('failure');
    // The user name as sent stands for the account: the answer (and so this result) does not
    // say whether one exists.
    audit(ctx, 'login failed', { userName: request.userName.slice(0, 100) });
    return { kind: 'failed' };
  }
  activity.login('success');
  audit(ctx, 'login', { accountId: result.accountId, userName: request.userName });
  const expires = request.persistent ? new Date(options.now() + options.absoluteTimeoutMs) : undefined;
  return { kind: 'ok', accountId: result.accountId, setCookie: cookieHeader(result.cookieValue, options, expires) };
}

/** Ends the request's session (if any), audited; the Set-Cookie that clears the cookie. */
export async function logOut(ctx: RequestContext, options: AuthEndpointOptions): Promise<string> {
  const cookie = sessionCookieOf(ctx);
  const accountId = cookie ? await options.sessions.endSession(cookie) : undefined;
  if (accountId !== undefined) audit(ctx, 'logout', { accountId });
  return cookieHeader('', options, new Date(0));
}

async function login(ctx: RequestContext, options: AuthEndpointOptions): Promise<void> {
  refuseCrossSite(ctx, options, 'login');
  requireJsonBody(ctx);
  const request = parseLogin(await readBody(ctx.req, MAX_LOGIN_BODY_BYTES));
  const outcome = await logIn(ctx, options, request);
  if (outcome.kind === 'throttled') throw new ODataError(429, 'Too many failed logins. Try again later.', '', { 'Retry-After': String(outcome.retryAfterSeconds) });
  if (outcome.kind === 'failed') return json(ctx, false);
  json(ctx, true, { 'Set-Cookie': outcome.setCookie });
}

async function logout(ctx: RequestContext, options: AuthEndpointOptions): Promise<void> {
  refuseCrossSite(ctx, options, 'logout');
  json(ctx, null, { 'Set-Cookie': await logOut(ctx, options) });
}

async function isLoggedIn(ctx: RequestContext, options: AuthEndpointOptions): Promise<void> {
  const cookie = sessionCookieOf(ctx);
  json(ctx, cookie ? await options.sessions.isLoggedIn(cookie) : false);
}

const actions: Readonly<Record<string, (ctx: RequestContext, options: AuthEndpointOptions) => Promise<void>>> = {
  login,
  logout,
  isloggedin: isLoggedIn,
};

export function authEndpointsHandler(options: AuthEndpointOptions): Handler {
  return async (ctx, rest) => {
    const action = actions[rest.replace(/^\//, '').toLowerCase()];
    if (!action) throw notFound(`The authentication service has no operation '${quote(rest.replace(/^\//, ''))}'.`);
    if (ctx.req.method !== 'POST') throw methodNotAllowed(ctx.req.method ?? '', ['POST']);
    await action(ctx, options);
  };
}
