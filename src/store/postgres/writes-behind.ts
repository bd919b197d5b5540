/**
 * Statements a write sent and did not wait for (SqlExecutor.writeBehind), noted by the write of
 * the batch they belong to. A batch's writes run one after the other on one connection, so a
 * write that leaves its inserts behind lets the next write's own work in node overlap the
 * server's work on them. Before anything depends on their outcome (a write that cannot run
 * again, a rollback to a savepoint, the COMMIT), the batch waits for them here: should one have
 * failed, every statement sent after it failed too (the transaction was aborted), and the batch
 * starts again from the write it belongs to (write-batch.ts).
 */
export class WritesBehind {
  private sent: { readonly job: number; readonly done: Promise<unknown> }[] = [];
  private failedAlready = false;

  /** A statement of job `job` (its place in the batch), sent and not waited for. */
  add(job: number, done: Promise<unknown>): void {
    done.catch(() => (this.failedAlready = true));
    this.sent.push({ job, done });
  }

  /** Whether one of them is known to have failed already (nothing is waited for). */
  get failed(): boolean {
    return this.failedAlready;
  }

  /**
   * Waits for every statement noted, then forgets them: the first job, in the order they were
   * sent, whose statement failed, or undefined if none did.
   */
  async firstFailure(): Promise<number | undefined> {
    const sent = this.sent;
    this.sent = [];
    this.failedAlready = false;
    const outcomes = await Promise.allSettled(sent.map((s) => s.done));
    const at = outcomes.findIndex((o) => o.status === 'rejected');
    return at < 0 ? undefined : sent[at]!.job;
  }
}
