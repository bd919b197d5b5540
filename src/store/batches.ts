/**
 * Housekeeping deletes in small transactions: each removes at most a batch of rows, so that it
 * holds the writer (SQLite's single writer, or the rows' locks on PostgreSQL) only briefly, and
 * the writes of requests queued behind it get their turn between batches.
 */

/** Rows per housekeeping transaction: a few milliseconds of deleting on either engine. */
export const PRUNE_BATCH_SIZE = 200;

/**
 * Runs `deleteBatch(limit)` until a batch removes fewer than `limit` rows; the total removed.
 * Each call is its own transaction.
 */
export async function inBatches(limit: number, deleteBatch: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const removed = await deleteBatch(limit);
    total += removed;
    if (removed < limit) return total;
  }
}
