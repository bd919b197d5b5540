/**
 * The OData service at /publicapi/v1/api.svc, from node:http into the service stage. Each request
 * goes through the stages of docs/architecture.md: parse (headers, path, options) -> identify
 * (token and cookie) -> admit (uri-kind.ts) -> plan
 * and execute -> write. Resources of later stages are reached from here.
 */
import type { App } from '../service/app';
import { headerOf, type Handler, type RequestContext } from './context';
import { badRequest, unauthorized } from '../odata/errors';
import { readVersionHeaders } from '../odata/negotiate';
import { parseQueryOptions } from '../odata/uri/query-options';
import { parseResourcePath } from '../odata/uri/resource-path';
import { HttpResponder } from './http-responder';
import { readBody } from './body';
import type { ODataRequest } from '../service/request';
import { sessionCookieOf } from './auth-endpoints';
import { serviceRootOf } from './service-root';
import { serveRequest } from '../service/dispatch';
import { handleBatch } from '../service/batch/batch';
import { quote } from '../odata/quote';

/** The account whose SubscriptionToken and session cookie the request carries, or a 401. */
async function identify(app: App, ctx: RequestContext): Promise<number> {
  const token = headerOf(ctx, 'subscriptiontoken');
  const cookie = sessionCookieOf(ctx);
  if (!token || !cookie) throw unauthorized();
  const accountId = await app.sessions.authenticate(token, cookie);
  if (accountId === undefined) throw unauthorized();
  return accountId;
}

const TUNNELLED = new Set(['PUT', 'MERGE', 'PATCH', 'DELETE']);

/** The verb a request stands for: POST with X-HTTP-Method (or -Override) tunnels another one. */
function effectiveMethod(ctx: RequestContext): string {
  const method = ctx.req.method ?? 'GET';
  const tunnelled = headerOf(ctx, 'x-http-method') ?? headerOf(ctx, 'x-http-method-override');
  if (tunnelled === undefined) return method;
  const verb = tunnelled.trim().toUpperCase();
  if (method !== 'POST') throw badRequest(`X-HTTP-Method may only tunnel through POST, not ${method}.`);
  if (!TUNNELLED.has(verb)) throw badRequest(`X-HTTP-Method '${quote(tunnelled, 20)}' is not one of PUT, MERGE, PATCH, DELETE.`);
  return verb;
}

export function publicApiHandler(app: App): Handler {
  return async (ctx, rest) => {
    // Parse: everything that can be judged without knowing the caller.
    const versions = readVersionHeaders((name) => headerOf(ctx, name), app.config.responseVersion);
    const options = parseQueryOptions(ctx.query);
    const method = effectiveMethod(ctx);

    // Identify before resolving names, so that nothing about the service leaks to strangers.
    const accountId = await identify(app, ctx);

    // Resolve and answer.
    const path = parseResourcePath(app.model, rest);
    const serviceRoot = serviceRootOf(ctx.req, app.config.publicUrl, app.listenHost());
    if (path.kind === 'batch') {
      const batch = {
        method: ctx.req.method ?? '',
        header: (name: string) => headerOf(ctx, name),
        body: (limit: number) => readBody(ctx.req, limit),
        responder: new HttpResponder(ctx.res),
      };
      // The batch's own version headers stand in for those an inner request does not send.
      return handleBatch({ app, accountId, clientAddress: ctx.clientAddress, serviceRoot, requestId: ctx.id, log: ctx.log, header: batch.header }, batch, options);
    }
    const request: ODataRequest = {
      app,
      accountId,
      clientAddress: ctx.clientAddress,
      method,
      options,
      versions,
      serviceRoot,
      header: (name) => headerOf(ctx, name),
      body: () => readBody(ctx.req, app.config.limits.maxBodyBytes),
      responder: new HttpResponder(ctx.res, app.config.limits.sendTimeoutMs),
    };
    return serveRequest(request, path, rest);
  };
}
