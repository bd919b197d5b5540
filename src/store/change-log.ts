/**
 * The change log (the table CHANGES of schema.ts): one row per entity created, changed or
 * deleted, written by the database's own triggers (sqlite/ddl.ts, postgres/ddl.ts) in the
 * transaction of the change. This module reads it, inside the caller's transaction and always
 * for one account: delta links read an entity set's changes after a position, the webhooks'
 * fan-out reads the unpublished rows in change_seq order and marks them published, and the
 * housekeeping prunes rows older than the retention.
 */
import { ACCOUNT_COLUMN, CHANGES as C, type ChangeKind } from './schema';
import type { SqlExecutor, ValueCodec } from './store';

export interface ChangeRow {
  /** change_seq: increasing in the order rows were written. */
  readonly seq: bigint;
  readonly entitySet: string;
  readonly entityId: bigint;
  readonly kind: ChangeKind;
  /** For 'changed': the model properties whose values changed; empty otherwise. */
  readonly changedProperties: readonly string[];
  /** UTC ms. */
  readonly changedAt: number;
}

const q = (name: string) => `"${name}"`;
const COLUMNS = [C.seq, C.entitySet, C.entityId, C.kind, C.changedProperties, C.changedAt].map(q).join(', ');

const UNPUBLISHED =
  `SELECT ${COLUMNS} FROM ${q(C.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${q(C.published)} = 0 AND ${q(C.seq)} > ? ` +
  `ORDER BY ${q(C.seq)} LIMIT ?`;
const PUBLISH = `UPDATE ${q(C.table)} SET ${q(C.published)} = 1 WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${q(C.published)} = 0 AND ${q(C.seq)} <= ?`;
const LAST_SEQ = `SELECT MAX(${q(C.seq)}) AS s FROM ${q(C.table)} WHERE ${q(ACCOUNT_COLUMN)} = ?`;
const PRUNE =
  `DELETE FROM ${q(C.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${q(C.seq)} IN ` +
  `(SELECT ${q(C.seq)} FROM ${q(C.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${q(C.changedAt)} < ? LIMIT ?)`;
const ANY_OLDER = `SELECT 1 AS found FROM ${q(C.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${q(C.changedAt)} < ? LIMIT 1`;

const toBigInt = (v: unknown) => (typeof v === 'bigint' ? v : BigInt(String(v)));

export class ChangeLog {
  constructor(private readonly codec: ValueCodec) {}

  /** A stored row as a ChangeRow (rows selected with the columns of COLUMNS, by name). */
  rowOf(r: Record<string, unknown>): ChangeRow {
    const changed = String(r[C.changedProperties] ?? '');
    return {
      seq: toBigInt(r[C.seq]),
      entitySet: String(r[C.entitySet]),
      entityId: toBigInt(r[C.entityId]),
      kind: String(r[C.kind]) as ChangeKind,
      changedProperties: changed === '' ? [] : changed.split(','),
      changedAt: this.codec.decode('Edm.DateTime', r[C.changedAt]) as number,
    };
  }

  /** The account's unpublished changes after `afterSeq`, at most `limit`, in change_seq order (the webhooks' fan-out). */
  async unpublished(tx: SqlExecutor, accountId: number, afterSeq: bigint, limit: number): Promise<ChangeRow[]> {
    const rows = await tx.all<Record<string, unknown>>(UNPUBLISHED, [accountId, afterSeq, limit]);
    return rows.map((r) => this.rowOf(r));
  }

  /** Marks the account's unpublished changes up to `throughSeq` published; how many were. */
  async markPublished(tx: SqlExecutor, accountId: number, throughSeq: bigint): Promise<number> {
    return (await tx.run(PUBLISH, [accountId, throughSeq])).changes;
  }

  /** The account's highest change_seq the transaction sees (0 when it has none). */
  async lastSeq(tx: SqlExecutor, accountId: number): Promise<bigint> {
    const row = await tx.get<{ s: unknown }>(LAST_SEQ, [accountId]);
    return row?.s === null || row?.s === undefined ? 0n : toBigInt(row.s);
  }

  /** Whether the account has rows written before `before` (UTC ms): a read, before pruning takes the writer. */
  async anyBefore(tx: SqlExecutor, accountId: number, before: number): Promise<boolean> {
    return (await tx.get(ANY_OLDER, [accountId, this.codec.encode('Edm.DateTime', before)])) !== undefined;
  }

  /** Deletes at most `limit` of the account's rows written before `before`; how many. */
  async pruneBefore(tx: SqlExecutor, accountId: number, before: number, limit: number): Promise<number> {
    return (await tx.run(PRUNE, [accountId, accountId, this.codec.encode('Edm.DateTime', before), limit])).changes;
  }
}
