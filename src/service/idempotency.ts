/**
 * Idempotency-Key on POST: a client that did not see the answer to a create (a dropped
 * connection, a crashed server) sends it again with the same key and gets the first answer,
 * and nothing is created twice. The key and that answer are stored in the same transaction as
 * the create itself, so either both exist or neither does. Keys belong to an account and are
 * forgotten after KEY_LIFETIME_MS.
 */
import { createHash } from 'node:crypto';
import { badRequest, ODataError } from '../odata/errors';
import { IdempotencyKeys } from '../store/idempotency-keys';
import type { SqlExecutor, ValueCodec } from '../store/store';
import type { Reply } from './responder';

export const KEY_LIFETIME_MS = 24 * 60 * 60_000;
const MAX_KEY_LENGTH = 255;
/** Visible ASCII: what clients put in keys (UUIDs, order numbers), and safe to echo. */
const KEY_SYNTAX = /^[\x21-\x7e]+$/;

/** The key of a request, checked; undefined when it sent none. */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = header.trim();
  if (key === '' || key.length > MAX_KEY_LENGTH || !KEY_SYNTAX.test(key)) {
    throw badRequest(`The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters.`);
  }
  return key;
}

/** What makes two requests "the same" for a key: the method, the path and the body. */
export function requestHash(method: string, path: string, body: Buffer): string {
  return createHash('sha256').update(method).update('\n').update(path).update('\n').update(body).digest('hex');
}

/**
 * Runs `create` once per key: the stored answer when the key was seen (409 when it came with
 * another request), else create's answer, stored with it. Call inside the create's transaction.
 */
export async function once(tx: SqlExecutor, codec: ValueCodec, accountId: number, key: string, hash: string, now: number, create: () => Promise<Reply>): Promise<Reply> {
  const keys = new IdempotencyKeys(codec);
  // Forgotten keys go first.
  await keys.forgetBefore(tx, accountId, now - KEY_LIFETIME_MS);
  const stored = await keys.find(tx, accountId, key);
  if (stored) {
    if (stored.requestHash !== hash) {
      throw new ODataError(409, 'The Idempotency-Key was already used for a different request; use a new key for a new request.');
    }
    const { 'Content-Type': contentType, ...headers } = stored.headers;
    return {
      status: stored.status,
      ...(contentType !== undefined ? { contentType } : {}),
      ...(stored.body !== null ? { body: stored.body } : {}),
      headers: { ...headers, 'Idempotent-Replayed': 'true' },
    };
  }
  const reply = await create();
  const headers: Record<string, string> = { ...(reply.headers ?? {}), ...(reply.contentType !== undefined ? { 'Content-Type': reply.contentType } : {}) };
  const body = reply.body === undefined ? null : typeof reply.body === 'string' ? reply.body : reply.body.toString('utf8');
  await keys.remember(tx, accountId, key, { requestHash: hash, status: reply.status, headers, body }, now);
  return reply;
}
