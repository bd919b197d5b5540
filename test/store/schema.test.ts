/**
 * The schema generated from the model, checked in a real SQLite database: a table for every entity
 * set, account_id leading every tenant key, index and foreign key, credentials stored only as
 * hashes, and the durability settings read back from the connection.
 *
 * SQLite only: it reads SQLite's own catalogue (sqlite_master, pragmas) from the database file.
 * The same facts on PostgreSQL are checked from pg_catalog in ./postgres-schema.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { model } from '../../src/model/catalogue-model';
import { buildSchema } from '../../src/store/schema';
import { openStore } from '../../src/store/open';
import type { SqlValue, Store } from '../../src/store/store';
import { EntityStore } from '../../src/store/entities';
import { tempDatabaseFile, testEngine } from '../support/test-database';
import { SPEC_ENTITY_SETS } from '../support/spec';

describe('the schema in SQLite', { skip: testEngine !== 'sqlite' && 'SQLite only: reads sqlite_master and pragmas' }, () => {
  const file = tempDatabaseFile();
  let store: Store;
  let raw: Database.Database;

  before(async () => {
    store = openStore(`sqlite:${file}`);
    await store.migrate();
    raw = new Database(file, { readonly: true });
  });
  after(async () => {
    raw.close();
    await store.close();
  });

  const tables = buildSchema(model);

  test('every entity set of the specification has its table', () => {
    const existing = new Set((raw.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name));
    for (const set of SPEC_ENTITY_SETS) {
      const type = model.typeBySetName.get(set);
      assert.ok(type, set);
      assert.ok(existing.has(type.table), `no table for ${set}`);
    }
    for (const t of tables) assert.ok(existing.has(t.name), `no table ${t.name}`);
  });

  test('account_id leads the primary key, every index and every foreign key of each tenant table', () => {
    const tenant = tables.filter((t) => t.tenant);
    assert.ok(tenant.length >= 20);
    for (const t of tenant) {
      const pk = (raw.prepare(`SELECT name, pk FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`).all(t.name) as { name: string }[]).map((r) => r.name);
      assert.equal(pk[0], 'account_id', `${t.name} primary key ${pk.join(',')}`);
      const indexes = raw.prepare(`SELECT name FROM pragma_index_list(?)`).all(t.name) as { name: string }[];
      for (const index of indexes) {
        const first = raw.prepare(`SELECT name FROM pragma_index_info(?) ORDER BY seqno LIMIT 1`).get(index.name) as { name: string };
        assert.equal(first.name, 'account_id', `${t.name} index ${index.name}`);
      }
      const fks = raw.prepare(`SELECT id, "from" AS col FROM pragma_foreign_key_list(?)`).all(t.name) as { id: number; col: string }[];
      for (const id of new Set(fks.map((f) => f.id))) {
        assert.ok(fks.some((f) => f.id === id && f.col === 'account_id'), `${t.name} foreign key ${id} lacks account_id`);
      }
    }
  });

  test('credentials are stored as hashes only: no column holds a token or a session value', () => {
    const columns = (table: string) => (raw.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((r) => r.name);
    assert.deepEqual(columns('subscription_tokens').sort(), ['account_id', 'created_at', 'last_used_at', 'last_user_agent', 'revoked_at', 'token_hash']);
    assert.deepEqual(columns('sessions').sort(), ['account_id', 'created_at', 'expires_at', 'last_seen_at', 'session_hash']);
    assert.ok(columns('accounts').includes('password_hash'));
    assert.ok(!columns('accounts').includes('password'));
  });

  test('the store runs with WAL, synchronous=FULL and foreign keys, read back from its connection', async () => {
    assert.equal(String(raw.pragma('journal_mode', { simple: true })).toLowerCase(), 'wal');
    // Per-connection settings, read through the store's own reader.
    const sync = await store.directory.get<{ synchronous: bigint }>('PRAGMA synchronous');
    assert.equal(Number(sync?.synchronous), 2);
    const fk = await store.directory.get<{ foreign_keys: bigint }>('PRAGMA foreign_keys');
    assert.equal(Number(fk?.foreign_keys), 1);
  });

  test('a second migration changes nothing', async () => {
    assert.deepEqual(await store.migrate(), { createdTables: [], addedColumns: [], createdIndexes: [] });
  });

  test('a foreign key index ends with id, so a parent\'s rows are read through it in id order; the older index without id is dropped by the migration', async () => {
    const plan = (sql: string) => (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(1, 1) as { detail: string }[]).map((r) => r.detail).join('; ');
    // What the rules and navigations ask: a parent's rows in id order.
    assert.match(plan('SELECT * FROM "product_variation_specifics" t WHERE t.account_id = ? AND t."product_variation_id" = ? ORDER BY t.id'), /USING INDEX product_variation_specifics_by_product_variation_id_and_id \(account_id=\? AND product_variation_id=\?\)/);
    assert.match(plan('SELECT * FROM "product_images" t WHERE t.account_id = ? AND t."product_id" = ? ORDER BY t.id'), /product_images_by_product_id_and_id \(account_id=\? AND product_id=\?\)/);
    // A database migrated before: its index without id goes, the one with id comes.
    const writable = new Database(file);
    writable.exec('DROP INDEX "product_images_by_product_id_and_id"; CREATE INDEX "product_images_by_product_id" ON "product_images" ("account_id", "product_id")');
    writable.close();
    assert.deepEqual(await store.migrate(), { createdTables: [], addedColumns: [], createdIndexes: ['product_images_by_product_id_and_id'] });
    const indexes = (raw.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'product_images'`).all() as { name: string }[]).map((r) => r.name);
    assert.ok(indexes.includes('product_images_by_product_id_and_id') && !indexes.includes('product_images_by_product_id'), indexes.join(', '));
  });

  test('a catalog\'s products are read from the pair table\'s index on the catalog, not by walking every product of the account', async () => {
    const entities = new EntityStore(model, store);
    const products = model.typeByName.get('Catalog')!.navigations.find((n) => n.name === 'Products')!;
    let sql = '';
    await store.read(1, async (tx) => {
      for await (const _ of entities.related({ ...tx, iterateRows: (text: string, params?: readonly SqlValue[]) => ((sql = text), tx.iterateRows(text, params)) }, 1, products, 5n)) void _;
    });
    const plan = (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(1, 5) as { detail: string }[]).map((r) => r.detail);
    assert.match(plan[0] ?? '', /^SEARCH l USING COVERING INDEX product_catalogs_by_catalog_id_and_product_id \(account_id=\? AND catalog_id=\?\)$/, plan.join('; '));
    assert.ok(!plan.some((step) => /TEMP B-TREE/.test(step)), `no sort: ${plan.join('; ')}`);
  });

  test('a lookup by a property that leads a unique key (an item by PlatformItemId) goes through that key\'s index, not the whole account', async () => {
    const entities = new EntityStore(model, store);
    const items = model.typeByName.get('SalesOrderItem')!;
    // The statement findWhere() runs, as it runs it.
    let sql = '';
    await store.read(1, (tx) => entities.findWhere({ ...tx, rows: (text: string, params?: readonly SqlValue[]) => ((sql = text), tx.rows(text, params)) }, 1, items, 'PlatformItemId', 'X-1'));
    const plan = (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(1, 'X-1') as { detail: string }[]).map((r) => r.detail).join('; ');
    assert.match(plan, /USING INDEX sales_order_items_unique_platform_item_id_transaction_id \(account_id=\? AND platform_item_id=\?\)/, plan);
  });
});
