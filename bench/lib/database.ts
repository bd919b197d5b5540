/**
 * The bench's databases: one catalogue seeded once per run (test/support/catalogue-seed.ts, written
 * straight through the store), then given to each service process.
 *
 * - SQLite: the seeded file is closed (which checkpoints its WAL) and every service process gets
 *   its own copy, so each workload starts from the same state and the writes of one workload never
 *   slow the next.
 * - PostgreSQL: DATABASE_URL / BENCH_DATABASE_URL when given (with DATABASE_OWNER_URL /
 *   BENCH_DATABASE_OWNER_URL for migrations where two roles are used), else a throwaway cluster
 *   made by test/support/postgres-cluster.ts (initdb + pg_ctl). All processes share that database;
 *   the bench's account is new on every run, so its rows are fresh even in a database that
 *   holds other accounts.
 *
 * Before anything is measured, the store's own connection is asked whether commits are durable:
 * SQLite `PRAGMA synchronous` must be 2 (FULL), PostgreSQL `fsync` and `synchronous_commit` on.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { model } from '../../src/model/catalogue-model';
import { EntityStore } from '../../src/store/entities';
import { openStore } from '../../src/store/open';
import type { Store } from '../../src/store/store';
import pg from 'pg';
import { seedCatalogue } from '../../test/support/catalogue-seed';
import { findPostgresBin, startCluster } from '../../test/support/postgres-cluster';

export type Engine = 'sqlite' | 'postgres';

export interface BenchAccount {
  readonly userName: string;
  readonly password: string;
  readonly subscriptionToken: string;
  readonly accountId: number;
}

export interface Durability {
  /** What the store's connection reported, e.g. `synchronous=2 (FULL)`. */
  readonly setting: string;
  readonly durable: boolean;
  /**
   * Median time of one durable commit of a one-row INSERT in a scratch SQLite file next to the
   * database (WAL, synchronous=FULL), in ms: the floor of a write's latency on this disk, so
   * 1000 / commitMs bounds commits per second when writes do not share commits.
   */
  readonly commitMs?: number;
}

