/**
 * The lines of an order's history (the table ORDER_HISTORY of schema.ts), appended and read
 * inside the caller's transaction. What a line says and how it is rendered is the catalogue's
 * (catalogue/order-history.ts).
 */
import { ACCOUNT_COLUMN, ORDER_HISTORY as H } from './schema';
import type { SqlExecutor, Store } from './store';

export interface HistoryLine {
  readonly platformItemId: string;
  readonly action: string;
  readonly value: number;
  /** ms since the epoch. */
  readonly recordedAt: number;
}

const q = (name: string) => `"${name}"`;

const APPEND =
  `INSERT INTO ${q(H.table)} (${[ACCOUNT_COLUMN, H.id, H.orderId, H.platformItemId, H.action, H.value, H.recordedAt].map(q).join(', ')}) ` +
  'VALUES (?, ?, ?, ?, ?, ?, ?)';
const OF_ORDER =
  `SELECT ${[H.platformItemId, H.action, H.value, H.recordedAt].map(q).join(', ')} FROM ${q(H.table)} ` +
  `WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${q(H.orderId)} = ? ORDER BY ${q(H.id)}`;

export async function appendHistoryLine(store: Store, tx: SqlExecutor, accountId: number, orderId: bigint, line: HistoryLine): Promise<void> {
  const codec = store.codec;
  await tx.run(APPEND, [accountId, await store.nextId(tx), orderId, line.platformItemId, line.action, codec.encode('Edm.Int32', line.value), codec.encode('Edm.DateTime', line.recordedAt)]);
}

/** The order's lines, oldest first. */
export async function historyLinesOf(store: Store, exec: SqlExecutor, accountId: number, orderId: bigint): Promise<HistoryLine[]> {
  const rows = await exec.all<Record<string, unknown>>(OF_ORDER, [accountId, orderId]);
  const codec = store.codec;
  return rows.map((r) => ({
    platformItemId: String(r[H.platformItemId]),
    action: String(r[H.action]),
    value: codec.decode('Edm.Int32', r[H.value]) as number,
    recordedAt: codec.decode('Edm.DateTime', r[H.recordedAt]) as number,
  }));
}
