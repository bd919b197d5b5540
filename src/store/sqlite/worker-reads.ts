/**
 * Heavy reads on worker threads (ReadCost 'heavy'): a few workers, each with a reader connection
 * of its own (./read-worker.ts). A read takes a whole worker for its snapshot, as a read on the
 * main thread takes a reader connection; more heavy reads than workers wait their turn. The
 * executor it gets sends each statement to the worker and awaits the answer, so the event loop
 * that answers every other request stays free while SQLite scans.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { RunResult, SqlExecutor, SqlValue } from '../store';
import { StatementBudgetExceeded } from '../errors';
import { BoundedPool } from './bounded-pool';
import type { WorkerData, WorkerError, WorkerOp, WorkerReply, WorkerRequest } from './worker-protocol';

/** The main thread's error for one a worker reported: the same name, message and code. */
function rebuilt(error: WorkerError): Error {
  if (error.name === StatementBudgetExceeded.name && error.budgetMs !== undefined) return new StatementBudgetExceeded(error.budgetMs);
  const copy = new Error(error.message) as Error & { code?: string };
  copy.name = error.name;
  if (error.code !== undefined) copy.code = error.code;
  return copy;
}

/** One worker thread and the answers it owes. */
class ReadWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void }>();
  private nextId = 0;
  private nextCursor = 0;
  private failed: Error | undefined;

  constructor(data: WorkerData) {
    this.worker = new Worker(path.join(__dirname, 'read-worker.js'), { workerData: data });
    this.worker.on('message', (reply: WorkerReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (reply.ok) waiting.resolve(reply.value);
      else waiting.reject(rebuilt(reply.error));
    });
    // A worker that dies fails what it owes, and every read after (the pool replaces nothing:
    // it is a fault, answered 500, and seen in the log).
    const fail = (error: Error) => {
      this.failed = error;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`a SQLite read worker exited (code ${code})`)));
  }

  call(op: WorkerOp, fields: Omit<WorkerRequest, 'id' | 'op'> = {}): Promise<unknown> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, ...fields } satisfies WorkerRequest);
    });
  }

  cursor(): number {
    return this.nextCursor++;
  }

  async close(): Promise<void> {
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }
}

/** The statements of one read, sent to its worker. */
class WorkerExecutor implements SqlExecutor {
  constructor(private readonly worker: ReadWorker) {}

  all<Row>(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    return this.worker.call('all', { sql, params }) as Promise<Row[]>;
  }
  get<Row>(sql: string, params: readonly SqlValue[] = []): Promise<Row | undefined> {
    return this.worker.call('get', { sql, params }) as Promise<Row | undefined>;
  }
  run(sql: string, params: readonly SqlValue[] = []): Promise<RunResult> {
    return this.worker.call('run', { sql, params }) as Promise<RunResult>;
  }
  rows(sql: string, params: readonly SqlValue[] = []): Promise<unknown[][]> {
    return this.worker.call('rows', { sql, params }) as Promise<unknown[][]>;
  }
  async *iterate<Row>(sql: string, params: readonly SqlValue[] = []): AsyncIterable<Row> {
    yield* await this.all<Row>(sql, params);
  }
  async *iterateRows(sql: string, params: readonly SqlValue[] = []): AsyncIterable<unknown[]> {
    yield* await this.rows(sql, params);
  }
  async *iterateRowBatches(sql: string, params: readonly SqlValue[], batchRows: number): AsyncIterable<unknown[][]> {
    const cursor = this.worker.cursor();
    await this.worker.call('open', { sql, params, cursor, batchRows });
    let done = false;
    try {
      for (;;) {
        const batch = (await this.worker.call('next', { cursor })) as unknown[][] | null;
        if (batch === null) {
          done = true;
          return;
        }
        yield batch;
      }
    } finally {
      // Left early (or failed): the worker ends the statement.
      if (!done) await this.worker.call('close', { cursor }).catch(() => undefined);
    }
  }
}

export class WorkerReads {
  private readonly workers: BoundedPool<ReadWorker>;

  constructor(data: WorkerData, max: number) {
    this.workers = new BoundedPool(() => new ReadWorker(data), max);
  }

  /** fn inside one read transaction on a worker's connection. */
  snapshot<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.workers.with(async (worker) => {
      await worker.call('begin');
      try {
        return await fn(new WorkerExecutor(worker));
      } finally {
        await worker.call('end');
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.made.map((worker) => worker.close()));
  }
}
