/**
 * Shared set-up for the auth tests: a real store on a fresh database of the engine under test, a store
 * wrapper that counts database calls, and a seeded random source (so a failing mutation case
 * can be reproduced).
 */
import fs from 'node:fs';
import path from 'node:path';
import { openStore } from '../../src/store/open';
import type { SqlExecutor, SqlValue, Store } from '../../src/store/store';
import { mulberry32 } from '../support/random';
import { freshDatabase } from '../support/test-database';

export interface TempStore {
  readonly store: Store;
  close(): Promise<void>;
}

export async function openTempStore(): Promise<TempStore> {
  const database = await freshDatabase();
  const store = openStore(database.url, { ownerUrl: database.ownerUrl });
  await store.migrate();
  return {
    store,
    async close() {
      await store.close();
      if (database.file) fs.rmSync(path.dirname(database.file), { recursive: true, force: true });
    },
  };
}

/** Runs fn with a fresh migrated store and always closes and removes it. */
export async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const temp = await openTempStore();
  try {
    return await fn(temp.store);
  } finally {
    await temp.close();
  }
}

/** A view of a store that counts every statement and every write transaction. */
export function countingStore(store: Store): { store: Store; calls(): number } {
  let calls = 0;
  const wrap = (executor: SqlExecutor): SqlExecutor => ({
    all: <Row>(sql: string, params?: readonly SqlValue[]) => {
      calls++;
      return executor.all<Row>(sql, params);
    },
    get: <Row>(sql: string, params?: readonly SqlValue[]) => {
      calls++;
      return executor.get<Row>(sql, params);
    },
    run: (sql: string, params?: readonly SqlValue[]) => {
      calls++;
      return executor.run(sql, params);
    },
    iterate: <Row>(sql: string, params?: readonly SqlValue[]) => {
      calls++;
      return executor.iterate<Row>(sql, params);
    },
    rows: (sql: string, params?: readonly SqlValue[]) => {
      calls++;
      return executor.rows(sql, params);
    },
    iterateRows: (sql: string, params?: readonly SqlValue[]) => {
      calls++;
      return executor.iterateRows(sql, params);
    },
    iterateRowBatches: (sql: string, params: readonly SqlValue[], batchRows: number) => {
      calls++;
      return executor.iterateRowBatches(sql, params, batchRows);
    },
  });
  const wrapped: Store = {
    engine: store.engine,
    codec: store.codec,
    dialect: store.dialect,
    readBudgetMs: store.readBudgetMs,
    migrate: () => store.migrate(),
    directory: wrap(store.directory),
    writeDirectory: <T>(fn: (tx: SqlExecutor) => Promise<T>) => {
      calls++;
      return store.writeDirectory((tx) => fn(wrap(tx)));
    },
    read: <T>(accountId: number, fn: (tx: SqlExecutor) => Promise<T>) => {
      calls++;
      return store.read(accountId, (tx) => fn(wrap(tx)));
    },
    write: <T>(accountId: number, fn: (tx: SqlExecutor) => Promise<T>) => {
      calls++;
      return store.write(accountId, (tx) => fn(wrap(tx)));
    },
    nextId: (tx) => store.nextId(tx),
    stats: () => store.stats(),
    missingSchema: () => store.missingSchema(),
    acceptsWrites: () => store.acceptsWrites(),
    observeCommits: (listener) => store.observeCommits(listener),
    nextIds: (tx, count) => store.nextIds(tx, count),
    close: () => store.close(),
  };
  return { store: wrapped, calls: () => calls };
}

/** Every row of a table, as JSON text (bigints written as digits), for "is this value stored?" checks. */
export async function tableText(store: Store, table: 'accounts' | 'subscription_tokens' | 'sessions' | 'login_throttle'): Promise<string> {
  const rows = await store.directory.all(`SELECT * FROM ${table}`);
  return JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}

/** Seeded generator for picking mutations (the shared mulberry32). */
export const seededRandom = mulberry32;

export const T0 = Date.UTC(2026, 0, 15, 9, 0, 0);
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
