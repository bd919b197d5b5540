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
import { parseResourcePath, type ResourcePath } from '../odata/uri/resource-path';
import { HttpResponder } from './http-responder';
import { readBody } from './body';
import type { ODataRequest } from '../service/request';
import { sessionCookieOf } from './auth-endpoints';
import { serviceRootOf } from './service-root';
import { serveRequest } from '../service/dispatch';
import { handleBatch } from '../service/batch/batch';
import type { BatchCredentials } from '../service/batch/request';
import { weightOf, type Release, type RequestWeight } from '../service/admission';
import { quote } from '../odata/quote';
import { CredentialGuard, CredentialsRefused, type Claim } from '../auth/sessions';
import { isWellFormedSubscriptionToken, subscriptionTokenHash } from '../auth/credentials';
import { answerableError } from '../service/error-reply';
import type { QueryOptions } from '../odata/uri/query-options';
import type { VersionHeaders } from '../odata/negotiate';
import type { BodyStream, Reply, Responder, StreamHead } from '../service/responder';

/** The credentials the request presents, or a 401 when they are missing or cannot be live. */
function claimOf(app: App, ctx: RequestContext): Claim {
  const token = headerOf(ctx, 'subscriptiontoken');
  const cookie = sessionCookieOf(ctx);
  const claim = token && cookie ? app.sessions.claim(token, cookie) : undefined;
  if (claim === undefined) throw unauthorized();
  return claim;
}

/** The account whose SubscriptionToken and session cookie the request carries, or a 401. */
async function identify(app: App, claim: Claim): Promise<number> {
  const accountId = await app.sessions.authenticateClaim(claim);
  if (accountId === undefined) throw unauthorized();
  return accountId;
}

/**
 * The error to answer when a request admitted on its claim failed: a 401 unless its credentials
 * hold, so that nothing about the service (a name it lacks, a query it refuses) reaches a
 * stranger. Checked on its own when the failure came before the read's check did, unless the
 * database could not be used at all (a 503: busy, or a failover under way): the check would only
 * wait for it again, and a 503 tells a stranger nothing about the service.
 */
async function failureOnClaim(app: App, guard: CredentialGuard, error: unknown): Promise<unknown> {
  if (error instanceof CredentialsRefused) return unauthorized();
  if (answerableError(error)?.status === 503) return error;
  if (!guard.passed && (await app.sessions.authenticateClaim(guard.claim)) === undefined) return unauthorized();
  return error;
}

const TUNNELLED = new Set(['PUT', 'MERGE', 'PATCH', 'DELETE']);

/** The methods whose reads and writes of the entity sets carry the credential check themselves. */
const CHECKED_IN_TRANSACTION = new Set(['GET', 'HEAD', 'POST', 'PUT', 'MERGE', 'PATCH', 'DELETE']);

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

/**
 * Reports the request to the token's activity (auth/token-activity.ts) once it is answered: a
 * listener and, at the end, a few counter writes. A request refused before its claim was read
 * (a bad version header) still counts for the token it presented: its hash is computed then.
 */
function watchTokenUse(app: App, ctx: RequestContext): (tokenHash: string) => void {
  let known: string | undefined;
  ctx.res.once('finish', () => {
    const status = ctx.res.statusCode;
    let tokenHash = known;
    if (tokenHash === undefined && status >= 400) {
      const token = headerOf(ctx, 'subscriptiontoken');
      if (isWellFormedSubscriptionToken(token)) tokenHash = subscriptionTokenHash(token);
    }
    if (tokenHash === undefined) return;
    app.tokenActivity.record(tokenHash, { userAgent: headerOf(ctx, 'user-agent'), status, requestId: ctx.id, method: ctx.req.method ?? '', path: ctx.req.url ?? '' });
  });
  return (tokenHash) => {
    known = tokenHash;
  };
}

