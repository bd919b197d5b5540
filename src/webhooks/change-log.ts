/**
 * The change log (store/change-log.ts) as the webhook fan-out reads it: `entity_changes`, one row
 * per created, changed or deleted entity, written by the database's triggers in the change's own
 * transaction (the outbox). A row is published once the fan-out has turned it into deliveries,
 * in the transaction that wrote them.
 *
 * No row locks are needed: the fan-out runs in a write transaction of the account, and every
 * write of an account holds its write lock (PostgreSQL's advisory lock, SQLite's single writer),
 * so two processes never fan out one account at once and no change of the account commits
 * between reading the unpublished rows and marking them.
 */
import { ChangeLog, type ChangeRow as StoredChange } from '../store/change-log';
import type { SqlExecutor, ValueCodec } from '../store/store';
import type { ChangeRow } from './event-types';

const changeOf = (c: StoredChange): ChangeRow => ({ seq: c.seq, entitySet: c.entitySet, entityId: c.entityId, kind: c.kind, properties: c.changedProperties, changedAt: c.changedAt });

export class OutboxReader {
  private readonly log: ChangeLog;

  constructor(codec: ValueCodec) {
    this.log = new ChangeLog(codec);
  }

  /** The oldest unpublished changes of the account, at most `limit`, in commit order. */
  async unpublished(tx: SqlExecutor, accountId: number, limit: number): Promise<ChangeRow[]> {
    return (await this.log.unpublished(tx, accountId, 0n, limit)).map(changeOf);
  }

  /** Whether the account has a change to fan out: a read, so that an idle account never takes the writer. */
  async any(tx: SqlExecutor, accountId: number): Promise<boolean> {
    return (await this.log.unpublished(tx, accountId, 0n, 1)).length > 0;
  }

  /** Marks the account's unpublished changes up to `throughSeq` published. */
  markPublished(tx: SqlExecutor, accountId: number, throughSeq: bigint): Promise<number> {
    return this.log.markPublished(tx, accountId, throughSeq);
  }

  /** Marks every change of the account published (no enabled subscription wants them). */
  async markAllPublished(tx: SqlExecutor, accountId: number): Promise<number> {
    return this.log.markPublished(tx, accountId, await this.log.lastSeq(tx, accountId));
  }
}
