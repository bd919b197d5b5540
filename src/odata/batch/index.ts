/**
 * $batch wire framing: the multipart/mixed request parsed into typed parts, inner targets
 * resolved against the service path, and the multipart/mixed response written. Executing the
 * inner requests is the caller's job.
 */
export { type BatchLimits, type BatchRequestPart, DEFAULT_BATCH_LIMITS, parseBatchRequest } from './parse';
export { BATCH_METHODS, type InnerRequest } from './request';
export { type ResolvedTarget, resolveTarget } from './target';
export {
  type BatchResponsePart,
  type InnerResponse,
  type WriteBatchOptions,
  type WrittenBatch,
  writeBatchResponse,
} from './response';
