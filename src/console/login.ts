/**
 * Logging in and out of the console with plain forms (no script needed). A login form cannot
 * carry the session's CSRF token (there is no session yet), so the login page sets a short-lived
 * random cookie of its own and the form carries its keyed hash (double submit): another site can
 * make a browser post the form, but cannot read the cookie to compute the token, so it cannot
 * log the seller's browser into the attacker's account (login CSRF). The form must also come from
 * this origin, as every console form must. Logout is a form with the session's CSRF token.
 * Both run the authentication service's own login and logout (throttling, audit, cookie).
 */
import { randomBytes } from 'node:crypto';
import { parse as parseCookies } from 'cookie';
import type { RequestContext } from '../server/context';
import { logIn, logOut } from '../server/auth-endpoints';
import type { ConsoleDeps } from './deps';
import { CONSOLE_PATH } from './layout';
import { csrfTokenFor, csrfTokenMatches } from './security';

const LOGIN_COOKIE = 'console_login';
/** A login form is good for this long after its page was opened. */
const LOGIN_COOKIE_SECONDS = 30 * 60;
/** Longer names and passwords than these are not an account's. */
const MAX_USER_NAME = 256;
const MAX_PASSWORD = 1024;

function loginCookieOf(ctx: RequestContext): string | undefined {
  const raw = ctx.req.headers.cookie;
  const value = raw ? parseCookies(raw)[LOGIN_COOKIE] : undefined;
  return value && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}

function loginCookie(deps: ConsoleDeps, value: string, maxAge: number): string {
  return `${LOGIN_COOKIE}=${value}; Max-Age=${maxAge}; Path=${CONSOLE_PATH}/login; HttpOnly; SameSite=Strict${deps.auth.secureCookies ? '; Secure' : ''}`;
}

/** The login form's CSRF token, and the cookie to set for it when the browser has none yet. */
export function loginFormToken(deps: ConsoleDeps, ctx: RequestContext): { csrfToken: string; setCookie: string | undefined } {
  const existing = loginCookieOf(ctx);
  const value = existing ?? randomBytes(32).toString('base64url');
  return { csrfToken: csrfTokenFor(value), setCookie: existing ? undefined : loginCookie(deps, value, LOGIN_COOKIE_SECONDS) };
}

/** Whether the form's CSRF token is the hash of this browser's login cookie. */
export function loginFormGenuine(ctx: RequestContext, form: URLSearchParams): boolean {
  const cookie = loginCookieOf(ctx);
  return cookie !== undefined && csrfTokenMatches(cookie, form.get('csrf') ?? undefined);
}

export type FormLogin =
  | { readonly kind: 'ok'; readonly setCookies: string[] }
  | { readonly kind: 'failed'; readonly userName: string; readonly message: string; readonly status: number; readonly headers: Record<string, string> };

export async function formLogin(deps: ConsoleDeps, ctx: RequestContext, form: URLSearchParams): Promise<FormLogin> {
  const userName = (form.get('userName') ?? '').slice(0, MAX_USER_NAME);
  const password = (form.get('password') ?? '').slice(0, MAX_PASSWORD);
  const outcome = await logIn(ctx, deps.auth, { userName, password, persistent: false });
  if (outcome.kind === 'ok') return { kind: 'ok', setCookies: [outcome.setCookie, loginCookie(deps, '', 0)] };
  if (outcome.kind === 'throttled') {
    return { kind: 'failed', userName, status: 429, message: 'Too many failed logins. Wait a few minutes, then try again.', headers: { 'Retry-After': String(outcome.retryAfterSeconds) } };
  }
  // 200, as the JSON login answers wrong credentials ({"d":false}): the page is the answer.
  return { kind: 'failed', userName, status: 200, message: 'The user name or the password is wrong.', headers: {} };
}

/** Ends the session; the Set-Cookie that clears it. */
export function formLogout(deps: ConsoleDeps, ctx: RequestContext): Promise<string> {
  return logOut(ctx, deps.auth);
}
