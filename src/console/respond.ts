/**
 * How the console answers: pages with its security headers and no caching, redirects after a
 * form, problem pages; and what every request needs first (the seller of its session, its form).
 */
import { sendWhole } from '../server/compression';
import type { ServerResponse } from 'node:http';
import { userNameOf } from '../auth/accounts';
import { ODataError } from '../odata/errors';
import { sessionCookieOf } from '../server/auth-endpoints';
import { readBody } from '../server/body';
import type { RequestContext } from '../server/context';
import type { ConsoleDeps } from './deps';
import { html, type Html } from './html';
import { barePage, consoleUrl, page, type Section } from './layout';
import { csrfTokenFor, SECURITY_HEADERS } from './security';

/** A console form is a few hidden fields; anything bigger is not one of ours. */
const MAX_FORM_BYTES = 8 * 1024;
export const ENTITY_ID = /^[1-9]\d{0,17}$/;

/** The seller a request acts for. */
export interface Seller {
  readonly accountId: number;
  readonly userName: string;
  readonly cookie: string;
}

export function sendHtml(res: ServerResponse, status: number, body: Html, headers: Record<string, string | string[]> = {}): void {
  const bytes = Buffer.from(body.toString(), 'utf8');
  // Compressed as the request's Accept-Encoding asks, like every answer of the service.
  sendWhole(res, status, {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(bytes.length),
    // Pages show one seller's data: never kept by a shared cache, nor shown again from history.
    'Cache-Control': 'no-store',
    ...headers,
  }, bytes);
}

export function redirect(res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(303, { ...SECURITY_HEADERS, Location: location, 'Cache-Control': 'no-store', 'Content-Length': '0', ...headers });
  res.end();
}

export function problemPage(res: ServerResponse, status: number, title: string, message: string, seller?: Seller, headers: Record<string, string> = {}): void {
  const body = html`<p class="notice error">${message}</p><p><a href="${consoleUrl('/')}">Back to the overview</a></p>`;
  sendHtml(res, status, seller ? page({ title, section: undefined, userName: seller.userName, csrfToken: csrfTokenFor(seller.cookie) }, body) : barePage(title, body), headers);
}

export const notFoundPage = (res: ServerResponse, seller: Seller | undefined, what: string) =>
  problemPage(res, 404, 'Not found', `${what} does not exist in your account.`, seller);

export async function sellerOf(ctx: RequestContext, deps: ConsoleDeps): Promise<Seller | undefined> {
  const cookie = sessionCookieOf(ctx);
  if (!cookie) return undefined;
  const accountId = await deps.sessions.accountOfSession(cookie);
  if (accountId === undefined) return undefined;
  const userName = await userNameOf(deps.store, accountId);
  return userName === undefined ? undefined : { accountId, userName, cookie };
}

export async function readForm(ctx: RequestContext): Promise<URLSearchParams> {
  const type = (ctx.req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new ODataError(415, 'The console takes forms only (application/x-www-form-urlencoded).');
  return new URLSearchParams((await readBody(ctx.req, MAX_FORM_BYTES)).toString('utf8'));
}

/** A page of the seller's console frame. */
export function sellerPage(res: ServerResponse, status: number, seller: Seller, title: string, section: Section | undefined, body: Html): void {
  sendHtml(res, status, page({ title, section, userName: seller.userName, csrfToken: csrfTokenFor(seller.cookie) }, body));
}
