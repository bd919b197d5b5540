/**
 * The seller console end to end in a real browser (headless Chromium), on the demonstration
 * data a newcomer sees first: log in through the form, search and sort products, open a product
 * with its variations and pictures, walk the catalog tree, filter orders and open one with its
 * history, create and revoke a SubscriptionToken (and see the API honour both), log out (and see
 * the session end for the API too). Every page is screenshotted under test-results/console/, on
 * a desktop and on a phone-sized window; every page must load without a script error, a console
 * error (a CSP violation is one) or a dialog, with every form control labelled.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { fillDemoAccount } from '../../src/cli/platform-commands';
import { browserSkip, launchBrowser, overflowsSideways, SCREENSHOT_DIR, unlabelledControls, type Browser } from '../support/browser';
import { request } from '../support/http-client';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';

const PHONE = { width: 390, height: 844 };

describe('seller console in a browser', { skip: browserSkip() }, () => {
  let live: LiveService;
  let seller: Seller;
  let browser: Browser;
  let page: Page;
  const loadMs: Record<string, number> = {};

  before(async () => {
    live = await startLive();
    seller = await newSeller(live, 'console');
    await fillDemoAccount(live.service.app.store, seller.userName);
    browser = await launchBrowser();
    page = await browser.newPage();
  });

  after(async () => {
    await browser?.close();
    await live?.close();
  });

  /** Checks what every page must be, records how long it took to load, and screenshots it. */
  async function looked(name: string): Promise<void> {
    const timing = await page.evaluate<number>(`(() => { const n = performance.getEntriesByType('navigation')[0]; return n ? n.loadEventEnd - n.startTime : -1; })()`);
    loadMs[name] = Math.round(timing);
    assert.deepEqual(await unlabelledControls(page), [], `${name}: unlabelled controls`);
    assert.deepEqual(browser.problems.splice(0), [], `${name}: problems in the page`);
    await browser.screenshot(page, name);
  }

  const url = (path: string) => `${live.origin}/console${path}`;
  const rowsOf = (p: Page) => p.locator('main table tbody tr');

  test('an unknown visitor is sent to the login form; a wrong password is said, the right one opens the overview', async () => {
    await page.goto(url('/'));
    assert.equal(new URL(page.url()).pathname, '/console/login');
    await looked('login');
    await page.getByLabel('User name').fill(seller.userName);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('The user name or the password is wrong.').waitFor();
    assert.equal(new URL(page.url()).pathname, '/console/login');
    await page.getByLabel('Password').fill(seller.password);
    await Promise.all([page.waitForURL(url('/')), page.getByRole('button', { name: 'Log in' }).click()]);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const products = await page.locator('.cards li', { hasText: /^\d+Products$/ }).textContent();
    assert.equal(products, '54Products');
    assert.match((await page.getByRole('heading', { name: /Orders waiting for import/ }).textContent()) ?? '', /\(24\)/);
    await looked('overview');
  });

  test('keyboard: the first Tab reaches the skip link, which moves focus to the content', async () => {
    await page.goto(url('/'));
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate<string>('document.activeElement.outerHTML'), '<a class="skip" href="#main">Skip to content</a>');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate<string>('document.activeElement.id'), 'main');
  });

  test('products: search finds the four jackets, sorting by price orders them, a product shows its variations and pictures', async () => {
    await page.getByRole('link', { name: 'Products', exact: true }).click();
    await page.waitForURL(url('/products'));
    assert.equal(await rowsOf(page).count(), 25);
    assert.match((await page.locator('.pager').textContent()) ?? '', /Page 1 of 3 · 54 in all/);
    await looked('products');

    await page.getByLabel('Search title, ForeignId, EAN or brand').fill('JACKET');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=JACKET/);
    const titles = await page.locator('main tbody tr td:nth-child(2) a').allTextContents();
    assert.deepEqual(titles.map((t) => t.replace(/^\w+ /, '')).sort(), ['Down Jacket', 'Fleece Jacket', 'Rain Jacket', 'Softshell Jacket']);

    await page.getByRole('link', { name: 'Price' }).click();
    await page.waitForURL(/sort=price/);
    const prices = (await page.locator('main tbody tr td:nth-child(4)').allTextContents()).map(Number);
    assert.deepEqual(prices, [...prices].sort((a, b) => a - b));
    assert.equal(await page.locator('th[aria-sort="ascending"]').textContent(), 'Price ▲');
    await looked('products-search');

    await page.getByRole('link', { name: 'Alpenglow Rain Jacket' }).click();
    await page.getByRole('heading', { name: 'Alpenglow Rain Jacket' }).waitFor();
    await page.getByRole('heading', { name: 'Variations (4)' }).waitFor();
    const variations = page.getByRole('table', { name: 'Variations' });
    assert.deepEqual(await variations.getByRole('rowheader').allTextContents(), ['DEMO-0001-S', 'DEMO-0001-M', 'DEMO-0001-L', 'DEMO-0001-XL']);
    for (const size of ['S', 'M', 'L', 'XL']) {
      const row = variations.locator('tr', { has: page.getByRole('rowheader', { name: `DEMO-0001-${size}`, exact: true }) });
      assert.equal(await row.locator('td').first().textContent(), `Size: ${size}`);
      assert.equal(await row.getByRole('link', { name: /\.jpg$/ }).textContent(), `demo-0001-${size.toLowerCase()}.jpg`);
    }
    assert.equal(await page.getByRole('list', { name: 'Pictures of the product' }).locator('li').count(), 3);
    await looked('product');
  });

  test('catalogs: a tree of roots and children with their product counts, each leading to its products', async () => {
    await page.getByRole('link', { name: 'Catalogs', exact: true }).click();
    await page.waitForURL(url('/catalogs'));
    const tree = page.getByRole('list', { name: 'Catalog tree' });
    assert.equal(await tree.locator(':scope > li').count(), 3);
    const clothing = tree.locator(':scope > li', { hasText: 'Clothing' });
    assert.match((await clothing.locator('li', { hasText: 'Jackets' }).textContent()) ?? '', /Jackets 7 products/);
    await looked('catalogs');
    await clothing.getByRole('link', { name: 'Jackets', exact: true }).click();
    await page.waitForURL(/\/console\/products\?catalog=\d+$/);
    await page.getByText('Only the products of the catalog Jackets.').waitFor();
    assert.equal(await rowsOf(page).count(), 7);
    for (const catalogs of await page.locator('main tbody tr td:nth-child(6)').allTextContents()) assert.equal(catalogs, 'Jackets');
  });

  test('orders: filters by payment and date; an order shows its items, buyer, addresses and history', async () => {
    await page.getByRole('link', { name: 'Orders', exact: true }).click();
    await page.waitForURL(url('/orders'));
    assert.equal(await rowsOf(page).count(), 24);
    await looked('orders');

    await page.getByLabel('Paid').selectOption('no');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/paid=no/);
    const unpaid = await rowsOf(page).count();
    assert.equal(unpaid, 5, 'four awaiting payment and one whose payment was withdrawn');
    for (const badge of await page.locator('main tbody tr td:nth-child(6)').allTextContents()) assert.equal(badge, 'not paid');
    await looked('orders-unpaid');

    await page.getByRole('link', { name: '27-10007-00259' }).click();
    await page.getByRole('heading', { name: 'Order 27-10007-00259' }).waitFor();
    const history = (await page.locator('pre.history').textContent()) ?? '';
    assert.match(history, /Aktion MarkedAsPaid:1/);
    assert.match(history, /Aktion MarkedAsPaid:0/);
    assert.ok(await page.getByRole('heading', { name: /^Items \(\d\)$/ }).isVisible());
    assert.match((await page.getByLabel('Billing address').textContent()) ?? '', /Lukas Wolf.*Wien/s);
    await looked('order');

    // A creation date range after the last order selects none; one over the last 31 days all.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await page.goto(url(`/orders?from=${tomorrow}`));
    await page.getByText('No order matches these filters.').waitFor();
    const monthAgo = new Date(Date.now() - 31 * 86_400_000).toISOString().slice(0, 10);
    await page.goto(url('/orders'));
    await page.getByLabel('Created from').fill(monthAgo);
    await page.getByLabel('Created until').fill(new Date().toISOString().slice(0, 10));
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/from=/);
    assert.equal(await rowsOf(page).count(), 24);
  });

  test('tokens: a new token is shown once and works for the API; revoked, the API refuses it', async () => {
    const serviceDocument = (token: string) =>
      request(`${live.root}/`, { headers: { SubscriptionToken: token, Cookie: `.ASPXAUTH=${seller.cookie}`, Accept: 'application/json' } });
    await page.getByRole('link', { name: 'Tokens', exact: true }).click();
    await page.waitForURL(url('/tokens'));
    assert.equal(await rowsOf(page).count(), 1);
    await looked('tokens');

    await page.getByRole('button', { name: 'Create a new token' }).click();
    const token = (await page.locator('#new-token').textContent()) ?? '';
    assert.match(token, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(await rowsOf(page).count(), 2);
    await looked('tokens-created');
    assert.equal((await serviceDocument(token)).status, 200);

    await page.goto(url('/tokens'));
    assert.equal(await page.locator('#new-token').count(), 0, 'shown only once');
    assert.ok(!(await page.content()).includes(token));

    const fingerprint = createHash('sha256').update(token).digest('hex').slice(0, 12);
    await page.getByRole('button', { name: `Revoke token ${fingerprint}…` }).click();
    await page.getByText('The token is revoked.').waitFor();
    assert.equal(await page.locator('.badge.bad').count(), 1);
    assert.equal((await serviceDocument(token)).status, 401);
    assert.equal((await serviceDocument(seller.token)).status, 200, 'the other token still works');
    await looked('tokens-revoked');
  });

  test('a phone-sized window: the pages fit its width', async () => {
    const phone = await browser.newPage(PHONE);
    try {
      const orderLink = await page.goto(url('/orders')).then(() => page.getByRole('link', { name: '27-10007-00259' }).getAttribute('href'));
      const productId = await page.goto(url('/products?q=rain+jacket')).then(() => page.getByRole('link', { name: 'Alpenglow Rain Jacket' }).getAttribute('href')).then((h) => h!.split('/').pop()!);
      for (const [name, path] of [['overview', '/'], ['products', '/products'], ['product', '/products/' + productId], ['orders', '/orders'], ['order', orderLink!.replace('/console', '')], ['tokens', '/tokens']] as const) {
        await phone.goto(url(path));
        assert.equal(await overflowsSideways(phone), false, `${name} is wider than a phone`);
        await phone.screenshot({ path: `${SCREENSHOT_DIR}/phone-${name}.png`, fullPage: true });
      }
    } finally {
      await phone.close();
    }
  });

  test('logging out ends the session for the console and for the API', async () => {
    const cookie = (await browser.context.cookies(live.origin)).find((c) => c.name === '.ASPXAUTH')!.value;
    const isLoggedIn = async () =>
      JSON.parse((await request(`${live.origin}/Authentication_JSON_AppService.axd/IsLoggedIn`, { method: 'POST', headers: { Cookie: `.ASPXAUTH=${cookie}`, 'Content-Type': 'application/json' }, body: '{}' })).body) as { d: boolean };
    assert.deepEqual(await isLoggedIn(), { d: true });
    await page.goto(url('/'));
    await Promise.all([page.waitForURL(url('/login')), page.getByRole('button', { name: 'Log out' }).click()]);
    assert.deepEqual(await isLoggedIn(), { d: false });
    await page.goto(url('/products'));
    assert.equal(new URL(page.url()).pathname, '/console/login');
    assert.deepEqual(browser.problems, []);
  });

  test('figures: page load times on the demo data', (t) => {
    t.diagnostic(`load event after navigation start, ms: ${JSON.stringify(loadMs)}`);
  });
});
