/**
 * The stored first answers of POSTs that carried an Idempotency-Key (the table IDEMPOTENCY of
 * schema.ts), read and written inside the caller's transaction. What a key means to the protocol
 * (its syntax, a replay, a conflict) is the service's (service/idempotency.ts).
 */
import { ACCOUNT_COLUMN, IDEMPOTENCY as T } from './schema';
import type { SqlExecutor, ValueCodec } from './store';

/** An answer as stored: its headers include Content-Type. */
export interface StoredAnswer {
  readonly requestHash: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
}

const q = (name: string) => `"${name}"`;

const FORGET = `DELETE FROM ${q(T.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${q(T.createdAt)} < ?`;
const FIND = `SELECT ${[T.requestHash, T.status, T.headers, T.body].map(q).join(', ')} FROM ${q(T.table)} WHERE ${q(ACCOUNT_COLUMN)} = ? AND ${q(T.key)} = ?`;
const REMEMBER =
  `INSERT INTO ${q(T.table)} (${[ACCOUNT_COLUMN, T.key, T.requestHash, T.status, T.headers, T.body, T.createdAt].map(q).join(', ')}) ` +
  'VALUES (?, ?, ?, ?, ?, ?, ?)';

export class IdempotencyKeys {
  constructor(private readonly codec: ValueCodec) {}

  /** Forgets the account's keys stored before `before` (a tenant-scoped statement, as row-level security wants). */
  async forgetBefore(tx: SqlExecutor, accountId: number, before: number): Promise<void> {
    await tx.run(FORGET, [accountId, this.codec.encode('Edm.DateTime', before)]);
  }

  async find(tx: SqlExecutor, accountId: number, key: string): Promise<StoredAnswer | undefined> {
    const row = await tx.get<Record<string, unknown>>(FIND, [accountId, key]);
    if (!row) return undefined;
    return {
      requestHash: String(row[T.requestHash]),
      status: Number(row[T.status]),
      headers: JSON.parse(String(row[T.headers])) as Record<string, string>,
      body: row[T.body] === null || row[T.body] === undefined ? null : String(row[T.body]),
    };
  }

  async remember(tx: SqlExecutor, accountId: number, key: string, answer: StoredAnswer, now: number): Promise<void> {
    await tx.run(REMEMBER, [accountId, key, answer.requestHash, this.codec.encode('Edm.Int32', answer.status), JSON.stringify(answer.headers), answer.body, this.codec.encode('Edm.DateTime', now)]);
  }
}
