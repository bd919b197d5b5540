/**
 * /publicapi/v1/webhooks: a seller's webhook subscriptions as a small JSON API beside the OData
 * service (outside its service document, so $metadata stays as the specification shows it).
 *
 *   GET    /publicapi/v1/webhooks                                   the subscriptions
 *   POST   /publicapi/v1/webhooks  {"url": …, "eventTypes": […]}    a new one; its secret is shown this once
 *   GET    /publicapi/v1/webhooks/{id}                              one subscription
 *   DELETE /publicapi/v1/webhooks/{id}                              removes it and its deliveries
 *   POST   /publicapi/v1/webhooks/{id}/rotate-secret                a new secret (shown once); the old one signs too for WEBHOOK_SECRET_OVERLAP_MS
 *   POST   /publicapi/v1/webhooks/{id}/enable                       enables a disabled subscription
 *   GET    /publicapi/v1/webhooks/{id}/deliveries                   its latest deliveries (?top=, at most 200)
 *   POST   /publicapi/v1/webhooks/{id}/deliveries/{eventId}/redeliver   sends one again
 *
 * Credentials: the API's own, the SubscriptionToken header and the session cookie of one account.
 * A cross-site page cannot send that header, so the cookie alone never suffices (as for the API).
 * Errors are OData JSON errors, in the request's format whatever Accept says: this API has no XML.
 */
import type { App } from '../service/app';
import { badRequest, methodNotAllowed, notFound, ODataError, unauthorized } from '../odata/errors';
import { bodyMediaType, headerOf, type Handler, type RequestContext } from './context';
import { sessionCookieOf } from './auth-endpoints';
import { readBody } from './body';
import { send, sendError } from './respond';
import { checkEndpoint, EndpointRefused } from '../webhooks/address-guard';
import { EVENT_TYPES, isEventType, type EventType } from '../webhooks/event-types';
import {
  createSubscription,
  deleteSubscription,
  enableSubscription,
  findSubscription,
  listDeliveries,
  listSubscriptions,
  redeliver,
  rotateSecret,
  type DeliveryView,
  type Subscription,
} from '../webhooks/subscriptions';

export const WEBHOOKS_PATH = '/publicapi/v1/webhooks';

/** A subscription body is small: a URL and a list of event types. */
const MAX_BODY_BYTES = 16 * 1024;
const MAX_DELIVERIES_SHOWN = 200;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function subscriptionJson(s: Subscription): Record<string, unknown> {
  return {
    id: s.id,
    url: s.url,
    eventTypes: s.eventTypes,
    enabled: s.enabled,
    failureCount: s.failureCount,
    failingSince: iso(s.failingSince),
    disabledReason: s.disabledReason,
    createdAt: iso(s.createdAt),
    previousSecretValidUntil: s.previousSecretUntil !== null && s.previousSecretUntil > Date.now() ? iso(s.previousSecretUntil) : null,
  };
}

function deliveryJson(d: DeliveryView): Record<string, unknown> {
  return {
    eventId: d.eventId,
    sequence: d.sequence,
    type: d.type,
    state: d.state,
    attempts: d.attempts,
    createdAt: iso(d.createdAt),
    nextAttemptAt: d.state === 'pending' ? iso(d.nextAttemptAt) : null,
    lastStatus: d.lastStatus,
    lastError: d.lastError,
    lastAttemptAt: iso(d.lastAttemptAt),
    deliveredAt: iso(d.deliveredAt),
  };
}

function reply(ctx: RequestContext, status: number, body: unknown): void {
  send(ctx.res, { status, contentType: 'application/json;charset=utf-8', headers: { 'Cache-Control': 'no-store' }, body: JSON.stringify(body) });
}

async function accountOf(app: App, ctx: RequestContext): Promise<number> {
  const token = headerOf(ctx, 'subscriptiontoken');
  const cookie = sessionCookieOf(ctx);
  const claim = token && cookie ? app.sessions.claim(token, cookie) : undefined;
  const accountId = claim === undefined ? undefined : await app.sessions.authenticateClaim(claim);
  if (accountId === undefined) throw unauthorized();
  return accountId;
}

async function jsonBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  if (bodyMediaType(ctx) !== 'application/json') throw new ODataError(415, 'Send the subscription as Content-Type: application/json.');
  const text = (await readBody(ctx.req, MAX_BODY_BYTES)).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest('The request body is not valid JSON.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

function eventTypesOf(raw: unknown): EventType[] {
  if (!Array.isArray(raw) || raw.length === 0) throw badRequest(`'eventTypes' must be a non-empty array of event types: ${EVENT_TYPES.join(', ')}.`);
  for (const name of raw) {
    if (typeof name !== 'string' || !isEventType(name)) throw badRequest(`'${String(name).slice(0, 60)}' is not an event type; the event types are ${EVENT_TYPES.join(', ')}.`);
  }
  return [...new Set(raw as EventType[])];
}

function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest('The request path is not validly percent-encoded.');
  }
}

