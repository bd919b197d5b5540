/**
 * One request inside a $batch as the resource handlers see it: an ODataRequest built from the
 * inner request's own line and headers (method, query options, Accept, Content-Type and the
 * version headers), acting for the batch's caller. And the way back: a handler's answer, or any
 * error, as one application/http response part.
 */
import type { Logger } from 'pino';
import type { App } from '../app';
import type { InnerRequest, InnerResponse } from '../../odata/batch';
import { badRequest, ODataError, type ErrorFormat } from '../../odata/errors';
import { errorFormatOf, readVersionHeaders, type HeaderLookup, type VersionHeaders } from '../../odata/negotiate';
import { parseQueryOptions } from '../../odata/uri/query-options';
import { tooLarge, type ODataRequest } from '../request';
import type { ReadGuard } from '../../store/store';
import { BufferedResponder, type Responder } from '../responder';
import { answerableError, errorReply } from '../error-reply';

/** Who a batch acts for and what every inner request shares with it. */
export interface BatchCaller {
  readonly app: App;
  readonly accountId: number;
  /** Where the batch came from (the audit trail names it). */
  readonly clientAddress: string;
  /** Absolute, as for the batch request itself: the base of every URI in the answers. */
  readonly serviceRoot: string;
  /** The batch request's id: a fault in any part is logged and answered with it. */
  readonly requestId: string;
  readonly log: Logger;
  /** A header of the batch request itself, by lower-case name. */
  readonly header: HeaderLookup;
  /**
   * When set, accountId is only claimed (as ODataRequest.credentialGuard): the batch's first
   * changeset carries `guard` as the first statement of its own transaction when it can, and
   * `confirm()` runs the check on its own, unless it passed, before any other part and before
   * the answer goes out.
   */
  readonly credentials?: BatchCredentials;
}

export interface BatchCredentials {
  readonly guard: ReadGuard & { readonly passed: boolean };
  confirm(): Promise<void>;
}

const VERSION_HEADERS = new Set(['dataserviceversion', 'maxdataserviceversion', 'mindataserviceversion']);

/**
 * The version headers of an inner request: each one it does not send is the batch request's,
 * as WCF Data Services reads them, so a client that sets MinDataServiceVersion once on the batch
 * gets 2.0 shapes in every part.
 */
function innerVersionHeaders(caller: BatchCaller, inner: InnerRequest): VersionHeaders {
  const header = (name: string) => inner.headers.get(name) ?? (VERSION_HEADERS.has(name) ? caller.header(name) : undefined);
  return readVersionHeaders(header, caller.app.config.responseVersion);
}

/** What Node would let through in a header value; the response writer refuses anything else. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The Content-ID to echo in the response part, refused (400) when it holds a character a header
 * cannot carry (the framing keeps a CR inside a line, for one): echoing it would break the answer.
 */
export function echoableContentId(inner: InnerRequest): string | undefined {
  const { contentId } = inner;
  if (contentId !== undefined && !HEADER_VALUE.test(contentId)) {
    throw badRequest('The Content-ID holds a control character; a Content-ID must be printable text.');
  }
  return contentId;
}

/**
 * The ODataRequest of an inner request whose target was resolved to `query` (the part after `?`).
 * A 400 (or 414) when its query, version headers or length are not acceptable: the same checks
 * as for a request sent on its own. Inner requests carry no credentials and need none: they act
 * for the batch's caller. X-HTTP-Method was refused by the framing already.
 */
export function innerODataRequest(caller: BatchCaller, inner: InnerRequest, query: string, responder: Responder): ODataRequest {
  const { limits } = caller.app.config;
  if (Buffer.byteLength(inner.target) > limits.maxUrlBytes) {
    throw new ODataError(414, `The request URL is longer than the limit of ${limits.maxUrlBytes} bytes.`);
  }
  const versions = innerVersionHeaders(caller, inner);
  const options = parseQueryOptions(query);
  return {
    app: caller.app,
    accountId: caller.accountId,
    clientAddress: caller.clientAddress,
    method: inner.method,
    options,
    versions,
    serviceRoot: caller.serviceRoot,
    header: (name) => inner.headers.get(name),
    // The same limit as a request on its own: a batch is no way around it.
    body: async () => {
      if (inner.body.length > limits.maxBodyBytes) throw tooLarge(limits.maxBodyBytes);
      return inner.body;
    },
    responder,
  };
}

/** The format an inner request's error is written in: its $format, else its Accept; XML when either is unreadable. */
function errorFormatOfInner(inner: InnerRequest): ErrorFormat {
  const questionMark = inner.target.indexOf('?');
  const format = questionMark === -1 ? undefined : (new URLSearchParams(inner.target.slice(questionMark + 1)).get('$format') ?? undefined);
  try {
    return errorFormatOf(inner.headers.get('accept'), format);
  } catch {
    return 'xml';
  }
}

/** A finished answer collected by a BufferedResponder, as a response part. */
export function responseOf(responder: BufferedResponder, contentId: string | undefined): InnerResponse {
  // A handler that returns without answering is a fault of ours, not something to send.
  if (!responder.finished) throw new Error('A batch operation ended without an answer.');
  return {
    status: responder.status,
    headers: Object.entries(responder.headers),
    body: responder.body,
    ...(contentId !== undefined ? { contentId } : {}),
  };
}

/**
 * Any error of an inner request as its response part, in that request's format. A fault (not an
 * ODataError) is logged and answered as a 500 naming only the batch's request id.
 */
export function errorResponseOf(caller: BatchCaller, inner: InnerRequest, error: unknown): InnerResponse {
  if (!answerableError(error)) caller.log.error({ reqId: caller.requestId, err: error, target: inner.target.slice(0, 200) }, 'batch operation failed');
  const responder = new BufferedResponder();
  responder.send(errorReply(error, errorFormatOfInner(inner), caller.requestId));
  let contentId: string | undefined;
  try {
    contentId = echoableContentId(inner);
  } catch {
    // Not echoed: it could not be written.
  }
  return responseOf(responder, contentId);
}
