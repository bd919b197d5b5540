/**
 * The writes of one account's batch (PostgresStore's group commit), run one after the other in
 * one transaction on one connection, each in its own SAVEPOINT: a write that fails is undone
 * alone and the batch goes on. The caller has begun the transaction, set the tenant, taken the
 * account's lock and drawn the ids ahead; it commits what this answers.
 *
 * Where a write may run again (WriteOptions.repeatable), the statements it leaves behind
 * (sentBehind: the INSERTs of rows it has checked) are not waited for: it is done once it has
 * sent them, and the next write's work in node overlaps the server's work on them. Should one
 * of them fail, every statement sent after it failed too, since the transaction was aborted at
 * that point; the batch then rolls back to the savepoint of the write it belongs to and runs
 * that write and every one after it again, waiting for each statement, so that each ends
 * exactly as if the batch had never left anything behind. A write that may not run again is
 * only started once everything left behind before it has succeeded.
 */
import type { ReadGuard } from '../store';
import type { ConnectionExecutor } from './executor';
import { WritesBehind } from './writes-behind';

/** Each write's savepoint: one name, since a write's is released before the next one's is set. */
const SAVEPOINT = 'SAVEPOINT write_job';
const RELEASE = 'RELEASE SAVEPOINT write_job';

export interface WriteJob {
  run(tx: ConnectionExecutor): Promise<unknown>;
  /** WriteOptions.guard. */
  readonly guard: ReadGuard | undefined;
  /** Ids it expects to take (WriteOptions.newIds). */
  readonly newIds: number;
  /** WriteOptions.repeatable. */
  readonly repeatable: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface JobOutcome {
  readonly ok: boolean;
  readonly value: unknown;
}

/**
 * Sends the credential check of every job that has one (WriteOptions.guard), one statement per
 * distinct check, among the transaction's first statements (after the account's lock, so each
 * sees the sessions as they are when the writes run). Answers, per job, its check's verdict: a
 * job whose check refuses fails with the check's error and never runs.
 */
export function sendGuards(tx: ConnectionExecutor, jobs: readonly WriteJob[]): (Promise<void> | undefined)[] {
  const rows = new Map<string, Promise<Record<string, unknown> | undefined>>();
  return jobs.map(({ guard }) => {
    if (!guard) return undefined;
    const key = guardKey(guard);
    let row = rows.get(key);
    if (!row) rows.set(key, (row = tx.query(guard.sql, guard.params).then((result) => result.rows[0] as Record<string, unknown> | undefined)));
    const verdict = row.then((answered) => guard.check(answered));
    // Awaited when the job's turn comes; a refusal is never left unobserved meanwhile.
    verdict.catch(() => undefined);
    return verdict;
  });
}

/** Two checks with the same statement and parameters are one statement. */
function guardKey(guard: ReadGuard): string {
  return [guard.sql, ...guard.params.map((p) => (Buffer.isBuffer(p) ? `x${p.toString('hex')}` : `${typeof p}:${String(p)}`))].join('\0');
}

/**
 * Runs `jobs` in `tx` in their order, each with its verdict (sendGuards), until each has an
 * outcome or `budgetMs` has passed: jobs not started by then are left for the next batch.
 * Answers the outcomes of the jobs that ran, in order; nothing they sent is still unanswered.
 */
export async function runJobs(tx: ConnectionExecutor, jobs: readonly WriteJob[], verdicts: readonly (Promise<void> | undefined)[], budgetMs: number): Promise<JobOutcome[]> {
  const outcomes: JobOutcome[] = [];
  const behind = new WritesBehind();
  // Once something left behind has failed, the rest of the batch waits for every statement.
  let careful = false;
  let started = 0;
  const startedAt = performance.now();
  const restartAt = async (at: number): Promise<number> => {
    // Back to the savepoint of the write that left the failed statement behind: every later
    // RELEASE and SAVEPOINT failed with the rest, so that savepoint is the innermost one.
    tx.discardDeferred();
    await tx.settled().catch(() => undefined);
    await rollBackToSavepoint(tx);
    careful = true;
    outcomes.length = at;
    return at;
  };
  let i = 0;
  for (;;) {
    while (i < jobs.length) {
      // A job that ran already runs again whatever the time; a new one only within the budget.
      if (i >= started && i > 0 && performance.now() - startedAt > budgetMs) break;
      const job = jobs[i]!;
      const leavesBehind = !careful && job.repeatable;
      if (!leavesBehind || behind.failed) {
        const failedAt = await behind.firstFailure();
        if (failedAt !== undefined) {
          i = await restartAt(failedAt);
          continue;
        }
      }
      started = Math.max(started, i + 1);
      const refusal = await verdicts[i]?.then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
      if (refusal) {
        outcomes[i++] = { ok: false, value: refusal.error };
        continue;
      }
      const at = i;
      tx.behind = leavesBehind ? (sent) => behind.add(at, sent) : undefined;
      // What the write sends until it waits (all of it, if it leaves its inserts behind) leaves
      // in one write to the socket, not one per statement.
      const send = tx.holdWrites();
      const outcome = await runInSavepoint(tx, job, () => behind.firstFailure());
      send();
      tx.behind = undefined;
      if ('restartAt' in outcome) {
        i = await restartAt(outcome.restartAt);
        continue;
      }
      outcomes[i++] = outcome;
    }
    const failedAt = await behind.firstFailure();
    if (failedAt === undefined) return outcomes;
    i = await restartAt(failedAt);
  }
}

/**
 * One write of a batch in its own SAVEPOINT. The SAVEPOINT goes out with the write's first
 * statement and the RELEASE with the next write's (or the COMMIT): a write in a batch costs no
 * round trip more than a write alone. A write that fails is rolled back to its savepoint, which
 * also closes what cursors it opened, unless something left behind before its failure failed
 * first: then its failure may be that one's, and the batch starts again from there.
 */
async function runInSavepoint(tx: ConnectionExecutor, job: WriteJob, firstFailureBehind: () => Promise<number | undefined>): Promise<JobOutcome | { readonly restartAt: number }> {
  tx.after(tx.query(SAVEPOINT));
  try {
    const value = await job.run(tx);
    tx.defer(RELEASE);
    return { ok: true, value };
  } catch (error) {
    tx.discardDeferred();
    // Everything sent is answered before the rollback, what was left behind included.
    await tx.settled().catch(() => undefined);
    const restartAt = await firstFailureBehind();
    if (restartAt !== undefined) return { restartAt };
    await rollBackToSavepoint(tx);
    return { ok: false, value: error };
  }
}

/**
 * Undoes what was done since the innermost savepoint; its RELEASE goes with the next statement.
 * Should the rollback itself fail, the connection is unusable: the whole batch fails.
 */
async function rollBackToSavepoint(tx: ConnectionExecutor): Promise<void> {
  await tx.query('ROLLBACK TO SAVEPOINT write_job');
  tx.defer(RELEASE);
}
