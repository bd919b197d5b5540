/**
 * Would every table distribute by account (docs/distribution.md)? Citus' conditions, checked on
 * the schema the model generates and, on PostgreSQL, on the tables a migration really created:
 * - a tenant table's primary key and every index lead with account_id (so every unique rule
 *   includes the distribution column, and every lookup starts from one shard);
 * - a foreign key of a tenant table includes account_id on both sides at the same place, and
 *   points at a tenant table (co-located) or a directory (reference) table;
 * - a directory table points only at directory tables (a reference table may not point at a
 *   distributed one);
 * - docs/distribution.md distributes exactly the tenant tables and makes exactly the directory
 *   tables reference tables, parents before children.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { model } from '../../src/model/catalogue-model';
import { ACCOUNT_COLUMN, buildSchema, type TableDef } from '../../src/store/schema';
import { postgresTables } from '../../src/store/postgres/ddl';
import { openStore } from '../../src/store/open';
import { freshDatabase, testEngine } from '../support/test-database';

const schema = buildSchema(model);
const byName = new Map(schema.map((t) => [t.name, t] as const));
const tenantTables = schema.filter((t) => t.tenant);

/** Why `table` would not distribute by account_id (empty when it would). */
function distributionProblems(table: TableDef): string[] {
  const problems: string[] = [];
  if (table.tenant) {
    if (table.primaryKey[0] !== ACCOUNT_COLUMN) problems.push(`${table.name}: primary key (${table.primaryKey.join(', ')}) does not lead with ${ACCOUNT_COLUMN}`);
    for (const index of table.indexes) {
      if (index.columns[0] !== ACCOUNT_COLUMN) problems.push(`${table.name}: index ${index.name} (${index.columns.join(', ')}) does not lead with ${ACCOUNT_COLUMN}`);
    }
  }
  for (const fk of table.foreignKeys) {
    const target = byName.get(fk.refTable);
    const what = `${table.name}: foreign key (${fk.columns.join(', ')}) -> ${fk.refTable}(${fk.refColumns.join(', ')})`;
    if (!target) {
      problems.push(`${what} names no table of the schema`);
      continue;
    }
    if (!table.tenant && target.tenant) problems.push(`${what}: a reference table may not point at a distributed one`);
    if (table.tenant && target.tenant) {
      const at = fk.columns.indexOf(ACCOUNT_COLUMN);
      if (at < 0 || fk.refColumns[at] !== ACCOUNT_COLUMN) problems.push(`${what} does not join on ${ACCOUNT_COLUMN}`);
    }
  }
  return problems;
}

describe('every table distributes by account_id', () => {
  test('there are tenant tables and directory tables to distribute', () => {
    assert.ok(tenantTables.length >= 20);
    assert.ok(schema.some((t) => !t.tenant));
  });

  test("every tenant table's keys and indexes lead with account_id, and every foreign key would hold on a distributed engine", () => {
    assert.deepEqual(schema.flatMap(distributionProblems), []);
  });

  test('the check finds what would not distribute', () => {
    const products = byName.get('products')!;
    const broken: TableDef = {
      ...products,
      name: 'broken',
      primaryKey: ['id'],
      indexes: [{ name: 'broken_by_sku', columns: ['id', ACCOUNT_COLUMN], unique: true }],
      foreignKeys: [{ columns: ['id'], refTable: 'catalogs', refColumns: ['id'], onDelete: 'cascade' }],
    };
    assert.equal(distributionProblems(broken).length, 3);
    const directoryToTenant: TableDef = { ...byName.get('sessions')!, foreignKeys: [{ columns: [ACCOUNT_COLUMN], refTable: 'products', refColumns: [ACCOUNT_COLUMN], onDelete: 'cascade' }] };
    assert.equal(distributionProblems(directoryToTenant).length, 1);
  });

  test('docs/distribution.md distributes every tenant table and makes every directory table a reference table, parents first', () => {
    const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'distribution.md'), 'utf8');
    const distributed = [...doc.matchAll(/create_distributed_table\('([a-z_]+)', 'account_id'/g)].map((m) => m[1]);
    const reference = [...doc.matchAll(/create_reference_table\('([a-z_]+)'\)/g)].map((m) => m[1]);
    assert.deepEqual(distributed, tenantTables.map((t) => t.name));
    const pgTables = new Set(postgresTables(schema).map((t) => t.name));
    assert.deepEqual(reference, schema.filter((t) => !t.tenant && pgTables.has(t.name)).map((t) => t.name));
  });
});

describe('the migrated PostgreSQL tables distribute by account_id', { skip: testEngine !== 'postgres' && 'PostgreSQL only: reads pg_catalog' }, () => {
  let client: pg.Client;
  let close: () => Promise<void>;

  before(async () => {
    const database = await freshDatabase();
    const store = openStore(database.url, { ownerUrl: database.ownerUrl });
    await store.migrate();
    await store.close();
    client = new pg.Client({ connectionString: database.ownerUrl ?? database.url });
    await client.connect();
    close = () => client.end();
  });
  after(() => close?.());

  test('every unique index and primary key of a tenant table includes account_id, and every foreign key joins on it', async () => {
    const tenant = tenantTables.map((t) => t.name);
    const indexes = await client.query<{ table: string; index: string; columns: string[]; unique: boolean }>(
      `SELECT t.relname AS table, i.relname AS index, x.indisunique AS unique,
              array(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n)
                    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns
         FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
        WHERE t.relname = ANY($1)`,
      [tenant],
    );
    assert.ok(indexes.rows.length >= tenant.length);
    for (const row of indexes.rows) assert.equal(row.columns[0], ACCOUNT_COLUMN, `${row.table} index ${row.index} (${row.columns.join(', ')})`);
    const fks = await client.query<{ table: string; name: string; columns: string[]; ref_table: string; ref_columns: string[] }>(
      `SELECT t.relname AS table, c.conname AS name, r.relname AS ref_table,
              array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns,
              array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(attnum, n) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS ref_columns
         FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
        WHERE c.contype = 'f'`,
    );
    assert.ok(fks.rows.length > 10);
    for (const fk of fks.rows) {
      const what = `${fk.table}.${fk.name} (${fk.columns.join(', ')}) -> ${fk.ref_table}(${fk.ref_columns.join(', ')})`;
      if (!tenant.includes(fk.table)) {
        assert.ok(!tenant.includes(fk.ref_table), `${what}: a reference table points at a distributed one`);
        continue;
      }
      if (!tenant.includes(fk.ref_table)) continue;
      const at = fk.columns.indexOf(ACCOUNT_COLUMN);
      assert.ok(at >= 0 && fk.ref_columns[at] === ACCOUNT_COLUMN, `${what} does not join on ${ACCOUNT_COLUMN}`);
    }
  });
});
