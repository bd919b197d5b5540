/**
 * The change log (the table CHANGES of schema.ts): one row per entity created, changed or
 * deleted, written by the database's own triggers (sqlite/ddl.ts, postgres/ddl.ts) in the
 * transaction of the change. This module reads it, inside the caller's transaction and always
 * for one account: delta links read an entity set's changes after a position, the webhooks'
 * fan-out reads them in change_seq order past its own cursor (src/webhooks/change-log.ts), and the
 * housekeeping prunes rows older than the retention.
 */
import { ACCOUNT_COLUMN, CHANGES as C, CHANGES_SEQUENCE, type ChangeKind } from './schema';
import type { SqlExecutor, Store, ValueCodec } from './store';
import type { EntityTypeDef } from '../model/types';

/**
 * A position in the change log, from which a delta read takes every change after it, as text:
 * - SQLite (one writer): the highest change_seq the read's snapshot sees; later changes have higher.
 * - PostgreSQL: sequence numbers are drawn before commit, so a lower one can become visible after
 *   a higher one. The position is the read's snapshot itself (pg_current_snapshot(), "xmin:xmax:
 *   running ids"), and the changes after it are those whose writing transaction it did not see
 *   (pg_visible_in_snapshot): every change committed before the snapshot was taken is before the
 *   position, every other one after it, none missed and none repeated.
 */
export type ChangePosition = string;

const POSITION_SQL = {
  sqlite: `SELECT "last_value" AS p FROM "id_sequence" WHERE "name" = '${CHANGES_SEQUENCE}'`,
  postgres: `SELECT pg_current_snapshot()::text AS p`,
} as const;

/** What a position of each engine looks like (a token's is checked against it before use). */
const POSITION_FORM = { sqlite: /^\d{1,19}$/, postgres: /^\d{1,20}:\d{1,20}:(\d{1,20}(,\d{1,20}){0,10000})?$/ } as const;

export function isPosition(engine: Store['engine'], text: string): boolean {
  return POSITION_FORM[engine].test(text);
}

/** The position of the read's snapshot (run inside the read whose rows go with it). */
export async function currentPosition(store: Store, tx: SqlExecutor): Promise<ChangePosition> {
  const row = await tx.get<{ p: unknown }>(POSITION_SQL[store.engine]);
  return row?.p === null || row?.p === undefined ? '0' : String(row.p);
}

/**
 * The change log rows after a position (alias c), for each engine (see ChangePosition); `add`
 * binds a value and answers its placeholder. On PostgreSQL the index on writer_xact finds the
 * rows from the snapshot's xmin on; the visibility test keeps those it did not see.
 */
function afterPosition(engine: Store['engine'], position: ChangePosition, add: (value: bigint | string) => string): string {
  if (engine === 'sqlite') return `c.${q(C.seq)} > ${add(BigInt(position))}`;
  const xmin = BigInt(position.slice(0, position.indexOf(':')));
  return `c.${q(C.writerXact)} >= ${add(xmin)} AND NOT pg_visible_in_snapshot(c.${q(C.writerXact)}::text::xid8, CAST(${add(position)} AS pg_snapshot))`;
}

/**
 * A subquery: the ids of one set's entities the account's change log lists after a position
 * (`account` and `entitySet` are placeholders of the caller's statement; `add` binds the rest).
 */
export function changedIdsSql(engine: Store['engine'], account: string, entitySet: string, position: ChangePosition, add: (value: bigint | string) => string): string {
  return `SELECT c.${q(C.entityId)} FROM ${q(C.table)} c WHERE c.${q(ACCOUNT_COLUMN)} = ${account} AND c.${q(C.entitySet)} = ${entitySet} AND ${afterPosition(engine, position, add)}`;
}

/** An entity deleted after a position: its id, and when (UTC ms). */
export interface DeletedEntity {
  readonly id: bigint;
  readonly deletedAt: number;
}

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

