/**
 * What keeps the console from weakening the service:
 * - every answer carries a strict Content-Security-Policy (scripts, styles and fetches from this
 *   origin only, no inline script or style, no framing; images also from any https address,
 *   because a seller's pictures live on the seller's own servers) and the older headers that
 *   say the same to older browsers;
 * - every state-changing request (POST) must carry the CSRF token of its session and, when the
 *   browser says where it comes from (Origin, Sec-Fetch-Site), come from this origin.
 *
 * The CSRF token is a keyed hash of the session cookie: it is the same on every page of a
 * session, every server process computes the same one without sharing state, and another site
 * cannot compute it because it cannot read the HttpOnly cookie.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // The seller's pictures: https only (never http, data: or blob:). An image cannot run script,
  // and each <img> says referrerpolicy="no-referrer".
  "img-src 'self' https:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export function csrfTokenFor(sessionCookie: string): string {
  return createHash('sha256').update('catalogue-console-csrf\0').update(sessionCookie).digest('base64url');
}

export function csrfTokenMatches(sessionCookie: string, sent: string | undefined): boolean {
  if (typeof sent !== 'string') return false;
  const expected = Buffer.from(csrfTokenFor(sessionCookie));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * False when the browser says the request comes from another site. Browsers send Origin with
 * every POST and Sec-Fetch-Site with every request; a client that sends neither (a script of
 * the seller's own) still needs the CSRF token, which only a page of this origin has.
 */
export function comesFromThisOrigin(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  const host = req.headers.host;
  if (host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}
