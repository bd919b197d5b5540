/** The messages between the store and its read workers (./read-worker.ts, ./worker-reads.ts). */

/** What a worker opens its connection with. */
export interface WorkerData {
  readonly file: string;
  readonly mmapBytes: number;
  /** The time budget of each synchronous pull of rows (0: none). */
  readonly budgetMs: number;
}

export type WorkerOp = 'begin' | 'end' | 'all' | 'get' | 'run' | 'rows' | 'open' | 'next' | 'close';

export interface WorkerRequest {
  readonly id: number;
  readonly op: WorkerOp;
  readonly sql?: string;
  readonly params?: readonly unknown[];
  /** 'open', 'next', 'close': the stream of rows. */
  readonly cursor?: number;
  /** 'open': rows per batch. */
  readonly batchRows?: number;
}

/** An error as the main thread rebuilds it: its name, message, SQLite code and budget. */
export interface WorkerError {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
  readonly budgetMs?: number;
}

export type WorkerReply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: WorkerError };
