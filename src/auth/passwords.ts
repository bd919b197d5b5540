/**
 * Password hashing: scrypt (memory-hard, so guessing on stolen hashes is slow and costly on GPUs)
 * with a random salt per account. The cost parameters travel inside the stored string, so they can
 * be raised later without invalidating existing hashes:
 *
 *   scrypt$<N>$<r>$<p>$<salt base64>$<hash base64>
 *
 * Hashing runs on libuv's thread pool (async scrypt), never on the event loop, and never inside
 * a store write transaction (it would hold the single writer for tens of milliseconds).
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** Current cost: 16 MiB of memory and ~35 ms per hash on a typical server core. */
const COST = 16384;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const SALT_BYTES = 16;
const HASH_BYTES = 32;

/**
 * A hash of a random password nobody knows, with the current parameters. Logins for an unknown
 * user name verify against it, so they cost one scrypt like a wrong password does and cannot be
 * told apart by timing. (A test checks that its parameters match hashPassword's.)
 */
export const DUMMY_PASSWORD_HASH =
  'scrypt$16384$8$1$7JmrwJ7nKda9I8zb3h7+/g==$D3uIl5Ch4goQYQhmCj4EPJT7AN7y4cPMrgSj3cz5xHM=';

function scryptAsync(password: string, salt: Buffer, length: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** scrypt needs 128·N·r bytes; allow that plus headroom, as Node's 32 MiB default is per call. */
function optionsFor(cost: number, blockSize: number, parallelism: number): ScryptOptions {
  return { N: cost, r: blockSize, p: parallelism, maxmem: 256 * cost * blockSize + 1024 * 1024 };
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scryptAsync(password, salt, HASH_BYTES, optionsFor(COST, BLOCK_SIZE, PARALLELISM));
  return ['scrypt', COST, BLOCK_SIZE, PARALLELISM, salt.toString('base64'), hash.toString('base64')].join('$');
}

interface ParsedHash {
  readonly cost: number;
  readonly blockSize: number;
  readonly parallelism: number;
  readonly salt: Buffer;
  readonly hash: Buffer;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Reads a stored hash, refusing anything outside sane bounds: a damaged or hostile row must not
 * make the service allocate gigabytes or spin for minutes.
 */
function parseHash(stored: string): ParsedHash | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  if (!/^\d{1,8}$/.test(n) || !/^\d{1,3}$/.test(r) || !/^\d{1,3}$/.test(p)) return undefined;
  const cost = Number(n);
  const blockSize = Number(r);
  const parallelism = Number(p);
  const powerOfTwo = (cost & (cost - 1)) === 0;
  if (!powerOfTwo || cost < 1024 || cost > 1048576) return undefined;
  if (blockSize < 1 || blockSize > 32 || parallelism < 1 || parallelism > 16) return undefined;
  if (!BASE64.test(salt) || !BASE64.test(hash)) return undefined;
  const saltBytes = Buffer.from(salt, 'base64');
  const hashBytes = Buffer.from(hash, 'base64');
  if (saltBytes.length < 8 || hashBytes.length < 16 || hashBytes.length > 64) return undefined;
  return { cost, blockSize, parallelism, salt: saltBytes, hash: hashBytes };
}

const DUMMY_PARSED: ParsedHash = (() => {
  const parsed = parseHash(DUMMY_PASSWORD_HASH);
  if (!parsed) throw new Error('DUMMY_PASSWORD_HASH is malformed');
  return parsed;
})();

/** True when password matches the stored hash; false for a mismatch or an unreadable hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  // An unreadable row still costs one hash, so it is not observable from outside.
  const target = parsed ?? DUMMY_PARSED;
  const candidate = await scryptAsync(
    password,
    target.salt,
    target.hash.length,
    optionsFor(target.cost, target.blockSize, target.parallelism),
  );
  // Constant-time comparison: the time taken says nothing about how many bytes matched.
  const equal = timingSafeEqual(candidate, target.hash);
  // scrypt keys HMAC with the password, and HMAC zero-pads short keys, so "pw" and "pw\0" hash
  // alike. Passwords cannot contain NUL (see accounts.ts), so a NUL is always a mismatch.
  return equal && parsed !== undefined && !password.includes('\u0000');
}

/** The parameters of a stored hash (for checks and for deciding when to re-hash). */
export function hashParameters(stored: string): { cost: number; blockSize: number; parallelism: number } | undefined {
  const parsed = parseHash(stored);
  return parsed && { cost: parsed.cost, blockSize: parsed.blockSize, parallelism: parsed.parallelism };
}
