/**
 * All SQL for the auth tables (accounts, subscription_tokens, sessions, login_throttle), so the
 * rules above it read as rules and the statements can be reviewed in one place.
 *
 * Dialect-neutral on purpose (the same text will run on PostgreSQL): `?` placeholders with bound
 * values only, standard `INSERT … ON CONFLICT … DO UPDATE`, `RETURNING`, no engine functions.
 * Times are UTC milliseconds, computed by the caller from its Clock, never by the database, so
 * tests can move time and every process agrees on the rules.
 *
 * Integers may come back as bigint (SQLite adapter) or string (PostgreSQL int8); toNumber()
 * converts them, which is exact for ids and millisecond timestamps (far below 2^53).
 */
import type { SqlExecutor, SqlValue } from '../store/store';

function toNumber(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value as bigint | string);
  if (!Number.isSafeInteger(n)) throw new Error(`Expected an integer from the database, got ${String(value)}`);
  return n;
}

function toNumberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : toNumber(value);
}

// ---------------------------------------------------------------------------------------------
// Accounts

/** Inserts an account; undefined when the user name is taken (no exception, no aborted statement). */
export async function insertAccount(
  tx: SqlExecutor,
  userName: string,
  passwordHash: string,
  now: number,
): Promise<number | undefined> {
  const row = await tx.get<{ id: unknown }>(
    `INSERT INTO accounts (user_name, password_hash, created_at) VALUES (?, ?, ?)
     ON CONFLICT (user_name) DO NOTHING
     RETURNING id`,
    [userName, passwordHash, now],
  );
  return row ? toNumber(row.id) : undefined;
}

export async function countAccountRows(db: SqlExecutor): Promise<number> {
  const row = await db.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM accounts`);
  return row ? toNumber(row.n) : 0;
}

export interface AccountLogin {
  readonly accountId: number;
  readonly passwordHash: string;
  readonly disabled: boolean;
}

export async function findAccountByUserName(db: SqlExecutor, userName: string): Promise<AccountLogin | undefined> {
  const row = await db.get<{ id: unknown; password_hash: string; disabled_at: unknown }>(
    `SELECT id, password_hash, disabled_at FROM accounts WHERE user_name = ?`,
    [userName],
  );
  return row ? { accountId: toNumber(row.id), passwordHash: row.password_hash, disabled: row.disabled_at !== null } : undefined;
}

export async function listAccountIds(db: SqlExecutor): Promise<number[]> {
  const rows = await db.all<{ id: unknown }>(`SELECT id FROM accounts ORDER BY id`);
  return rows.map((r) => toNumber(r.id));
}

export interface AccountSummary {
  readonly accountId: number;
  readonly userName: string;
  readonly createdAt: number;
  readonly lastLoginAt: number | null;
  readonly disabledAt: number | null;
}

export async function listAccountRows(db: SqlExecutor): Promise<AccountSummary[]> {
  const rows = await db.all<{ id: unknown; user_name: string; created_at: unknown; last_login_at: unknown; disabled_at: unknown }>(
    `SELECT id, user_name, created_at, last_login_at, disabled_at FROM accounts ORDER BY id`,
  );
  return rows.map((r) => ({
    accountId: toNumber(r.id),
    userName: r.user_name,
    createdAt: toNumber(r.created_at),
    lastLoginAt: toNumberOrNull(r.last_login_at),
    disabledAt: toNumberOrNull(r.disabled_at),
  }));
}

/** The id of the account with that user name, or undefined. */
export async function accountIdOf(db: SqlExecutor, userName: string): Promise<number | undefined> {
  const row = await db.get<{ id: unknown }>(`SELECT id FROM accounts WHERE user_name = ?`, [userName]);
  return row ? toNumber(row.id) : undefined;
}

export async function recordLogin(tx: SqlExecutor, accountId: number, now: number): Promise<void> {
  await tx.run(`UPDATE accounts SET last_login_at = ? WHERE id = ?`, [now, accountId]);
}

export async function setPasswordHash(tx: SqlExecutor, accountId: number, passwordHash: string): Promise<void> {
  await tx.run(`UPDATE accounts SET password_hash = ? WHERE id = ?`, [passwordHash, accountId]);
}

/** Disables (a time) or enables (null) an account; false when nothing changed. */
export async function setAccountDisabled(tx: SqlExecutor, accountId: number, disabledAt: number | null): Promise<boolean> {
  const result = await tx.run(
    disabledAt === null
      ? `UPDATE accounts SET disabled_at = NULL WHERE id = ? AND disabled_at IS NOT NULL`
      : `UPDATE accounts SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL`,
    disabledAt === null ? [accountId] : [disabledAt, accountId],
  );
  return result.changes > 0;
}

/** Ends every session of an account; how many there were. */
export async function deleteSessionsOfAccount(tx: SqlExecutor, accountId: number): Promise<number> {
  return (await tx.run(`DELETE FROM sessions WHERE account_id = ?`, [accountId])).changes;
}

// ---------------------------------------------------------------------------------------------
// Subscription tokens

export async function insertSubscriptionToken(tx: SqlExecutor, tokenHash: string, accountId: number, now: number): Promise<void> {
  await tx.run(`INSERT INTO subscription_tokens (token_hash, account_id, created_at) VALUES (?, ?, ?)`, [
    tokenHash,
    accountId,
    now,
  ]);
}

/** Adds a token to the account with that user name in one statement; false when there is none. */
export async function insertSubscriptionTokenForUser(
  tx: SqlExecutor,
  tokenHash: string,
  userName: string,
  now: number,
): Promise<boolean> {
  const result = await tx.run(
    `INSERT INTO subscription_tokens (token_hash, account_id, created_at)
     SELECT ?, id, ? FROM accounts WHERE user_name = ?`,
    [tokenHash, now, userName],
  );
  return result.changes > 0;
}

/** Marks a live token revoked (the row stays, for audit); the account it was of, undefined when none was live. */
export async function revokeSubscriptionToken(tx: SqlExecutor, tokenHash: string, now: number): Promise<number | undefined> {
  const row = await tx.get<{ account_id: unknown }>(
    `UPDATE subscription_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL RETURNING account_id`,
    [now, tokenHash],
  );
  return row ? toNumber(row.account_id) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Sessions (expires_at is the absolute limit; the idle limit is last_seen_at + idle timeout)

export interface NewSession {
  readonly sessionHash: string;
  readonly accountId: number;
  readonly createdAt: number;
  readonly expiresAt: number;
}

export async function insertSession(tx: SqlExecutor, session: NewSession): Promise<void> {
  await tx.run(
    `INSERT INTO sessions (session_hash, account_id, created_at, last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
    [session.sessionHash, session.accountId, session.createdAt, session.createdAt, session.expiresAt],
  );
}

