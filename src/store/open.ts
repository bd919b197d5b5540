/** Chooses the store adapter from DATABASE_URL. */
import { model } from '../model/catalogue-model';
import { buildSchema } from './schema';
import type { Store } from './store';
import { SqliteStore } from './sqlite/sqlite-store';

export const DEFAULT_DATABASE_URL = 'sqlite:./data/catalogue.db';

export class ConfigurationError extends Error {}

/** The SQLite file named by a `sqlite:` URL, a `file:` URL, or a plain path. */
export function sqliteFileOf(databaseUrl: string): string {
  const m = /^(?:sqlite|file):(?:\/\/)?(.*)$/i.exec(databaseUrl);
  const file = m ? m[1]! : databaseUrl;
  if (!file) throw new ConfigurationError(`DATABASE_URL '${databaseUrl}' names no SQLite file`);
  return file;
}

export function openStore(databaseUrl: string = DEFAULT_DATABASE_URL): Store {
  if (/^postgres(ql)?:\/\//i.test(databaseUrl)) {
    throw new ConfigurationError(
      'DATABASE_URL selects PostgreSQL, but this build has no PostgreSQL adapter yet. ' +
        'Unset DATABASE_URL to use the embedded SQLite database, or set it to sqlite:<file>.',
    );
  }
  return new SqliteStore({ file: sqliteFileOf(databaseUrl), tables: buildSchema(model) });
}
