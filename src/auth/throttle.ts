/**
 * Failed-login throttling, per user name and per client address, kept in the login_throttle
 * table so that every server process counts the same failures.
 *
 * Each scope allows `limit` failures per window. The attempt that reaches the limit starts a
 * block (firstBlockMs); after a block ends, each further failure in the same run doubles the
 * block (capped at maxBlockMs). A scope forgets its failures one window after both its window
 * started and its last block ended. While blocked, a login is answered "throttled" before the
 * password is looked at, so blocked guessing costs no scrypt and learns nothing.
 *
 * Attempts are counted BEFORE the password is verified (a reservation), not after: otherwise a
 * burst of simultaneous guesses would all pass the "not blocked" check before the first failure
 * was written. A successful login gives its reservation back: the user scope is cleared, the
 * address scope is decremented (so successes never count, and never erase other failures).
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { Clock } from '../clock';
import type { SqlExecutor, Store } from '../store/store';
import {
  countThrottleAttempt,
  deleteStaleThrottleRows,
  deleteThrottleRow,
  readThrottleRows,
  refundThrottleAttempt,
  setThrottleBlock,
} from './directory';
import { inBatches, PRUNE_BATCH_SIZE } from '../store/batches';

export interface ThrottleOptions {
  /** Length of a counting window. */
  readonly windowMs: number;
  /** Failures per window for one user name (whether or not the account exists). */
  readonly maxFailuresPerUser: number;
  /** Failures per window from one client address (stops spraying many user names). */
  readonly maxFailuresPerAddress: number;
  /** First block, doubled for each later failure in the same run. */
  readonly firstBlockMs: number;
  readonly maxBlockMs: number;
}

export const DEFAULT_THROTTLE_OPTIONS: ThrottleOptions = {
  windowMs: 15 * 60_000,
  maxFailuresPerUser: 5,
  maxFailuresPerAddress: 20,
  firstBlockMs: 30_000,
  maxBlockMs: 15 * 60_000,
};

export interface ThrottleScope {
  readonly key: string;
  readonly limit: number;
  /** A successful login deletes the scope (user) rather than just giving its attempt back (address). */
  readonly clearOnSuccess: boolean;
}

/** Attempts counted for one login, to be given back if it succeeds. */
export interface AttemptReservation {
  readonly entries: readonly { readonly scope: ThrottleScope; readonly blockSet: number | null }[];
}

export type ReserveResult =
  | { readonly ok: true; readonly reservation: AttemptReservation }
  | { readonly ok: false; readonly retryAfterSeconds: number };

export function userScopeKey(userName: string): string {
  return `user:${userName}`;
}

/**
 * One key per client: IPv4 as is (also when IPv4-mapped, `::ffff:1.2.3.4`), IPv6 by its /64,
 * because one client usually holds a whole /64 and could otherwise rotate addresses freely.
 */
export function addressScopeKey(address: string): string {
  const plain = address.trim().replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain);
  if (mapped && isIPv4(mapped[1]!)) return `addr:${mapped[1]}`;
  if (isIPv4(plain)) return `addr:${plain}`;
  if (isIPv6(plain)) return `addr:${ipv6Prefix64(plain)}/64`;
  // Not an address (should not happen with socket addresses): keep it, bounded in size.
  return `addr:${plain.slice(0, 100)}`;
}

/** The first four groups of an IPv6 address, each without leading zeros. */
function ipv6Prefix64(address: string): string {
  let text = address.toLowerCase();
  // An embedded IPv4 tail (e.g. 64:ff9b::192.0.2.1) counts as two groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
  return groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':');
}

/** Raised inside the reservation transaction to roll it back when a scope is blocked. */
class ScopeBlocked extends Error {
  constructor(readonly blockedUntil: number) {
    super('login scope blocked');
  }
}

export class LoginThrottle {
  readonly options: ThrottleOptions;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    options: Partial<ThrottleOptions> = {},
  ) {
    this.options = { ...DEFAULT_THROTTLE_OPTIONS, ...options };
  }

  /** The scopes a login counts against; no user scope when the name cannot be an account. */
  scopesFor(userName: string | undefined, clientAddress: string): ThrottleScope[] {
    const scopes: ThrottleScope[] = [];
    if (userName !== undefined) {
      scopes.push({ key: userScopeKey(userName), limit: this.options.maxFailuresPerUser, clearOnSuccess: true });
    }
    scopes.push({ key: addressScopeKey(clientAddress), limit: this.options.maxFailuresPerAddress, clearOnSuccess: false });
    return scopes;
  }

  /** Seconds until the longest current block ends, or undefined if none is blocked (read only). */
  async retryAfter(scopes: readonly ThrottleScope[]): Promise<number | undefined> {
    const now = this.clock.now();
    const rows = await readThrottleRows(
      this.store.directory,
      scopes.map((s) => s.key),
    );
    let until = 0;
    for (const row of rows) if (row.blockedUntil !== null && row.blockedUntil > until) until = row.blockedUntil;
    return until > now ? this.secondsUntil(until, now) : undefined;
  }

  /**
   * Counts one attempt against every scope, atomically: if any scope is blocked, nothing is
   * counted and the answer is the time to wait.
   */
  async reserve(scopes: readonly ThrottleScope[]): Promise<ReserveResult> {
    const now = this.clock.now();
    const staleBefore = now - this.options.windowMs;
    try {
      const entries = await this.store.writeDirectory(async (tx) => {
        const counted: { scope: ThrottleScope; blockSet: number | null }[] = [];
        for (const scope of scopes) {
          const row = await countThrottleAttempt(tx, scope.key, now, staleBefore);
          if (row.blockedUntil !== null && row.blockedUntil > now) throw new ScopeBlocked(row.blockedUntil);
          let blockSet: number | null = null;
          if (row.failures >= scope.limit) {
            blockSet = now + this.blockMs(row.failures - scope.limit);
            await setThrottleBlock(tx, scope.key, blockSet);
          }
          counted.push({ scope, blockSet });
        }
        return counted;
      });
      return { ok: true, reservation: { entries } };
    } catch (error) {
      if (error instanceof ScopeBlocked) return { ok: false, retryAfterSeconds: this.secondsUntil(error.blockedUntil, now) };
      throw error;
    }
  }

  /** Gives a successful login's reservation back, inside the caller's transaction. */
  async settleSuccess(tx: SqlExecutor, reservation: AttemptReservation): Promise<void> {
    const now = this.clock.now();
    for (const { scope, blockSet } of reservation.entries) {
      if (scope.clearOnSuccess) await deleteThrottleRow(tx, scope.key);
      else await refundThrottleAttempt(tx, scope.key, blockSet, now);
    }
  }

  /** Deletes rows that have been quiet for a whole window (housekeeping), `batchSize` per transaction. */
  async prune(batchSize = PRUNE_BATCH_SIZE, now = this.clock.now()): Promise<number> {
    const staleBefore = now - this.options.windowMs;
    return inBatches(batchSize, (limit) => this.store.writeDirectory((tx) => deleteStaleThrottleRows(tx, staleBefore, limit)));
  }

  /** firstBlockMs · 2^n, capped (n = failures beyond the limit). */
  private blockMs(beyondLimit: number): number {
    return Math.min(this.options.maxBlockMs, this.options.firstBlockMs * 2 ** Math.min(beyondLimit, 30));
  }

  private secondsUntil(until: number, now: number): number {
    return Math.max(1, Math.ceil((until - now) / 1000));
  }
}
