/**
 * POST /$batch (odata-v2-reference.md §5.7, client-compatibility.md "$batch"): the request is
 * checked as a whole (method, no tunnelling, multipart/mixed, size, framing and its limits; any
 * problem there is one OData error for the whole batch), then its parts run one after the other
 * in document order, so a query part sees what an earlier changeset committed. The answer is
 * 202 with one response part per request part, written when every part is done.
 *
 * Content-Type decisions: a body that is not multipart/mixed (or has no Content-Type) is 415;
 * multipart/mixed with a missing or invalid boundary, or a body its boundary does not frame, is 400.
 */
import { type BatchResponsePart, parseBatchRequest, writeBatchResponse } from '../odata/batch';
import { echo } from '../odata/batch/echo';
import { parseContentType } from '../odata/batch/media-type';
import { badRequest, methodNotAllowed, ODataError } from '../odata/errors';
import { allowOnly, type QueryOptions } from '../odata/uri/query-options';
import { ResponseBudget } from './batch-budget';
import { runChangeset } from './batch-changeset';
import { runQueryPart } from './batch-query';
import type { BatchCaller } from './batch-request';
import { readBody } from './body';
import { headerOf, type RequestContext } from './context';
import { HttpResponder } from './responder';

/** Everything about the batch request itself that can be refused before its body is read. */
function checkBatchRequest(ctx: RequestContext, options: QueryOptions): string {
  if (headerOf(ctx, 'x-http-method') !== undefined || headerOf(ctx, 'x-http-method-override') !== undefined) {
    throw badRequest('X-HTTP-Method is not allowed on a $batch request: send it as POST.');
  }
  const method = ctx.req.method ?? '';
  if (method !== 'POST') throw methodNotAllowed(method, ['POST']);
  allowOnly(options, [], '$batch');
  const contentType = headerOf(ctx, 'content-type');
  if (contentType === undefined || contentType.trim() === '') {
    throw new ODataError(415, 'A $batch request needs Content-Type: multipart/mixed with a boundary parameter.');
  }
  const media = parseContentType(contentType);
  if (!media) throw badRequest(`The Content-Type '${echo(contentType)}' of the batch request is not a valid media type.`);
  if (media.type !== 'multipart/mixed') {
    throw new ODataError(415, `A $batch request must be multipart/mixed, not '${echo(media.type)}'.`);
  }
  return contentType;
}

export async function handleBatch(caller: BatchCaller, ctx: RequestContext, options: QueryOptions): Promise<void> {
  const contentType = checkBatchRequest(ctx, options);
  const { limits } = caller.app.config;
  const body = await readBody(ctx.req, limits.maxBatchBodyBytes);
  const parts = parseBatchRequest(contentType, body, { maxParts: limits.maxBatchParts, maxOperationsPerChangeset: limits.maxChangesetOperations });

  const budget = new ResponseBudget(limits.maxBatchResponseBytes);
  const answers: BatchResponsePart[] = [];
  for (const part of parts) {
    answers.push(part.kind === 'query' ? await runQueryPart(caller, part.request, budget) : await runChangeset(caller, part.requests));
  }
  caller.app.activity.batch(parts.length, parts.flatMap((part) => (part.kind === 'query' ? [] : [part.requests.length])));
  const written = writeBatchResponse(answers);
  new HttpResponder(ctx.res).send({ status: 202, contentType: written.contentType, body: written.body, version: 1 });
}
