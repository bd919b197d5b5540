/**
 * The change log as the webhook fan-out reads it: `entity_changes`, one row per created, changed
 * or deleted entity, written by the database's triggers in the change's own transaction (the
 * outbox). The fan-out keeps its place per account in `webhook_cursors` (the last change_seq it
 * has fanned out), moved in the transaction that writes the deliveries; the change rows
 * themselves are never rewritten.
 *
 * No row locks are needed: the fan-out runs in a write transaction of the account, and every
 * write of an account holds its write lock (PostgreSQL's advisory lock, SQLite's single writer),
 * so two processes never fan out one account at once, and an account's changes commit in
 * change_seq order: none can appear behind the cursor later.
 */
import { ChangeLog, type ChangeRow } from '../store/change-log';
import { WEBHOOK_CURSORS } from '../store/schema';
import type { SqlExecutor, ValueCodec } from '../store/store';

const CURSOR = `SELECT last_seq FROM ${WEBHOOK_CURSORS} WHERE account_id = ?`;
const MOVE = `INSERT INTO ${WEBHOOK_CURSORS} (account_id, last_seq) VALUES (?, ?) ON CONFLICT (account_id) DO UPDATE SET last_seq = excluded.last_seq`;

const toBigInt = (v: unknown): bigint => (typeof v === 'bigint' ? v : BigInt(String(v)));

export class OutboxReader {
  /** The store's reads of the change log; this reader adds the cursor. */
  private readonly log: ChangeLog;

  constructor(codec: ValueCodec) {
    this.log = new ChangeLog(codec);
  }

  /** The last change_seq the account's fan-out has passed (0 before its first). */
  async cursor(tx: SqlExecutor, accountId: number): Promise<bigint> {
    const row = await tx.get<{ last_seq: unknown }>(CURSOR, [accountId]);
    return row ? toBigInt(row.last_seq) : 0n;
  }

  /** The account's changes after the cursor, at most `limit`, in commit order. */
  async unpublished(tx: SqlExecutor, accountId: number, limit: number): Promise<ChangeRow[]> {
    return this.log.after(tx, accountId, await this.cursor(tx, accountId), limit);
  }

  /** Whether the account has a change to fan out: a read, so that an idle account never takes the writer. */
  async any(tx: SqlExecutor, accountId: number): Promise<boolean> {
    return (await this.log.after(tx, accountId, await this.cursor(tx, accountId), 1)).length > 0;
  }

  /** Moves the cursor to `throughSeq`: the changes up to it are fanned out. */
  async markPublished(tx: SqlExecutor, accountId: number, throughSeq: bigint): Promise<void> {
    await tx.run(MOVE, [accountId, throughSeq]);
  }

  /** Moves the cursor past every change of the account (no enabled subscription wants them). */
  async markAllPublished(tx: SqlExecutor, accountId: number): Promise<void> {
    const last = await this.log.lastSeq(tx, accountId);
    if (last > (await this.cursor(tx, accountId))) await this.markPublished(tx, accountId, last);
  }
}
