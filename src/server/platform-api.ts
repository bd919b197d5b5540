/**
 * The platform API at /platform/v1: how the marketplace connector delivers listings, orders and
 * their payment and shipping events (README "The platform API"). It is separate from the seller
 * API in every way: it exists only when PLATFORM_TOKEN is configured (otherwise nothing is
 * mounted here and every path answers 404), it accepts only that credential as
 * `Authorization: Bearer …` (compared in constant time), and it refuses requests that carry a
 * seller's SubscriptionToken or session cookie, so that seller credentials never reach it.
 * Answers and errors are plain JSON.
 *
 *   GET  /platform/v1/schema                               the JSON Schemas of the documents
 *   POST /platform/v1/accounts/{userName}/documents        deliver one document to that account
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { SESSION_COOKIE, sessionCookieOf } from './auth-endpoints';
import { findAccountByUserName } from '../auth/directory';
import { badRequest, methodNotAllowed, notFound, ODataError } from '../odata/errors';
import type { PlatformIntake } from '../platform/intake';
import type { App } from '../service/app';
import { answerableError } from '../service/error-reply';
import { readBody } from './body';
import { bodyMediaType, headerOf, type Handler, type RequestContext } from './context';
import { quote } from '../odata/quote';

export const PLATFORM_PATH = '/platform/v1';

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest();

function sendJson(ctx: RequestContext, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  ctx.res.statusCode = status;
  for (const [name, v] of Object.entries(headers)) ctx.res.setHeader(name, v);
  ctx.res.setHeader('Cache-Control', 'no-store');
  ctx.res.setHeader('Content-Type', 'application/json;charset=utf-8');
  ctx.res.setHeader('Content-Length', body.length);
  ctx.res.end(body);
}

/** Whether the request carries the platform credential; both sides hashed, so the comparison takes equal time. */
function authorized(ctx: RequestContext, expected: Buffer): boolean {
  const m = /^Bearer +([\x21-\x7e]+) *$/i.exec(headerOf(ctx, 'authorization') ?? '');
  return m !== null && timingSafeEqual(sha256(m[1]!), expected);
}

function unauthorized(): ODataError {
  return new ODataError(401, 'The platform API needs the platform credential: Authorization: Bearer <PLATFORM_TOKEN>.', '', { 'WWW-Authenticate': 'Bearer realm="platform"' });
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest('The path contains malformed percent-encoding.');
  }
}

function parseJsonBody(ctx: RequestContext, body: Buffer): unknown {
  const type = bodyMediaType(ctx);
  if (type !== 'application/json') throw new ODataError(415, `A platform document is sent as application/json, not '${type || 'without a Content-Type'}'.`);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw badRequest(`The body is not valid JSON: ${(error as Error).message}`);
  }
}

async function deliverDocument(app: App, intake: PlatformIntake, ctx: RequestContext, userName: string): Promise<void> {
  const json = parseJsonBody(ctx, await readBody(ctx.req, app.config.limits.maxBodyBytes));
  // Validate before looking the account up: a bad document is refused the same for any account.
  const doc = intake.validate(json);
  const account = await findAccountByUserName(app.store.directory, userName);
  if (!account) throw notFound(`There is no account with the user name '${quote(userName)}'.`);
  sendJson(ctx, 200, await intake.apply(account.accountId, doc));
}

async function route(app: App, intake: PlatformIntake, ctx: RequestContext, rest: string): Promise<void> {
  const method = ctx.req.method ?? 'GET';
  const segments = rest.split('/').filter((s) => s !== '');
  if (segments.length === 1 && segments[0] === 'schema') {
    if (method !== 'GET') throw methodNotAllowed(method, ['GET']);
    return sendJson(ctx, 200, intake.validator.schemas);
  }
  if (segments.length === 3 && segments[0] === 'accounts' && segments[2] === 'documents') {
    if (method !== 'POST') throw methodNotAllowed(method, ['POST']);
    return deliverDocument(app, intake, ctx, decodeSegment(segments[1]!));
  }
  throw notFound(`No platform resource exists at '${PLATFORM_PATH}${quote(rest, 200)}'. Documents go to POST ${PLATFORM_PATH}/accounts/{userName}/documents.`);
}

export function platformApiHandler(app: App, intake: PlatformIntake, token: string): Handler {
  const expected = sha256(token);
  return async (ctx, rest) => {
    try {
      if (!authorized(ctx, expected)) throw unauthorized();
      if (headerOf(ctx, 'subscriptiontoken') !== undefined || sessionCookieOf(ctx) !== undefined) {
        throw badRequest(`The platform API does not accept seller credentials (SubscriptionToken, ${SESSION_COOKIE}); send only the platform credential.`);
      }
      await route(app, intake, ctx, rest);
    } catch (error) {
      if (ctx.res.headersSent) {
        ctx.res.destroy();
        return;
      }
      const known = answerableError(error);
      if (known) {
        sendJson(ctx, known.status, { error: { status: known.status, message: known.message } }, { ...known.headers });
        return;
      }
      ctx.log.error({ reqId: ctx.id, err: error }, 'platform request failed');
      sendJson(ctx, 500, { error: { status: 500, message: `An internal error occurred. Quote request id ${ctx.id} when reporting it.` } });
    }
  };
}