/** Median of 50 one-row durable commits in a scratch SQLite database in dir. */
export function probeCommit(dir: string): number {
  const file = path.join(dir, 'commit-probe.db');
  const db = new Database(file);
  const times: number[] = [];
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE probe (id INTEGER PRIMARY KEY, value TEXT)');
    const insert = db.prepare('INSERT INTO probe (value) VALUES (?)');
    for (let i = 0; i < 60; i++) {
      const started = performance.now();
      insert.run(`row ${i}`);
      // The first commits create and grow the WAL file: only the steady state counts.
      if (i >= 10) times.push(performance.now() - started);
    }
  } finally {
    db.close();
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export interface BenchDatabase {
  readonly engine: Engine;
  /** Where the data lives, for the report (no credentials). */
  readonly description: string;
  readonly account: BenchAccount;
  readonly products: number;
  readonly seedSeconds: number;
  readonly durability: Durability;
  /** The environment of a new service process, with a database of its own where the engine allows. */
  forProcess(label: string): Record<string, string>;
  dispose(): Promise<void>;
}

/** A failure the user can mend (missing PostgreSQL, adapter not merged yet): printed, no stack. */
export class BenchSetupError extends Error {}

const PASSWORD = 'bench-password-0123456789';


/** More seeding in the same store after the catalogue (the connector mix's sellers, mix-seed.ts). */
export type SeedMore = (store: Store) => Promise<void>;

async function seed(store: Store, products: number, log: (line: string) => void, more?: SeedMore): Promise<{ account: BenchAccount; seconds: number }> {
  await store.migrate();
  const userName = `bench-${process.pid}-${Date.now()}`;
  const created = await createAccount(store, systemClock, { userName, password: PASSWORD });
  const started = performance.now();
  await seedCatalogue(model, store, new EntityStore(model, store), created.accountId, products);
  const seconds = (performance.now() - started) / 1000;
  log(`seeded ${products} products in ${seconds.toFixed(1)} s`);
  await more?.(store);
  return { account: { userName, password: PASSWORD, subscriptionToken: created.subscriptionToken, accountId: created.accountId }, seconds };
}

async function checkDurability(store: Store, accountId: number): Promise<Durability> {
  if (store.engine === 'sqlite') {
    // The writer connection, where commits happen.
    const rows = await store.write(accountId, (tx) => tx.all<{ synchronous: number }>('PRAGMA synchronous'));
    const value = Number(rows[0]?.synchronous);
    return { setting: `PRAGMA synchronous=${value}${value === 2 ? ' (FULL)' : value === 3 ? ' (EXTRA)' : ''}`, durable: value >= 2 };
  }
  const show = async (name: string) => {
    const rows = await store.write(accountId, (tx) => tx.all<Record<string, string>>(`SHOW ${name}`));
    return String(rows[0]?.[name]);
  };
  const fsync = await show('fsync');
  const commit = await show('synchronous_commit');
  return { setting: `fsync=${fsync}, synchronous_commit=${commit}`, durable: fsync === 'on' && commit !== 'off' && commit !== 'local' };
}

export async function sqliteDatabase(workDir: string, products: number, log: (line: string) => void, more?: SeedMore): Promise<BenchDatabase> {
  const seedDir = path.join(workDir, 'seed');
  fs.mkdirSync(seedDir, { recursive: true });
  const template = path.join(seedDir, 'catalogue.db');
  const store = openStore(`sqlite:${template}`);
  let seeded: { account: BenchAccount; seconds: number };
  let durability: Durability;
  try {
    seeded = await seed(store, products, log, more);
    durability = { ...(await checkDurability(store, seeded.account.accountId)), commitMs: probeCommit(seedDir) };
  } finally {
    // Closing the last connection checkpoints the WAL into the main file.
    await store.close();
  }
  let copies = 0;
  return {
    engine: 'sqlite',
    description: `SQLite file, a fresh copy of the seeded ${(fs.statSync(template).size / 2 ** 20).toFixed(0)} MB file for each process`,
    account: seeded.account,
    products,
    seedSeconds: seeded.seconds,
    durability,
    forProcess(label) {
      const dir = path.join(workDir, `db-${++copies}-${label}`);
      fs.mkdirSync(dir, { recursive: true });
      for (const suffix of ['', '-wal', '-shm']) {
        if (fs.existsSync(template + suffix)) fs.copyFileSync(template + suffix, path.join(dir, 'catalogue.db' + suffix));
      }
      return { DATABASE_URL: `sqlite:${path.join(dir, 'catalogue.db')}` };
    },
    async dispose() {
      // The copies are removed with the work directory.
    },
  };
}

const redact = (url: string) => url.replace(/\/\/([^:@/]+)(:[^@/]*)?@/, '//$1@');

export async function postgresDatabase(products: number, log: (line: string) => void, more?: SeedMore): Promise<BenchDatabase> {
  const givenUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || undefined;
  if (givenUrl !== undefined && !/^postgres(ql)?:\/\//i.test(givenUrl)) {
    throw new BenchSetupError(`--engine postgres needs a postgres:// URL in BENCH_DATABASE_URL or DATABASE_URL, not '${redact(givenUrl)}'`);
  }
  let appUrl: string;
  let ownerUrl: string | undefined;
  let destroy: () => void = () => {};
  let description: string;
  if (givenUrl !== undefined) {
    appUrl = givenUrl;
    ownerUrl = process.env.BENCH_DATABASE_OWNER_URL || process.env.DATABASE_OWNER_URL || undefined;
    description = `PostgreSQL at ${redact(appUrl)} (given), a new account in it`;
  } else {
    if (!findPostgresBin()) {
      throw new BenchSetupError('--engine postgres: no PostgreSQL server binaries (initdb, pg_ctl) found; install PostgreSQL or set BENCH_DATABASE_URL.');
    }
    log('starting a throwaway PostgreSQL cluster (initdb, pg_ctl)');
    // Server defaults otherwise: fsync and synchronous_commit stay on (durable writes).
    const started = await startCluster();
    appUrl = started.appUrl;
    ownerUrl = started.ownerUrl;
    destroy = () => started.destroy();
    description = 'PostgreSQL, a throwaway cluster (initdb + pg_ctl, default settings, fsync on)';
  }
  let store: Store;
  try {
    store = openStore(appUrl, ownerUrl ? { ownerUrl } : {});
  } catch (error) {
    destroy();
    throw new BenchSetupError(`--engine postgres: the service cannot open PostgreSQL: ${(error as Error).message}`);
  }
  let seeded: { account: BenchAccount; seconds: number };
  let durability: Durability;
  try {
    seeded = await seed(store, products, log, more);
    durability = await checkDurability(store, seeded.account.accountId);
    await vacuumAnalyze(ownerUrl ?? appUrl, log);
  } catch (error) {
    await store.close().catch(() => {});
    destroy();
    throw error;
  }
  await store.close();
  const env: Record<string, string> = { DATABASE_URL: appUrl, ...(ownerUrl ? { DATABASE_OWNER_URL: ownerUrl } : {}) };
  return {
    engine: 'postgres',
    description,
    account: seeded.account,
    products,
    seedSeconds: seeded.seconds,
    durability,
    forProcess: () => env,
    async dispose() {
      destroy();
    },
  };
}

/**
 * Freshly bulk-loaded tables have no planner statistics and no visibility map, and autovacuum
 * would mend both during the first workload, taking CPU from it (GET by key measured about a
 * quarter slower when it ran first). An operator's database has been vacuumed: measure that.
 */
async function vacuumAnalyze(url: string, log: (line: string) => void): Promise<void> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
  log(`VACUUM ANALYZE after seeding: ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
