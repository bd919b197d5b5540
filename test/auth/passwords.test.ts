import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DUMMY_PASSWORD_HASH, hashParameters, hashPassword, verifyPassword } from '../../src/auth/passwords';

const ENCODED = /^scrypt\$16384\$8\$1\$([A-Za-z0-9+/]{22}==)\$([A-Za-z0-9+/]{43}=)$/;

test('hashPassword encodes scrypt parameters, a 16-byte salt and a 32-byte hash', async () => {
  const stored = await hashPassword('correct horse battery staple');
  const m = ENCODED.exec(stored);
  assert.ok(m, `unexpected encoding: ${stored}`);
  assert.equal(Buffer.from(m[1]!, 'base64').length, 16);
  assert.equal(Buffer.from(m[2]!, 'base64').length, 32);
  assert.ok(!stored.includes('correct horse'));
});

test('verifyPassword accepts the password and refuses near misses', async () => {
  const stored = await hashPassword('Secr3t-pass');
  assert.equal(await verifyPassword('Secr3t-pass', stored), true);
  for (const wrong of ['secr3t-pass', 'Secr3t-pas', 'Secr3t-pass ', '', 'Secr3t-passs', 'Secr3t-pass\u0000']) {
    assert.equal(await verifyPassword(wrong, stored), false, `accepted ${JSON.stringify(wrong)}`);
  }
});

test('two hashes of one password differ (random salt) and both verify', async () => {
  const a = await hashPassword('same password');
  const b = await hashPassword('same password');
  assert.notEqual(a, b);
  assert.notEqual(a.split('$')[4], b.split('$')[4], 'salts must differ');
  assert.equal(await verifyPassword('same password', a), true);
  assert.equal(await verifyPassword('same password', b), true);
});

test('non-ASCII passwords round-trip', async () => {
  const stored = await hashPassword('Pässwörd-密码-🔑');
  assert.equal(await verifyPassword('Pässwörd-密码-🔑', stored), true);
  assert.equal(await verifyPassword('Passwörd-密码-🔑', stored), false);
});

test('the dummy hash has the same parameters as a fresh hash and matches nothing obvious', async () => {
  const fresh = await hashPassword('whatever123');
  assert.deepEqual(hashParameters(DUMMY_PASSWORD_HASH), hashParameters(fresh));
  assert.deepEqual(hashParameters(DUMMY_PASSWORD_HASH), { cost: 16384, blockSize: 8, parallelism: 1 });
  assert.equal(DUMMY_PASSWORD_HASH.split('$')[5]!.length, fresh.split('$')[5]!.length);
  for (const guess of ['', 'password', 'dummy', '12345678']) assert.equal(await verifyPassword(guess, DUMMY_PASSWORD_HASH), false);
});

test('unreadable or hostile stored hashes are refused, without huge allocations', async () => {
  const good = await hashPassword('password1');
  const [, , , , salt, hash] = good.split('$');
  const bad = [
    '',
    'password1',
    `bcrypt$16384$8$1$${salt}$${hash}`,
    `scrypt$16384$8$1$${salt}`,
    `scrypt$1073741824$8$1$${salt}$${hash}`, // 2^30: would need 1 TiB
    `scrypt$16383$8$1$${salt}$${hash}`, // not a power of two
    `scrypt$16384$8$99$${salt}$${hash}`,
    `scrypt$16384$8$1$${salt}$!!!`,
    `scrypt$16384$8$1$$${hash}`,
  ];
  for (const stored of bad) assert.equal(await verifyPassword('password1', stored), false, stored);
  assert.equal(hashParameters('scrypt$1073741824$8$1$x$y'), undefined);
});

test('the dummy hash has the same scrypt cost as a real hash, so an unknown user costs one full verification', async () => {
  // Equal parameters mean equal work; the suite keeps timing measurements out of its assertions.
  const stored = await hashPassword('the real one');
  assert.deepEqual(hashParameters(DUMMY_PASSWORD_HASH), hashParameters(stored));
  assert.deepEqual(hashParameters(stored), { cost: 16384, blockSize: 8, parallelism: 1 });
  assert.equal(await verifyPassword('the real one', DUMMY_PASSWORD_HASH), false);
});
