/**
 * A seller's webhook subscriptions and their deliveries as the management endpoint, the CLI and
 * the console see them. Every statement names the account: another account's subscription is
 * indistinguishable from a missing one. Times are UTC milliseconds from the caller's clock.
 */
import { randomBytes } from 'node:crypto';
import type { SqlExecutor, Store } from '../store/store';
import { WEBHOOK_ACCOUNTS, WEBHOOK_DELIVERIES, WEBHOOK_SUBSCRIPTIONS } from '../store/schema';
import { OutboxReader } from './change-log';
import { parseEventTypes, type EventType } from './event-types';
import { newSecret } from './signing';

/** An integer column's value (bigint on SQLite, string for PostgreSQL's int8) as a number. */
export const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value as bigint | string));
const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : num(value));

export interface Subscription {
  readonly id: string;
  readonly url: string;
  readonly eventTypes: readonly EventType[];
  readonly enabled: boolean;
  readonly failureCount: number;
  readonly failingSince: number | null;
  readonly disabledReason: string | null;
  readonly createdAt: number;
  /** When the previous secret stops signing (a rotation's overlap), or null. */
  readonly previousSecretUntil: number | null;
}

/** A subscription with its secrets: for the deliverer only, never shown after creation or rotation. */
export interface SigningSubscription extends Subscription {
  readonly secret: string;
  readonly previousSecret: string | null;
}

const COLUMNS = 'id, url, event_types, secret, previous_secret, previous_secret_until, enabled, failure_count, failing_since, disabled_reason, created_at';

export function subscriptionOf(row: Record<string, unknown>): SigningSubscription {
  return {
    id: row.id as string,
    url: row.url as string,
    eventTypes: parseEventTypes(row.event_types as string),
    enabled: num(row.enabled) === 1,
    failureCount: num(row.failure_count),
    failingSince: numOrNull(row.failing_since),
    disabledReason: (row.disabled_reason as string | null) ?? null,
    createdAt: num(row.created_at),
    previousSecretUntil: numOrNull(row.previous_secret_until),
    secret: row.secret as string,
    previousSecret: (row.previous_secret as string | null) ?? null,
  };
}

/** What may be shown: everything but the secrets. */
export function shown(s: SigningSubscription): Subscription {
  const { secret: _secret, previousSecret: _previous, ...rest } = s;
  return rest;
}

export async function selectSubscriptions(tx: SqlExecutor, accountId: number): Promise<SigningSubscription[]> {
  const rows = await tx.all(`SELECT ${COLUMNS} FROM ${WEBHOOK_SUBSCRIPTIONS} WHERE account_id = ? ORDER BY created_at, id`, [accountId]);
  return rows.map(subscriptionOf);
}

export async function listSubscriptions(store: Store, accountId: number): Promise<Subscription[]> {
  return (await store.read(accountId, (tx) => selectSubscriptions(tx, accountId))).map(shown);
}

export async function findSubscription(store: Store, accountId: number, id: string): Promise<Subscription | undefined> {
  const row = await store.read(accountId, (tx) => tx.get(`SELECT ${COLUMNS} FROM ${WEBHOOK_SUBSCRIPTIONS} WHERE account_id = ? AND id = ?`, [accountId, id]));
  return row ? shown(subscriptionOf(row)) : undefined;
}

/** A new subscription and its secret (shown this once). The URL must have been checked. */
export async function createSubscription(store: Store, accountId: number, url: string, eventTypes: readonly EventType[], now: number): Promise<{ subscription: Subscription; secret: string }> {
  const id = 'whk_' + randomBytes(12).toString('base64url');
  const secret = newSecret();
  // First in the directory, so that the worker visits the account once the subscription exists.
  await store.writeDirectory((tx) => tx.run(`INSERT INTO ${WEBHOOK_ACCOUNTS} (account_id) VALUES (?) ON CONFLICT (account_id) DO NOTHING`, [accountId]));
  await store.write(accountId, async (tx) => {
    // An account's first subscription reports changes from now on: the changes before it, which
    // no worker fanned out while the account had no subscription, are past.
    const others = await tx.get(`SELECT 1 AS found FROM ${WEBHOOK_SUBSCRIPTIONS} WHERE account_id = ? LIMIT 1`, [accountId]);
    if (!others) await new OutboxReader(store.codec).markAllPublished(tx, accountId);
    await tx.run(`INSERT INTO ${WEBHOOK_SUBSCRIPTIONS} (account_id, id, url, event_types, secret, enabled, failure_count, created_at) VALUES (?, ?, ?, ?, ?, 1, 0, ?)`, [
      accountId,
      id,
      url,
      eventTypes.join(','),
      secret,
      now,
    ]);
  });
  return { subscription: (await findSubscription(store, accountId, id))!, secret };
}