export function publicApiHandler(app: App): Handler {
  return async (ctx, rest) => {
    const usedToken = watchTokenUse(app, ctx);
    // Parse: everything that can be judged without knowing the caller.
    const versions = readVersionHeaders((name) => headerOf(ctx, name), app.config.responseVersion);
    const options = parseQueryOptions(ctx.query);
    const method = effectiveMethod(ctx);
    const claim = claimOf(app, ctx);
    usedToken(claim.tokenHash);
    const weight = weightOf(rest, options.system);

    // A request of the entity sets whose session this process has met before goes on its claim:
    // its credential check is the first statement of its own read or write (one transaction; on
    // PostgreSQL no round trip of its own). Only the entity sets: their reads and writes are the
    // only ones that run the check (resources.ts, write.ts). A $batch goes on its claim too: its
    // first changeset carries the check, and anything else in it runs after the check passed on
    // its own (batch.ts). Service operations authenticate first.
    let parsed: ResourcePath | undefined;
    if (claim.accountHint !== undefined && CHECKED_IN_TRANSACTION.has(method)) {
      const guard = app.sessions.guardFor(claim, claim.accountHint);
      // The account's share of this process: its request waits here, not in the database.
      const slot = admitted(app, ctx, guard.accountId, weight);
      const release = typeof slot === 'function' ? slot : await slot;
      try {
        parsed = parseResourcePath(app.model, rest);
        if (parsed.kind === 'resource') {
          const responder = new CheckedResponder(new HttpResponder(ctx.res, app.config.limits.sendTimeoutMs), guard);
          await serveRequest(requestOf(app, ctx, guard.accountId, method, options, versions, responder, guard, weight), parsed, rest);
          await app.sessions.settle(guard);
          return;
        }
        if (parsed.kind === 'batch') {
          const credentials = { guard, confirm: () => app.sessions.confirm(guard) };
          await serveBatch(app, ctx, guard.accountId, options, new CheckedResponder(new HttpResponder(ctx.res), guard), credentials);
          await app.sessions.settle(guard);
          return;
        }
      } catch (error) {
        throw await failureOnClaim(app, guard, error);
      } finally {
        release();
      }
    }

    // Identify before resolving names, so that nothing about the service leaks to strangers.
    const accountId = await identify(app, claim);
    const slot = admitted(app, ctx, accountId, weight);
    const release = typeof slot === 'function' ? slot : await slot;
    try {
      // Resolve and answer (the path as parsed above, when it was).
      const path = parsed ?? parseResourcePath(app.model, rest);
      if (path.kind === 'batch') return await serveBatch(app, ctx, accountId, options, new HttpResponder(ctx.res), undefined);
      const responder = new HttpResponder(ctx.res, app.config.limits.sendTimeoutMs);
      return await serveRequest(requestOf(app, ctx, accountId, method, options, versions, responder, undefined, weight), path, rest);
    } finally {
      release();
    }
  };
}

/**
 * One of the account's slots (service/admission.ts) for this request: given back when the request
 * is handled, or when its connection closes, whichever comes first, so that a client that went
 * away (or a request the server's timeouts cut off) never holds its account's share.
 */
function admitted(app: App, ctx: RequestContext, accountId: number, weight: RequestWeight): Release | Promise<Release> {
  const slot = app.admission.admit(accountId, weight);
  // A slot free at once (the usual case) is taken without waiting for a turn of the microtask queue.
  return typeof slot === 'function' ? givenBackOnClose(ctx, slot) : slot.then((release) => givenBackOnClose(ctx, release));
}

function givenBackOnClose(ctx: RequestContext, release: Release): Release {
  if (ctx.res.closed) release();
  else ctx.res.once('close', release);
  return release;
}

/** A $batch for `accountId`, claimed only when `credentials` are given (BatchCaller.credentials). */
function serveBatch(app: App, ctx: RequestContext, accountId: number, options: QueryOptions, responder: Responder, credentials: BatchCredentials | undefined): Promise<void> {
  const batch = {
    method: ctx.req.method ?? '',
    header: (name: string) => headerOf(ctx, name),
    body: (limit: number) => readBody(ctx.req, limit),
    responder,
  };
  const serviceRoot = serviceRootOf(ctx.req, app.config.publicUrl, app.listenHost());
  // The batch's own version headers stand in for those an inner request does not send.
  return handleBatch(
    { app, accountId, clientAddress: ctx.clientAddress, serviceRoot, requestId: ctx.id, log: ctx.log, header: batch.header, ...(credentials ? { credentials } : {}) },
    batch,
    options,
  );
}

function requestOf(
  app: App,
  ctx: RequestContext,
  accountId: number,
  method: string,
  options: QueryOptions,
  versions: VersionHeaders,
  responder: Responder,
  credentialGuard: CredentialGuard | undefined,
  weight: RequestWeight,
): ODataRequest {
  return {
    app,
    accountId,
    weight,
    ...(credentialGuard ? { credentialGuard } : {}),
    clientAddress: ctx.clientAddress,
    method,
    options,
    versions,
    serviceRoot: serviceRootOf(ctx.req, app.config.publicUrl, app.listenHost()),
    header: (name) => headerOf(ctx, name),
    body: () => readBody(ctx.req, app.config.limits.maxBodyBytes),
    responder,
  };
}

/**
 * A responder that lets nothing out before the request's credential check passed. Every read
 * runs a statement before it answers, and a statement's answer arrives only after the check's,
 * so this never refuses; it is here so that a read that some day answered first fails loudly
 * instead of answering a stranger.
 */
class CheckedResponder implements Responder {
  constructor(
    private readonly inner: Responder,
    private readonly guard: CredentialGuard,
  ) {}

  get started(): boolean {
    return this.inner.started;
  }

  send(reply: Reply): void {
    this.checked();
    this.inner.send(reply);
  }

  stream(head: StreamHead): BodyStream {
    this.checked();
    return this.inner.stream(head);
  }

  private checked(): void {
    if (!this.guard.passed) throw new Error('An answer was about to go out before the credentials were checked');
  }
}
