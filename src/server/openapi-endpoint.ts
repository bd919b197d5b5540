/**
 * GET /publicapi/v1/openapi.json: the OpenAPI 3.0 description of the OData service
 * (odata/openapi.ts), generated from the model once, when the route is made.
 *
 * Credentials: the same rule as $metadata. The document tells no account's data, but it does tell
 * the whole interface, and $metadata answers strangers 401 so that nothing about the service
 * reaches them; a second description of the same interface open to everyone would undo that. So
 * the request needs the SubscriptionToken header and the session cookie of one account, exactly
 * as the security schemes of the document say.
 */
import type { App } from '../service/app';
import { SERVICE_PATH } from '../service/request';
import { renderOpenApi } from '../odata/openapi';
import { methodNotAllowed, notFound, unauthorized } from '../odata/errors';
import { headerOf, type Handler } from './context';
import { sessionCookieOf } from './auth-endpoints';
import { send } from './respond';

export const OPENAPI_PATH = '/publicapi/v1/openapi.json';

/** info.version of the document: the version of the public API its path names (v1). */
const API_VERSION = '1';

export function openApiHandler(app: App): Handler {
  const body = JSON.stringify(renderOpenApi(app.model, { servicePath: SERVICE_PATH, version: API_VERSION }), null, 1);
  return async (ctx, rest) => {
    if (rest !== '') throw notFound(`No resource exists below ${OPENAPI_PATH}.`);
    const method = ctx.req.method ?? '';
    if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(method, ['GET', 'HEAD']);
    const token = headerOf(ctx, 'subscriptiontoken');
    const cookie = sessionCookieOf(ctx);
    const claim = token && cookie ? app.sessions.claim(token, cookie) : undefined;
    if (claim === undefined || (await app.sessions.authenticateClaim(claim)) === undefined) throw unauthorized();
    send(ctx.res, {
      status: 200,
      contentType: 'application/json;charset=utf-8',
      headers: { 'Cache-Control': 'no-cache' },
      ...(method === 'HEAD' ? {} : { body }),
    });
  };
}
