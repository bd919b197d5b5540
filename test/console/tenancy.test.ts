/**
 * Tenancy in the console: a seller sees only their own account. Seller B's product, order and
 * token ids, typed into seller A's console, answer exactly as ids that exist nowhere (404, "does
 * not exist in your account"), and nothing of B's appears on any of A's pages; A cannot revoke
 * B's token. On PostgreSQL row-level security stands behind the account in every statement.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fillDemoAccount } from '../../src/cli/platform-commands';
import { request } from '../support/http-client';
import { getCollection } from '../support/live-client';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';

describe('console tenancy', () => {
  let live: LiveService;
  let a: Seller;
  let b: Seller;

  before(async () => {
    live = await startLive();
    a = await newSeller(live, 'tenant-a');
    b = await newSeller(live, 'tenant-b');
    // B has the whole demonstration; A has one product of its own.
    await fillDemoAccount(live.service.app.store, b.userName);
    const res = await asSeller(a, `${live.root}/Products`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ Title: 'Only A', Price: '2.00', StockAmount: 3 }) });
    assert.equal(res.status, 201);
  });

  after(async () => live?.close());

  const consoleGet = (seller: Seller, path: string) => request(`${live.origin}/console${path}`, { headers: { Cookie: `.ASPXAUTH=${seller.cookie}` } });

  test("B's product, order and catalog ids in A's console answer as missing, like ids that exist nowhere", async () => {
    const bProducts = await getCollection(live, b, 'Products?$top=3');
    const bOrders = await getCollection(live, b, 'SalesOrders?$top=3');
    const bCatalog = String((await getCollection(live, b, 'Catalogs?$top=1'))[0]!.Id);
    assert.match((await consoleGet(b, `/products?catalog=${bCatalog}`)).body, /Only the products of the catalog/);
    const foreignCatalog = await consoleGet(a, `/products?catalog=${bCatalog}`);
    assert.equal(foreignCatalog.status, 404);
    assert.match(foreignCatalog.body, new RegExp(`Catalog ${bCatalog} does not exist in your account`));
    assert.equal(bProducts.length, 3);
    assert.equal(bOrders.length, 3);
    const nowhere = await consoleGet(a, '/products/999999999');
    assert.equal(nowhere.status, 404);
    for (const [kind, rows, titleOf] of [
      ['products', bProducts, (r: Record<string, unknown>) => String(r.Title)],
      ['orders', bOrders, (r: Record<string, unknown>) => String(r.PlatformOrderId)],
    ] as const) {
      for (const row of rows) {
        const id = String(row.Id);
        const asB = await consoleGet(b, `/${kind}/${id}`);
        assert.equal(asB.status, 200, `B sees its own ${kind} ${id}`);
        assert.ok(asB.body.includes(titleOf(row)));
        const asA = await consoleGet(a, `/${kind}/${id}`);
        assert.equal(asA.status, 404, `${kind} ${id} in A's console`);
        assert.match(asA.body, /does not exist in your account/);
        assert.ok(!asA.body.includes(titleOf(row)), `A's answer names nothing of B's ${kind} ${id}`);
        // Exactly the answer for an id that exists nowhere, but for the id it repeats.
        const mainOf = (body: string, shownId: string) => body.slice(body.indexOf('<main')).replace(` ${shownId} `, ' N ');
        assert.equal(mainOf(asA.body, id), mainOf((await consoleGet(a, `/${kind}/999999999`)).body, '999999999'));
      }
    }
  });

  test("A's pages show A's data only", async () => {
    const overview = await consoleGet(a, '/');
    assert.match(overview.body, /<span class="n">1<\/span>Products/);
    assert.match(overview.body, /<span class="n">0<\/span>SalesOrders/);
    for (const path of ['/products', '/products?q=demo', '/catalogs', '/orders', '/orders?paid=yes']) {
      const res = await consoleGet(a, path);
      assert.equal(res.status, 200, path);
      assert.ok(!/DEMO-|Jacket|27-1000/.test(res.body), `${path} shows nothing of B's`);
    }
    assert.match((await consoleGet(a, '/products')).body, />Only A</);
    assert.match((await consoleGet(b, '/products')).body, /54 in all/);
  });

  test("A cannot revoke B's token, nor see it; B's token keeps working", async () => {
    const bPage = (await consoleGet(b, '/tokens')).body;
    const bHash = /name="token" value="([0-9a-f]{64})"/.exec(bPage)![1]!;
    const aPage = (await consoleGet(a, '/tokens')).body;
    assert.ok(!aPage.includes(bHash));
    const csrf = /name="csrf" value="([^"]+)"/.exec(aPage)![1]!;
    const res = await request(`${live.origin}/console/tokens/revoke`, {
      method: 'POST',
      headers: { Cookie: `.ASPXAUTH=${a.cookie}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(csrf)}&token=${bHash}`,
    });
    assert.equal(res.status, 404);
    assert.equal((await asSeller(b, `${live.root}/`, { headers: { Accept: 'application/json' } })).status, 200);
  });
});
