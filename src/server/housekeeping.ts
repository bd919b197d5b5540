/**
 * The service's own housekeeping, every HOUSEKEEPING_INTERVAL_MS (a minute by default) in every
 * process: expired sessions, login-throttle rows quiet for a whole window, and idempotency keys
 * older than their lifetime (a day) are deleted, a small batch per transaction (../store/batches.ts)
 * so that requests' writes are never kept waiting for long. Expired rows are refused anyway;
 * this only keeps the tables from growing without bound.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { SessionService } from '../auth/sessions';
import { listAccountIds } from '../auth/directory';
import { inBatches, PRUNE_BATCH_SIZE } from '../store/batches';
import type { Store } from '../store/store';
import { KEY_LIFETIME_MS } from '../service/idempotency';
import { ChangeLog } from '../store/change-log';
import { WEBHOOK_ACCOUNTS, WEBHOOK_DELIVERIES } from '../store/schema';

export interface HousekeepingReport {
  readonly sessions: number;
  readonly throttleRows: number;
  readonly idempotencyKeys: number;
  readonly changes: number;
  /** Webhook deliveries that had ended (delivered, or failed past their retries) before the retention. */
  readonly webhookDeliveries: number;
}

const DAY_MS = 86_400_000;

/**
 * How much longer than the retention the change log keeps a row: a delta link is refused once it
 * is older than the retention, and the changes it may still read were written after it was
 * issued, save those of transactions open then (bounded by the statement timeouts): a day covers them.
 */
export const CHANGE_PRUNE_MARGIN_MS = DAY_MS;

/** Deletes one account's change log rows written before `cutoff`, a batch per transaction. */
async function pruneChanges(store: Store, accountId: number, cutoff: number): Promise<number> {
  const log = new ChangeLog(store.codec);
  if (!(await store.read(accountId, (tx) => log.anyBefore(tx, accountId, cutoff)))) return 0;
  return inBatches(PRUNE_BATCH_SIZE, (limit) => store.write(accountId, (tx) => log.pruneBefore(tx, accountId, cutoff, limit)));
}

/**
 * Deletes one account's webhook deliveries that were created before `cutoff` and have ended
 * ('delivered', or 'failed' once their retries ran out), a batch per transaction: what a seller
 * can still look at or redeliver is as old as the change log's retention. A pending delivery
 * stays until it ends (its retries run out after WEBHOOK_RETRY_HORIZON_MS).
 */
async function pruneEndedDeliveries(store: Store, accountId: number, cutoff: number): Promise<number> {
  const ENDED = `account_id = ? AND state IN ('delivered', 'failed') AND created_at < ?`;
  const any = await store.read(accountId, (tx) => tx.get(`SELECT 1 AS found FROM ${WEBHOOK_DELIVERIES} WHERE ${ENDED} LIMIT 1`, [accountId, cutoff]));
  if (!any) return 0;
  return inBatches(PRUNE_BATCH_SIZE, async (limit) => {
    const result = await store.write(accountId, (tx) =>
      tx.run(
        `DELETE FROM ${WEBHOOK_DELIVERIES} WHERE account_id = ? AND event_id IN (SELECT event_id FROM ${WEBHOOK_DELIVERIES} WHERE ${ENDED} LIMIT ?)`,
        [accountId, accountId, cutoff, limit],
      ),
    );
    return result.changes;
  });
}

/** Deletes one account's idempotency keys created before `cutoff`, a batch per transaction. */
async function pruneIdempotencyKeys(store: Store, accountId: number, cutoff: number): Promise<number> {
  const before = store.codec.encode('Edm.DateTime', cutoff);
  // A read first: most accounts have nothing to forget, and a read does not take the writer.
  const any = await store.read(accountId, (tx) =>
    tx.get('SELECT 1 AS found FROM idempotency_keys WHERE account_id = ? AND created_at < ? LIMIT 1', [accountId, before]),
  );
  if (!any) return 0;
  return inBatches(PRUNE_BATCH_SIZE, async (limit) => {
    const result = await store.write(accountId, (tx) =>
      tx.run(
        `DELETE FROM idempotency_keys WHERE account_id = ? AND idempotency_key IN
           (SELECT idempotency_key FROM idempotency_keys WHERE account_id = ? AND created_at < ? LIMIT ?)`,
        [accountId, accountId, before, limit],
      ),
    );
    return result.changes;
  });
}

export async function runHousekeeping(store: Store, sessions: SessionService, clock: Clock, changeRetentionDays: number): Promise<HousekeepingReport> {
  // One time for the whole run: what it removes is what had expired when it began.
  const now = clock.now();
  const pruned = await sessions.pruneExpired(PRUNE_BATCH_SIZE, now);
  const cutoff = now - KEY_LIFETIME_MS;
  // Published or not: the webhooks keep their own deliveries; a change this old is no one's news.
  const changeCutoff = now - changeRetentionDays * DAY_MS - CHANGE_PRUNE_MARGIN_MS;
  let idempotencyKeys = 0;
  let changes = 0;
  let webhookDeliveries = 0;
  const deliveryCutoff = now - changeRetentionDays * DAY_MS;
  // Per account: on PostgreSQL row-level security shows a transaction one account's keys only.
  for (const accountId of await listAccountIds(store.directory)) {
    idempotencyKeys += await pruneIdempotencyKeys(store, accountId, cutoff);
    changes += await pruneChanges(store, accountId, changeCutoff);
  }
  // Only accounts with a subscription have deliveries (removing the last one removes its deliveries).
  const subscribed = await store.directory.all<{ account_id: unknown }>(`SELECT account_id FROM ${WEBHOOK_ACCOUNTS}`);
  for (const row of subscribed) webhookDeliveries += await pruneEndedDeliveries(store, Number(row.account_id), deliveryCutoff);
  return { ...pruned, idempotencyKeys, changes, webhookDeliveries };
}

/** Runs the housekeeping every `intervalMs` (never two runs at once); stop() ends it. */
export function startHousekeeping(
  store: Store,
  sessions: SessionService,
  clock: Clock,
  intervalMs: number,
  changeRetentionDays: number,
  log: Logger,
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = runHousekeeping(store, sessions, clock, changeRetentionDays)
      .then(
        (report) => {
          if (report.sessions + report.throttleRows + report.idempotencyKeys + report.changes + report.webhookDeliveries > 0) log.info({ housekeeping: report }, 'housekeeping removed expired rows');
        },
        (error: unknown) => log.warn({ err: error }, 'housekeeping failed; it runs again at the next interval'),
      )
      .finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
