/**
 * Failed-login throttling, kept in the login_throttle table so that every server process counts
 * the same failures. Three scopes count each attempt:
 * - the (user name, client address) pair: `maxFailuresPerUserAndAddress` per window. This is
 *   what slows guessing one seller's password from one client;
 * - the client address: `maxFailuresPerAddress` per window, whatever the user names (stops one
 *   client spraying many names);
 * - the user name, from every address together: `maxFailuresPerUserName` per window. Beyond it
 *   the name is "under attack", and only addresses with no failures of their own in their
 *   current window may try it. An outsider guessing from elsewhere therefore never refuses the
 *   seller's own, clean address (OWASP: a lockout keyed by user name alone lets anyone lock a
 *   seller out), while each of a guesser's many addresses is held to one guess per window.
 *
 * Each scope allows `limit` failures per window. The attempt that reaches the limit starts a
 * block (firstBlockMs); after a block ends, each further failure in the same run doubles the
 * block (capped at maxBlockMs). A scope forgets its failures one window after both its window
 * started and its last block ended. While refused, a login is answered "throttled" before the
 * password is looked at, so blocked guessing costs no scrypt, counts nothing and learns nothing.
 *
 * Attempts are counted BEFORE the password is verified (a reservation), not after: otherwise a
 * burst of simultaneous guesses would all pass the "not blocked" check before the first failure
 * was written. A successful login gives its reservation back: the pair scope is cleared (the
 * seller's own typos are forgotten), the address and user-name scopes are decremented (so
 * successes never count, and never erase failures someone else made).
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
  type ThrottleRow,
} from './directory';
import { inBatches, PRUNE_BATCH_SIZE } from '../store/batches';

export interface ThrottleOptions {
  /** Length of a counting window. */
  readonly windowMs: number;
  /** Failures per window for one user name (whether or not the account exists) from one client address. */
  readonly maxFailuresPerUserAndAddress: number;
  /** Failures per window from one client address, over all user names (stops spraying many names). */
  readonly maxFailuresPerAddress: number;
  /**
   * Failures per window for one user name from all addresses together. Beyond it, an address
   * that has failures of its own in its window is refused that name; a clean address never is.
   */
  readonly maxFailuresPerUserName: number;
  /** First block, doubled for each later failure in the same run. */
  readonly firstBlockMs: number;
  readonly maxBlockMs: number;
}

export const DEFAULT_THROTTLE_OPTIONS: ThrottleOptions = {
  windowMs: 15 * 60_000,
  maxFailuresPerUserAndAddress: 5,
  maxFailuresPerAddress: 20,
  maxFailuresPerUserName: 10,
  firstBlockMs: 30_000,
  maxBlockMs: 15 * 60_000,
};

/**
 * What a scope counts. A blocked `pair` or `address` scope refuses every attempt; a blocked
 * `userName` scope refuses only attempts from an address that has failures of its own.
 */
export type ScopeKind = 'pair' | 'address' | 'userName';

