/**
 * POST /$batch, as OData V2 defines it and the connectors send it (docs/protocol.md): the request is
 * checked as a whole (method, no tunnelling, multipart/mixed, size, framing and its limits; any
 * problem there is one OData error for the whole batch), then its parts run one after the other
 * in document order, so a query part sees what an earlier changeset committed. The answer is
 * 202 with one response part per request part, written when every part is done.
 *
 * Content-Type decisions: a body that is not multipart/mixed (or has no Content-Type) is 415;
 * multipart/mixed with a missing or invalid boundary, or a body its boundary does not frame, is 400.
 */
import { type BatchResponsePart, parseBatchRequest, writeBatchResponse } from '../../odata/batch';
import { quote } from '../../odata/quote';
import { parseContentType } from '../../odata/batch/media-type';
import { badRequest, ODataError } from '../../odata/errors';
import type { QueryOptions } from '../../odata/uri/query-options';
import { admitRequest } from '../../odata/uri/uri-kind';
import type { Model } from '../../model/types';
import { ResponseBudget } from './budget';
import { runChangeset } from './changeset';
import { runQueryPart } from './query';
import type { BatchCaller } from './request';
import type { Responder } from '../responder';

/** The $batch request as it arrived over HTTP: its own verb and headers, its body read on demand. */
export interface BatchHttpRequest {
  /** As sent, not tunnelled: a $batch is POST only. */
  readonly method: string;
  header(name: string): string | undefined;
  /** The body, refused above `limit` bytes. */
  body(limit: number): Promise<Buffer>;
  readonly responder: Responder;
}

/** Everything about the batch request itself that can be refused before its body is read. */
function checkBatchRequest(model: Model, request: BatchHttpRequest, options: QueryOptions): string {
  if (request.header('x-http-method') !== undefined || request.header('x-http-method-override') !== undefined) {
    throw badRequest('X-HTTP-Method is not allowed on a $batch request: send it as POST.');
  }
  admitRequest(model, { kind: 'batch' }, request.method, options);
  const contentType = request.header('content-type');
  if (contentType === undefined || contentType.trim() === '') {
    throw new ODataError(415, 'A $batch request needs Content-Type: multipart/mixed with a boundary parameter.');
  }
  const media = parseContentType(contentType);
  if (!media) throw badRequest(`The Content-Type '${quote(contentType)}' of the batch request is not a valid media type.`);
  if (media.type !== 'multipart/mixed') {
    throw new ODataError(415, `A $batch request must be multipart/mixed, not '${quote(media.type)}'.`);
  }
  return contentType;
}

export async function handleBatch(caller: BatchCaller, request: BatchHttpRequest, options: QueryOptions): Promise<void> {
  const contentType = checkBatchRequest(caller.app.model, request, options);
  const { limits } = caller.app.config;
  const body = await request.body(limits.maxBatchBodyBytes);
  const parts = parseBatchRequest(contentType, body, { maxParts: limits.maxBatchParts, maxOperationsPerChangeset: limits.maxChangesetOperations });

  const budget = new ResponseBudget(limits.maxBatchResponseBytes);
  const answers: BatchResponsePart[] = [];
  for (const [index, part] of parts.entries()) {
    // Only a first changeset may carry the credential check in its own transaction; whatever
    // runs later, or first but as a query, runs once the check passed.
    if (index > 0 || part.kind === 'query') await caller.credentials?.confirm();
    answers.push(part.kind === 'query' ? await runQueryPart(caller, part.request, budget) : await runChangeset(caller, part.requests));
  }
  // A changeset that failed before its transaction ran no check: nothing goes out before one did.
  await caller.credentials?.confirm();
  caller.app.activity.batch(parts.length, parts.flatMap((part) => (part.kind === 'query' ? [] : [part.requests.length])));
  const written = writeBatchResponse(answers);
  request.responder.send({ status: 202, contentType: written.contentType, body: written.body, version: 1 });
}
