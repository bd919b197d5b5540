/**
 * `catalogue copy`: moves a whole SQLite database into an empty PostgreSQL database, every table
 * of the schema (so every account with its ids, sessions, tokens, order history and idempotency
 * keys), then proves the copy: the row count and a content hash of every table, computed on each
 * side from the values as the service reads them.
 *
 * Model-driven: the tables, their columns and their order (parents first) come from the schema
 * the model generates; nothing here names a table, except the one SQLite keeps for itself in
 * place of PostgreSQL's id sequence.
 *
 * The copy is one PostgreSQL transaction, verified before its COMMIT: it lands whole and equal to
 * its source, or not at all. Tenant rows are written
 * with the tenant set for their account, as the service writes them, so row-level security stays
 * forced throughout. The owner role (DATABASE_OWNER_URL) writes when there is one, since moving
 * the id sequences on is the owner's right; otherwise the role of --to, which then owns the tables.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import Database from 'better-sqlite3';
import type { Client } from 'pg';
import pg from './postgres/pg-driver';
import { model } from '../model/catalogue-model';
import type { EdmType } from '../model/types';
import { buildSchema, ACCOUNT_COLUMN, CHANGES_SEQUENCE, type ColumnDef, type ColumnType, type TableDef } from './schema';
import { openStore, sqliteFileOf, isPostgresUrl, type DatabaseOptions } from './open';
import { sqliteCodec } from './sqlite/codec';
import { pgCodec, pgTypeParsers } from './postgres/values';
import { CAPTURE_CHANGES_SETTING, ID_SEQUENCE, TENANT_SETTING, postgresTables } from './postgres/ddl';
import type { SqlValue } from './store';

export class CopyError extends Error {}

export interface TableCopy {
  readonly table: string;
  readonly rows: number;
  /** sha256 of the table's rows in key order, each as the service reads it (same on both sides). */
  readonly sha256: string;
}

/** The Edm type a column's values are read and written as (the codecs work by Edm type). */
const edmTypeOf: Record<ColumnType, EdmType> = {
  int64: 'Edm.Int64',
  int32: 'Edm.Int32',
  decimal: 'Edm.Decimal',
  text: 'Edm.String',
  boolean: 'Edm.Boolean',
  datetime: 'Edm.DateTime',
};

/** Directory times are kept as epoch milliseconds on PostgreSQL too (see postgres/ddl.ts). */
const storedAsMillis = (table: TableDef, c: ColumnDef) => c.type === 'datetime' && !table.tenant;

/** A value as the service reads it, in one text form for hashing on both sides. */
function canonical(table: TableDef, c: ColumnDef, value: unknown, side: 'sqlite' | 'postgres'): string | null {
  if (value === null || value === undefined) return null;
  const codec = side === 'sqlite' ? sqliteCodec : pgCodec;
  const decoded = storedAsMillis(table, c) ? Number(value) : codec.decode(edmTypeOf[c.type], value);
  return String(decoded);
}

