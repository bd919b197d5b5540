/**
 * The seller console for daily work, in a real browser on the demonstration data: log in with
 * scripts off; edit a product's price, stock and strike-through price and see the API answer the
 * new values at once (and the audit trail name the change); an edit whose ETag is stale shows
 * the conflict and the current values and changes nothing; a rule the edit breaks (a duplicate
 * Sku, a title too long, a catalog cycle) is shown at its field and changes nothing; a catalog's
 * name and parent; an order marked paid, shipped and given tracking data, and several orders
 * marked shipped at once, with the same history lines the API's MERGE writes; the integrations
 * page with a token's last use, its client and a failing request. Every new page is
 * screenshotted on a desktop and a phone-sized window.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { tokensOfAccount } from '../../src/auth/accounts';
import { fillDemoAccount } from '../../src/cli/platform-commands';
import { browserSkip, launchBrowser, overflowsSideways, unlabelledControls, waitUntil, type Browser } from '../support/browser';
import { getCollection, getEntity, mergeEntity } from '../support/live-client';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';

const PHONE = { width: 390, height: 844 };

describe('seller console for daily work in a browser', { skip: browserSkip() }, () => {
  let live: LiveService;
  let seller: Seller;
  let browser: Browser;
  let page: Page;
  let jacketId: string;
  /** Pages to screenshot on a phone at the end (name, console path). */
  const phonePages: [string, string][] = [];

  before(async () => {
    live = await startLive();
    seller = await newSeller(live, 'daily');
    await fillDemoAccount(live.service.app.store, seller.userName);
    jacketId = String((await getCollection(live, seller, `Products?$filter=Title eq 'Alpenglow Rain Jacket'`))[0]!.Id);
    browser = await launchBrowser();
    page = await browser.newPage();
  });

  after(async () => {
    await browser?.close();
    await live?.close();
  });

  const url = (path: string) => `${live.origin}/console${path}`;

  /**
   * What every page must be: every control labelled, no script error or policy violation; a
   * screenshot. A page answered with a refusal (409, 400) is logged by the browser as a failed
   * load of the page itself: that one line is expected.
   */
  async function looked(p: Page, name: string, refusedWith?: number): Promise<void> {
    assert.deepEqual(await unlabelledControls(p), [], `${name}: unlabelled controls`);
    const problems = browser.problems.splice(0);
    const expected = problems.filter((m) => refusedWith !== undefined && m.includes(`Failed to load resource: the server responded with a status of ${refusedWith}`));
    assert.equal(expected.length, refusedWith === undefined ? 0 : 1, `${name}: the refusal`);
    assert.deepEqual(problems.filter((m) => !expected.includes(m)), [], `${name}: problems in the page`);
    await browser.screenshot(p, name);
  }

  const auditLines = (entity: string) => live.logLines.filter((l) => l.audit === 'console write' && l.entity === entity);

  test('login works with JavaScript disabled: a wrong password is said, the right one opens the overview', async () => {
    const noScript = await browser.newPage();
    const cdp = await browser.context.newCDPSession(noScript);
    await cdp.send('Emulation.setScriptExecutionDisabled', { value: true });
    await noScript.goto(url('/'));
    assert.equal(new URL(noScript.url()).pathname, '/console/login');
    await noScript.getByLabel('User name').fill(seller.userName);
    await noScript.getByLabel('Password').fill('wrong');
    await noScript.getByRole('button', { name: 'Log in' }).click();
    await noScript.getByText('The user name or the password is wrong.').waitFor();
    assert.equal(await noScript.getByLabel('User name').inputValue(), seller.userName);
    await browser.screenshot(noScript, 'login-no-script-failed');
    await noScript.getByLabel('Password').fill(seller.password);
    await Promise.all([noScript.waitForURL(url('/')), noScript.getByRole('button', { name: 'Log in' }).click()]);
    await noScript.getByRole('heading', { name: 'Overview' }).waitFor();
    await browser.screenshot(noScript, 'login-no-script-overview');
    await noScript.close();
    // The session cookie is the context's: the other pages are logged in now.
    assert.deepEqual(browser.problems.splice(0), []);
  });

  test('pictures of the demo data (hosts that do not resolve) show their placeholders', async () => {
    await page.goto(url(`/products/${jacketId}`));
    await waitUntil(page, `[...document.querySelectorAll('main .pic')].every((f) => f.classList.contains('failed'))`);
    assert.equal(await page.locator('main .pic.failed').count(), 3 + 4);
    await looked(page, 'product-pictures-offline');
  });

  test('an edit of price, stock and strike-through price is visible through the API at once, and audited', async () => {
    await page.goto(url(`/products/${jacketId}`));
    await page.getByRole('link', { name: 'Edit price, stock, title…' }).click();
    await page.getByRole('heading', { name: 'Edit product Alpenglow Rain Jacket' }).waitFor();
    await looked(page, 'edit-product');
    phonePages.push(['edit-product', `/products/${jacketId}/edit`]);
    await page.getByLabel('Price', { exact: true }).fill('123.45');
    await page.getByLabel('Stock').fill('17');
    await page.getByLabel('Strike-through price (empty: none)').fill('149.00');
    await Promise.all([page.waitForURL(url(`/products/${jacketId}?saved=1`)), page.getByRole('button', { name: 'Save' }).click()]);
    await page.getByText('Your changes are saved.').waitFor();
    await looked(page, 'edit-product-saved');
    const product = await getEntity(live, seller, 'Products', jacketId);
    assert.equal(Number(product.Price), 123.45);
    assert.equal(product.StockAmount, 17);
    const offers = await getCollection(live, seller, `DiscountOffers?$filter=ProductId eq ${jacketId}L and ProductVariationId eq null and Type eq 1`);
    assert.deepEqual(offers.map((o) => Number(o.Price)), [149]);
    const audited = auditLines(`Products(${jacketId}L)`);
    assert.equal(audited.length, 1);
    assert.deepEqual(audited[0]!.properties, ['Price', 'StockAmount', 'StrikeThroughPrice']);
    assert.equal(audited[0]!.accountId, seller.accountId);
  });

  test('an edit whose ETag is stale (a connector synced in between) shows the conflict and the current values, and changes nothing', async () => {
    await page.goto(url(`/products/${jacketId}/edit`));
    const synced = await mergeEntity(live, seller, 'Products', jacketId, { StockAmount: 5 });
    assert.equal(synced.status, 204);
    await page.getByLabel('Stock').fill('99');
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Save' }).click()]);
    assert.equal(answer.status(), 409);
    await page.getByText('Nothing was saved.').waitFor();
    assert.equal(await page.getByLabel('Stock').inputValue(), '5', 'the current value');
    assert.equal(await page.getByText('You had entered: “99”').count(), 1);
    await looked(page, 'edit-product-conflict', 409);
    assert.equal((await getEntity(live, seller, 'Products', jacketId)).StockAmount, 5);
    // The form now carries the current ETag: saving again goes through.
    await page.getByLabel('Stock').fill('6');
    await Promise.all([page.waitForURL(/saved=1/), page.getByRole('button', { name: 'Save' }).click()]);
    assert.equal((await getEntity(live, seller, 'Products', jacketId)).StockAmount, 6);
  });

  test('a rule violation (a duplicate Sku, a title too long) is shown at the field with the service\'s message, and changes nothing', async () => {
    await page.goto(url(`/products/${jacketId}`));
    await page.getByRole('link', { name: 'Edit variation DEMO-0001-M' }).click();
    await page.getByRole('heading', { name: 'Edit variation DEMO-0001-M' }).waitFor();
    await looked(page, 'edit-variation');
    const variationPath = new URL(page.url()).pathname.replace('/console', '');
    phonePages.push(['edit-variation', variationPath]);
    const variationId = variationPath.split('/')[2]!;
    await page.getByLabel('Sku').fill('DEMO-0001-S');
    await page.getByLabel('Stock').fill('3');
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Save' }).click()]);
    assert.equal(answer.status(), 400);
    const sku = page.getByLabel('Sku');
    assert.equal(await sku.getAttribute('aria-invalid'), 'true');
    const problem = page.locator(`#${await sku.getAttribute('aria-describedby')}`);
    assert.match((await problem.textContent()) ?? '', /already has a variation with Sku 'DEMO-0001-S'/);
    assert.equal(await sku.inputValue(), 'DEMO-0001-S', 'the entry is kept to correct');
    await looked(page, 'edit-variation-invalid', 400);
    const variation = await getEntity(live, seller, 'ProductVariations', variationId);
    assert.equal(variation.Sku, 'DEMO-0001-M');
    assert.notEqual(variation.StockAmount, 3, 'nothing of the edit was written');

    await page.goto(url(`/products/${jacketId}/edit`));
    await page.getByLabel('Title').fill('T'.repeat(81));
    await page.getByLabel('Stock').fill('7');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('.field-problem').waitFor();
    assert.equal(await page.getByLabel('Title').getAttribute('aria-invalid'), 'true');
    assert.match((await page.locator('#field-Title-problem').textContent()) ?? '', /80/);
    await looked(page, 'edit-product-too-long', 400);
    const product = await getEntity(live, seller, 'Products', jacketId);
    assert.equal(product.Title, 'Alpenglow Rain Jacket');
    assert.equal(product.StockAmount, 6);
  });

  test('keyboard: an edit form is reached with Tab from the skip link and sent with Enter', async () => {
    await page.goto(url(`/products/${jacketId}/edit`));
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate<string>('document.activeElement.id'), 'main');
    const focused = () => page.evaluate<string>('document.activeElement.id || document.activeElement.tagName');
    let presses = 0;
    while ((await focused()) !== 'field-StockAmount' && presses++ < 20) await page.keyboard.press('Tab');
    assert.equal(await focused(), 'field-StockAmount', 'the Stock field is reached with Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('8');
    await Promise.all([page.waitForURL(/saved=1/), page.keyboard.press('Enter')]);
    assert.equal((await getEntity(live, seller, 'Products', jacketId)).StockAmount, 8);
  });

  test('a catalog: its name and its parent; a cycle is refused at the parent field', async () => {
    const catalogs = await getCollection(live, seller, 'Catalogs');
    const idOf = (name: string) => String(catalogs.find((c) => c.Name === name)!.Id);
    const [otherRoot] = catalogs.filter((c) => c.IsRootLevel === true && c.Name !== 'Clothing').map((c) => String(c.Name));
    await page.goto(url('/catalogs'));
    await page.getByRole('link', { name: 'Edit catalog Jackets' }).click();
    await page.getByRole('heading', { name: 'Edit catalog Jackets' }).waitFor();
    await looked(page, 'edit-catalog');
    phonePages.push(['edit-catalog', `/catalogs/${idOf('Jackets')}/edit`]);
    await page.getByLabel('Name').fill('Jackets & Coats');
    await page.getByLabel('Parent catalog').selectOption({ label: otherRoot! });
    await Promise.all([page.waitForURL(/catalogs\?saved=1/), page.getByRole('button', { name: 'Save' }).click()]);
    const tree = page.getByRole('list', { name: 'Catalog tree' });
    assert.equal(await tree.locator(':scope > li', { hasText: otherRoot! }).getByRole('link', { name: 'Jackets & Coats', exact: true }).count(), 1);
    const parents = await getCollection(live, seller, `Catalogs(${idOf('Jackets')}L)/ParentCatalogs`);
    assert.deepEqual(parents.map((c) => c.Name), [otherRoot]);
    assert.equal((await getEntity(live, seller, 'Catalogs', idOf('Jackets'))).Name, 'Jackets & Coats');

    // The other root under its own child: a cycle, refused as the API's $links refuse it.
    await page.goto(url(`/catalogs/${idOf(otherRoot!)}/edit`));
    await page.getByLabel('Parent catalog').selectOption({ label: 'Jackets & Coats' });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#field-ParentCatalog-problem').waitFor();
    assert.match((await page.locator('#field-ParentCatalog-problem').textContent()) ?? '', /its own ancestor/);
    await looked(page, 'edit-catalog-cycle', 400);
    assert.deepEqual(await getCollection(live, seller, `Catalogs(${idOf(otherRoot!)}L)/ParentCatalogs`), []);
  });

  /** An order's history lines without their times. */
  async function historyOf(orderId: string): Promise<string[]> {
    const res = await asSeller(seller, `${live.root}/GetSalesOrderHistory?salesOrderId=${orderId}L`, { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 200, res.body);
    const d = (JSON.parse(res.body) as { d: string | { GetSalesOrderHistory: string } }).d;
    const text = typeof d === 'string' ? d : d.GetSalesOrderHistory;
    return text === '' ? [] : text.split('\r\n').map((l) => l.replace(/^\S+ \S+ - /, ''));
  }

  const itemsOf = async (orderId: string) => getCollection(live, seller, `SalesOrders(${orderId}L)/SalesOrderItems?$orderby=Id`);

  test('an order: marked paid, shipped and given tracking data, with the history lines the API writes', async () => {
    const [order] = await getCollection(live, seller, 'SalesOrders?$filter=MarkedAsPayed eq false and MarkedAsShipped eq false&$top=1');
    const id = String(order!.Id);
    const before = await historyOf(id);
    const items = await itemsOf(id);
    await page.goto(url(`/orders/${id}`));
    await looked(page, 'order-actions');
    phonePages.push(['order-actions', `/orders/${id}`]);
    await Promise.all([page.waitForURL(/saved=1/), page.getByRole('button', { name: 'Mark paid' }).click()]);
    assert.equal((await getEntity(live, seller, 'SalesOrders', id)).MarkedAsPayed, true);
    await page.getByLabel('Shipping status').selectOption({ label: 'Shipped' });
    await Promise.all([page.waitForURL(/saved=1/), page.getByRole('button', { name: 'Set shipping status' }).click()]);
    assert.equal((await getEntity(live, seller, 'SalesOrders', id)).MarkedAsShipped, true);
    const item = items[0]!;
    await page.getByLabel(`Carrier of ${String(item.Name)}`).fill('DHL');
    await page.getByLabel(`Tracking numbers of ${String(item.Name)}`).fill('00340434161234567890');
    await Promise.all([page.waitForURL(/saved=1/), page.getByRole('button', { name: `Save tracking of ${String(item.Name)}` }).click()]);
    const stored = await getEntity(live, seller, 'SalesOrderItems', String(item.Id));
    assert.deepEqual([stored.CarrierUsed, stored.TrackingNumbers], ['DHL', '00340434161234567890']);
    const expected = [
      ...items.map((i) => `ItemId ${String(i.PlatformItemId)} - Aktion MarkedAsPaid:1`),
      ...items.map((i) => `ItemId ${String(i.PlatformItemId)} - Aktion Versandstatus:1`),
    ];
    assert.deepEqual((await historyOf(id)).slice(before.length), expected);
    const shown = (await page.locator('pre.history').textContent()) ?? '';
    for (const line of expected) assert.ok(shown.includes(line), `the order page shows ${line}`);
    await looked(page, 'order-actions-done');
    assert.equal(auditLines(`SalesOrders(${id}L)`).length, 2);
    assert.equal(auditLines(`SalesOrderItems(${String(item.Id)}L)`).length, 1);
  });

  test('marking orders shipped in bulk writes the same history lines as the API, order by order', async () => {
    const unshipped = await getCollection(live, seller, 'SalesOrders?$filter=MarkedAsShipped eq false&$orderby=CreationDate desc');
    assert.ok(unshipped.length >= 3, `three unshipped orders in the demo data, not ${unshipped.length}`);
    const [viaApi, ...viaConsole] = unshipped.slice(0, 3).map((o) => String(o.Id));
    const before = new Map<string, string[]>();
    for (const id of [viaApi!, ...viaConsole]) before.set(id, await historyOf(id));
    const merged = await mergeEntity(live, seller, 'SalesOrders', viaApi!, { ShippingStatus: 1 });
    assert.equal(merged.status, 204);

    await page.goto(url('/orders?shipped=no'));
    for (const id of viaConsole) await page.locator(`input[name="order"][value="${id}"]`).check();
    await looked(page, 'orders-bulk-selected');
    phonePages.push(['orders-bulk', '/orders?shipped=no']);
    await page.getByRole('button', { name: 'Mark selected orders shipped' }).click();
    await page.getByText('2 of 2 orders marked shipped.').waitFor();
    await looked(page, 'orders-bulk-done');

    const newLines = async (id: string) => (await historyOf(id)).slice(before.get(id)!.length);
    const shape = (lines: string[], items: Record<string, unknown>[]) => lines.map((l) => items.reduce((t, i) => t.replace(`ItemId ${String(i.PlatformItemId)} `, 'ItemId <item> '), l));
    const apiLines = shape(await newLines(viaApi!), await itemsOf(viaApi!));
    assert.ok(apiLines.length > 0);
    for (const id of viaConsole) {
      const items = await itemsOf(id);
      assert.deepEqual(await newLines(id), items.map((i) => `ItemId ${String(i.PlatformItemId)} - Aktion Versandstatus:1`), `order ${id}`);
      assert.deepEqual([...new Set(shape(await newLines(id), items))], [...new Set(apiLines)], `order ${id}: the lines the API writes`);
      assert.equal((await getEntity(live, seller, 'SalesOrders', id)).MarkedAsShipped, true);
    }
  });

  test('the integrations page: a token\'s last use, its client, a failing request with its request id, and the orders waiting for import', async () => {
    const agent = 'AcmeShopConnector/2.1 (+https://connector.example)';
    assert.equal((await asSeller(seller, `${live.root}/Products?$top=1`, { headers: { Accept: 'application/json', 'User-Agent': agent } })).status, 200);
    const failing = await asSeller(seller, `${live.root}/Products?$filter=NoSuchProperty%20eq%201`, { headers: { Accept: 'application/json', 'User-Agent': agent } });
    assert.equal(failing.status, 400);
    const failedLine = live.logLines.find((l) => l.status === 400 && l.path === '/publicapi/v1/api.svc/Products');
    assert.ok(failedLine, 'the failing request is logged');

    await page.goto(url('/integrations'));
    const fingerprint = createHash('sha256').update(seller.token).digest('hex').slice(0, 12);
    const section = page.getByRole('region', { name: new RegExp(`Token ${fingerprint}`) });
    const facts = (await section.locator('dl').textContent()) ?? '';
    assert.match(facts, /Last used\d{4}-\d\d-\d\d \d\d:\d\d UTC \(0 minutes ago\)/);
    assert.ok(facts.includes(agent), 'the client');
    assert.match(facts, /Errors in the last 24 hours1/);
    assert.ok(await section.getByText('failing requests').isVisible());
    const errors = section.getByRole('table', { name: `Last errors of token ${fingerprint}…` });
    assert.ok(((await errors.textContent()) ?? '').includes(String(failedLine.reqId)), 'the request id');
    assert.match((await errors.locator('tbody tr').first().textContent()) ?? '', /400GET \/publicapi\/v1\/api\.svc\/Products\?\$filter=NoSuchProperty/);
    assert.ok(!(await page.content()).includes(seller.token), 'the token itself is never shown again');
    const waiting = (await getCollection(live, seller, 'SalesOrders?$filter=ForeignOrderId eq null')).length;
    assert.match((await page.getByRole('region', { name: 'Order import' }).textContent()) ?? '', new RegExp(`${waiting} orders are waiting for import; the oldest, .+, was created \\d+ (day|hour|minute)`));
    // The last use is in the token's row too (written after the first request, at most once a minute).
    const row = (await tokensOfAccount(live.service.app.store, seller.accountId)).find((t) => t.tokenHash.startsWith(fingerprint))!;
    assert.ok(row.lastUsedAt !== null && row.lastUsedAt <= Date.now(), 'the last use is stored');
    await looked(page, 'integrations');
    phonePages.push(['integrations', '/integrations']);
  });

  test('hostile text typed into the new fields is shown as text', async () => {
    const hostile = `<img src=x onerror="window.__pwned=1">"'<script>window.__pwned=2</script>`;
    await page.goto(url(`/products/${jacketId}/edit`));
    await page.getByLabel('Title').fill(hostile.slice(0, 80));
    await page.getByLabel('Sku / ForeignId').fill(hostile);
    await page.getByLabel('EAN').fill(hostile);
    await Promise.all([page.waitForURL(/saved=1/), page.getByRole('button', { name: 'Save' }).click()]);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), hostile.slice(0, 80));
    await page.goto(url(`/products/${jacketId}/edit`));
    assert.equal(await page.getByLabel('EAN').inputValue(), hostile);
    const [order] = await getCollection(live, seller, 'SalesOrders?$top=1');
    await page.goto(url(`/orders/${String(order!.Id)}`));
    const [item] = await itemsOf(String(order!.Id));
    await page.getByLabel(`Carrier of ${String(item!.Name)}`).fill(hostile);
    await Promise.all([page.waitForURL(/saved=1/), page.getByRole('button', { name: `Save tracking of ${String(item!.Name)}` }).click()]);
    assert.equal(await page.getByLabel(`Carrier of ${String(item!.Name)}`).inputValue(), hostile);
    for (const path of [`/products/${jacketId}`, `/products/${jacketId}/edit`, `/orders/${String(order!.Id)}`, '/products', '/']) {
      await page.goto(url(path));
      assert.equal(await page.evaluate<unknown>('window.__pwned'), undefined, path);
      assert.equal(await page.locator('script:not([src]), [onerror], img:not(.pic-img)').count(), 0, path);
      assert.deepEqual(browser.problems.splice(0), [], path);
    }
  });

  test('a phone-sized window: the new pages fit its width', async () => {
    const phone = await browser.newPage(PHONE);
    try {
      for (const [name, path] of phonePages) {
        await phone.goto(url(path));
        const wide = await phone.evaluate<string[]>(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1).map((e) => e.tagName + '.' + e.className).slice(0, 5)`);
        assert.equal(await overflowsSideways(phone), false, `${name} is wider than a phone: ${wide.join(', ')}`);
        await browser.screenshot(phone, `phone-${name}`);
      }
      assert.ok(phonePages.length >= 6);
    } finally {
      await phone.close();
    }
  });
});
