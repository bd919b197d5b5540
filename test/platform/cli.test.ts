/**
 * `catalogue platform import` and `catalogue demo` as a user runs them: separate processes on a
 * real database of the engine under test, whose results are then read through the live service
 * over HTTP.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { login, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { freshDatabase, type TestDatabase } from '../support/test-database';
import { CATALOGUE_BIN as BIN } from '../support/serve-process';
import { callOperation, operationValue } from '../operations/operation-client';
import { getCollection, jsonDate } from '../support/live-client';
import { orderDocument, orderItem, paymentEvent, shipmentEvent, type Json } from './platform-client';

function cli(db: TestDatabase, args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, ...db.env, LOG_LEVEL: 'silent' }, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A database with one account made by the CLI; the seller's credentials. */
function accountIn(db: TestDatabase, userName: string) {
  const password = `${userName}-password`;
  const r = cli(db, ['account', 'create', '--user', userName, '--password', password]);
  assert.equal(r.status, 0, r.stderr);
  const { accountId, subscriptionToken } = JSON.parse(r.stdout) as { accountId: number; subscriptionToken: string };
  return { accountId, userName, password, token: subscriptionToken };
}

/** Serves the database, logs the account in, runs fn, stops. */
async function served<T>(database: TestDatabase, account: ReturnType<typeof accountIn>, fn: (live: LiveService, seller: Seller) => Promise<T>): Promise<T> {
  const live = await startLive({ database });
  try {
    const cookie = await login(live, account.userName, account.password);
    assert.ok(cookie);
    const seller: Seller = { ...account, cookie, auth: { SubscriptionToken: account.token, Cookie: `.ASPXAUTH=${cookie}` } };
    return await fn(live, seller);
  } finally {
    await live.close();
  }
}

function writeFile(name: string, text: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-import-')), name);
  fs.writeFileSync(file, text);
  return file;
}

const ndjson = (docs: Json[]) => docs.map((d) => JSON.stringify(d)).join('\n') + '\n';

