/**
 * `catalogue backup` and `catalogue restore` for the embedded SQLite database.
 *
 * Backup uses SQLite's online backup API (through better-sqlite3) from a connection of its own,
 * while the service goes on serving: all pages are copied in one step, inside one read
 * transaction, so the copy is the database as it was committed when that step began (every write
 * acknowledged before then is in it; in WAL mode the service's writers are not blocked meanwhile).
 * The copy is written next to FILE, checked with PRAGMA integrity_check, turned into a
 * self-contained file (no -wal beside it) and only then renamed to FILE: a FILE that exists is a
 * complete, checked backup.
 *
 * Restore refuses while any process has the database open (an exclusive lock is tried without
 * waiting), checks FILE the same way, and then puts a copy of it in the database's place.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export class BackupError extends Error {
  override readonly name = 'BackupError';
}

export interface CopyReport {
  readonly file: string;
  readonly bytes: number;
  readonly pages: number;
  /** Rows per table of the copy. */
  readonly tables: Record<string, number>;
  readonly integrity: 'ok';
}

/** More pages than any database has: sqlite3_backup_step copies everything in one step. */
const ALL_PAGES = 0x7fffffff;

/** Checks a database file: integrity, and that it is one of this service; rows per table. */
function inspect(file: string): { tables: Record<string, number>; pages: number } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const problems = (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check);
    if (problems.length !== 1 || problems[0] !== 'ok') throw new BackupError(`${file} fails PRAGMA integrity_check: ${problems.slice(0, 5).join('; ')}`);
    const names = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
    if (!names.includes('accounts')) throw new BackupError(`${file} is not a catalogue-service database (it has no accounts table)`);
    const tables: Record<string, number> = {};
    for (const name of names) tables[name] = Number((db.prepare(`SELECT COUNT(*) AS n FROM "${name}"`).get() as { n: number }).n);
    return { tables, pages: Number(db.pragma('page_count', { simple: true })) };
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${file} cannot be read as a SQLite database: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}

function removeQuietly(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) fs.rmSync(f, { force: true });
}

/** Copies `source` (which may be serving writes) to `target` with the online backup API. */
async function copyOnline(source: string, target: string): Promise<void> {
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(target, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
  // The copy carries the source's WAL mode; as a backup it should be one file on its own.
  const copy = new Database(target);
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}

export async function backupSqlite(databaseFile: string, file: string): Promise<CopyReport> {
  if (!fs.existsSync(databaseFile)) throw new BackupError(`There is no database at ${databaseFile} to back up`);
  if (fs.existsSync(file)) throw new BackupError(`${file} exists already; a backup never overwrites a file`);
  if (path.resolve(file) === path.resolve(databaseFile)) throw new BackupError('The backup must go to another file than the database');
  const partial = `${file}.partial`;
  removeQuietly(partial);
  try {
    await copyOnline(databaseFile, partial);
    const { tables, pages } = inspect(partial);
    fs.renameSync(partial, file);
    return { file, bytes: fs.statSync(file).size, pages, tables, integrity: 'ok' };
  } finally {
    removeQuietly(partial);
  }
}

/** Whether a process has the database open: it then holds a lock that an exclusive one must wait for. */
function inUse(databaseFile: string): boolean {
  const db = new Database(databaseFile, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    return false;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY' || (error as { code?: string }).code === 'SQLITE_LOCKED') return true;
    throw error;
  } finally {
    db.close();
  }
}

export async function restoreSqlite(file: string, databaseFile: string): Promise<CopyReport> {
  if (!fs.existsSync(file)) throw new BackupError(`There is no backup at ${file}`);
  if (path.resolve(file) === path.resolve(databaseFile)) throw new BackupError('The backup is the database itself');
  const { tables, pages } = inspect(file);
  if (fs.existsSync(databaseFile) && inUse(databaseFile)) {
    throw new BackupError(`The database ${databaseFile} is in use by a running process; stop every 'catalogue serve' on it first, then restore`);
  }
  fs.mkdirSync(path.dirname(path.resolve(databaseFile)), { recursive: true });
  const incoming = `${databaseFile}.restoring`;
  removeQuietly(incoming);
  try {
    fs.copyFileSync(file, incoming);
    const fd = fs.openSync(incoming, 'r+');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    // The old database's WAL must not be replayed onto the restored file.
    for (const f of [`${databaseFile}-wal`, `${databaseFile}-shm`, `${databaseFile}-journal`]) fs.rmSync(f, { force: true });
    fs.renameSync(incoming, databaseFile);
  } finally {
    removeQuietly(incoming);
  }
  return { file: databaseFile, bytes: fs.statSync(databaseFile).size, pages, tables, integrity: 'ok' };
}
