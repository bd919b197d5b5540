/**
 * The console does not weaken the service. Hostile text a connector stored (product titles with
 * `<script>` and `"onmouseover=`, a `javascript:` picture address, a catalog name with markup, a
 * search that carries a script) is shown as text in a real browser and runs nothing; the
 * Content-Security-Policy is strict and the browser enforces it; no page can be framed; every
 * state-changing request needs the session's CSRF token from this origin.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip, launchBrowser, type Browser } from '../support/browser';
import { request, type HttpResponse } from '../support/http-client';
import { addLink, createEntity } from '../support/live-client';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';

const HOSTILE_TITLES = [
  `<script>window.__pwned='script'</script>`,
  `"onmouseover="window.__pwned='attr'" x="`,
  `'><img src=x onerror="window.__pwned='img'">`,
  `</td></tr></table><script>window.__pwned='table'</script>`,
];
const HOSTILE_CATALOG = `<b onmouseover="window.__pwned='catalog'">Catalog</b>`;
/** The API takes only absolute http(s) picture addresses, but those may hold quotes and markup. */
const HOSTILE_IMAGE_URL = `https://img.example/"onmouseover="window.__pwned='url'"/<script>window.__pwned='img'</script>.jpg`;
const HOSTILE_SEARCH = `"><script>window.__pwned='search'</script>`;

// The policy, framing and CSRF checks speak HTTP and run everywhere; the two that need a browser
// skip without a Chromium, saying so.
const noBrowser = browserSkip();

