/**
 * Row-level security and roles on PostgreSQL, checked from pg_catalog and with raw connections
 * as the app role (the one the service runs as):
 * - every tenant table has row-level security enabled AND forced, with the tenant policy;
 * - the app role owns no table, is no superuser, has no BYPASSRLS, and holds only SELECT,
 *   INSERT, UPDATE and DELETE;
 * - as the app role with no tenant set, `SELECT count(*)` is 0 on every tenant table, although
 *   both accounts have rows in every one of them;
 * - with the tenant set to A, a query that does not filter by account sees none of B's rows,
 *   and no statement can write a row of B;
 * - the schema facts of test/store/schema.test.ts (account_id leading every key, index and
 *   foreign key) hold here too.
 *
 * PostgreSQL only: SQLite has no roles and no row-level security.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { model } from '../../src/model/catalogue-model';
import { buildSchema } from '../../src/store/schema';
import { postgresTables, TENANT_POLICY } from '../../src/store/postgres/ddl';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { testEngine } from '../support/test-database';
import { fillEveryTenantTable } from './tenant-data';

const tenantTables = buildSchema(model).filter((t) => t.tenant);
const allTables = postgresTables(buildSchema(model));

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

describe('row-level security and roles', { skip: testEngine !== 'postgres' && 'PostgreSQL only: SQLite has no roles or row-level security' }, () => {
  let live: LiveService;
  let a: Seller;
  let b: Seller;
  let app: pg.Client;
  let owner: pg.Client | undefined;

  before(async () => {
    live = await startLive();
    a = await newSeller(live, 'rls-a');
    b = await newSeller(live, 'rls-b');
    await fillEveryTenantTable(live, a, 'A');
    await fillEveryTenantTable(live, b, 'B');
    app = await connect(live.database.url);
    if (live.database.ownerUrl) owner = await connect(live.database.ownerUrl);
  });
  after(async () => {
    await app?.end();
    await owner?.end();
    await live?.close();
  });

  /** Rows of one account in a table, read the way the service reads: through the store, tenant set. */
  async function rowsOf(accountId: number, table: string): Promise<number> {
    const row = await live.service.app.store.read(accountId, (tx) => tx.get<{ n: bigint }>(`SELECT count(*) AS n FROM "${table}" WHERE account_id = ?`, [accountId]));
    return Number(row!.n);
  }

  test('both accounts have rows in every tenant table (so the fences below have something to hold back)', async () => {
    for (const t of tenantTables) {
      assert.ok((await rowsOf(a.accountId, t.name)) > 0, `A has rows in ${t.name}`);
      assert.ok((await rowsOf(b.accountId, t.name)) > 0, `B has rows in ${t.name}`);
    }
  });

  test('relrowsecurity and relforcerowsecurity are true on every tenant table, each with the tenant policy', async () => {
    const { rows } = await app.query<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean }>(
      `SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
    );
    const byName = new Map(rows.map((r) => [r.relname, r]));
    assert.ok(tenantTables.length >= 20);
    for (const t of tenantTables) {
      const r = byName.get(t.name);
      assert.ok(r, `table ${t.name} exists`);
      assert.equal(r.relrowsecurity, true, `${t.name} relrowsecurity`);
      assert.equal(r.relforcerowsecurity, true, `${t.name} relforcerowsecurity`);
    }
    const policies = await app.query<{ tablename: string; qual: string; with_check: string }>(
      `SELECT tablename, qual, with_check FROM pg_policies WHERE schemaname = current_schema() AND policyname = $1`,
      [TENANT_POLICY],
    );
    const policyOf = new Map(policies.rows.map((p) => [p.tablename, p]));
    for (const t of tenantTables) {
      const p = policyOf.get(t.name);
      assert.ok(p, `${t.name} has the tenant policy`);
      assert.match(p.qual, /account_id = .*current_setting\('app\.account_id'/, `${t.name} USING`);
      assert.match(p.with_check, /account_id = .*current_setting\('app\.account_id'/, `${t.name} WITH CHECK`);
    }
  });

  test('the app role owns no table, is no superuser, cannot bypass RLS, and holds only SELECT/INSERT/UPDATE/DELETE', { skip: !process.env.TEST_DATABASE_OWNER_URL && 'one role only (TEST_DATABASE_OWNER_URL unset)' }, async () => {
    const role = await app.query<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean; rolcreaterole: boolean }>(
      `SELECT rolname, rolsuper, rolbypassrls, rolcreaterole FROM pg_roles WHERE rolname = current_user`,
    );
    const me = role.rows[0]!;
    assert.equal(me.rolsuper, false);
    assert.equal(me.rolbypassrls, false);
    assert.equal(me.rolcreaterole, false);
    const owned = await app.query(`SELECT tablename FROM pg_tables WHERE tableowner = current_user`);
    assert.deepEqual(owned.rows, []);
    const ownedAnything = await app.query(`SELECT relname FROM pg_class WHERE relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)`);
    assert.deepEqual(ownedAnything.rows, []);
    for (const t of allTables) {
      for (const privilege of ['SELECT', 'INSERT', 'UPDATE', 'DELETE']) {
        const held = await app.query(`SELECT has_table_privilege(current_user, $1, $2) AS ok`, [`"${t.name}"`, privilege]);
        assert.equal(held.rows[0].ok, true, `${privilege} on ${t.name}`);
      }
      for (const privilege of ['TRUNCATE', 'REFERENCES', 'TRIGGER']) {
        const held = await app.query(`SELECT has_table_privilege(current_user, $1, $2) AS ok`, [`"${t.name}"`, privilege]);
        assert.equal(held.rows[0].ok, false, `${privilege} on ${t.name}`);
      }
    }
    await assert.rejects(app.query(`ALTER TABLE products DISABLE ROW LEVEL SECURITY`), { code: '42501' });
    await assert.rejects(app.query(`DROP POLICY ${TENANT_POLICY} ON products`), { code: '42501' });
    await assert.rejects(app.query(`CREATE TABLE intruder (x int)`), { code: '42501' });
  });

  test('as the app role with no tenant set, SELECT count(*) returns 0 from every tenant table', async () => {
    // A fresh transaction, and a connection that has set a tenant before: neither leaks one.
    for (const t of tenantTables) {
      const { rows } = await app.query<{ n: string }>(`SELECT count(*) AS n FROM "${t.name}"`);
      assert.equal(rows[0]!.n, '0', t.name);
    }
    await app.query('BEGIN');
    await app.query(`SELECT set_config('app.account_id', $1, true)`, [String(a.accountId)]);
    await app.query('COMMIT');
    for (const t of tenantTables) {
      const { rows } = await app.query<{ n: string }>(`SELECT count(*) AS n FROM "${t.name}"`);
      assert.equal(rows[0]!.n, '0', `${t.name} after a tenant was set in an ended transaction`);
    }
  });

  test('with the tenant set to A, an unfiltered query sees all of A and none of B; B cannot be written', async () => {
    await app.query('BEGIN');
    try {
      await app.query(`SELECT set_config('app.account_id', $1, true)`, [String(a.accountId)]);
      for (const t of tenantTables) {
        const { rows } = await app.query<{ mine: string; theirs: string; total: string }>(
          `SELECT count(*) FILTER (WHERE account_id = $1) AS mine, count(*) FILTER (WHERE account_id = $2) AS theirs, count(*) AS total FROM "${t.name}"`,
          [a.accountId, b.accountId],
        );
        const r = rows[0]!;
        assert.equal(Number(r.mine), await rowsOf(a.accountId, t.name), `${t.name}: all of A`);
        assert.equal(r.theirs, '0', `${t.name}: none of B`);
        assert.equal(r.total, r.mine, `${t.name}: nothing else`);
      }
      // Changing B's rows finds none; moving A's rows to B or inserting as B is refused.
      const updated = await app.query(`UPDATE products SET title = 'taken' WHERE account_id = $1`, [b.accountId]);
      assert.equal(updated.rowCount, 0);
      const deleted = await app.query(`DELETE FROM products WHERE account_id = $1`, [b.accountId]);
      assert.equal(deleted.rowCount, 0);
      await app.query('SAVEPOINT s');
      await assert.rejects(app.query(`UPDATE catalogs SET account_id = $1`, [b.accountId]), { code: '42501' });
      await app.query('ROLLBACK TO s');
      await assert.rejects(app.query(`INSERT INTO catalogs (account_id, id, name) SELECT $1, 999999999, 'x'`, [b.accountId]), { code: '42501' });
    } finally {
      await app.query('ROLLBACK');
    }
    assert.ok((await rowsOf(b.accountId, 'products')) > 0, "B's products are still there");
  });

  test('account_id leads the primary key, every index and every foreign key of each tenant table', async () => {
    for (const t of tenantTables) {
      const indexes = await app.query<{ indexname: string; first: string }>(
        `SELECT ic.relname AS indexname, a.attname AS first
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
         WHERE i.indrelid = to_regclass($1)`,
        [`"${t.name}"`],
      );
      assert.ok(indexes.rows.length >= 1, `${t.name} has a primary key`);
      for (const index of indexes.rows) assert.equal(index.first, 'account_id', `${t.name} index ${index.indexname}`);
      const fks = await app.query<{ conname: string; columns: string[] }>(
        `SELECT conname, array(SELECT attname FROM pg_attribute WHERE attrelid = conrelid AND attnum = ANY(conkey))::text[] AS columns
         FROM pg_constraint WHERE conrelid = to_regclass($1) AND contype = 'f'`,
        [`"${t.name}"`],
      );
      assert.equal(fks.rows.length, t.foreignKeys.length, `${t.name} foreign keys`);
      for (const fk of fks.rows) assert.ok(fk.columns.includes('account_id'), `${t.name} foreign key ${fk.conname} lacks account_id`);
    }
  });

  test('text collates by code point, and a second migration changes nothing', async () => {
    const collations = await app.query<{ table_name: string; column_name: string; collation_name: string | null }>(
      `SELECT table_name, column_name, collation_name FROM information_schema.columns WHERE table_schema = current_schema() AND data_type = 'text'`,
    );
    assert.ok(collations.rows.length > 20);
    for (const c of collations.rows) assert.equal(c.collation_name, 'C', `${c.table_name}.${c.column_name}`);
    assert.deepEqual(await live.service.app.store.migrate(), { createdTables: [], addedColumns: [], createdIndexes: [] });
  });
});
