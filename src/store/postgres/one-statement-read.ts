/**
 * A read of exactly one statement (ReadExtent 'one': a GET by key, a plain collection page) as
 * the Store's SqlExecutor: its statement travels with the setup (the credential check that sets
 * the tenant) in one implicit transaction (see ./together.ts). No BEGIN, no COMMIT: one statement sees one snapshot
 * whatever the isolation level, and the tenant setting ends with the Sync, exactly as it would
 * with a COMMIT. A second statement is refused, never run outside that transaction.
 */
import type { ClientBase } from 'pg';
import type { RunResult, SqlExecutor, SqlValue } from '../store';
import { inBatches } from './executor';
import type { StatementCache } from './statements';
import { completedBefore, runTogether, type StatementResult, type StatementToSend } from './together';

/** What runs before the read's statement: it sets the tenant; `check` judges its row. */
export interface ReadSetup extends StatementToSend {
  readonly check?: (row: Record<string, unknown> | undefined) => void;
}

/** The setup is the first statement sent; its row is read as an object (a ReadGuard judges it by column name). */
const SETUP_INDEX = 0;

export class OneStatementRead implements SqlExecutor {
  /** The setup's verdict once it is known (a rejection carries the check's refusal). */
  private verdict: Promise<void> | undefined;
  private used = false;

  constructor(
    private readonly client: ClientBase,
    private readonly statements: StatementCache | undefined,
    private readonly setup: ReadSetup,
  ) {}

  private async query(sql: string, params: readonly SqlValue[] = [], asArrays = false): Promise<StatementResult> {
    if (this.used) throw new Error('This read was declared one statement (ReadExtent one): it runs no second one');
    this.used = true;
    const answered = runTogether(this.client, [this.setup, { sql, params }], this.statements, (i) => i !== SETUP_INDEX && asArrays);
    this.verdict = answered.then(
      ([setupResult]) => this.judge(setupResult!),
      (error: unknown) => {
        // The setup answered before the statement failed (an error of a $filter's expression,
        // say): its row decides the verdict, and the statement's error is the statement's own.
        const setupResult = completedBefore(error)[SETUP_INDEX];
        if (!setupResult) throw error;
        this.judge(setupResult);
      },
    );
    this.verdict.catch(() => undefined);
    const [, result] = await answered;
    // The statement's rows count only if the setup admitted the read.
    await this.verdict;
    return result!;
  }

  /**
   * The setup's verdict: awaited after fn, so that a read that ran no statement (or failed
   * before its first) still has its credentials checked, and a refusal is the error it reports.
   */
  settled(): Promise<void> {
    if (!this.verdict) {
      this.used = true;
      this.verdict = runTogether(this.client, [this.setup], this.statements, () => false).then(([setupResult]) => this.judge(setupResult!));
    }
    return this.verdict;
  }

  private judge(setupResult: StatementResult): void {
    this.setup.check?.(setupResult.rows[0] as Record<string, unknown> | undefined);
  }

  async rows(sql: string, params?: readonly SqlValue[]): Promise<unknown[][]> {
    return (await this.query(sql, params, true)).rows as unknown[][];
  }

  async *iterateRows(sql: string, params?: readonly SqlValue[]): AsyncIterable<unknown[]> {
    yield* await this.rows(sql, params);
  }

  iterateRowBatches(sql: string, params: readonly SqlValue[], batchRows: number): AsyncIterable<unknown[][]> {
    return inBatches(this.iterateRows(sql, params), batchRows);
  }

  async all<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    return (await this.query(sql, params)).rows as Row[];
  }

  async get<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined> {
    return (await this.query(sql, params)).rows[0] as Row | undefined;
  }

  async run(sql: string, params?: readonly SqlValue[]): Promise<RunResult> {
    return { changes: (await this.query(sql, params)).rowCount };
  }

  async *iterate<Row>(sql: string, params?: readonly SqlValue[]): AsyncIterable<Row> {
    yield* await this.all<Row>(sql, params);
  }
}
