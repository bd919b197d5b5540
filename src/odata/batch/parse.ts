/**
 * A $batch request body (docs/protocol.md, "$batch") as typed
 * parts: top-level GET queries and changesets of writes. Pure framing: targets are not resolved
 * and nothing is executed here.
 *
 * Every problem is a 400 ODataError naming it; nothing else is thrown, whatever the bytes.
 */
import { badRequest } from '../errors';
import { quote } from '../quote';
import { readHeaderBlock } from './headers';
import { multipartBoundary, parseContentType } from './media-type';
import { checkContentLength } from './content-length';
import { type MultipartBodyPart, splitMultipart } from './multipart';
import { type InnerRequest, parseInnerRequest } from './request';

export interface BatchLimits {
  /** Most top-level parts (queries and changesets) in one batch. */
  readonly maxParts: number;
  /** Most operations in one changeset. */
  readonly maxOperationsPerChangeset: number;
}

/** The default limits: 100 parts per batch, 100 operations per changeset. */
export const DEFAULT_BATCH_LIMITS: BatchLimits = { maxParts: 100, maxOperationsPerChangeset: 100 };

export type BatchRequestPart =
  /** A top-level application/http part: always a GET. */
  | { readonly kind: 'query'; readonly request: InnerRequest }
  /** A nested multipart/mixed part: writes only, in document order. */
  | { readonly kind: 'changeset'; readonly requests: InnerRequest[] };

/** Content-Transfer-Encodings that leave the bytes as they are. */
const IDENTITY_ENCODINGS: ReadonlySet<string> = new Set(['binary', '8bit', '7bit']);

/**
 * Parses a batch request body. `contentType` is the request's Content-Type header (its boundary
 * frames the body); limits are checked while splitting.
 */
export function parseBatchRequest(
  contentType: string,
  body: Buffer,
  limits: BatchLimits = DEFAULT_BATCH_LIMITS,
): BatchRequestPart[] {
  const boundary = multipartBoundary(contentType, 'batch request');
  const rawParts = splitMultipart(body, boundary, 'batch request', {
    max: limits.maxParts,
    tooMany: () => badRequest(`The batch request has more than ${limits.maxParts} parts; the limit is ${limits.maxParts}.`),
  });
  return rawParts.map((raw, index) => parseTopLevelPart(raw, index + 1, limits));
}

type PartKind = { readonly kind: 'operation' } | { readonly kind: 'changeset'; readonly contentType: string };

function parseTopLevelPart({ bytes: raw, lineBreak }: MultipartBodyPart, partNumber: number, limits: BatchLimits): BatchRequestPart {
  const where = `Batch part ${partNumber}: `;
  const block = readHeaderBlock(raw, 0, where);
  const kind = partKind(block.headers, where);
  const content = raw.subarray(block.end);
  checkContentLength(block.headers, content, lineBreak, where, "the part's");
  if (kind.kind === 'operation') {
    const request = parseOperation(block.headers, block.terminated, content, lineBreak, where);
    if (request.method !== 'GET') {
      throw badRequest(`${where}a ${request.method} request must be inside a changeset; only GET may stand alone in a batch.`);
    }
    return { kind: 'query', request };
  }

  const what = `changeset in batch part ${partNumber}`;
  const boundary = multipartBoundary(kind.contentType, what);
  const rawOperations = splitMultipart(content, boundary, what, {
    max: limits.maxOperationsPerChangeset,
    tooMany: () =>
      badRequest(
        `${where}the changeset has more than ${limits.maxOperationsPerChangeset} operations; the limit is ${limits.maxOperationsPerChangeset}.`,
      ),
  });
  const requests: InnerRequest[] = [];
  const contentIds = new Set<string>();
  rawOperations.forEach(({ bytes: rawOperation, lineBreak: operationLineBreak }, index) => {
    const operationWhere = `Batch part ${partNumber}, changeset operation ${index + 1}: `;
    const operationBlock = readHeaderBlock(rawOperation, 0, operationWhere);
    if (partKind(operationBlock.headers, operationWhere).kind === 'changeset') {
      throw badRequest(`${operationWhere}a changeset may not contain another changeset.`);
    }
    const message = rawOperation.subarray(operationBlock.end);
    checkContentLength(operationBlock.headers, message, operationLineBreak, operationWhere, "the part's");
    const request = parseOperation(operationBlock.headers, operationBlock.terminated, message, operationLineBreak, operationWhere);
    if (request.method === 'GET') {
      throw badRequest(`${operationWhere}a GET request may not be inside a changeset; send it as a part of its own.`);
    }
    if (request.contentId !== undefined) {
      if (contentIds.has(request.contentId)) {
        throw badRequest(`${operationWhere}the Content-ID '${quote(request.contentId)}' is used twice in the changeset.`);
      }
      contentIds.add(request.contentId);
    }
    requests.push(request);
  });
  return { kind: 'changeset', requests };
}

/** What a part is by its Content-Type: an application/http operation or a multipart/mixed changeset. */
function partKind(headers: ReadonlyMap<string, string>, where: string): PartKind {
  const contentType = headers.get('content-type');
  if (contentType === undefined) {
    throw badRequest(`${where}the part has no Content-Type; expected application/http or multipart/mixed.`);
  }
  const media = parseContentType(contentType);
  if (media?.type === 'application/http') return { kind: 'operation' };
  if (media?.type === 'multipart/mixed') return { kind: 'changeset', contentType };
  throw badRequest(`${where}the part's Content-Type '${quote(contentType)}' is neither application/http nor multipart/mixed.`);
}

/** The request of an application/http part, with the Content-ID from either place. */
function parseOperation(
  partHeaders: ReadonlyMap<string, string>,
  partHeadersTerminated: boolean,
  message: Buffer,
  /** The line break after the part (see checkContentLength). */
  lineBreak: number,
  where: string,
): InnerRequest {
  const encoding = partHeaders.get('content-transfer-encoding');
  if (encoding !== undefined && !IDENTITY_ENCODINGS.has(encoding.toLowerCase())) {
    throw badRequest(`${where}the Content-Transfer-Encoding '${quote(encoding)}' is not supported; use binary.`);
  }
  if (!partHeadersTerminated) throw badRequest(`${where}the part's headers are not followed by an empty line and a request.`);
  const request = parseInnerRequest(message, where);
  // The request's body ends where the part ends, before the same line break.
  checkContentLength(request.headers, request.body, lineBreak, where, "the request's");
  const partContentId = partHeaders.get('content-id');
  if (partContentId === undefined || partContentId === '') return request;
  // Both places at once with different values would make `$n` references ambiguous.
  if (request.contentId !== undefined && request.contentId !== partContentId) {
    throw badRequest(
      `${where}the part's Content-ID '${quote(partContentId)}' differs from the request's Content-ID '${quote(request.contentId)}'.`,
    );
  }
  return { ...request, contentId: partContentId };
}
