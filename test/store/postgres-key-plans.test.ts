/**
 * On a new PostgreSQL database, a lookup by key uses the primary key (src/store/postgres/ddl.ts,
 * primaryKeySql). Every index of a tenant table leads with account_id, and until a table has
 * statistics the planner costs a scan of any of them as equal to the key's; on such a tie it keeps
 * the index created last. With the key created first, a foreign key's check planned then (and
 * cached by the connection for as long as it lives) scanned every order of the account to find
 * one: a 2,000-order import spent 20–130 ms per 600 item rows in that check, growing with each
 * transaction, where it now spends about 1 ms.
 *
 * The check is PostgreSQL's own (ri_triggers.c): `SELECT 1 FROM ONLY <parent> x WHERE <key> = $n
 * … FOR KEY SHARE OF x`. Its plan is cached and goes generic; so is a prepared read by id.
 *
 * A lookup by a list of values (an import's preload: 600 PlatformItemIds at once) is the opposite
 * case: no generic plan serves it on such a table, so it is never prepared (PLANNED_PER_EXECUTION
 * in src/store/postgres/statements.ts). Prepared, its generic plan scanned the account's items
 * and compared each with the 600 values in turn: 3 ms at the sixth transaction of the import,
 * 67 ms at the tenth.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { model } from '../../src/model/catalogue-model';
import { buildSchema } from '../../src/store/schema';
import { postgresTables } from '../../src/store/postgres/ddl';
import { openStore } from '../../src/store/open';
import { EntityStore } from '../../src/store/entities';
import type { Store } from '../../src/store/store';
import { freshDatabase, testEngine } from '../support/test-database';
import { scansOf, type PlanNode } from '../support/pg-plans';

const quote = (name: string) => `"${name}"`;

describe('lookups by key on a new PostgreSQL database use the primary key', { skip: testEngine !== 'postgres' && 'PostgreSQL only: plans are PostgreSQL’s' }, () => {
  const tables = postgresTables(buildSchema(model));
  /** The parameter type that compares with a column as its index does (the webhooks' ids are text). */
  const paramType = (table: (typeof tables)[number], column: string) => (table.columns.find((c) => c.name === column)?.type === 'text' ? 'text' : 'bigint');
  let client: pg.Client;
  let store: Store;

  before(async () => {
    const database = await freshDatabase();
    store = openStore(database.url, { ownerUrl: database.ownerUrl });
    await store.migrate();
    client = new pg.Client({ connectionString: database.ownerUrl ?? database.url });
    await client.connect();
    // What a connection caches after five executions: the plan for any value of the parameters.
    await client.query('SET plan_cache_mode = force_generic_plan');
  });
  after(async () => {
    await client?.end();
    await store?.close();
  });

  /** The indexes the generic plan of `sql` (parameters of `types`) reads. */
  async function genericScans(sql: string, types: readonly string[]): Promise<string[]> {
    await client.query(`PREPARE probe (${types.join(', ')}) AS ${sql}`);
    try {
      const args = types.map((_, i) => String(i + 1)).join(', ');
      const explained = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE probe (${args})`);
      return scansOf(explained.rows[0]!['QUERY PLAN'][0].Plan);
    } finally {
      await client.query('DEALLOCATE probe');
    }
  }

  test("every foreign key's check finds its parent row by the parent's primary key", async () => {
    const byName = new Map(tables.map((t) => [t.name, t] as const));
    const checked = new Set<string>();
    for (const table of tables) {
      for (const fk of table.foreignKeys) {
        const parent = byName.get(fk.refTable)!;
        const where = fk.refColumns.map((c, i) => `${quote(c)} OPERATOR(pg_catalog.=) $${i + 1}`).join(' AND ');
        const types = fk.refColumns.map((c) => paramType(parent, c));
        const scans = await genericScans(`SELECT 1 FROM ONLY ${quote(parent.name)} x WHERE ${where} FOR KEY SHARE OF x`, types);
        assert.deepEqual(scans, [`${parent.name}_pkey`], `${table.name} (${fk.columns.join(', ')}) -> ${parent.name}`);
        checked.add(parent.name);
      }
    }
    // The parents of the order import's rows are among them.
    for (const name of ['sales_orders', 'buyers', 'addresses', 'products', 'product_variations']) assert.ok(checked.has(name), name);
  });

  test('a read of one row by id uses the primary key, on every tenant table', async () => {
    const tenant = tables.filter((t) => t.tenant && t.primaryKey.length === 2 && t.primaryKey[1] === 'id');
    assert.ok(tenant.length >= 15, `${tenant.length} tables keyed by (account_id, id)`);
    for (const table of tenant) {
      const [account, id] = table.primaryKey;
      const scans = await genericScans(`SELECT * FROM ${quote(table.name)} t WHERE t.${quote(account!)} = $1 AND t.${quote(id!)} = $2`, [paramType(table, account!), paramType(table, id!)]);
      assert.deepEqual(scans, [`${table.name}_pkey`], table.name);
    }
  });

  test('a lookup by a list of values is planned for its values each time: the connection never prepares it', async () => {
    const entities = new EntityStore(model, store);
    const items = model.typeByName.get('SalesOrderItem')!;
    const prepared = await store.read(1, async (tx) => {
      // More executions than the five after which a prepared statement may go generic.
      for (let n = 0; n < 8; n++) assert.deepEqual(await entities.findWhereAny(tx, 1, items, 'PlatformItemId', [`X-${n}`, `Y-${n}`]), []);
      await entities.find(tx, 1, items, 1n);
      return tx.all<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
    });
    const statements = prepared.map((r) => r.statement);
    // The connection does prepare statements (the read by id), only not this one.
    assert.ok(statements.some((s) => s.includes('"sales_order_items"')), statements.join('\n'));
    assert.deepEqual(statements.filter((s) => s.includes('AND t."platform_item_id"')), []);
  });
});