const noSuch = (id: string) => notFound(`No webhook subscription '${id.slice(0, 60)}' exists.`);

async function serve(app: App, ctx: RequestContext, rest: string): Promise<void> {
  const method = ctx.req.method ?? 'GET';
  const segments = rest.split('/').filter((s) => s !== '').map(decodedSegment);
  const accountId = await accountOf(app, ctx);
  const now = app.clock.now();
  const settings = app.config.webhooks;
  const [id, sub, eventId, action] = segments;
  if (id === undefined) {
    if (method === 'GET') return reply(ctx, 200, { subscriptions: (await listSubscriptions(app.store, accountId)).map(subscriptionJson), eventTypes: EVENT_TYPES });
    if (method !== 'POST') throw methodNotAllowed(method, ['GET', 'POST']);
    const body = await jsonBody(ctx);
    if (typeof body.url !== 'string') throw badRequest("'url' must be the endpoint's URL, a string.");
    const eventTypes = eventTypesOf(body.eventTypes);
    let url: URL;
    try {
      url = await checkEndpoint(body.url, settings);
    } catch (error) {
      if (error instanceof EndpointRefused) throw badRequest(`The endpoint is refused: ${error.message}.`);
      throw error;
    }
    const created = await createSubscription(app.store, accountId, url.toString(), eventTypes, now);
    return reply(ctx, 201, { ...subscriptionJson(created.subscription), secret: created.secret });
  }
  if (sub === undefined) {
    if (method === 'GET') {
      const found = await findSubscription(app.store, accountId, id);
      if (!found) throw noSuch(id);
      return reply(ctx, 200, subscriptionJson(found));
    }
    if (method !== 'DELETE') throw methodNotAllowed(method, ['GET', 'DELETE']);
    if (!(await deleteSubscription(app.store, accountId, id))) throw noSuch(id);
    ctx.res.writeHead(204).end();
    return;
  }
  if (sub === 'rotate-secret' && eventId === undefined) {
    if (method !== 'POST') throw methodNotAllowed(method, ['POST']);
    const secret = await rotateSecret(app.store, accountId, id, now, settings.secretOverlapMs);
    if (secret === undefined) throw noSuch(id);
    return reply(ctx, 200, { ...subscriptionJson((await findSubscription(app.store, accountId, id))!), secret });
  }
  if (sub === 'enable' && eventId === undefined) {
    if (method !== 'POST') throw methodNotAllowed(method, ['POST']);
    if (!(await enableSubscription(app.store, accountId, id, now))) throw noSuch(id);
    return reply(ctx, 200, subscriptionJson((await findSubscription(app.store, accountId, id))!));
  }
  if (sub === 'deliveries' && eventId === undefined) {
    if (method !== 'GET') throw methodNotAllowed(method, ['GET']);
    if (!(await findSubscription(app.store, accountId, id))) throw noSuch(id);
    const top = Number(new URLSearchParams(ctx.query).get('top') ?? 50);
    if (!Number.isInteger(top) || top < 1 || top > MAX_DELIVERIES_SHOWN) throw badRequest(`'top' must be a whole number from 1 to ${MAX_DELIVERIES_SHOWN}.`);
    return reply(ctx, 200, { deliveries: (await listDeliveries(app.store, accountId, id, top)).map(deliveryJson) });
  }
  if (sub === 'deliveries' && eventId !== undefined && action === 'redeliver' && segments.length === 4) {
    if (method !== 'POST') throw methodNotAllowed(method, ['POST']);
    if (!(await redeliver(app.store, accountId, id, eventId, now))) throw notFound(`Webhook subscription '${id.slice(0, 60)}' has no delivery '${eventId.slice(0, 60)}'.`);
    return reply(ctx, 202, { eventId, state: 'pending' });
  }
  throw notFound(`No resource exists at '${WEBHOOKS_PATH}${rest.slice(0, 200)}'.`);
}

export function webhooksHandler(app: App): Handler {
  return async (ctx, rest) => {
    try {
      await serve(app, ctx, rest);
    } catch (error) {
      // Always JSON: the format this API speaks. A failure that is not the request's is logged.
      if (!(error instanceof ODataError)) ctx.log.error({ reqId: ctx.id, err: error }, 'webhooks request failed');
      if (ctx.res.headersSent) ctx.res.destroy();
      else sendError(ctx.res, error, 'json', ctx.id);
    }
  };
}