export interface ThrottleScope {
  readonly kind: ScopeKind;
  readonly key: string;
  readonly limit: number;
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
 * The (user name, address) key: the user name's key, a tab, then the address's key. A user name
 * holds no control character (accounts.ts), so the tab ends the name unambiguously and every
 * pair row of a name starts with `pairScopePrefix(name)` (erasing an account finds them so).
 */
export function pairScopeKey(userName: string, address: string): string {
  return `${pairScopePrefix(userName)}${addressScopeKey(address)}`;
}

export function pairScopePrefix(userName: string): string {
  return `${userScopeKey(userName)}\t`;
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

/** Raised inside the reservation transaction to roll it back when the login is refused. */
class ScopeBlocked extends Error {
  constructor(readonly until: number) {
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

  /**
   * The scopes a login counts against, the address first (whether it has failures of its own
   * decides whether the user name's scope applies); no name scopes when the name cannot be an
   * account.
   */
  scopesFor(userName: string | undefined, clientAddress: string): ThrottleScope[] {
    const { maxFailuresPerAddress, maxFailuresPerUserAndAddress, maxFailuresPerUserName } = this.options;
    const scopes: ThrottleScope[] = [{ kind: 'address', key: addressScopeKey(clientAddress), limit: maxFailuresPerAddress }];
    if (userName !== undefined) {
      scopes.push({ kind: 'pair', key: pairScopeKey(userName, clientAddress), limit: maxFailuresPerUserAndAddress });
      scopes.push({ kind: 'userName', key: userScopeKey(userName), limit: maxFailuresPerUserName });
    }
    return scopes;
  }

  /** Seconds until the login could be tried, or undefined if nothing refuses it now (read only). */
  async retryAfter(scopes: readonly ThrottleScope[]): Promise<number | undefined> {
    const now = this.clock.now();
    const rows = new Map(
      (await readThrottleRows(this.store.directory, scopes.map((s) => s.key))).map((row) => [row.scopeKey, row] as const),
    );
    const address = scopes.find((s) => s.kind === 'address');
    const addressRow = address && rows.get(address.key);
    const dirty = addressRow !== undefined && addressRow.failures > 0 && !this.isStale(addressRow, now);
    let until = 0;
    for (const scope of scopes) {
      const row = rows.get(scope.key);
      if (row?.blockedUntil == null || row.blockedUntil <= now) continue;
      if (scope.kind !== 'userName') until = Math.max(until, row.blockedUntil);
      else if (dirty) until = Math.max(until, Math.min(row.blockedUntil, this.cleanAt(addressRow)));
    }
    return until > now ? this.secondsUntil(until, now) : undefined;
  }

  /**
   * Counts one attempt against every scope, atomically: if the login is refused, nothing is
   * counted and the answer is the time to wait. A blocked user-name scope lets a clean address
   * through without counting the attempt there (the address and pair scopes still count it).
   */
  async reserve(scopes: readonly ThrottleScope[]): Promise<ReserveResult> {
    const now = this.clock.now();
    const staleBefore = now - this.options.windowMs;
    try {
      const entries = await this.store.writeDirectory(async (tx) => {
        const counted: { scope: ThrottleScope; blockSet: number | null }[] = [];
        // The address's failures before this attempt, and when they would be forgotten.
        let addressFailures = 0;
        let addressCleanAt = now;
        for (const scope of scopes) {
          const row = await countThrottleAttempt(tx, scope.key, now, staleBefore);
          if (row.blockedUntil !== null && row.blockedUntil > now) {
            if (scope.kind !== 'userName') throw new ScopeBlocked(row.blockedUntil);
            if (addressFailures > 0) throw new ScopeBlocked(Math.min(row.blockedUntil, addressCleanAt));
            continue; // a clean address: the name's failures elsewhere do not hold it back
          }
          if (scope.kind === 'address') {
            addressFailures = row.failures - 1;
            addressCleanAt = this.cleanAt(row);
          }
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
      if (error instanceof ScopeBlocked) return { ok: false, retryAfterSeconds: this.secondsUntil(error.until, now) };
      throw error;
    }
  }

  /** Gives a successful login's reservation back, inside the caller's transaction. */
  async settleSuccess(tx: SqlExecutor, reservation: AttemptReservation): Promise<void> {
    const now = this.clock.now();
    for (const { scope, blockSet } of reservation.entries) {
      if (scope.kind === 'pair') await deleteThrottleRow(tx, scope.key);
      else await refundThrottleAttempt(tx, scope.key, blockSet, now);
    }
  }

  /** Whether a row's failures are forgotten at `now` (its window and any block a window old). */
  private isStale(row: Pick<ThrottleRow, 'windowStartedAt' | 'blockedUntil'>, now: number): boolean {
    return this.cleanAt(row) <= now;
  }

  /** When a row's failures will be forgotten if nothing more is counted. */
  private cleanAt(row: Pick<ThrottleRow, 'windowStartedAt' | 'blockedUntil'>): number {
    return Math.max(row.windowStartedAt, row.blockedUntil ?? 0) + this.options.windowMs;
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
