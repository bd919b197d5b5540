/**
 * Which engine the suite runs on, and a fresh database for each test that needs one.
 * scripts/run-tests.js runs the whole suite once per engine: TEST_ENGINE=sqlite (the default),
 * then TEST_ENGINE=postgres with the URLs of a throwaway cluster it started (or the ones the
 * caller gave as TEST_DATABASE_URL and TEST_DATABASE_OWNER_URL).
 *
 * On PostgreSQL every fresh database is a new CREATE DATABASE owned by the owner role, so tests
 * stay independent as they are with one SQLite file each; each test process drops its databases
 * when it is done.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export type TestEngine = 'sqlite' | 'postgres';

export const testEngine: TestEngine = process.env.TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase {
  /** DATABASE_URL for the service (the app role on PostgreSQL). */
  readonly url: string;
  /** DATABASE_OWNER_URL (PostgreSQL with two roles), else undefined. */
  readonly ownerUrl: string | undefined;
  /** The SQLite file, or undefined on PostgreSQL. */
  readonly file: string | undefined;
  /** The environment a server process needs for this database. */
  readonly env: Record<string, string>;
}

export function tempDatabaseFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-test-')), 'catalogue.db');
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`TEST_ENGINE=postgres needs ${name} (scripts/run-tests.js sets it)`);
  return value;
}

/** The URL with another database name. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = '/' + encodeURIComponent(database);
  return u.toString();
}

let created = 0;
/** Databases this process made, dropped when it is about to exit (see dropOnExit). */
const toDrop: string[] = [];

/**
 * Drops this process's databases once its tests are done (the event loop is empty, so every
 * service and child process of its tests has closed its connections), so that a run leaves no
 * databases behind and a throwaway cluster stays small. A database still in use is left alone.
 */
function dropOnExit(creatorUrl: string, name: string): void {
  toDrop.push(name);
  if (toDrop.length > 1) return;
  let dropping = false;
  process.on('beforeExit', () => {
    if (dropping) return;
    dropping = true;
    void (async () => {
      const client = new pg.Client({ connectionString: creatorUrl });
      try {
        await client.connect();
        for (const database of toDrop) {
          await client.query(`DROP DATABASE IF EXISTS "${database}"`).catch((error: Error) => {
            process.stderr.write(`test database ${database} was not dropped: ${error.message}\n`);
          });
        }
      } catch (error) {
        process.stderr.write(`test databases were not dropped: ${(error as Error).message}\n`);
      } finally {
        await client.end().catch(() => undefined);
      }
    })();
  });
}

/** A new, empty database on the test engine. */
export async function freshDatabase(): Promise<TestDatabase> {
  if (testEngine === 'sqlite') {
    const file = tempDatabaseFile();
    // An owner URL from the caller's environment must not reach a SQLite server process.
    return { url: `sqlite:${file}`, ownerUrl: undefined, file, env: { DATABASE_URL: `sqlite:${file}`, DATABASE_OWNER_URL: '' } };
  }
  const appUrl = required('TEST_DATABASE_URL');
  const ownerUrl = process.env.TEST_DATABASE_OWNER_URL || undefined;
  const name = `t_${process.pid}_${++created}_${Math.random().toString(36).slice(2, 8)}`;
  // The owner role creates (and so owns) it; a single-role setup creates it as the app role.
  const creator = new pg.Client({ connectionString: ownerUrl ?? appUrl });
  await creator.connect();
  try {
    // template0 is never connected to, so concurrent creations never wait for each other.
    await creator.query(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
  } finally {
    await creator.end();
  }
  dropOnExit(ownerUrl ?? appUrl, name);
  const url = withDatabase(appUrl, name);
  const owner = ownerUrl ? withDatabase(ownerUrl, name) : undefined;
  return { url, ownerUrl: owner, file: undefined, env: { DATABASE_URL: url, DATABASE_OWNER_URL: owner ?? '' } };
}