const AFTER = `SELECT ${COLUMNS} FROM ${q(C.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${q(C.seq)} > ? ORDER BY ${q(C.seq)} LIMIT ?`;
const LAST_SEQ = `SELECT MAX(${q(C.seq)}) AS s FROM ${q(C.table)} WHERE ${q(ACCOUNT_COLUMN)} = ?`;
// Pruning goes by the primary key: an account's rows in change_seq order are in time order (within
// the moments a transaction takes), so the oldest come first and a batch stops at the young ones.
const PRUNE =
  `DELETE FROM ${q(C.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${q(C.seq)} IN ` +
  `(SELECT ${q(C.seq)} FROM ${q(C.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? ORDER BY ${q(C.seq)} LIMIT ?) AND ${q(C.changedAt)} < ?`;
const OLDEST = `SELECT ${q(C.changedAt)} AS at FROM ${q(C.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? ORDER BY ${q(C.seq)} LIMIT 1`;

/** Deleted since a position and not there now (an id is never reused). Parameters: account, set, then the position's. */
function deletedSinceSql(engine: Store['engine'], table: string, position: ChangePosition, params: (bigint | string)[]): string {
  const add = (value: bigint | string) => {
    params.push(value);
    return '?';
  };
  return (
    `SELECT c.${q(C.entityId)} AS id, MAX(c.${q(C.changedAt)}) AS at FROM ${q(C.table)} c ` +
    `WHERE c.${q(ACCOUNT_COLUMN)} = ? AND c.${q(C.entitySet)} = ? AND ${afterPosition(engine, position, add)} AND c.${q(C.kind)} = 'deleted' ` +
    `AND NOT EXISTS (SELECT 1 FROM ${q(table)} t WHERE t.${q(ACCOUNT_COLUMN)} = c.${q(ACCOUNT_COLUMN)} AND t.id = c.${q(C.entityId)}) ` +
    `GROUP BY c.${q(C.entityId)} ORDER BY c.${q(C.entityId)}`
  );
}

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

  /** The set's entities deleted after `since`, in id order. */
  async deletedSince(store: Store, tx: SqlExecutor, accountId: number, type: EntityTypeDef, since: ChangePosition): Promise<DeletedEntity[]> {
    const params: (bigint | string)[] = [];
    const sql = deletedSinceSql(store.engine, type.table, since, params);
    const rows = await tx.all<{ id: unknown; at: unknown }>(sql, [accountId, type.setName, ...params]);
    return rows.map((r) => ({ id: toBigInt(r.id), deletedAt: this.codec.decode('Edm.DateTime', r.at) as number }));
  }

  /** The account's changes after `afterSeq`, at most `limit`, in change_seq order. */
  async after(tx: SqlExecutor, accountId: number, afterSeq: bigint, limit: number): Promise<ChangeRow[]> {
    const rows = await tx.all<Record<string, unknown>>(AFTER, [accountId, afterSeq, limit]);
    return rows.map((r) => this.rowOf(r));
  }

  /** The account's highest change_seq the transaction sees (0 when it has none). */
  async lastSeq(tx: SqlExecutor, accountId: number): Promise<bigint> {
    const row = await tx.get<{ s: unknown }>(LAST_SEQ, [accountId]);
    return row?.s === null || row?.s === undefined ? 0n : toBigInt(row.s);
  }

  /** Whether the account's oldest row was written before `before` (UTC ms): a read, before pruning takes the writer. */
  async anyBefore(tx: SqlExecutor, accountId: number, before: number): Promise<boolean> {
    const row = await tx.get<{ at: unknown }>(OLDEST, [accountId]);
    return row !== undefined && (this.codec.decode('Edm.DateTime', row.at) as number) < before;
  }

  /**
   * Deletes those of the account's `limit` oldest rows that were written before `before`; how
   * many. Fewer than `limit`: the account has no more (inBatches stops).
   */
  async pruneBefore(tx: SqlExecutor, accountId: number, before: number, limit: number): Promise<number> {
    return (await tx.run(PRUNE, [accountId, accountId, limit, this.codec.encode('Edm.DateTime', before)])).changes;
  }
}