export interface LiveSession {
  readonly accountId: number;
  readonly lastSeenAt: number;
}

/** The session if it is live at `now`: before its absolute end and seen after idleCutoff. */
export async function findLiveSession(
  db: SqlExecutor,
  sessionHash: string,
  now: number,
  idleCutoff: number,
): Promise<LiveSession | undefined> {
  const row = await db.get<{ account_id: unknown; last_seen_at: unknown }>(
    `SELECT s.account_id, s.last_seen_at FROM sessions s
     JOIN accounts a ON a.id = s.account_id AND a.disabled_at IS NULL
     WHERE s.session_hash = ? AND s.expires_at > ? AND s.last_seen_at > ?`,
    [sessionHash, now, idleCutoff],
  );
  return row ? { accountId: toNumber(row.account_id), lastSeenAt: toNumber(row.last_seen_at) } : undefined;
}

/**
 * The live session, only if the token is live and belongs to the same account: one indexed
 * lookup per request for both credentials, and no way to pair one account's token with
 * another's cookie.
 */
/** The live session of a cookie, joined to a live token of the same enabled account. */
const LIVE_SESSION_WITH_TOKEN = `SELECT s.account_id, s.last_seen_at
     FROM sessions s
     JOIN subscription_tokens t ON t.account_id = s.account_id
     JOIN accounts a ON a.id = s.account_id AND a.disabled_at IS NULL
     WHERE s.session_hash = ? AND s.expires_at > ? AND s.last_seen_at > ?
       AND t.token_hash = ? AND t.revoked_at IS NULL`;

export async function findLiveSessionWithToken(
  db: SqlExecutor,
  sessionHash: string,
  tokenHash: string,
  now: number,
  idleCutoff: number,
): Promise<LiveSession | undefined> {
  const row = await db.get<{ account_id: unknown; last_seen_at: unknown }>(LIVE_SESSION_WITH_TOKEN, [sessionHash, now, idleCutoff, tokenHash]);
  return row ? liveSessionOf(row) : undefined;
}

/**
 * findLiveSessionWithToken as a statement to run inside a read (ReadGuard), for the account the
 * request claims: at most one row, and only of that account.
 */
export function liveSessionOfAccountStatement(
  sessionHash: string,
  tokenHash: string,
  now: number,
  idleCutoff: number,
  accountId: number,
): { sql: string; params: SqlValue[] } {
  return { sql: LIVE_SESSION_OF_ACCOUNT, params: [sessionHash, now, idleCutoff, tokenHash, accountId] };
}

