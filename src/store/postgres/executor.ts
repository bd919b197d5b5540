/**
 * Statements on one pooled connection, as the Store's SqlExecutor: `?` placeholders numbered,
 * every statement named and prepared once per connection (or, behind a transaction-mode pooler,
 * sent unnamed: the pooler may hand the next statement to another server connection, where a
 * name prepared here would not exist), and streamed reads through a cursor
 * declared in the transaction (DECLARE … CURSOR / FETCH), so that other statements can run on
 * the same connection between two pages (the expansions of a streamed feed do exactly that).
 * A protocol-level portal (pg-cursor) would hold the connection until the stream ends.
 */
import type { ClientBase, QueryResult } from 'pg';
import type { IdsAhead, RunResult, SqlExecutor, SqlValue } from '../store';
import { holdWritesWhile } from './held-writes';
import { prepared, type StatementCache } from './statements';

/** Rows fetched per round trip of a streamed read. */
export const FETCH_ROWS = 200;

export class ConnectionExecutor implements SqlExecutor {
  private cursors = 0;
  private ended = false;
  /** Statements sent before fn's first one (BEGIN, the tenant) whose answers are not yet checked. */
  private prelude: Promise<unknown> | undefined;
  /** Statements to send before the next one (see defer()). */
  private readonly deferred: string[] = [];
  /** Set by the write transaction that drew ids ahead (WriteOptions.newIds). */
  idsAhead: IdsAhead | undefined;
  /** Where the write running now notes the statements it leaves behind; unset where it waits for them. */
  behind: ((sent: Promise<unknown>) => void) | undefined;

  constructor(
    private readonly client: ClientBase,
    /** This connection's named statements, or undefined to send every statement unnamed. */
    private readonly statements: StatementCache | undefined,
    /** Whether statements run inside a transaction (a cursor needs one). */
    private readonly inTransaction: boolean,
  ) {}

  query(sql: string, params: readonly SqlValue[] = [], asArrays = false): Promise<QueryResult> {
    if (this.ended) return Promise.reject(new Error('The transaction has ended: its executor cannot run statements'));
    this.sendDeferred();
    const result = this.send(sql, params, asArrays);
    const prelude = this.prelude;
    if (!prelude) return result;
    // This statement went out right behind the prelude (pipelined): its answer counts only if
    // the prelude succeeded. If the prelude failed, its error is the one to report.
    this.prelude = undefined;
    result.catch(() => undefined);
    return prelude.then(() => result);
  }

  private send(sql: string, params: readonly SqlValue[], asArrays: boolean): Promise<QueryResult> {
    const rowMode = asArrays ? { rowMode: 'array' } : {};
    const p = prepared(sql);
    if (!this.statements || p.perExecution) return this.client.query({ text: p.text, values: params as unknown[], ...rowMode });
    this.statements.use(p);
    return this.client.query({ name: p.name, text: p.text, values: params as unknown[], ...rowMode });
  }

  /** Holds the connection's writes back until the returned function is called or the tick ends (holdWritesWhile). */
  holdWrites(): () => void {
    return holdWritesWhile(this.client);
  }

  writesBehind(): boolean {
    return this.behind !== undefined;
  }

  writeBehind(sent: Promise<unknown>): boolean {
    if (!this.behind) return false;
    this.behind(sent);
    return true;
  }

  /**
   * A statement nobody waits for the answer of (a finished cursor's CLOSE): it is sent with the
   * next statement, or with the COMMIT, and that one's caller learns if it failed.
   */
  defer(sql: string): void {
    this.deferred.push(sql);
  }

  /**
   * Forgets the deferred statements unsent: after a rollback to a savepoint, the cursors they
   * would close are closed already, and the transaction would refuse them while it is aborted.
   */
  discardDeferred(): void {
    this.deferred.length = 0;
  }

