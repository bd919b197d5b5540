/**
 * The delivery table as the deliverer uses it: which endpoints have deliveries due, leasing them
 * (so that one process sends each, and a process that dies leaves them to another once the lease
 * runs out), and recording each attempt's outcome with its retry schedule.
 */
import type { Store } from '../store/store';
import { WEBHOOK_DELIVERIES, WEBHOOK_SUBSCRIPTIONS } from '../store/schema';
import type { AttemptOutcome } from './send';
import type { WebhookSettings } from './settings';
import { num, subscriptionOf, type SigningSubscription } from './subscriptions';

const DUE = `state = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)`;

/** The account's enabled subscriptions with deliveries due now, and how many each. */
export async function dueBySubscription(store: Store, accountId: number, now: number): Promise<Map<string, number>> {
  const rows = await store.read(accountId, (tx) =>
    tx.all(
      `SELECT d.subscription_id AS id, COUNT(*) AS due FROM ${WEBHOOK_DELIVERIES} d
         JOIN ${WEBHOOK_SUBSCRIPTIONS} s ON s.account_id = d.account_id AND s.id = d.subscription_id
        WHERE d.account_id = ? AND s.enabled = 1 AND d.state = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until < ?)
        GROUP BY d.subscription_id`,
      [accountId, now, now],
    ),
  );
  return new Map(rows.map((r) => [r.id as string, num(r.due)]));
}

export interface LeasedDelivery {
  readonly eventId: string;
  readonly payload: string;
  /** Attempts so far, this one included. */
  readonly attempts: number;
  /** When its round of attempts began (the retry horizon counts from here). */
  readonly createdAt: number;
}

/**
 * Leases up to `limit` of the subscription's due deliveries, oldest sequence first, for `owner`
 * until now + leaseMs; the subscription with its secrets. Nothing when it is disabled or gone.
 */
export async function leaseDue(
  store: Store,
  accountId: number,
  subscriptionId: string,
  owner: string,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<{ subscription: SigningSubscription; deliveries: LeasedDelivery[] } | undefined> {
  return store.write(accountId, async (tx) => {
    const row = await tx.get(`SELECT * FROM ${WEBHOOK_SUBSCRIPTIONS} WHERE account_id = ? AND id = ?`, [accountId, subscriptionId]);
    if (!row || num(row.enabled) !== 1) return undefined;
    const rows = await tx.all(
      `UPDATE ${WEBHOOK_DELIVERIES} SET lease_owner = ?, lease_until = ?, attempts = attempts + 1, last_attempt_at = ?
        WHERE account_id = ? AND event_id IN (
          SELECT event_id FROM ${WEBHOOK_DELIVERIES} WHERE account_id = ? AND subscription_id = ? AND ${DUE} ORDER BY sequence LIMIT ?)
        RETURNING event_id, payload, attempts, created_at`,
      [owner, now + leaseMs, now, accountId, accountId, subscriptionId, now, now, limit],
    );
    return {
      subscription: subscriptionOf(row),
      deliveries: rows.map((r) => ({ eventId: r.event_id as string, payload: r.payload as string, attempts: num(r.attempts), createdAt: num(r.created_at) })),
    };
    // Repeatable (as every write of the deliverer): nothing outside the transaction depends on a
    // run that did not commit, so on PostgreSQL it does not hold up the account's batch of writes.
  }, { repeatable: true });
}

/** The delay before attempt `attempts + 1`: doubling from retryBaseMs up to retryMaxMs, with jitter (half to all of it). */
export function retryDelay(attempts: number, settings: Pick<WebhookSettings, 'retryBaseMs' | 'retryMaxMs'>, random: () => number = Math.random): number {
  const full = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.min(attempts - 1, 40));
  return Math.round(full / 2 + (random() * full) / 2);
}

/**
 * Records the deliveries a receiver answered 2xx, in one transaction: delivered, whoever holds
 * their lease now (the receiver has them), and the subscription's failures forgotten.
 */
export async function recordDelivered(store: Store, accountId: number, subscriptionId: string, delivered: readonly { eventId: string; status: number | null }[], now: number): Promise<void> {
  if (delivered.length === 0) return;
  await store.write(accountId, async (tx) => {
    for (let i = 0; i < delivered.length; i += 200) {
      const chunk = delivered.slice(i, i + 200);
      // One status for the chunk's rows is enough to show: receivers answer 200, 202 or 204 alike.
      await tx.run(
        `UPDATE ${WEBHOOK_DELIVERIES} SET state = 'delivered', delivered_at = ?, last_status = ?, last_error = NULL, lease_owner = NULL, lease_until = NULL
          WHERE account_id = ? AND state = 'pending' AND event_id IN (${chunk.map(() => '?').join(', ')})`,
        [now, chunk[0]!.status, accountId, ...chunk.map((d) => d.eventId)],
      );
    }
    await tx.run(`UPDATE ${WEBHOOK_SUBSCRIPTIONS} SET failure_count = 0, failing_since = NULL WHERE account_id = ? AND id = ? AND failure_count > 0`, [accountId, subscriptionId]);
  }, { repeatable: true });
}

/**
 * Records a failed attempt, if `owner` still holds the delivery's lease: the next attempt is
 * scheduled, or the delivery is given up as 'failed' once its retry horizon has passed. The
 * failure counts against the subscription, which is disabled when it has failed
 * `disableAfterFailures` times in a row over at least the retry horizon. Whether it disabled it.
 */
export async function recordFailure(
  store: Store,
  accountId: number,
  subscriptionId: string,
  delivery: LeasedDelivery,
  owner: string,
  outcome: AttemptOutcome,
  now: number,
  settings: WebhookSettings,
): Promise<{ disabled: boolean }> {
  return store.write(accountId, async (tx) => {
    const expired = now - delivery.createdAt >= settings.retryHorizonMs;
    const recorded = await tx.run(
      `UPDATE ${WEBHOOK_DELIVERIES} SET state = ?, next_attempt_at = ?, last_status = ?, last_error = ?, lease_owner = NULL, lease_until = NULL
        WHERE account_id = ? AND event_id = ? AND lease_owner = ? AND state = 'pending'`,
      [expired ? 'failed' : 'pending', now + retryDelay(delivery.attempts, settings), outcome.status, outcome.error, accountId, delivery.eventId, owner],
    );
    if (recorded.changes === 0) return { disabled: false };
    await tx.run(`UPDATE ${WEBHOOK_SUBSCRIPTIONS} SET failure_count = failure_count + 1, failing_since = COALESCE(failing_since, ?) WHERE account_id = ? AND id = ?`, [
      now,
      accountId,
      subscriptionId,
    ]);
    const disabled = await tx.run(
      `UPDATE ${WEBHOOK_SUBSCRIPTIONS} SET enabled = 0, disabled_reason = ?
        WHERE account_id = ? AND id = ? AND enabled = 1 AND failure_count >= ? AND failing_since <= ?`,
      [`disabled after ${settings.disableAfterFailures} failed attempts in a row; the last: ${outcome.error ?? 'no answer'}`, accountId, subscriptionId, settings.disableAfterFailures, now - settings.retryHorizonMs],
    );
    return { disabled: disabled.changes > 0 };
  }, { repeatable: true });
}