describe('console security', () => {
  let live: LiveService;
  let seller: Seller;
  let browser: Browser;
  let page: Page;
  const productIds: string[] = [];

  before(async () => {
    live = await startLive();
    seller = await newSeller(live, 'hostile');
    const catalogId = await createEntity(live, seller, 'Catalogs', { Name: HOSTILE_CATALOG });
    for (const [i, title] of HOSTILE_TITLES.entries()) {
      const id = await createEntity(live, seller, 'Products', { Title: title, Price: '1.00', StockAmount: 1, ForeignId: `"x${i}'<i>` });
      await createEntity(live, seller, 'ProductImages', { ProductId: `${id}`, Type: 1, ImageUrl: HOSTILE_IMAGE_URL });
      await addLink(live, seller, `/Products(${id}L)/$links/Catalogs`, `Catalogs(${catalogId}L)`);
      productIds.push(id);
    }
    if (noBrowser) return;
    browser = await launchBrowser();
    await browser.context.addCookies([{ name: '.ASPXAUTH', value: seller.cookie, url: live.origin, httpOnly: true, sameSite: 'Lax' }]);
    page = await browser.newPage();
  });

  after(async () => {
    await browser?.close();
    await live?.close();
  });

  const url = (path: string) => `${live.origin}/console${path}`;

  /** Nothing ran, nothing was made an attribute or an element, and the browser saw no violation. */
  async function assertInert(where: string): Promise<void> {
    // Hover over everything a seller might point at: an injected onmouseover would fire.
    for (const link of await page.locator('main a, main td, main li').all()) await link.hover({ timeout: 1000 }).catch(() => undefined);
    assert.equal(await page.evaluate<unknown>('window.__pwned'), undefined, `${where}: injected script ran`);
    assert.equal(await page.locator('script:not([src]), [onmouseover], [onerror], img:not(.pic-img), iframe, [style]').count(), 0, `${where}: injected markup became elements`);
    // The console's own pictures: each src is a whole stored address, nothing of it an attribute.
    for (const src of await page.locator('img.pic-img').evaluateAll((imgs) => imgs.map((i) => i.getAttribute('src')))) {
      assert.ok(src === HOSTILE_IMAGE_URL || !/["<>]/.test(src ?? ''), `${where}: picture address ${src}`);
    }
    assert.deepEqual(browser.problems.splice(0), [], `${where}: problems (a blocked inline script shows here)`);
  }

  test('hostile product titles, ids, picture addresses and catalog names are shown as text on every page', { skip: noBrowser }, async () => {
    await page.goto(url('/products'));
    for (const title of HOSTILE_TITLES) assert.equal(await page.getByRole('link', { name: title, exact: true }).count(), 1, `the title ${title} as a link's text`);
    assert.equal(await page.getByText(HOSTILE_CATALOG).count(), HOSTILE_TITLES.length);
    await assertInert('product list');
    await browser.screenshot(page, 'hostile-products');

    for (const [i, id] of productIds.entries()) {
      await page.goto(url(`/products/${id}`));
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), HOSTILE_TITLES[i]);
      // The address is the link's whole href, quotes and all: nothing of it became an attribute.
      const pictures = page.getByRole('list', { name: 'Pictures of the product' }).getByRole('link');
      assert.equal(await pictures.getAttribute('href'), HOSTILE_IMAGE_URL);
      await assertInert(`product ${i}`);
    }
    await browser.screenshot(page, 'hostile-product');

    await page.goto(url('/catalogs'));
    const tree = page.getByRole('list', { name: 'Catalog tree' });
    assert.equal(await tree.getByRole('link', { name: HOSTILE_CATALOG, exact: true }).count(), 1);
    assert.equal(await tree.getByRole('link', { name: `Edit catalog ${HOSTILE_CATALOG}`, exact: true }).count(), 1);
    await assertInert('catalogs');

    await page.goto(url(`/products?q=${encodeURIComponent(HOSTILE_SEARCH)}`));
    assert.equal(await page.getByLabel('Search title, ForeignId, EAN or brand').inputValue(), HOSTILE_SEARCH);
    await assertInert('search');
    await page.goto(url('/'));
    await assertInert('overview');
  });

  test('the browser enforces the policy: an inline script added to a page does not run', { skip: noBrowser }, async () => {
    await page.goto(url('/products'));
    await page.evaluate(`(() => { const s = document.createElement('script'); s.textContent = 'window.__inline = 1'; document.body.append(s); })()`);
    assert.equal(await page.evaluate<unknown>('window.__inline'), undefined);
    const problems = browser.problems.splice(0);
    assert.ok(problems.some((p) => /Content Security Policy/i.test(p)), `the violation is reported: ${JSON.stringify(problems)}`);
  });

  test('every answer carries a strict policy and refuses framing', async () => {
    const asSellerGet = (path: string) => request(url(path), { headers: { Cookie: `.ASPXAUTH=${seller.cookie}` } });
    const assets = [...(await asSellerGet('/')).body.matchAll(/(?:href|src)="\/console(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.equal(assets.length, 3, 'style sheet, script and icon');
    const answers: [string, HttpResponse][] = [];
    for (const path of ['/', '/products', `/products/${productIds[0]}`, '/products/999999', '/catalogs', '/orders', '/tokens', '/nowhere', ...assets]) answers.push([path, await asSellerGet(path)]);
    answers.push(['/login (anonymous)', await request(url('/login'))]);
    answers.push(['/ (anonymous redirect)', await request(url('/'))]);
    for (const [path, res] of answers) {
      assert.equal(res.headers['x-frame-options'], 'DENY', path);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', path);
      const policy = new Map(String(res.headers['content-security-policy']).split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...sources]) => [name!, sources]));
      assert.deepEqual(policy.get('frame-ancestors'), ["'none'"], path);
      assert.deepEqual(policy.get('default-src'), ["'none'"], path);
      for (const [name, sources] of policy) {
        // Pictures come from the seller's own https servers: img-src alone names https:.
        for (const source of sources) assert.ok(source === "'self'" || source === "'none'" || (name === 'img-src' && source === 'https:'), `${path}: ${name} allows ${source}`);
      }
      assert.ok(policy.has('script-src') && policy.has('style-src'), path);
    }
    assert.deepEqual(answers.map(([, r]) => r.status), [200, 200, 200, 404, 200, 200, 200, 404, 200, 200, 200, 200, 303]);
  });

  test('malformed addresses, parameters and methods answer a page or a clear 4xx, never a fault', async () => {
    const get = (path: string, method = 'GET') => request(url(path), { method, headers: { Cookie: `.ASPXAUTH=${seller.cookie}` } });
    const cases: [string, string, number, RegExp][] = [
      ['GET', `/products?q=${encodeURIComponent("') or true or substringof('")}`, 200, /No product matches/],
      ['GET', '/products?q=%25%5C_%00', 200, /No product matches/],
      ['GET', `/products?q=${'x'.repeat(3000)}`, 200, /No product matches/],
      ['GET', '/products?page=abc&sort=bogus&dir=up', 200, /4 in all/],
      ['GET', '/products?page=99999', 200, /No products on this page/],
      ['GET', '/products/abc', 404, /does not exist in your account/],
      ['GET', '/products/0', 404, /does not exist in your account/],
      ['GET', '/products/99999999999999999999999', 404, /does not exist in your account/],
      ['GET', '/orders?from=2026-13-45&to=x&paid=maybe&page=-1', 200, /No order matches/],
      ['GET', '/orders/1', 404, /does not exist in your account/],
      ['GET', '/nothing/here', 404, /no page at this address/],
      ['PUT', '/products', 405, /does not take PUT/],
      ['POST', '/products', 405, /only shows a page/],
      ['GET', '/products?%zz=1', 200, /4 in all/],
    ];
    for (const [method, path, status, text] of cases) {
      const res = await get(path, method);
      assert.equal(res.status, status, `${method} ${path.slice(0, 60)}`);
      assert.match(res.body, text, `${method} ${path.slice(0, 60)}`);
      assert.match(String(res.headers['content-type']), /^text\/html/);
    }
  });

  describe('CSRF', () => {
    const tokensPage = () => request(url('/tokens'), { headers: { Cookie: `.ASPXAUTH=${seller.cookie}` } });
    const csrfOf = (body: string) => /name="csrf" value="([^"]+)"/.exec(body)![1]!;
    const liveTokens = async () => ((await tokensPage()).body.match(/badge ok">live/g) ?? []).length;
    const postCreate = (form: string, headers: Record<string, string> = {}, cookie = seller.cookie) =>
      request(url('/tokens'), { method: 'POST', headers: { Cookie: `.ASPXAUTH=${cookie}`, 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body: form });

    test('a token is created only with the session CSRF token, from this origin, as a form', async () => {
      const csrf = csrfOf((await tokensPage()).body);
      const other = await newSeller(live, 'other');
      const otherCsrf = csrfOf((await request(url('/tokens'), { headers: { Cookie: `.ASPXAUTH=${other.cookie}` } })).body);
      assert.notEqual(otherCsrf, csrf, 'each session has its own token');
      const before = await liveTokens();
      const refused: [string, HttpResponse][] = [
        ['no CSRF token', await postCreate('')],
        ['a wrong CSRF token', await postCreate(`csrf=${'A'.repeat(csrf.length)}`)],
        ["another session's CSRF token", await postCreate(`csrf=${encodeURIComponent(otherCsrf)}`)],
        ['another origin', await postCreate(`csrf=${encodeURIComponent(csrf)}`, { Origin: 'http://evil.example' })],
        ['a cross-site request', await postCreate(`csrf=${encodeURIComponent(csrf)}`, { 'Sec-Fetch-Site': 'cross-site' })],
      ];
      for (const [why, res] of refused) {
        assert.equal(res.status, 403, why);
        assert.match(res.body, /did not come from your console session/, why);
      }
      const plain = await postCreate(`csrf=${encodeURIComponent(csrf)}`, { 'Content-Type': 'text/plain' });
      assert.equal(plain.status, 415, 'a text/plain body (what a cross-site form may send without a preflight)');
      const anonymous = await request(url('/tokens'), { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `csrf=${encodeURIComponent(csrf)}` });
      assert.equal(anonymous.status, 403, 'without a session');
      assert.equal(await liveTokens(), before, 'nothing was created');

      const accepted = await postCreate(`csrf=${encodeURIComponent(csrf)}`, { Origin: live.origin, 'Sec-Fetch-Site': 'same-origin' });
      assert.equal(accepted.status, 200);
      assert.match(accepted.body, /id="new-token"[^>]*>[0-9a-f-]{36}</);
      assert.equal(await liveTokens(), before + 1);
    });

    test('revoking needs the CSRF token too; a malformed or unknown token is missing', async () => {
      const body = (await tokensPage()).body;
      const csrf = csrfOf(body);
      const hash = /name="token" value="([0-9a-f]{64})"/.exec(body)![1]!;
      const revoke = (form: string) => request(url('/tokens/revoke'), { method: 'POST', headers: { Cookie: `.ASPXAUTH=${seller.cookie}`, 'Content-Type': 'application/x-www-form-urlencoded' }, body: form });
      const before = await liveTokens();
      assert.equal((await revoke(`token=${hash}`)).status, 403);
      assert.equal((await revoke(`csrf=${encodeURIComponent(csrf)}&token=${'0'.repeat(64)}`)).status, 404);
      assert.equal((await revoke(`csrf=${encodeURIComponent(csrf)}&token=%27%3Cscript%3E`)).status, 404);
      assert.equal(await liveTokens(), before);
    });
  });
});