  /** The deferred statements, no longer to be sent by this executor (someone else sends them). */
  takeDeferred(): string[] {
    return this.deferred.splice(0);
  }

  /** Sends the deferred statements; the next statement (or settled()) waits for them. */
  sendDeferred(): void {
    for (const sql of this.deferred.splice(0)) this.after(this.send(sql, [], false));
  }

  /** Statements already sent (BEGIN, the tenant) that the next statement waits for along with its own. */
  after(prelude: Promise<unknown>): void {
    prelude.catch(() => undefined);
    const pending = this.prelude;
    this.prelude = pending ? Promise.all([pending, prelude]) : prelude;
    this.prelude.catch(() => undefined);
  }

  /** Waits for what was sent and not yet waited for (fn ran no statement after it). */
  async settled(): Promise<void> {
    this.sendDeferred();
    const prelude = this.prelude;
    this.prelude = undefined;
    await prelude;
  }

  async rows(sql: string, params?: readonly SqlValue[]): Promise<unknown[][]> {
    return (await this.query(sql, params, true)).rows as unknown[][];
  }

  iterateRows(sql: string, params: readonly SqlValue[] = []): AsyncIterable<unknown[]> {
    return this.stream<unknown[]>(sql, params, true);
  }

  async *iterateRowBatches(sql: string, params: readonly SqlValue[], batchRows: number): AsyncIterable<unknown[][]> {
    yield* inBatches(this.stream<unknown[]>(sql, params, true), batchRows);
  }

  async all<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    return (await this.query(sql, params)).rows as Row[];
  }

  async get<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined> {
    return (await this.query(sql, params)).rows[0] as Row | undefined;
  }

  async run(sql: string, params?: readonly SqlValue[]): Promise<RunResult> {
    return { changes: (await this.query(sql, params)).rowCount ?? 0 };
  }

  iterate<Row>(sql: string, params: readonly SqlValue[] = []): AsyncIterable<Row> {
    return this.stream<Row>(sql, params, false);
  }

  private async *stream<Row>(sql: string, params: readonly SqlValue[], asArrays: boolean): AsyncIterable<Row> {
    if (!this.inTransaction) {
      // One statement on its own has nothing to stream against; it is read whole.
      yield* (await this.query(sql, params, asArrays)).rows as Row[];
      return;
    }
    // Cursor names are numbered per transaction, so the DECLARE texts (and their prepared
    // statements) repeat from one transaction to the next.
    const cursor = `cursor_${++this.cursors}`;
    const fetch = () => this.query(`FETCH FORWARD ${FETCH_ROWS} FROM ${cursor}`, [], asArrays);
    // The first FETCH goes out right behind the DECLARE (pipelined): one round trip for both.
    const declared = this.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${sql}`, params);
    let fetched = fetch();
    fetched.catch(() => undefined);
    await declared;
    let open = true;
    try {
      for (;;) {
        const rows = (await fetched).rows as Row[];
        for (const row of rows) yield row;
        if (rows.length < FETCH_ROWS) break;
        fetched = fetch();
      }
      // Not waited for here: it goes out with the next statement, or with the COMMIT.
      this.defer(`CLOSE ${cursor}`);
      open = false;
    } finally {
      // Left early (the consumer stopped, or something failed): close the cursor if the
      // transaction can still run statements; otherwise ending the transaction closes it.
      if (open && !this.ended) await this.query(`CLOSE ${cursor}`).catch(() => undefined);
    }
  }

  /** Called when the transaction ends: nothing may run on this executor afterwards. */
  end(): void {
    this.ended = true;
  }
}

/**
 * Rows regrouped into batches of at most `size`. Every row of a FETCH is already in memory, so
 * the regrouping costs nothing but the awaits it saves the consumer.
 */
export async function* inBatches<Row>(rows: AsyncIterable<Row>, size: number): AsyncIterable<Row[]> {
  let batch: Row[] = [];
  for await (const row of rows) {
    batch.push(row);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
