/**
 * An import's lookups by many values (findWhereAny: items by PlatformItemId, orders by
 * PlatformOrderId) must probe the column's index even when the table's statistics were taken
 * before the account had rows. That is what autovacuum leaves on a busy database: it analyzed
 * the table while the account was empty or small, and does not analyze it again until a tenth
 * of the table has changed, a minute or more later.
 *
 * The planner then takes the account to hold about one row. For `account_id = 41 AND
 * platform_item_id = …`, a scan of the primary key (account_id, id) looks as cheap as a scan of
 * the column's own index, and on that tie it keeps the key. So every value read the account's
 * items one after another: 12,000 rows for each value, and a 10,000-order import in the full test
 * suite fell from 25,000 to about 700 rows per second.
 *
 * The account is now given to the lookup as an InitPlan's value (`= (SELECT $n)`), which the
 * planner does not look at. It estimates the account from the column's number of distinct values
 * instead, and the column's own index comes out clearly cheaper.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startLive, newSeller, type LiveService } from '../support/live-service';
import { testEngine } from '../support/test-database';
import { scansOf, type PlanNode } from '../support/pg-plans';
import { PlatformIntake } from '../../src/platform/intake';
import { importDocuments, type FileEntry } from '../../src/platform/document-file';
import { pgDialect } from '../../src/store/postgres/dialect';
import { ManualClock } from '../../src/clock';

const skip = testEngine !== 'postgres' && 'PostgreSQL only: plans are PostgreSQL’s';

/** Orders as a platform file holds them: an order, its buyer, two addresses and three items. */
function orders(tag: string, count: number): FileEntry[] {
  return Array.from({ length: count }, (_, n) => ({
    where: `line ${n + 1}`,
    value: {
      kind: 'order',
      PlatformOrderId: `${tag}-${n}`,
      CreationDate: '2026-11-20T09:00:00Z',
      CurrencyCode: 'EUR',
      Buyer: { BuyerName: `${tag}-buyer-${n}`, Email: `b${n}@example.com` },
      Address: { Name: 'Erika', Surname: 'M', Street: 'H 17', PostalCode: '51147', Town: 'Köln', Country: 'DE' },
      ShippingAddress: { Name: 'Erika', Surname: 'M', Street: 'A 3', PostalCode: '20457', Town: 'Hamburg', Country: 'DE' },
      SalesOrderItems: [1, 2, 3].map((i) => ({ PlatformItemId: `${tag}-${n}-${i}`, TransactionId: `T-${i}`, Name: 'Item', Amount: 1, Price: '19.99', CurrencyCode: 'EUR' })),
    },
  }));
}

/** The dialect's lookup of `values` in `column`, with its parameters numbered as PostgreSQL takes them. */
function lookup(table: string, column: string, accountId: number, values: readonly string[]): { text: string; params: unknown[] } {
  let n = 0;
  const text = pgDialect.rowsWithAnyOf('t.id', `"${table}"`, `"${column}"`, 'Edm.String', values.length).replace(/\?/g, () => `$${++n}`);
  return { text, params: pgDialect.lookupParams(accountId, values) };
}

let live: LiveService;
let owner: pg.Client;
let bulkAccount: number;

before(async () => {
  if (skip) return;
  live = await startLive({ clock: new ManualClock(Date.UTC(2026, 10, 26, 12)) });
  const intake = new PlatformIntake(live.service.app);
  for (let k = 0; k < 10; k++) {
    const small = await newSeller(live, `small-${k}`);
    await importDocuments(intake, small.accountId, orders(`S${k}`, 30));
  }
  owner = new pg.Client({ connectionString: live.database.ownerUrl });
  await owner.connect();
  // What autovacuum does while the bulk account has no rows yet.
  await owner.query('ANALYZE');
  const bulk = await newSeller(live, 'bulk');
  bulkAccount = bulk.accountId;
  await importDocuments(intake, bulkAccount, orders('BULK', 1000));
});

after(async () => {
  await owner?.end();
  await live?.close();
});

test('a lookup by many values probes the column’s index when the statistics predate the account', { skip }, async () => {
  // The tables' row-level security binds their owner too: the account is set as the service sets it.
  await owner.query(`SELECT set_config('app.account_id', $1, false)`, [String(bulkAccount)]);
  for (const [table, column, index, values] of [
    ['sales_order_items', 'platform_item_id', 'sales_order_items_unique_platform_item_id_transaction_id', ['BULK-5-1', 'BULK-700-2', 'BULK-999-3']],
    ['sales_orders', 'platform_order_id', 'sales_orders_unique_platform_order_id', ['BULK-5', 'BULK-700', 'BULK-999']],
  ] as const) {
    const { text, params } = lookup(table, column, bulkAccount, values);
    const explained = await owner.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${text}`, params);
    assert.deepEqual(scansOf(explained.rows[0]!['QUERY PLAN'][0].Plan), [index], `${table} by ${column}`);
    // And it finds them.
    const found = await owner.query(text, params);
    assert.equal(found.rowCount, values.length, `${table} by ${column}`);
  }
});
