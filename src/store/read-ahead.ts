/**
 * Rows of a write transaction read ahead, and handed out as the answers of the statements that
 * would have read them one by one.
 *
 * A changeset of a $batch addresses its entities by key (`ProductVariations(7L)`), and each
 * operation reads its entity before it writes it. On PostgreSQL each of those reads is a round
 * trip inside the account's write lock, so ten MERGEs cost twenty. Read together in one statement
 * beforehand, they cost one, sent with the changeset's first statement.
 *
 * An answer kept is only given while it is still what the database would answer:
 * - every statement run through this executor that is not a plain SELECT (an INSERT, UPDATE,
 *   DELETE, a WITH, anything) may have changed any row, and ends every answer kept;
 * - except the UPDATE of one row by its key that the entity store reports (rowUpdated): that
 *   ends the answers of that row only.
 * No other transaction can change the account's rows meanwhile: writes of an account are
 * serialised (PostgreSQL's per-account lock, SQLite's single writer), and this executor is used
 * inside one write only.
 */
import type { IdsAhead, RunResult, SqlExecutor, SqlValue } from './store';

/** Whether a statement can only read: anything else is taken to change rows. */
function readsOnly(sql: string): boolean {
  return /^\s*SELECT\s/i.test(sql);
}

export class ReadAheadExecutor implements SqlExecutor {
  /** Statements run so far that may have changed rows. */
  private changes = 0;
  /** The number of changes the kept answers are valid at; any other count voids them. */
  private keptAt = 0;
  /** Kept answers: per statement text, per account and key, the row (or null: no such row). */
  private readonly kept = new Map<string, Map<string, readonly unknown[] | null>>();

  constructor(private readonly inner: SqlExecutor) {}

  /**
   * Keeps the answers of `statement` (params: account, key) for these keys, read in one
   * statement sent when the change count was `sentAt`: `rows` holds the rows found (keyOf
   * names a row's key); a key without a row is answered with no row. Kept only if nothing that
   * may change rows was sent since, and valid until something is.
   */
  keep(statement: string, accountId: number, keys: readonly bigint[], rows: readonly (readonly unknown[])[], keyOf: (row: readonly unknown[]) => bigint, sentAt: number): void {
    if (sentAt !== this.changes) return;
    if (this.keptAt !== this.changes) this.kept.clear();
    this.keptAt = this.changes;
    let answers = this.kept.get(statement);
    if (!answers) this.kept.set(statement, (answers = new Map()));
    for (const key of keys) answers.set(`${accountId}/${key}`, null);
    for (const row of rows) answers.set(`${accountId}/${keyOf(row)}`, row);
  }

  get idsAhead(): IdsAhead | undefined {
    return this.inner.idsAhead;
  }

  writeBehind(sent: Promise<unknown>): boolean {
    return this.inner.writeBehind?.(sent) ?? false;
  }

  writesBehind(): boolean {
    return this.inner.writesBehind?.() ?? false;
  }

  /** Statements sent so far that may have changed rows: pass it to keep() or rowUpdated(). */
  get changeCount(): number {
    return this.changes;
  }

  /**
   * The one statement sent when the change count was `before` updated the row of `statement`
   * for (account, key), and nothing else: that row's answer is dropped, the others stay valid.
   */
  rowUpdated(statement: string, accountId: number, key: bigint, before: number): void {
    this.kept.get(statement)?.delete(`${accountId}/${key}`);
    if (this.keptAt === before && this.changes === before + 1) this.keptAt = this.changes;
  }

  /** A kept answer for (statement, params), if one is still valid. */
  private answerOf(sql: string, params: readonly SqlValue[] | undefined): unknown[][] | undefined {
    if (this.kept.size === 0 || params?.length !== 2) return undefined;
    if (this.keptAt !== this.changes) {
      this.kept.clear();
      return undefined;
    }
    const row = this.kept.get(sql)?.get(`${String(params[0])}/${String(params[1])}`);
    if (row === undefined) return undefined;
    return row === null ? [] : [[...row]];
  }

  private sent(sql: string): void {
    if (!readsOnly(sql)) this.changes++;
  }

  rows(sql: string, params?: readonly SqlValue[]): Promise<unknown[][]> {
    const answer = this.answerOf(sql, params);
    if (answer !== undefined) return Promise.resolve(answer);
    this.sent(sql);
    return this.inner.rows(sql, params);
  }

  all<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    this.sent(sql);
    return this.inner.all<Row>(sql, params);
  }

  get<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined> {
    this.sent(sql);
    return this.inner.get<Row>(sql, params);
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult> {
    this.sent(sql);
    return this.inner.run(sql, params);
  }

  iterate<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): AsyncIterable<Row> {
    this.sent(sql);
    return this.inner.iterate<Row>(sql, params);
  }

  iterateRows(sql: string, params?: readonly SqlValue[]): AsyncIterable<unknown[]> {
    this.sent(sql);
    return this.inner.iterateRows(sql, params);
  }

  iterateRowBatches(sql: string, params: readonly SqlValue[], batchRows: number): AsyncIterable<unknown[][]> {
    this.sent(sql);
    return this.inner.iterateRowBatches(sql, params, batchRows);
  }
}
