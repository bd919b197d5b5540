/** Renders the schema (../schema.ts) as SQLite DDL and brings a database up to it. */
import type Database from 'better-sqlite3';
import type { MigrationReport } from '../store';
import type { ColumnDef, ColumnType, TableDef } from '../schema';

/** SQLite storage: Decimal as a scaled integer (exact, comparable), DateTime as UTC milliseconds. */
const sqliteType: Record<ColumnType, string> = {
  int64: 'INTEGER',
  int32: 'INTEGER',
  decimal: 'INTEGER',
  text: 'TEXT',
  boolean: 'INTEGER',
  datetime: 'INTEGER',
};

const quote = (name: string) => `"${name}"`;
const list = (names: readonly string[]) => names.map(quote).join(', ');

function columnSql(c: ColumnDef): string {
  return `${quote(c.name)} ${sqliteType[c.type]}${c.nullable ? '' : ' NOT NULL'}${c.defaultValue === undefined ? '' : ` DEFAULT ${c.defaultValue}`}`;
}

export function createTableSql(t: TableDef): string {
  const parts = t.columns.map((c) =>
    t.autoIncrement && t.primaryKey.length === 1 && t.primaryKey[0] === c.name
      ? `${quote(c.name)} INTEGER PRIMARY KEY AUTOINCREMENT`
      : columnSql(c),
  );
  if (!t.autoIncrement) parts.push(`PRIMARY KEY (${list(t.primaryKey)})`);
  for (const fk of t.foreignKeys) {
    parts.push(
      `FOREIGN KEY (${list(fk.columns)}) REFERENCES ${quote(fk.refTable)} (${list(fk.refColumns)})` +
        (fk.onDelete === 'cascade' ? ' ON DELETE CASCADE' : ''),
    );
  }
  return `CREATE TABLE ${quote(t.name)} (\n  ${parts.join(',\n  ')}\n)`;
}

export function createIndexSql(t: TableDef, index: TableDef['indexes'][number]): string {
  return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${quote(index.name)} ON ${quote(t.name)} (${list(index.columns)})`;
}

/**
 * Fills in a comparison key column just added to a table with rows (from before the column), computed
 * in TypeScript as every write computes them. Writing a key changes no entity: row_version stays.
 */
function backfillKey(db: Database.Database, t: TableDef, c: ColumnDef): void {
  const [key, source, compute] = [quote(c.name), quote(c.keyOf!.column), c.keyOf!.key];
  const rows = db.prepare(`SELECT rowid AS r, ${source} AS v FROM ${quote(t.name)} WHERE ${key} IS NULL AND ${source} IS NOT NULL`).all() as { r: number; v: string }[];
  const write = db.prepare(`UPDATE ${quote(t.name)} SET ${key} = ? WHERE rowid = ?`);
  for (const row of rows) write.run(compute(String(row.v)), row.r);
}

/** A unique index that stored rows break (two texts equal under the rules' comparison) is named plainly. */
function createIndex(db: Database.Database, t: TableDef, index: TableDef['indexes'][number]): void {
  try {
    db.exec(createIndexSql(t, index));
  } catch (error) {
    if ((error as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw error;
    throw new Error(
      `Cannot create the unique index ${index.name}: rows of ${t.name} hold equal values of (${index.columns.join(', ')}), ` +
        'which the rules compare ignoring case and trailing spaces. Rename or delete the duplicates, then migrate again.',
    );
  }
}

/**
 * Creates missing tables and indexes and adds missing columns, in one transaction. A column added
 * to an existing table must be nullable (SQLite cannot add a NOT NULL column without a default).
 */
export function migrateSqlite(db: Database.Database, tables: readonly TableDef[]): MigrationReport {
  const report = { createdTables: [] as string[], addedColumns: [] as string[], createdIndexes: [] as string[] };
  const run = db.transaction(() => {
    const existingTables = new Set(
      (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name),
    );
    const existingIndexes = new Set(
      (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index'`).all() as { name: string }[]).map((r) => r.name),
    );
    for (const t of tables) {
      if (!existingTables.has(t.name)) {
        db.exec(createTableSql(t));
        report.createdTables.push(t.name);
      } else {
        const have = new Set((db.prepare(`SELECT name FROM pragma_table_info(?)`).all(t.name) as { name: string }[]).map((r) => r.name));
        for (const c of t.columns) {
          if (have.has(c.name)) continue;
          // A column with a default can be NOT NULL at once; any other must be nullable here.
          db.exec(`ALTER TABLE ${quote(t.name)} ADD COLUMN ${c.defaultValue === undefined ? `${quote(c.name)} ${sqliteType[c.type]}` : columnSql(c)}`);
          report.addedColumns.push(`${t.name}.${c.name}`);
          if (c.keyOf) backfillKey(db, t, c);
        }
      }
      for (const name of t.retiredIndexes ?? []) if (existingIndexes.has(name)) db.exec(`DROP INDEX ${quote(name)}`);
      for (const index of t.indexes) {
        if (existingIndexes.has(index.name)) continue;
        createIndex(db, t, index);
        report.createdIndexes.push(index.name);
      }
    }
    db.prepare(`INSERT INTO id_sequence (name, last_value) VALUES ('entity', 0) ON CONFLICT (name) DO NOTHING`).run();
  });
  run.immediate();
  return report;
}
