/**
 * The time budget of a read statement, on the engine under test: a read that runs past it is
 * stopped and answered 400 naming the budget, in the request's format, and the service goes on
 * answering. On SQLite two budgets apply: SQLITE_READ_BUDGET_MS to a read on the event loop (a
 * $filter or $orderby without text functions), READ_STATEMENT_TIMEOUT_MS to a read with text
 * functions, which runs on a worker thread; on PostgreSQL READ_STATEMENT_TIMEOUT_MS is the
 * statement_timeout of every read statement. With budgets of 1 ms, scans of 20,000 variations
 * cannot finish in time; with the defaults the same reads answer 200.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import { EntityStore } from '../../src/store/entities';
import { seedCatalogue } from '../support/catalogue-seed';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { testEngine, type TestDatabase } from '../support/test-database';

/** Products (each with 10 variations) of the account the reads scan. */
const PRODUCTS = 2_000;

const LIGHT_SCAN = "ProductVariations?$filter=StockAmount ge 0 and Sku ne 'none'&$orderby=Sku desc&$top=3";
const HEAVY_SCAN = "ProductVariations?$filter=substringof('zz', concat(tolower(Sku), toupper(Sku)))&$top=3";

const encoded = (path: string) => path.replace(/ /g, '%20').replace(/'/g, '%27');

describe('read time budgets', () => {
  let seeded: LiveService;
  let database: TestDatabase;
  let seller: Seller;

  before(async () => {
    seeded = await startLive();
    database = seeded.database;
    seller = await newSeller(seeded, 'budget');
    const { app } = seeded.service;
    await seedCatalogue(model, app.store, new EntityStore(model, app.store), seller.accountId, PRODUCTS);
  });

  after(() => seeded?.close());

  test('with the default budgets, both scans answer 200', async () => {
    for (const path of [LIGHT_SCAN, HEAVY_SCAN]) {
      const res = await asSeller(seller, `${seeded.root}/${encoded(path)}`, { headers: { Accept: 'application/json' } });
      assert.equal(res.status, 200, `${path}: ${res.body.toString().slice(0, 300)}`);
    }
  });

  test('past a budget of 1 ms, each scan is stopped with a 400 that names the budget, and the service goes on', async () => {
    // The same database, served with budgets of 1 ms.
    const tight = await startLive({ database, env: { SQLITE_READ_BUDGET_MS: '1', READ_STATEMENT_TIMEOUT_MS: '1' } });
    try {
      for (const path of [LIGHT_SCAN, HEAVY_SCAN]) {
        const json = await asSeller(seller, `${tight.root}/${encoded(path)}`, { headers: { Accept: 'application/json' } });
        assert.equal(json.status, 400, `${path}: ${json.body.toString().slice(0, 300)}`);
        assert.match(JSON.parse(json.body.toString()).error.message.value, /^The query ran longer than its time budget of 1 ms and was stopped/);
        const atom = await asSeller(seller, `${tight.root}/${encoded(path)}`, { headers: { Accept: 'application/atom+xml' } });
        assert.equal(atom.status, 400);
        assert.match(atom.body.toString(), /<message xml:lang="en-US">The query ran longer than its time budget of 1 ms/);
      }
      // On SQLite a plain page carries no budget check: it goes on answering even under a budget
      // of 1 ms. (On PostgreSQL every read statement has READ_STATEMENT_TIMEOUT_MS, so there a
      // page can be cut at 1 ms too.)
      if (testEngine === 'sqlite') {
        const page = await asSeller(seller, `${tight.root}/Products?$top=2`, { headers: { Accept: 'application/json' } });
        assert.equal(page.status, 200);
      }
    } finally {
      await tight.close();
    }
    // The statements stopped held nothing: the database serves the same scans with the defaults.
    const again = await asSeller(seller, `${seeded.root}/${encoded(HEAVY_SCAN)}`, { headers: { Accept: 'application/json' } });
    assert.equal(again.status, 200);
  });
});
