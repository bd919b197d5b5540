/**
 * The change log as the webhook fan-out reads it: `entity_changes`, one row per created, changed
 * or deleted entity, written by the store in the change's own transaction (the outbox). A row is
 * `published` once the fan-out has turned it into deliveries, in the transaction that wrote them.
 */
import type { SqlExecutor } from '../store/store';
import type { ChangeKind, ChangeRow } from './event-types';

export const CHANGES = 'entity_changes';

/** The condition of a row not fanned out yet (TRUE and FALSE are literals on both engines). */
export const UNPUBLISHED = 'published = FALSE';

/** A time column's value (a Date on PostgreSQL's timestamp, or milliseconds) as milliseconds. */
function millisOf(raw: unknown): number {
  if (raw instanceof Date) return raw.getTime();
  if (typeof raw === 'number') return raw;
  if (typeof raw === 'bigint') return Number(raw);
  if (typeof raw === 'string') return /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw.endsWith('Z') ? raw : raw + 'Z');
  return Date.now();
}

/**
 * The oldest unpublished changes of the account, at most `limit`, in commit order. On PostgreSQL
 * the rows are locked (SKIP LOCKED: a row another process is fanning out is left to it); the
 * account's write lock, which every write transaction takes, already keeps two fan-outs of one
 * account apart.
 */
export async function unpublishedChanges(tx: SqlExecutor, engine: 'sqlite' | 'postgres', accountId: number, limit: number): Promise<ChangeRow[]> {
  const rows = await tx.all(
    `SELECT change_seq, entity_set, entity_id, change_kind, changed_properties, changed_at FROM ${CHANGES}
      WHERE account_id = ? AND ${UNPUBLISHED} ORDER BY change_seq LIMIT ?${engine === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : ''}`,
    [accountId, limit],
  );
  return rows.map((r) => ({
    seq: BigInt(r.change_seq as bigint | string | number),
    entitySet: r.entity_set as string,
    entityId: BigInt(r.entity_id as bigint | string | number),
    kind: r.change_kind as ChangeKind,
    properties: typeof r.changed_properties === 'string' && r.changed_properties !== '' ? r.changed_properties.split(',') : [],
    changedAt: millisOf(r.changed_at),
  }));
}

/** Marks the changes published (a list of change_seq). */
export async function markPublished(tx: SqlExecutor, accountId: number, seqs: readonly bigint[]): Promise<void> {
  for (let i = 0; i < seqs.length; i += 500) {
    const chunk = seqs.slice(i, i + 500);
    await tx.run(`UPDATE ${CHANGES} SET published = TRUE WHERE account_id = ? AND change_seq IN (${chunk.map(() => '?').join(', ')})`, [accountId, ...chunk]);
  }
}

/** Marks every unpublished change of the account published (an account with no enabled subscription). */
export async function markAllPublished(tx: SqlExecutor, accountId: number): Promise<number> {
  return (await tx.run(`UPDATE ${CHANGES} SET published = TRUE WHERE account_id = ? AND ${UNPUBLISHED}`, [accountId])).changes;
}

/** Whether the account has a change to fan out: a read, so that an idle account never takes the writer. */
export async function hasUnpublished(tx: SqlExecutor, accountId: number): Promise<boolean> {
  return (await tx.get(`SELECT 1 AS found FROM ${CHANGES} WHERE account_id = ? AND ${UNPUBLISHED} LIMIT 1`, [accountId])) !== undefined;
}
