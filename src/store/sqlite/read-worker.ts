/**
 * A worker thread that holds one SQLite reader connection and runs the statements the main
 * thread sends it (./worker-reads.ts), one at a time, in the order they come. Heavy reads run
 * here: a statement that scans an account's rows with text functions then holds this thread, not
 * the event loop that answers every other seller. Its statements are held to the read budget
 * (READ_STATEMENT_TIMEOUT_MS) by the same per-row check as the main thread's (StatementBudget).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SqlValue } from '../store';
import { control, openExecutor } from './connection';
import type { WorkerData, WorkerError, WorkerReply, WorkerRequest } from './worker-protocol';

const { file, mmapBytes, budgetMs } = workerData as WorkerData;
const { db, executor } = openExecutor(file, mmapBytes, budgetMs);

/** Open streams of rows, by the number the main thread gave them. */
const cursors = new Map<number, AsyncIterator<unknown[][]>>();

async function perform(request: WorkerRequest): Promise<unknown> {
  const params = (request.params ?? []) as readonly SqlValue[];
  switch (request.op) {
    case 'begin':
      control(db, 'BEGIN');
      return undefined;
    case 'end':
      for (const cursor of cursors.values()) await cursor.return?.();
      cursors.clear();
      // A read transaction has nothing to keep: ending it releases the snapshot.
      if (db.inTransaction) control(db, 'COMMIT');
      return undefined;
    case 'all':
      return executor.all(request.sql!, params);
    case 'get':
      return executor.get(request.sql!, params);
    case 'run':
      return executor.run(request.sql!, params);
    case 'rows':
      return executor.rows(request.sql!, params);
    case 'open':
      cursors.set(request.cursor!, executor.iterateRowBatches(request.sql!, params, request.batchRows!)[Symbol.asyncIterator]());
      return undefined;
    case 'next': {
      const next = await cursors.get(request.cursor!)!.next();
      if (next.done) cursors.delete(request.cursor!);
      return next.done ? null : next.value;
    }
    case 'close':
      await cursors.get(request.cursor!)?.return?.();
      cursors.delete(request.cursor!);
      return undefined;
  }
}

/** An error as data that crosses the thread: what the main thread's mappings read of it. */
function asData(error: unknown): WorkerError {
  const e = error as { name?: unknown; message?: unknown; code?: unknown; budgetMs?: unknown };
  return {
    name: typeof e.name === 'string' ? e.name : 'Error',
    message: typeof e.message === 'string' ? e.message : String(error),
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.budgetMs === 'number' ? { budgetMs: e.budgetMs } : {}),
  };
}

// Requests of one read come one after the other (the main thread awaits each answer), so a
// chain keeps them in order without a queue of its own.
let chain: Promise<void> = Promise.resolve();
parentPort!.on('message', (request: WorkerRequest) => {
  chain = chain.then(async () => {
    let reply: WorkerReply;
    try {
      reply = { id: request.id, ok: true, value: await perform(request) };
    } catch (error) {
      reply = { id: request.id, ok: false, error: asData(error) };
    }
    parentPort!.postMessage(reply);
  });
});