/** A SQLite value as the PostgreSQL parameter the service would have bound. */
function toPostgres(table: TableDef, c: ColumnDef, value: unknown): SqlValue {
  if (value === null || value === undefined) return null;
  if (storedAsMillis(table, c)) return String(value);
  const encoded = pgCodec.encode(edmTypeOf[c.type], sqliteCodec.decode(edmTypeOf[c.type], value));
  return typeof encoded === 'bigint' ? encoded.toString() : encoded;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
const orderBy = (t: TableDef) => t.primaryKey.map(quote).join(', ');

/** PostgreSQL binds at most 65,535 parameters in one statement. */
const MAX_PARAMETERS = 60_000;
const MAX_ROWS_PER_INSERT = 1000;

class RowHash {
  private readonly hash = createHash('sha256');
  rows = 0;
  add(values: readonly (string | null)[]): void {
    this.hash.update(JSON.stringify(values) + '\n');
    this.rows++;
  }
  result(table: string): TableCopy {
    return { table, rows: this.rows, sha256: this.hash.digest('hex') };
  }
}

/** Refuses a target holding anything: a user, a session, a throttle entry, or an id ever drawn. */
async function checkEmpty(client: Client, tables: readonly TableDef[]): Promise<void> {
  // Tenant rows are hidden by row-level security without a tenant; every one of them came with
  // an account and ids drawn from the sequence, which are visible.
  for (const t of tables.filter((x) => !x.tenant)) {
    const { rows } = await client.query(`SELECT 1 FROM ${quote(t.name)} LIMIT 1`);
    if (rows.length) throw new CopyError(`The target database is not empty (table ${t.name} has rows): copy only into an empty database.`);
  }
  const { rows } = await client.query<{ is_called: boolean }>(`SELECT is_called FROM ${quote(ID_SEQUENCE)}`);
  if (rows[0]?.is_called) throw new CopyError('The target database is not empty (its entity ids were drawn from): copy only into an empty database.');
}

/** Every SQLite row of a table, in key order (account by account for tenant tables). */
function* sqliteRows(db: Database.Database, t: TableDef): Iterable<unknown[]> {
  const columns = t.columns.map((c) => quote(c.name)).join(', ');
  yield* db.prepare(`SELECT ${columns} FROM ${quote(t.name)} ORDER BY ${orderBy(t)}`).raw(true).iterate() as Iterable<unknown[]>;
}

async function insertRows(client: Client, t: TableDef, rows: unknown[][]): Promise<void> {
  if (rows.length === 0) return;
  const n = t.columns.length;
  const values: SqlValue[] = [];
  const tuples = rows.map((row, r) => {
    t.columns.forEach((c, i) => values.push(toPostgres(t, c, row[i])));
    return `(${t.columns.map((_, i) => `$${r * n + i + 1}`).join(', ')})`;
  });
  await client.query(`INSERT INTO ${quote(t.name)} (${t.columns.map((c) => quote(c.name)).join(', ')}) VALUES ${tuples.join(', ')}`, values as unknown[]);
}

async function copyTable(db: Database.Database, client: Client, t: TableDef): Promise<TableCopy> {
  const batchSize = Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / t.columns.length));
  const accountAt = t.columns.findIndex((c) => c.name === ACCOUNT_COLUMN);
  const hash = new RowHash();
  let batch: unknown[][] = [];
  let tenant: string | undefined;
  for (const row of sqliteRows(db, t)) {
    hash.add(t.columns.map((c, i) => canonical(t, c, row[i], 'sqlite')));
    // Tenant rows go in under their own account's tenant setting (a batch never mixes accounts).
    const account = t.tenant ? String(row[accountAt]) : undefined;
    if (account !== tenant || batch.length === batchSize) {
      await insertRows(client, t, batch);
      batch = [];
      if (account !== tenant) await client.query(`SELECT set_config('${TENANT_SETTING}', $1, true)`, [account]);
      tenant = account;
    }
    batch.push(row);
  }
  await insertRows(client, t, batch);
  return hash.result(t.name);
}

/** The same hash, read back from PostgreSQL as the service reads it. */
async function hashTarget(client: Client, t: TableDef, accounts: readonly string[]): Promise<TableCopy> {
  const hash = new RowHash();
  const columns = t.columns.map((c) => quote(c.name)).join(', ');
  const read = async (where: string, params: unknown[]) => {
    const { rows } = await client.query<unknown[]>({ text: `SELECT ${columns} FROM ${quote(t.name)}${where} ORDER BY ${orderBy(t)}`, values: params, rowMode: 'array' });
    for (const row of rows) hash.add(t.columns.map((c, i) => canonical(t, c, row[i], 'postgres')));
  };
  if (!t.tenant) await read('', []);
  else {
    for (const account of accounts) {
      await client.query(`SELECT set_config('${TENANT_SETTING}', $1, true)`, [account]);
      await read(` WHERE ${quote(ACCOUNT_COLUMN)} = $1`, [account]);
    }
  }
  return hash.result(t.name);
}

export interface CopyOptions {
  readonly from: string;
  readonly to: string;
  /** PostgreSQL settings of the target (its owner URL migrates it). */
  readonly database?: DatabaseOptions;
}

