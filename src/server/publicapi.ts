/**
 * The OData service at /publicapi/v1/api.svc. Each request goes through the stages of
 * design/architecture.md: parse (headers, path, options) -> identify (token and cookie) -> plan
 * and execute -> write. Resources of later stages are reached from here.
 */
import type { App } from './app';
import { headerOf, type Handler, type RequestContext } from './context';
import { badRequest, methodNotAllowed, unauthorized, ODataError } from '../odata/errors';
import { MEDIA, negotiate, readVersionHeaders } from '../odata/negotiate';
import { allowOnly, parseQueryOptions, type QueryOptions } from '../odata/uri/query-options';
import { parseResourcePath } from '../odata/uri/resource-path';
import { handleResource } from './resources';
import { handleOperation } from './operations';
import { HttpResponder } from './responder';
import { readBody } from './body';
import type { ODataRequest } from './odata-request';
import { renderServiceDocumentJson, renderServiceDocumentXml } from '../odata/service-document';
import { send } from './respond';
import { sessionCookieOf } from '../auth/endpoints';
import { serviceRootOf } from './service-root';

const READ_METHODS = ['GET', 'HEAD'] as const;

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
  if (!TUNNELLED.has(verb)) throw badRequest(`X-HTTP-Method '${tunnelled.slice(0, 20)}' is not one of PUT, MERGE, PATCH, DELETE.`);
  return verb;
}

function requireRead(method: string): void {
  if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed(method, READ_METHODS);
}

function serviceDocument(app: App, ctx: RequestContext, options: QueryOptions): void {
  allowOnly(options, ['$format'], 'the service document');
  const type = negotiate(headerOf(ctx, 'accept'), options.system.get('$format'), MEDIA.serviceDocument);
  const body =
    type === 'application/json'
      ? renderServiceDocumentJson(app.model)
      : renderServiceDocumentXml(app.model, serviceRootOf(ctx.req, app.config.publicUrl, app.listenHost()));
  send(ctx.res, { status: 200, contentType: `${type};charset=utf-8`, body });
}

function metadata(app: App, ctx: RequestContext, options: QueryOptions): void {
  allowOnly(options, ['$format'], '$metadata');
  // $metadata exists only as XML; an explicit $format asking for anything else is refused.
  if (options.system.has('$format')) negotiate(undefined, options.system.get('$format'), MEDIA.metadata);
  send(ctx.res, { status: 200, contentType: 'application/xml;charset=utf-8', body: app.metadataXml });
}

export function publicApiHandler(app: App): Handler {
  return async (ctx, rest) => {
    // Parse: everything that can be judged without knowing the caller.
    const versions = readVersionHeaders(headerOf(ctx, 'dataserviceversion'), headerOf(ctx, 'maxdataserviceversion'));
    const options = parseQueryOptions(ctx.query);
    const method = effectiveMethod(ctx);

    // Identify before resolving names, so that nothing about the service leaks to strangers.
    const accountId = await identify(app, ctx);

    // Resolve and answer.
    const path = parseResourcePath(app.model, rest);
    switch (path.kind) {
      case 'serviceDocument':
        requireRead(method);
        return serviceDocument(app, ctx, options);
      case 'metadata':
        requireRead(method);
        return metadata(app, ctx, options);
      case 'resource':
      case 'operation': {
        const request: ODataRequest = {
          app,
          accountId,
          method,
          options,
          versions,
          serviceRoot: serviceRootOf(ctx.req, app.config.publicUrl, app.listenHost()),
          header: (name) => headerOf(ctx, name),
          body: () => readBody(ctx.req, app.config.limits.maxBodyBytes),
          responder: new HttpResponder(ctx.res),
        };
        return path.kind === 'operation' ? handleOperation(request, path.operation) : handleResource(request, path, rest);
      }
      case 'batch':
        throw new ODataError(501, `'$batch' is part of the service, but this build does not serve it yet.`);
    }
  };
}
