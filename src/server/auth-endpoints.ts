/**
 * The ASP.NET authentication service that existing clients call before anything else:
 * POST /Authentication_JSON_AppService.axd/Login | Logout | IsLoggedIn, answering {"d":…}.
 */
import { parse as parseCookies } from 'cookie';
import type { Handler, RequestContext } from './context';
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

interface LoginRequest {
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

async function login(ctx: RequestContext, options: AuthEndpointOptions): Promise<void> {
  const request = parseLogin(await readBody(ctx.req, MAX_LOGIN_BODY_BYTES));
  const result = await options.sessions.login(request.userName, request.password, ctx.clientAddress);
  const activity = options.activity ?? noActivity;
  if ('throttled' in result) {
    activity.login('throttled');
    audit(ctx, 'login throttled', { userName: request.userName.slice(0, 100) });
    throw new ODataError(429, 'Too many failed logins. Try again later.', '', { 'Retry-After': String(result.retryAfterSeconds) });
  }
  if (!result.ok) {
    activity.login('failure');
    // The user name as sent stands for the account: the answer (and so this result) does not
    // say whether one exists.
    audit(ctx, 'login failed', { userName: request.userName.slice(0, 100) });
    return json(ctx, false);
  }
  activity.login('success');
  audit(ctx, 'login', { accountId: result.accountId, userName: request.userName });
  const expires = request.persistent ? new Date(options.now() + options.absoluteTimeoutMs) : undefined;
  json(ctx, true, { 'Set-Cookie': cookieHeader(result.cookieValue, options, expires) });
}

async function logout(ctx: RequestContext, options: AuthEndpointOptions): Promise<void> {
  const cookie = sessionCookieOf(ctx);
  const accountId = cookie ? await options.sessions.endSession(cookie) : undefined;
  if (accountId !== undefined) audit(ctx, 'logout', { accountId });
  json(ctx, null, { 'Set-Cookie': cookieHeader('', options, new Date(0)) });
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