/**
 * One string for every request: the executors look their prepared statement up by the text, and
 * a text built anew per request had to be flattened and hashed again each time.
 */
const LIVE_SESSION_OF_ACCOUNT = `${LIVE_SESSION_WITH_TOKEN} AND s.account_id = ?`;

/** A row of LIVE_SESSION_WITH_TOKEN. */
export function liveSessionOf(row: { account_id?: unknown; last_seen_at?: unknown }): LiveSession {
  return { accountId: toNumber(row.account_id), lastSeenAt: toNumber(row.last_seen_at) };
}

/** Moves last_seen_at forward (never back, should touches from two processes cross). */
export async function touchSession(tx: SqlExecutor, sessionHash: string, now: number): Promise<void> {
  await tx.run(`UPDATE sessions SET last_seen_at = ? WHERE session_hash = ? AND last_seen_at < ?`, [
    now,
    sessionHash,
    now,
  ]);
}

/** Deletes a session; the account it belonged to, or undefined when there was none. */
export async function deleteSession(tx: SqlExecutor, sessionHash: string): Promise<number | undefined> {
  const row = await tx.get<{ account_id: unknown }>(`DELETE FROM sessions WHERE session_hash = ? RETURNING account_id`, [sessionHash]);
  return row ? toNumber(row.account_id) : undefined;
}

/**
 * Removes up to `limit` sessions that can no longer be used (housekeeping; they are refused
 * anyway). Bounded, so that one statement never holds the writer for long.
 */
export async function deleteExpiredSessions(tx: SqlExecutor, now: number, idleCutoff: number, limit: number): Promise<number> {
  const result = await tx.run(
    `DELETE FROM sessions WHERE session_hash IN
       (SELECT session_hash FROM sessions WHERE expires_at <= ? OR last_seen_at <= ? LIMIT ?)`,
    [now, idleCutoff, limit],
  );
  return result.changes;
}

// ---------------------------------------------------------------------------------------------
// Login throttle

export interface ThrottleRow {
  readonly scopeKey: string;
  readonly failures: number;
  readonly windowStartedAt: number;
  readonly blockedUntil: number | null;
}

export async function readThrottleRows(db: SqlExecutor, scopeKeys: readonly string[]): Promise<ThrottleRow[]> {
  if (scopeKeys.length === 0) return [];
  // Only the number of placeholders depends on the input; the keys themselves are bound.
  const placeholders = scopeKeys.map(() => '?').join(', ');
  const rows = await db.all<{ scope_key: string; failures: unknown; window_started_at: unknown; blocked_until: unknown }>(
    `SELECT scope_key, failures, window_started_at, blocked_until FROM login_throttle WHERE scope_key IN (${placeholders})`,
    scopeKeys,
  );
  return rows.map((r) => ({
    scopeKey: r.scope_key,
    failures: toNumber(r.failures),
    windowStartedAt: toNumber(r.window_started_at),
    blockedUntil: toNumberOrNull(r.blocked_until),
  }));
}

/**
 * Counts one attempt against a scope in a single atomic statement (safe with concurrent
 * processes: the upsert locks the row). Rules, all on the row as it was:
 * - blocked (blocked_until > now): nothing changes; the caller sees blockedUntil and refuses;
 * - stale (window started at or before staleBefore, and any block ended at or before it too):
 *   a new window starts with this attempt;
 * - otherwise: one more failure in the current window.
 * Returns the row after the statement.
 */
export async function countThrottleAttempt(
  tx: SqlExecutor,
  scopeKey: string,
  now: number,
  staleBefore: number,
): Promise<{ failures: number; windowStartedAt: number; blockedUntil: number | null }> {
  const blocked = `login_throttle.blocked_until > ?`;
  const stale =
    `login_throttle.window_started_at <= ? AND ` +
    `(login_throttle.blocked_until IS NULL OR login_throttle.blocked_until <= ?)`;
  const row = await tx.get<{ failures: unknown; window_started_at: unknown; blocked_until: unknown }>(
    `INSERT INTO login_throttle (scope_key, failures, window_started_at, blocked_until) VALUES (?, 1, ?, NULL)
     ON CONFLICT (scope_key) DO UPDATE SET
       failures = CASE WHEN ${blocked} THEN login_throttle.failures
                       WHEN ${stale} THEN 1
                       ELSE login_throttle.failures + 1 END,
       window_started_at = CASE WHEN ${blocked} THEN login_throttle.window_started_at
                                WHEN ${stale} THEN ?
                                ELSE login_throttle.window_started_at END,
       blocked_until = CASE WHEN ${blocked} THEN login_throttle.blocked_until
                            WHEN ${stale} THEN NULL
                            ELSE login_throttle.blocked_until END
     RETURNING failures, window_started_at, blocked_until`,
    [
      scopeKey, now,
      now, staleBefore, staleBefore,
      now, staleBefore, staleBefore, now,
      now, staleBefore, staleBefore,
    ],
  );
  if (!row) throw new Error('login_throttle upsert returned no row');
  return { failures: toNumber(row.failures), windowStartedAt: toNumber(row.window_started_at), blockedUntil: toNumberOrNull(row.blocked_until) };
}