describe('catalogue platform import', () => {
  let db: TestDatabase;
  let account: ReturnType<typeof accountIn>;
  before(async () => {
    db = await freshDatabase();
    account = accountIn(db, 'importer');
  });
  const docs: Json[] = [orderDocument('IMP-1', [orderItem('I-1'), orderItem('I-2')]), paymentEvent('IMP-1'), shipmentEvent('IMP-1'), { kind: 'listing', PlatformItemId: 'L-IMP', Status: 1, Price: '5' }];

  test('an NDJSON file: one line per document with its outcome; importing it again changes nothing', async () => {
    const file = writeFile('docs.ndjson', ndjson(docs));
    const first = cli(db, ['platform', 'import', file, '--user', 'importer']);
    assert.equal(first.status, 0, first.stderr);
    const outcomes = first.stdout.trim().split('\n').map((l) => JSON.parse(l) as { kind: string; key: string; outcome: string });
    assert.deepEqual(outcomes.map((o) => [o.kind, o.key, o.outcome]), [['order', 'IMP-1', 'created'], ['payment', 'IMP-1', 'updated'], ['shipment', 'IMP-1', 'updated'], ['listing', 'L-IMP', 'created']]);
    const rows = await served(db, account, (live) => tenantRows(live, account.accountId));
    const again = cli(db, ['platform', 'import', file, '--user', 'importer']);
    assert.equal(again.status, 0, again.stderr);
    assert.ok(again.stdout.trim().split('\n').every((l) => (JSON.parse(l) as { outcome: string }).outcome === 'unchanged'));
    await served(db, account, async (live, seller) => {
      assert.deepEqual(await tenantRows(live, account.accountId), rows);
      const [order] = await getCollection(live, seller, 'SalesOrders');
      const history = operationValue(await callOperation(live, seller, 'GET', 'GetSalesOrderHistory', `salesOrderId=${String(order!.Id)}L`), 'GetSalesOrderHistory', 'json') as string;
      assert.deepEqual(history.split('\r\n').map((l) => l.slice(20)), ['- ItemId I-1 - Aktion MarkedAsPaid:1', '- ItemId I-2 - Aktion MarkedAsPaid:1', '- ItemId I-1 - Aktion Versandstatus:1', '- ItemId I-2 - Aktion Versandstatus:1']);
    });
  });

  test('a JSON array and a single JSON document are read too', async () => {
    const array = cli(db, ['platform', 'import', writeFile('docs.json', JSON.stringify([orderDocument('IMP-2'), paymentEvent('IMP-2')], null, 2)), '--user', 'importer']);
    assert.equal(array.status, 0, array.stderr);
    assert.equal(array.stdout.trim().split('\n').length, 2);
    const single = cli(db, ['platform', 'import', writeFile('one.json', JSON.stringify(orderDocument('IMP-3'), null, 2)), '--user', 'importer']);
    assert.equal(single.status, 0, single.stderr);
    assert.match(single.stdout, /"key":"IMP-3","id":"\d+","outcome":"created"/);
  });

  test('a file with an invalid document imports nothing and names every problem with its line', async () => {
    const rows = await served(db, account, (live) => tenantRows(live, account.accountId));
    const bad = ndjson([orderDocument('IMP-4'), { ...orderDocument('IMP-5'), Buyer: undefined }, paymentEvent('IMP-4', 'yes' as unknown as boolean)]);
    const r = cli(db, ['platform', 'import', writeFile('bad.ndjson', bad), '--user', 'importer']);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /nothing was imported: 2 of 3 documents are invalid/);
    assert.match(r.stderr, /line 2: Invalid order document: The document lacks the required member 'Buyer'/);
    assert.match(r.stderr, /line 3: Invalid payment document: '\/Paid' must be boolean/);
    assert.doesNotMatch(r.stderr, /at .*\.js:\d+/, 'no stack trace');
    await served(db, account, async (live) => assert.deepEqual(await tenantRows(live, account.accountId), rows));
  });

  test('a line that is no JSON, an unreadable file, an unknown user and a missing FILE are clear errors', () => {
    const notJson = cli(db, ['platform', 'import', writeFile('broken.ndjson', `${JSON.stringify(orderDocument('X'))}\n{"kind":\n`), '--user', 'importer']);
    assert.equal(notJson.status, 2);
    assert.match(notJson.stderr, /line 2 is not valid JSON/);
    const missing = cli(db, ['platform', 'import', '/nonexistent/docs.ndjson', '--user', 'importer']);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /cannot read \/nonexistent\/docs.ndjson/);
    const unknown = cli(db, ['platform', 'import', writeFile('ok.ndjson', ndjson([orderDocument('X')])), '--user', 'nobody']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /no account with the user name 'nobody'/);
    const noFile = cli(db, ['platform', 'import', '--user', 'importer']);
    assert.equal(noFile.status, 2);
    assert.match(noFile.stderr, /FILE argument is required/);
  });

  test('a document that fails when applied stops the import there; the ones before it stay, and a rerun changes nothing of them', async () => {
    const file = writeFile('partial.ndjson', ndjson([orderDocument('IMP-6'), orderDocument('IMP-7', [orderItem('I-7', { Product: { ForeignId: 'NO-SUCH' } })]), orderDocument('IMP-8')]));
    const r = cli(db, ['platform', 'import', file, '--user', 'importer']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /line 2: '\/SalesOrderItems\/0\/Product' names the ForeignId 'NO-SUCH'.*The 1 documents before it were imported/);
    await served(db, account, async (live, seller) => {
      const ids = (await getCollection(live, seller, 'SalesOrders')).map((o) => o.PlatformOrderId);
      assert.ok(ids.includes('IMP-6'));
      assert.ok(!ids.includes('IMP-7') && !ids.includes('IMP-8'));
    });
  });
});