/** Copies, verifies, and returns each table's count and hash; throws CopyError when it cannot. */
export async function copyDatabase(options: CopyOptions): Promise<TableCopy[]> {
  if (!/^(sqlite|file):/i.test(options.from)) throw new CopyError(`--from must name a SQLite database (sqlite:FILE), not '${options.from}'`);
  if (!isPostgresUrl(options.to)) throw new CopyError(`--to must be a PostgreSQL URL (postgres://…), not '${options.to}'`);
  // Opening a missing file would create an empty database and copy nothing.
  if (!fs.existsSync(sqliteFileOf(options.from))) throw new CopyError(`There is no SQLite database at ${sqliteFileOf(options.from)}`);
  const schema = buildSchema(model);
  const tables = postgresTables(schema);

  // Both sides at the model's schema: the source brought up to date, the target created.
  const source = openStore(options.from);
  await source.migrate();
  await source.close();
  const target = openStore(options.to, options.database);
  await target.migrate();
  await target.close();

  const db = new Database(sqliteFileOf(options.from), { readonly: true, fileMustExist: true });
  db.defaultSafeIntegers(true);
  // The owner role writes when there is one: moving the sequences on (setval) is the owner's.
  const client = new pg.Client({ connectionString: options.database?.ownerUrl ?? options.to, types: pgTypeParsers, application_name: 'catalogue-copy' });
  await client.connect();
  try {
    await client.query('BEGIN');
    // The change log comes along as a table; the rows copied into entity tables are no changes.
    await client.query(`SELECT set_config('${CAPTURE_CHANGES_SETTING}', 'off', true)`);
    await checkEmpty(client, tables);
    const copied: TableCopy[] = [];
    for (const t of tables) copied.push(await copyTable(db, client, t));
    // The id sequence goes on from the source's last id, and new accounts after the last account.
    const last = db.prepare(`SELECT last_value FROM id_sequence WHERE name = 'entity'`).pluck().get() as bigint | undefined;
    if (last !== undefined && last > 0n) await client.query(`SELECT setval('${quote(ID_SEQUENCE)}', $1)`, [last.toString()]);
    // The change log's numbers go on after the source's last (a delta link's position stays valid).
    const lastChange = db.prepare(`SELECT last_value FROM id_sequence WHERE name = ?`).pluck().get(CHANGES_SEQUENCE) as bigint | undefined;
    if (lastChange !== undefined && lastChange > 0n) await client.query(`SELECT setval('${quote(CHANGES_SEQUENCE)}', $1)`, [lastChange.toString()]);
    for (const t of tables.filter((x) => x.autoIncrement)) {
      const key = t.primaryKey[0]!;
      await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), m) FROM (SELECT max(${quote(key)}) AS m FROM ${quote(t.name)}) x WHERE m IS NOT NULL`, [quote(t.name), key]);
    }

    // Verification before COMMIT, reading back what this transaction wrote: a copy that does not
    // match its source is rolled back, leaving the target empty.
    const accounts = (db.prepare(`SELECT DISTINCT ${quote(ACCOUNT_COLUMN)} FROM (${tables.filter((t) => t.tenant).map((t) => `SELECT ${quote(ACCOUNT_COLUMN)} FROM ${quote(t.name)}`).join(' UNION ')}) ORDER BY 1`).pluck().all() as bigint[]).map(String);
    const mismatches: string[] = [];
    for (const expected of copied) {
      const got = await hashTarget(client, tables.find((t) => t.name === expected.table)!, accounts);
      if (got.rows !== expected.rows || got.sha256 !== expected.sha256) {
        mismatches.push(`${expected.table}: ${expected.rows} rows (${expected.sha256.slice(0, 12)}) copied, ${got.rows} rows (${got.sha256.slice(0, 12)}) read back`);
      }
    }
    if (mismatches.length) throw new CopyError(`The copy does not match its source, so nothing was kept:\n${mismatches.join('\n')}`);
    await client.query('COMMIT');
    // A new database has no statistics until autovacuum's first pass (within a minute or so):
    // until then the planner takes `account_id = …` for a small part of any table and may scan a
    // whole account for one row. The copy wrote every row, so it gathers them now.
    await client.query(`ANALYZE ${tables.map((t) => quote(t.name)).join(', ')}`);
    return copied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    db.close();
    await client.end();
  }
}
