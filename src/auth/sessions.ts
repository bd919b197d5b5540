/**
 * Login sessions (the .ASPXAUTH cookie) and request authentication. Sessions live in the
 * database, so every server process honours every session; the cookie carries only a random
 * value whose hash is the row's key.
 *
 * A session ends 20 minutes after its last use (sliding) and at most 12 hours after login.
 * last_seen_at is written at most once per touchIntervalMs, so a stream of reads does not turn
 * into a stream of writes; the idle limit is therefore exact to within that interval (a session
 * may end up to touchIntervalMs early, never late).
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock';
import type { ReadGuard, SqlValue, Store } from '../store/store';
import { PASSWORD_MAX_LENGTH, userNameProblem } from './accounts';
import { hashCredential, isWellFormedSessionValue, isWellFormedSubscriptionToken, newSessionValue, subscriptionTokenHash } from './credentials';
import {
  deleteExpiredSessions,
  deleteSession,
  findAccountByUserName,
  findLiveSession,
  findLiveSessionWithToken,
  insertSession,
  liveSessionOf,
  liveSessionOfAccountStatement,
  recordLogin,
  touchSession,
  type LiveSession,
} from './directory';
import { DUMMY_PASSWORD_HASH, verifyPassword } from './passwords';
import { LoginThrottle, type ThrottleOptions } from './throttle';
import { inBatches, PRUNE_BATCH_SIZE } from '../store/batches';

export interface SessionOptions {
  readonly idleTimeoutMs: number;
  readonly absoluteTimeoutMs: number;
  /** last_seen_at is only rewritten when older than this. */
  readonly touchIntervalMs: number;
  readonly throttle?: Partial<ThrottleOptions>;
}

export const DEFAULT_SESSION_OPTIONS: SessionOptions = {
  idleTimeoutMs: 20 * 60_000,
  absoluteTimeoutMs: 12 * 60 * 60_000,
  touchIntervalMs: 60_000,
};

export interface LoginSucceeded {
  readonly ok: true;
  /** The value for `.ASPXAUTH`; shown to the client once, stored only as a hash. */
  readonly cookieValue: string;
  readonly accountId: number;
}

/** Unknown user name and wrong password both get exactly this: nothing tells them apart. */
export interface LoginFailed {
  readonly ok: false;
}

/** Too many recent failures for this user name from this address, from this address, or (for an address with failures of its own) for this user name from everywhere: 429 with Retry-After. */
export interface LoginThrottled {
  readonly ok: false;
  readonly throttled: true;
  readonly retryAfterSeconds: number;
}

export type LoginResult = LoginSucceeded | LoginFailed | LoginThrottled;

/**
 * What a request presents, before the database has said whether it is live: the hashes to look
 * up, and the account this process last found the session to belong to (a session's account
 * never changes, so the hint is right or the session is gone; the database decides either way).
 */
export interface Claim {
  readonly sessionHash: string;
  readonly tokenHash: string;
  readonly accountHint: number | undefined;
}

/** The credentials a guarded read carried were refused (answer 401). */
export class CredentialsRefused extends Error {
  constructor() {
    super('The subscription token or the session is not valid.');
  }
}

/**
 * The credential check of one request, run as the first statement of its read (ReadGuard), so
 * that checking and reading cost one transaction. `passed` is set before any of the read's
 * answers reach the request.
 */
export class CredentialGuard implements ReadGuard {
  readonly sql: string;
  readonly params: readonly SqlValue[];
  passed = false;
  lastSeenAt: number | undefined;

  constructor(
    readonly claim: Claim,
    readonly accountId: number,
    readonly now: number,
    idleCutoff: number,
  ) {
    ({ sql: this.sql, params: this.params } = liveSessionOfAccountStatement(claim.sessionHash, claim.tokenHash, now, idleCutoff, accountId));
  }

  check(row: Record<string, unknown> | undefined): void {
    const session = row === undefined ? undefined : liveSessionOf(row);
    if (session === undefined || session.accountId !== this.accountId) throw new CredentialsRefused();
    this.lastSeenAt = session.lastSeenAt;
    this.passed = true;
  }
}