/** Deletes a subscription and its deliveries; false when there was none. */
export async function deleteSubscription(store: Store, accountId: number, id: string): Promise<boolean> {
  const { deleted, left } = await store.write(accountId, async (tx) => {
    await tx.run(`DELETE FROM ${WEBHOOK_DELIVERIES} WHERE account_id = ? AND subscription_id = ?`, [accountId, id]);
    const deleted = (await tx.run(`DELETE FROM ${WEBHOOK_SUBSCRIPTIONS} WHERE account_id = ? AND id = ?`, [accountId, id])).changes > 0;
    const left = await tx.get(`SELECT 1 AS found FROM ${WEBHOOK_SUBSCRIPTIONS} WHERE account_id = ? LIMIT 1`, [accountId]);
    return { deleted, left: left !== undefined };
  });
  // The worker need not visit an account without subscriptions (a visit would change nothing).
  if (!left) await store.writeDirectory((tx) => tx.run(`DELETE FROM ${WEBHOOK_ACCOUNTS} WHERE account_id = ?`, [accountId]));
  return deleted;
}

/**
 * A new secret (shown this once); the current one keeps signing beside it until now + overlapMs,
 * so receivers that still know only the old one accept deliveries meanwhile.
 */
export async function rotateSecret(store: Store, accountId: number, id: string, now: number, overlapMs: number): Promise<string | undefined> {
  const secret = newSecret();
  const changed = await store.write(accountId, (tx) =>
    tx.run(`UPDATE ${WEBHOOK_SUBSCRIPTIONS} SET previous_secret = secret, previous_secret_until = ?, secret = ? WHERE account_id = ? AND id = ?`, [now + overlapMs, secret, accountId, id]),
  );
  return changed.changes > 0 ? secret : undefined;
}

/** Enables a subscription again: its failures are forgotten and its pending deliveries are due now. */
export async function enableSubscription(store: Store, accountId: number, id: string, now: number): Promise<boolean> {
  return store.write(accountId, async (tx) => {
    const changed = await tx.run(`UPDATE ${WEBHOOK_SUBSCRIPTIONS} SET enabled = 1, failure_count = 0, failing_since = NULL, disabled_reason = NULL WHERE account_id = ? AND id = ?`, [accountId, id]);
    if (changed.changes === 0) return false;
    await tx.run(`UPDATE ${WEBHOOK_DELIVERIES} SET next_attempt_at = ?, lease_owner = NULL, lease_until = NULL WHERE account_id = ? AND subscription_id = ? AND state = 'pending'`, [now, accountId, id]);
    return true;
  });
}

export interface DeliveryView {
  readonly eventId: string;
  readonly sequence: number;
  readonly type: string;
  readonly state: string;
  readonly attempts: number;
  readonly createdAt: number;
  readonly nextAttemptAt: number;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly lastAttemptAt: number | null;
  readonly deliveredAt: number | null;
}

/** A subscription's latest deliveries, newest first. */
export async function listDeliveries(store: Store, accountId: number, subscriptionId: string, limit: number): Promise<DeliveryView[]> {
  const rows = await store.read(accountId, (tx) =>
    tx.all(
      `SELECT event_id, sequence, event_type, state, attempts, created_at, next_attempt_at, last_status, last_error, last_attempt_at, delivered_at
         FROM ${WEBHOOK_DELIVERIES} WHERE account_id = ? AND subscription_id = ? ORDER BY sequence DESC, event_id LIMIT ?`,
      [accountId, subscriptionId, limit],
    ),
  );
  return rows.map((r) => ({
    eventId: r.event_id as string,
    sequence: num(r.sequence),
    type: r.event_type as string,
    state: r.state as string,
    attempts: num(r.attempts),
    createdAt: num(r.created_at),
    nextAttemptAt: num(r.next_attempt_at),
    lastStatus: numOrNull(r.last_status),
    lastError: (r.last_error as string | null) ?? null,
    lastAttemptAt: numOrNull(r.last_attempt_at),
    deliveredAt: numOrNull(r.delivered_at),
  }));
}

/**
 * Sends a delivery again, by hand: due now, with the same event id (the receiver's deduplication
 * key), and a new retry horizon from now. False when the subscription has no such delivery.
 */
export async function redeliver(store: Store, accountId: number, subscriptionId: string, eventId: string, now: number): Promise<boolean> {
  const changed = await store.write(accountId, (tx) =>
    tx.run(
      `UPDATE ${WEBHOOK_DELIVERIES} SET state = 'pending', next_attempt_at = ?, created_at = ?, lease_owner = NULL, lease_until = NULL
        WHERE account_id = ? AND subscription_id = ? AND event_id = ?`,
      [now, now, accountId, subscriptionId, eventId],
    ),
  );
  return changed.changes > 0;
}