export async function setThrottleBlock(tx: SqlExecutor, scopeKey: string, blockedUntil: number): Promise<void> {
  await tx.run(`UPDATE login_throttle SET blocked_until = ? WHERE scope_key = ?`, [blockedUntil, scopeKey]);
}

export async function deleteThrottleRow(tx: SqlExecutor, scopeKey: string): Promise<void> {
  await tx.run(`DELETE FROM login_throttle WHERE scope_key = ?`, [scopeKey]);
}

/**
 * Takes back one counted attempt (it turned out to be a successful login). If that attempt set
 * the current block, the block ends now; the end time is kept so the escalation memory stays.
 */
export async function refundThrottleAttempt(
  tx: SqlExecutor,
  scopeKey: string,
  blockSetByAttempt: number | null,
  now: number,
): Promise<void> {
  await tx.run(
    `UPDATE login_throttle SET
       failures = CASE WHEN failures > 0 THEN failures - 1 ELSE 0 END,
       blocked_until = CASE WHEN blocked_until = ? THEN ? ELSE blocked_until END
     WHERE scope_key = ?`,
    [blockSetByAttempt, now, scopeKey],
  );
}

/** Removes up to `limit` rows that would start a fresh window anyway (housekeeping). */
export async function deleteStaleThrottleRows(tx: SqlExecutor, staleBefore: number, limit: number): Promise<number> {
  const result = await tx.run(
    `DELETE FROM login_throttle WHERE scope_key IN
       (SELECT scope_key FROM login_throttle WHERE window_started_at <= ? AND (blocked_until IS NULL OR blocked_until <= ?) LIMIT ?)`,
    [staleBefore, staleBefore, limit],
  );
  return result.changes;
}

// ---------------------------------------------------------------------------------------------
// An account's own tokens (the seller console lists and revokes them)

export interface TokenRow {
  readonly tokenHash: string;
  readonly createdAt: number;
  readonly revokedAt: number | null;
  /** When a request last presented it, as recorded (at most a minute behind); null if never. */
  readonly lastUsedAt: number | null;
  readonly lastUserAgent: string | null;
}

/** Every token of one account, newest first (revoked ones too: the list is also their audit). */
export async function listSubscriptionTokens(db: SqlExecutor, accountId: number): Promise<TokenRow[]> {
  const rows = await db.all<{ token_hash: string; created_at: unknown; revoked_at: unknown; last_used_at: unknown; last_user_agent: string | null }>(
    `SELECT token_hash, created_at, revoked_at, last_used_at, last_user_agent FROM subscription_tokens WHERE account_id = ? ORDER BY created_at DESC, token_hash`,
    [accountId],
  );
  return rows.map((r) => ({
    tokenHash: r.token_hash,
    createdAt: toNumber(r.created_at),
    revokedAt: toNumberOrNull(r.revoked_at),
    lastUsedAt: toNumberOrNull(r.last_used_at),
    lastUserAgent: r.last_user_agent ?? null,
  }));
}

/** Records a token's last use (a later one only: processes may write out of order). */
export async function touchSubscriptionToken(tx: SqlExecutor, tokenHash: string, at: number, userAgent: string | null): Promise<void> {
  await tx.run(
    `UPDATE subscription_tokens SET last_used_at = ?, last_user_agent = ? WHERE token_hash = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
    [at, userAgent, tokenHash, at],
  );
}

/** Revokes a live token only if it belongs to the account; false otherwise (another's token is "no such token"). */
export async function revokeSubscriptionTokenOfAccount(tx: SqlExecutor, accountId: number, tokenHash: string, now: number): Promise<boolean> {
  const result = await tx.run(
    `UPDATE subscription_tokens SET revoked_at = ? WHERE token_hash = ? AND account_id = ? AND revoked_at IS NULL`,
    [now, tokenHash, accountId],
  );
  return result.changes > 0;
}

export async function findUserNameOfAccount(db: SqlExecutor, accountId: number): Promise<string | undefined> {
  const row = await db.get<{ user_name: string }>(`SELECT user_name FROM accounts WHERE id = ?`, [accountId]);
  return row?.user_name;
}