/** Sessions whose account this process knows: enough for every connector a process serves. */
const ACCOUNT_HINTS = 10_000;

export class SessionService {
  readonly options: Required<Omit<SessionOptions, 'throttle'>>;
  readonly throttle: LoginThrottle;
  /** Session hash -> its account, as last authenticated here (see Claim). */
  private readonly accountHints = new LRUCache<string, number>({ max: ACCOUNT_HINTS });

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    options: Partial<SessionOptions> = {},
  ) {
    const { throttle, ...timeouts } = options;
    this.options = { ...DEFAULT_SESSION_OPTIONS, ...timeouts };
    const { idleTimeoutMs, absoluteTimeoutMs, touchIntervalMs } = this.options;
    if (!(idleTimeoutMs > 0 && absoluteTimeoutMs > 0 && touchIntervalMs >= 0 && touchIntervalMs < idleTimeoutMs)) {
      throw new RangeError('Session timeouts must be positive, with touchIntervalMs below idleTimeoutMs');
    }
    this.throttle = new LoginThrottle(store, clock, throttle);
  }

  /** How long a session can last at most (for a persistent cookie's expiry). */
  get absoluteTimeoutMs(): number {
    return this.options.absoluteTimeoutMs;
  }

  async login(userName: string, password: string, clientAddress: string): Promise<LoginResult> {
    // A name that breaks the account rules cannot exist: no lookup and no user scope for it
    // (the address scope still counts it). The answer and the cost are those of a wrong password.
    const nameIsPossible = typeof userName === 'string' && userNameProblem(userName) === undefined;
    const passwordIsPossible = typeof password === 'string' && password.length <= PASSWORD_MAX_LENGTH;
    const scopes = this.throttle.scopesFor(nameIsPossible ? userName : undefined, String(clientAddress ?? ''));

    // Blocked scopes are answered from a read, before any write or any password work.
    const waitSeconds = await this.throttle.retryAfter(scopes);
    if (waitSeconds !== undefined) return throttled(waitSeconds);
    const reserved = await this.throttle.reserve(scopes);
    if (!reserved.ok) return throttled(reserved.retryAfterSeconds);

    const account = nameIsPossible ? await findAccountByUserName(this.store.directory, userName) : undefined;
    // Always one scrypt: against the account's hash, or the dummy hash for an unknown user.
    const matches = await verifyPassword(
      passwordIsPossible ? password : '',
      account?.passwordHash ?? DUMMY_PASSWORD_HASH,
    );
    // A disabled account answers as a wrong password would: nothing tells a caller it exists.
    if (!account || !passwordIsPossible || !matches || account.disabled) return { ok: false };

    const cookieValue = newSessionValue();
    const now = this.clock.now();
    await this.store.writeDirectory(async (tx) => {
      await insertSession(tx, {
        sessionHash: hashCredential(cookieValue),
        accountId: account.accountId,
        createdAt: now,
        expiresAt: now + this.options.absoluteTimeoutMs,
      });
      await recordLogin(tx, account.accountId, now);
      await this.throttle.settleSuccess(tx, reserved.reservation);
    });
    this.accountHints.set(hashCredential(cookieValue), account.accountId);
    return { ok: true, cookieValue, accountId: account.accountId };
  }

  /** Ends the session on the server; true if there was one to end. */
  async logout(cookieValue: string): Promise<boolean> {
    return (await this.endSession(cookieValue)) !== undefined;
  }

  /** Ends the session on the server; the account it was of, or undefined when there was none. */
  async endSession(cookieValue: string): Promise<number | undefined> {
    if (!isWellFormedSessionValue(cookieValue)) return undefined;
    const sessionHash = hashCredential(cookieValue);
    this.accountHints.delete(sessionHash);
    return this.store.writeDirectory((tx) => deleteSession(tx, sessionHash));
  }

  /** Whether the cookie names a live session (IsLoggedIn). Counts as a use of the session. */
  async isLoggedIn(cookieValue: string): Promise<boolean> {
    return (await this.accountOfSession(cookieValue)) !== undefined;
  }

  /**
   * The account of a live session (the seller console, where the cookie alone identifies the
   * seller, as it does for IsLoggedIn); undefined when the session is unknown or ended. Counts as
   * a use of the session.
   */
  async accountOfSession(cookieValue: string): Promise<number | undefined> {
    if (!isWellFormedSessionValue(cookieValue)) return undefined;
    const now = this.clock.now();
    const sessionHash = hashCredential(cookieValue);
    const session = await findLiveSession(this.store.directory, sessionHash, now, now - this.options.idleTimeoutMs);
    if (!session) return undefined;
    await this.touchIfDue(sessionHash, session, now);
    return session.accountId;
  }

  /**
   * The account a request acts for: both the subscription token and the session cookie must be
   * live and belong to the same account; otherwise undefined (answer 401).
   */
  async authenticate(subscriptionToken: string, cookieValue: string): Promise<number | undefined> {
    const claim = this.claim(subscriptionToken, cookieValue);
    return claim === undefined ? undefined : this.authenticateClaim(claim);
  }

  /** The credentials a request presents, or undefined when they cannot be live (ill-formed). */
  claim(subscriptionToken: string, cookieValue: string): Claim | undefined {
    if (!isWellFormedSubscriptionToken(subscriptionToken) || !isWellFormedSessionValue(cookieValue)) return undefined;
    const sessionHash = hashCredential(cookieValue);
    return { sessionHash, tokenHash: subscriptionTokenHash(subscriptionToken), accountHint: this.accountHints.get(sessionHash) };
  }

  /** authenticate() of a claim: a statement of its own. */
  async authenticateClaim(claim: Claim): Promise<number | undefined> {
    const now = this.clock.now();
    const session = await findLiveSessionWithToken(this.store.directory, claim.sessionHash, claim.tokenHash, now, now - this.options.idleTimeoutMs);
    if (!session) return undefined;
    this.accountHints.set(claim.sessionHash, session.accountId);
    await this.touchIfDue(claim.sessionHash, session, now);
    return session.accountId;
  }

  /** The check of a claim whose account is hinted, to run inside the read it admits. */
  guardFor(claim: Claim, accountId: number): CredentialGuard {
    const now = this.clock.now();
    return new CredentialGuard(claim, accountId, now, now - this.options.idleTimeoutMs);
  }

  /**
   * A guard's check run on its own, for work that cannot carry it in its transaction (a $batch
   * part other than its first changeset): nothing if the guard passed already; otherwise the
   * claim is authenticated (and the session touched) as authenticateClaim() does, and refused
   * unless it still belongs to the guard's account.
   */
  async confirm(guard: CredentialGuard): Promise<void> {
    if (guard.passed) return;
    if ((await this.authenticateClaim(guard.claim)) !== guard.accountId) throw new CredentialsRefused();
    guard.passed = true;
  }

  /** After a guarded read that passed: the session counts as used, as authenticate() counts it. */
  async settle(guard: CredentialGuard): Promise<void> {
    if (!guard.passed || guard.lastSeenAt === undefined) return;
    await this.touchIfDue(guard.claim.sessionHash, { accountId: guard.accountId, lastSeenAt: guard.lastSeenAt }, guard.now);
  }

  /**
   * Deletes expired sessions and quiet throttle rows (housekeeping; expired rows are refused
   * anyway), `batchSize` rows per transaction, so the writer is never held for long.
   */
  async pruneExpired(batchSize = PRUNE_BATCH_SIZE, now = this.clock.now()): Promise<{ sessions: number; throttleRows: number }> {
    const sessions = await inBatches(batchSize, (limit) => this.store.writeDirectory((tx) => deleteExpiredSessions(tx, now, now - this.options.idleTimeoutMs, limit)));
    const throttleRows = await this.throttle.prune(batchSize, now);
    return { sessions, throttleRows };
  }

  private async touchIfDue(sessionHash: string, session: LiveSession, now: number): Promise<void> {
    if (now - session.lastSeenAt < this.options.touchIntervalMs) return;
    await this.store.writeDirectory((tx) => touchSession(tx, sessionHash, now));
  }
}

function throttled(retryAfterSeconds: number): LoginThrottled {
  return { ok: false, throttled: true, retryAfterSeconds };
}
