/** Renders the schema (../schema.ts) as SQLite DDL and brings a database up to it. */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { MigrationReport } from '../store';
import { ACCOUNT_COLUMN, CHANGES, CHANGES_SEQUENCE, type ChangeCapture, type ColumnDef, type ColumnType, type TableDef } from '../schema';

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

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** The current time as UTC ms, as the DateTime columns hold it (julianday keeps milliseconds). */
const NOW_MS = `CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)`;

/** Names the triggers of the change log carry (`<table>_change_<kind>_<hash>`): the migration's own. */
const CHANGE_TRIGGER = '_change_';

/**
 * The triggers that write the change log (schema.ts CHANGES) for a table's rows, in the statement's
 * transaction: so no write path (an OData write, an operation, the platform side, a cascade of
 * the database) can leave one out. An update writes a row only when a compared property's value
 * changed, naming those; `UPDATE OF` spares the trigger statements that set only the store's
 * bookkeeping. Each name ends in a hash of its text, so a changed model replaces it.
 */
export function changeTriggersSql(t: TableDef, c: ChangeCapture): { name: string; sql: string }[] {
  const columns = list([ACCOUNT_COLUMN, CHANGES.seq, CHANGES.entitySet, CHANGES.entityId, CHANGES.kind, CHANGES.changedProperties, CHANGES.changedAt]);
  // change_seq from the sequence's row in id_sequence (the one writer makes it increase in write order).
  const values = (row: 'NEW' | 'OLD', kind: string, changed: string) =>
    `UPDATE "id_sequence" SET "last_value" = "last_value" + 1 WHERE "name" = '${CHANGES_SEQUENCE}'; ` +
    `INSERT INTO ${quote(CHANGES.table)} (${columns}) VALUES (${row}.${quote(ACCOUNT_COLUMN)}, ` +
    `(SELECT "last_value" FROM "id_sequence" WHERE "name" = '${CHANGES_SEQUENCE}'), ${literal(c.entitySet)}, ${row}.${quote(c.keyColumn)}, '${kind}', ${changed}, ${NOW_MS});`;
  const differs = (column: string) => `OLD.${quote(column)} IS NOT NEW.${quote(column)}`;
  const named = c.properties.map((p) => `CASE WHEN ${differs(p.column)} THEN ${literal(',' + p.name)} ELSE '' END`).join(' || ');
  const bodies = [
    { kind: 'created', sql: `AFTER INSERT ON ${quote(t.name)} BEGIN ${values('NEW', 'created', "''")} END` },
    {
      kind: 'changed',
      sql:
        `AFTER UPDATE OF ${list(c.properties.map((p) => p.column))} ON ${quote(t.name)} ` +
        `WHEN ${c.properties.map((p) => differs(p.column)).join(' OR ')} BEGIN ${values('NEW', 'changed', `substr(${named}, 2)`)} END`,
    },
    { kind: 'deleted', sql: `AFTER DELETE ON ${quote(t.name)} BEGIN ${values('OLD', 'deleted', "''")} END` },
  ];
  return bodies.map((b) => {
    const name = `${t.name}${CHANGE_TRIGGER}${b.kind}_${createHash('sha1').update(b.sql).digest('hex').slice(0, 10)}`;
    return { name, sql: `CREATE TRIGGER ${quote(name)} ${b.sql}` };
  });
}

/** Creates the table's change triggers that are missing and drops those of an earlier model. */
function migrateChangeTriggers(db: Database.Database, t: TableDef, existing: ReadonlySet<string>): void {
  const wanted = t.changeCapture ? changeTriggersSql(t, t.changeCapture) : [];
  const prefix = `${t.name}${CHANGE_TRIGGER}`;
  for (const name of existing) if (name.startsWith(prefix) && !wanted.some((w) => w.name === name)) db.exec(`DROP TRIGGER ${quote(name)}`);
  for (const w of wanted) if (!existing.has(w.name)) db.exec(w.sql);
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
    const existingTriggers = new Set(
      (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger'`).all() as { name: string }[]).map((r) => r.name),
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
        if (existingIndexes.has(index.name) || (index.engine && index.engine !== 'sqlite')) continue;
        createIndex(db, t, index);
        report.createdIndexes.push(index.name);
      }
      migrateChangeTriggers(db, t, existingTriggers);
    }
    db.prepare(`INSERT INTO id_sequence (name, last_value) VALUES ('entity', 0) ON CONFLICT (name) DO NOTHING`).run();
    db.prepare(`INSERT INTO id_sequence (name, last_value) VALUES (?, 0) ON CONFLICT (name) DO NOTHING`).run(CHANGES_SEQUENCE);
  });
  run.immediate();
  return report;
}
