/**
 * Signatures after the Standard Webhooks specification (standardwebhooks.com), the contract
 * Svix, Stripe-style and many platforms' libraries verify: each delivery carries
 *   webhook-id:        the event id (the same on every attempt: the receiver's deduplication key)
 *   webhook-timestamp: seconds since the epoch when this attempt was signed
 *   webhook-signature: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">`, space-separated
 *                      when more than one secret signs (a rotation's overlap)
 * The secret is `whsec_` followed by the base64 of 32 random bytes; the HMAC key is those bytes.
 * Signing the id and timestamp with the body lets a receiver refuse a replayed request by its
 * timestamp without trusting an unsigned header.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64>` signature of a delivery. */
export function signature(secret: string, eventId: string, timestampSeconds: number, body: string | Buffer): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${eventId}.${timestampSeconds}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** The headers that sign one attempt: every secret in `secrets` signs it. */
export function signedHeaders(secrets: readonly string[], eventId: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signature(s, eventId, timestampSeconds, body)).join(' '),
  };
}

/**
 * What a receiver does (the README's example does the same): true when one of the header's
 * signatures is the body's under `secret` and the timestamp is within `toleranceSeconds` of now.
 */
export function verify(secret: string, headers: { id: string; timestamp: string; signature: string }, body: string | Buffer, nowSeconds: number, toleranceSeconds = 300): boolean {
  const timestamp = Number(headers.timestamp);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signature(secret, headers.id, timestamp, body));
  return headers.signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
