/**
 * The fan-out: turns an account's new changes into one delivery per matching enabled
 * subscription, and moves the account's cursor past them, in one transaction. A change is thus either
 * still unpublished or has all of its deliveries written; a crash between the two cannot lose or
 * double an event. Each event gets the account's next sequence number (shared by its copies to
 * several subscriptions) and, per subscription, its own event id.
 */
import { randomUUID } from 'node:crypto';
import type { SqlExecutor, SqlValue, Store } from '../store/store';
import { WEBHOOK_DELIVERIES } from '../store/schema';
import type { ChangeRow } from '../store/change-log';
import { eventsOf, type EventType } from './event-types';
import { OutboxReader } from './change-log';
import { num, selectSubscriptions } from './subscriptions';

/** The version of the payload's shape; a receiver checks it before reading the rest. */
export const PAYLOAD_VERSION = 1;

/** Changes fanned out per transaction: a short hold of the account's writer. */
const FAN_OUT_BATCH = 500;

/** Delivery rows per INSERT (8 values each, well within either engine's limit on parameters). */
const INSERT_ROWS = 100;

export interface EventPayload {
  readonly id: string;
  readonly type: EventType;
  /** When the change was committed (ISO 8601, UTC). */
  readonly time: string;
  readonly account: number;
  readonly sequence: number;
  readonly entity: { readonly set: string; readonly key: number; readonly uri: string };
  readonly version: typeof PAYLOAD_VERSION;
  readonly data: { readonly change: string; readonly properties: readonly string[] };
}

export function payloadOf(change: ChangeRow, type: EventType, eventId: string, accountId: number, sequence: number, serviceRoot: string): EventPayload {
  const key = Number(change.entityId);
  return {
    id: eventId,
    type,
    time: new Date(change.changedAt).toISOString(),
    account: accountId,
    sequence,
    entity: { set: change.entitySet, key, uri: `${serviceRoot}/${change.entitySet}(${key}L)` },
    version: PAYLOAD_VERSION,
    data: { change: change.kind, properties: change.changedProperties },
  };
}

async function nextSequence(tx: SqlExecutor, accountId: number): Promise<number> {
  const row = await tx.get<{ last: unknown }>(`SELECT MAX(sequence) AS last FROM ${WEBHOOK_DELIVERIES} WHERE account_id = ?`, [accountId]);
  return row?.last === null || row?.last === undefined ? 1 : num(row.last) + 1;
}

/** Fans out one batch of the account's changes; how many changes it published. */
async function fanOutBatch(tx: SqlExecutor, outbox: OutboxReader, accountId: number, serviceRoot: string, now: number): Promise<number> {
  const subscriptions = (await selectSubscriptions(tx, accountId)).filter((s) => s.enabled);
  if (subscriptions.length === 0) {
    await outbox.markAllPublished(tx, accountId);
    return 0;
  }
  const changes = await outbox.unpublished(tx, accountId, FAN_OUT_BATCH);
  if (changes.length === 0) return 0;
  let sequence = await nextSequence(tx, accountId);
  const rows: SqlValue[][] = [];
  for (const change of changes) {
    for (const type of eventsOf(change)) {
      const receivers = subscriptions.filter((s) => s.eventTypes.includes(type));
      if (receivers.length === 0) continue;
      for (const s of receivers) {
        const eventId = randomUUID();
        const payload = JSON.stringify(payloadOf(change, type, eventId, accountId, sequence, serviceRoot));
        rows.push([accountId, eventId, s.id, sequence, type, payload, now, now]);
      }
      sequence++;
    }
  }
  // Many rows per statement: the fan-out holds the account's writer, which requests wait for.
  for (let i = 0; i < rows.length; i += INSERT_ROWS) {
    const chunk = rows.slice(i, i + INSERT_ROWS);
    await tx.run(
      `INSERT INTO ${WEBHOOK_DELIVERIES} (account_id, event_id, subscription_id, sequence, event_type, payload, created_at, next_attempt_at, state, attempts)
       VALUES ${chunk.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0)").join(', ')}`,
      chunk.flat(),
    );
  }
  await outbox.markPublished(tx, accountId, changes[changes.length - 1]!.seq);
  return changes.length;
}

/**
 * Fans out all of the account's unpublished changes, a batch per transaction; how many. A read
 * first: an account with nothing new never takes its writer.
 */
export async function fanOutAccount(store: Store, outbox: OutboxReader, accountId: number, serviceRoot: string, now: () => number): Promise<number> {
  if (!(await store.read(accountId, (tx) => outbox.any(tx, accountId)))) return 0;
  let total = 0;
  for (;;) {
    // Repeatable: it changes nothing outside its transaction (the event ids it draws are only
    // kept if it commits), so on PostgreSQL it does not hold up the account's batch of writes.
    const published = await store.write(accountId, (tx) => fanOutBatch(tx, outbox, accountId, serviceRoot, now()), { repeatable: true });
    total += published;
    if (published < FAN_OUT_BATCH) return total;
  }
}
