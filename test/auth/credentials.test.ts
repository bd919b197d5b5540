import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  hashCredential,
  isWellFormedSessionValue,
  isWellFormedSubscriptionToken,
  newSessionValue,
  newSubscriptionToken,
  subscriptionTokenHash,
} from '../../src/auth/credentials';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('subscription tokens are lower-case GUIDs and 1,000 of them are distinct', () => {
  const tokens = Array.from({ length: 1000 }, () => newSubscriptionToken());
  for (const t of tokens) assert.match(t, GUID);
  assert.equal(new Set(tokens).size, 1000);
});

test('subscription tokens carry 128 random bits (no fixed UUID version or variant nibble)', () => {
  const tokens = Array.from({ length: 1000 }, () => newSubscriptionToken());
  // randomUUID() always has '4' at index 14 and one of 8,9,a,b at index 19.
  const versionNibbles = new Set(tokens.map((t) => t[14]));
  const variantNibbles = new Set(tokens.map((t) => t[19]));
  assert.equal(versionNibbles.size, 16, `version nibbles seen: ${[...versionNibbles].join('')}`);
  assert.equal(variantNibbles.size, 16, `variant nibbles seen: ${[...variantNibbles].join('')}`);
});

test('session values are 256-bit base64url and 1,000 of them are distinct', () => {
  const values = Array.from({ length: 1000 }, () => newSessionValue());
  for (const v of values) {
    assert.match(v, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(v, 'base64url').length, 32);
  }
  assert.equal(new Set(values).size, 1000);
});

test('hashCredential is SHA-256 in lower-case hex', () => {
  assert.equal(hashCredential('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  const token = newSubscriptionToken();
  assert.match(hashCredential(token), /^[0-9a-f]{64}$/);
  assert.notEqual(hashCredential(token), hashCredential(token.toUpperCase()));
});

test('a subscription token is hashed in one case: upper- and mixed-case forms are the same token, as .NET compares GUIDs', () => {
  const token = newSubscriptionToken();
  const mixed = [...token].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
  assert.equal(subscriptionTokenHash(token), hashCredential(token), 'issued tokens keep the hash they always had');
  assert.equal(subscriptionTokenHash(token.toUpperCase()), subscriptionTokenHash(token));
  assert.equal(subscriptionTokenHash(mixed), subscriptionTokenHash(token));
  assert.notEqual(subscriptionTokenHash(newSubscriptionToken()), subscriptionTokenHash(token));
});

test('shape checks accept issued values in any case and refuse near misses', () => {
  const token = '0123abcd-4567-89ef-0123-456789abcdef';
  assert.equal(isWellFormedSubscriptionToken(token), true);
  assert.equal(isWellFormedSubscriptionToken(token.toUpperCase()), true);
  assert.equal(isWellFormedSubscriptionToken('0123ABCD-4567-89eF-0123-456789abcdef'), true);
  assert.equal(isWellFormedSubscriptionToken(newSubscriptionToken()), true);
  for (const bad of ['', `{${token}}`, `{${token.toUpperCase()}}`, token.replace('a', 'g'), token.toUpperCase().replace('A', 'G'), token.replace(/-/g, ''), token + '0', token.slice(1), ` ${token}`, 'x'.repeat(10_000)]) {
    assert.equal(isWellFormedSubscriptionToken(bad), false, bad.slice(0, 50));
  }
  assert.equal(isWellFormedSubscriptionToken(undefined), false);
  assert.equal(isWellFormedSubscriptionToken(42), false);

  const cookie = newSessionValue();
  assert.equal(isWellFormedSessionValue(cookie), true);
  for (const bad of ['', cookie.slice(1), cookie + 'A', cookie.slice(0, 42) + '=', cookie.slice(0, 42) + '+', cookie.slice(0, 42) + 'é', 'A'.repeat(201)]) {
    assert.equal(isWellFormedSessionValue(bad), false, bad.slice(0, 50));
  }
  assert.equal(isWellFormedSessionValue(null), false);
});
