/**
 * Bearer credentials: subscription tokens (long-lived, sent as the SubscriptionToken header) and
 * session values (the .ASPXAUTH cookie). Both are pure randomness, so a fast hash is enough to
 * store them: a leaked table gives nothing that can be presented, and guessing 128+ random bits
 * is hopeless whatever the hash speed. Only hashCredential(value) ever reaches the database.
 */
import { createHash, randomBytes } from 'node:crypto';

/**
 * A GUID-shaped token (8-4-4-4-12 lower-case hex) as clients expect, but with all 128 bits random:
 * crypto.randomUUID() fixes 6 bits for the version and variant, leaving 122.
 */
export function newSubscriptionToken(): string {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** 256 random bits, base64url (43 characters, cookie-safe without any encoding). */
export function newSessionValue(): string {
  return randomBytes(32).toString('base64url');
}

/** SHA-256, lower-case hex: the form in which tokens and session values are stored and looked up. */
export function hashCredential(value: string): string {
  let hash = recentHashes.get(value);
  if (hash === undefined) {
    hash = createHash('sha256').update(value, 'utf8').digest('hex');
    if (recentHashes.size >= RECENT_HASHES) recentHashes.clear();
    recentHashes.set(value, hash);
  }
  return hash;
}

/**
 * The hashes of credentials presented lately. Every request presents a token and a cookie, the
 * same ones request after request, and two SHA-256 digests cost about 4% of a GET by key. A hash
 * is a pure function of its input, so keeping it changes no answer: whether the credential is
 * live is still asked of the database on every request. Bounded: when full it starts over.
 */
const recentHashes = new Map<string, string>();
const RECENT_HASHES = 10_000;

/**
 * The hash under which a subscription token is stored and looked up, for every path that meets a
 * token (issuing, authenticating, revoking). A token is a GUID, and .NET clients compare GUIDs
 * case-insensitively: a token sent in upper or mixed case is the same token. So the token is
 * lower-cased before hashing; tokens are issued in lower case, so stored hashes are unchanged.
 */
export function subscriptionTokenHash(token: string): string {
  return hashCredential(token.toLowerCase());
}

/**
 * Shape checks, so that junk (empty, huge, non-ASCII, wrong alphabet) is refused without a
 * database round trip. A token's hex digits may come in either case (see subscriptionTokenHash);
 * braces, missing hyphens or blanks still make it another string than the token issued.
 */
const SUBSCRIPTION_TOKEN_SHAPE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const SESSION_VALUE_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Longest input even looked at; anything longer is refused before any regex work. */
const MAX_CREDENTIAL_LENGTH = 200;

export function isWellFormedSubscriptionToken(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_CREDENTIAL_LENGTH && SUBSCRIPTION_TOKEN_SHAPE.test(value);
}

export function isWellFormedSessionValue(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_CREDENTIAL_LENGTH && SESSION_VALUE_SHAPE.test(value);
}