describe('catalogue demo', () => {
  test('fills an account with at least 50 products with variations, images, specifics and catalogs, listings and 20 orders with history', async () => {
    const db = await freshDatabase();
    const account = accountIn(db, 'demo-user');
    const started = Date.now();
    const r = cli(db, ['demo', '--user', 'demo-user']);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Record<string, number>;
    assert.equal(report.accountId, account.accountId);
    await served(db, account, async (live, seller) => {
      const count = async (set: string) => {
        const res = await live.service.app.store.read(account.accountId, (tx) => live.service.app.entities.countAll(tx, account.accountId, live.service.app.model.typeBySetName.get(set)!));
        return Number(res);
      };
      const counts = Object.fromEntries(await Promise.all(['Products', 'ProductVariations', 'ProductImages', 'ProductSpecifics', 'ProductVariationSpecifics', 'Catalogs', 'Listings', 'ListingItems', 'SalesOrders', 'SalesOrderItems', 'Buyers', 'Addresses'].map(async (s) => [s, await count(s)] as const)));
      assert.ok(counts.Products! >= 50, `products: ${counts.Products}`);
      for (const set of ['ProductVariations', 'ProductImages', 'ProductSpecifics', 'ProductVariationSpecifics', 'Catalogs', 'Listings', 'ListingItems', 'Buyers', 'Addresses']) assert.ok(counts[set]! > 0, set);
      assert.ok(counts.SalesOrders! >= 20, `orders: ${counts.SalesOrders}`);
      assert.deepEqual([report.products, report.orders, report.listings, report.catalogs], [counts.Products, counts.SalesOrders, counts.Listings, counts.Catalogs]);

      // Every product is in a catalog, and the connector's full product expand reads them all.
      const expand = 'CarParts,Catalogs,ChildProducts,DiscountOffers,OptionalProductAttributes,ProductImages,ProductSpecifics,ProductVariations/ProductVariationSpecifics,ProductVariations/ProductVariationPictures';
      const products = await getCollection(live, seller, `Products?$expand=${expand}`);
      assert.equal(products.length, counts.Products);
      const many = (v: unknown) => (Array.isArray(v) ? v : (v as { results: unknown[] }).results);
      assert.ok(products.every((p) => many(p.Catalogs).length === 1 && many(p.ProductImages).length >= 1 && many(p.ProductSpecifics).length >= 1));
      assert.ok(products.filter((p) => many(p.ProductVariations).length > 0).length >= 25);

      // Orders have history from payment and shipping events, dated within the last 30 days.
      const orders = await getCollection(live, seller, 'SalesOrders');
      let withPayment = 0;
      let withShipping = 0;
      for (const order of orders) {
        const created = jsonDate(order.CreationDate)!;
        assert.ok(created >= started - 31 * 24 * 3600_000 && created <= Date.now(), 'dated within the last 30 days');
        const history = operationValue(await callOperation(live, seller, 'GET', 'GetSalesOrderHistory', `salesOrderId=${String(order.Id)}L`), 'GetSalesOrderHistory', 'json') as string;
        if (history.includes('MarkedAsPaid:1')) withPayment++;
        if (history.includes('Versandstatus:1')) withShipping++;
      }
      assert.ok(withPayment >= 15 && withShipping >= 8, `history: ${withPayment} paid, ${withShipping} shipped`);
      assert.ok(orders.some((o) => o.PaymentStatus === 'Withdrawn'));
      const listed = operationValue(await callOperation(live, seller, 'GET', 'ProductIsListed', `productId=${String(products[0]!.Id)}L`), 'ProductIsListed', 'json');
      assert.equal(listed, true);
    });
    const again = cli(db, ['demo', '--user', 'demo-user']);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /holds demonstration data already/);
    assert.equal(cli(db, ['demo', '--user', 'nobody']).status, 2);
  });
});
