/**
 * A test-only preload (`node -r dist/test/support/ack-before-commit.js`, through serveProcess's
 * nodeArgs) that breaks the service on purpose: both stores' write() resolve as soon as the
 * transaction's work is done, and COMMIT comes a minute later. A `kill -9` in that minute loses
 * writes that were already answered 2xx. The crash-durability suite runs one cycle against it to
 * prove that its checker sees lost acknowledged writes when there are some.
 *
 * It patches the classes that the service's own modules load (the same compiled files, so the
 * same module instances as `catalogue serve` requires after it).
 */
import { PostgresStore } from '../../src/store/postgres/pg-store';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import type { SqlExecutor } from '../../src/store/store';

/** Longer than any crash cycle waits before its kill: the commit never happens before it. */
const COMMIT_DELAY_MS = 60_000;

type Write = <T>(accountId: number, fn: (tx: SqlExecutor) => Promise<T>) => Promise<T>;

for (const Store of [SqliteStore, PostgresStore]) {
  const commitThenAnswer = Store.prototype.write as Write;
  const answerThenCommit: Write = function <T>(this: unknown, accountId: number, fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      commitThenAnswer
        .call(this, accountId, async (tx: SqlExecutor) => {
          const value = await fn(tx);
          resolve(value); // the bug: the caller answers 2xx now…
          await new Promise((r) => setTimeout(r, COMMIT_DELAY_MS)); // …and COMMIT comes much later
          return value;
        })
        .catch(reject);
    });
  };
  Store.prototype.write = answerThenCommit;
}

process.stderr.write('ack-before-commit: store.write answers before COMMIT (test-only fault)\n');
