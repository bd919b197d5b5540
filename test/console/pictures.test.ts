/**
 * Pictures in the console, in a real browser: product images and variation pictures load from
 * an https server of the suite's own (a throwaway certificate the browser trusts by its key), in
 * fixed frames, lazily and without a Referer; a picture that fails to load (a 404) shows the
 * placeholder; an http address is never loaded. The policy lets images come from https and
 * nothing else new, so the pages load without a policy violation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip, launchBrowser, overflowsSideways, waitUntil, type Browser } from '../support/browser';
import { createEntity } from '../support/live-client';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { opensslSkip, startImageServer, type ImageServer } from '../support/tls-image-server';

const PHONE = { width: 390, height: 844 };

describe('console pictures in a browser', { skip: browserSkip() || opensslSkip() }, () => {
  let live: LiveService;
  let images: ImageServer;
  let seller: Seller;
  let browser: Browser;
  let page: Page;
  let productId: string;

  before(async () => {
    images = await startImageServer();
    live = await startLive();
    seller = await newSeller(live, 'pictures');
    productId = await createEntity(live, seller, 'Products', { Title: 'Lamp with pictures', Price: '19.90', StockAmount: 4 });
    await createEntity(live, seller, 'ProductImages', { ProductId: productId, Type: 1, ImageUrl: `${images.origin}/lamp/front.png` });
    await createEntity(live, seller, 'ProductImages', { ProductId: productId, Type: 2, ImageUrl: `${images.origin}/lamp/gone.jpg` });
    await createEntity(live, seller, 'ProductImages', { ProductId: productId, Type: 3, ImageUrl: 'http://plain.example/lamp/side.png' });
    const variationId = await createEntity(live, seller, 'ProductVariations', { ProductId: productId, Sku: 'LAMP-RED', Price: '21.00', StockAmount: 2 });
    await createEntity(live, seller, 'ProductVariationImages', { ProductVariationId: variationId, ImagePosition: 0, ImageUrl: `${images.origin}/lamp/red.png` });
    browser = await launchBrowser({ trustSpki: [images.spkiHash] });
    await browser.context.addCookies([{ name: '.ASPXAUTH', value: seller.cookie, url: live.origin, httpOnly: true, sameSite: 'Lax' }]);
    page = await browser.newPage();
  });

  after(async () => {
    await browser?.close();
    await live?.close();
    await images?.close();
  });

  const url = (path: string) => `${live.origin}/console${path}`;

  /** The state of each picture frame in the main content: loaded (with its natural width), failed, or waiting. */
  const frames = (p: Page) =>
    p.evaluate<{ alt: string; state: string; width: number; height: number; attrs: string }[]>(`[...document.querySelectorAll('main .pic')].map((f) => {
      const img = f.querySelector('img');
      const box = f.getBoundingClientRect();
      return {
        alt: img ? img.alt : f.getAttribute('aria-label'),
        state: f.classList.contains('failed') ? 'failed' : img && img.complete && img.naturalWidth > 0 ? 'loaded' : 'waiting',
        width: Math.round(box.width), height: Math.round(box.height),
        attrs: img ? [img.getAttribute('loading'), img.getAttribute('referrerpolicy'), img.getAttribute('width'), img.getAttribute('height')].join(' ') : '',
      };
    })`);

  async function settled(p: Page): Promise<void> {
    await waitUntil(p, `[...document.querySelectorAll('main .pic')].every((f) => f.classList.contains('failed') || f.querySelector('img').complete)`);
  }

  test('the product page: a gallery of the product pictures and a thumbnail per variation; the broken one shows the placeholder', async () => {
    await page.goto(url(`/products/${productId}`));
    await settled(page);
    const shown = await frames(page);
    assert.deepEqual(shown.map((f) => [f.alt, f.state]), [
      ['Type 1: front.png', 'loaded'],
      ['Type 2: gone.jpg', 'failed'],
      ['Type 3: side.png: not an https address', 'failed'],
      ['Position 0', 'loaded'],
    ]);
    for (const f of shown.slice(0, 3)) assert.deepEqual([f.width, f.height], [160, 160], `${f.alt}: the gallery frame keeps its size`);
    assert.deepEqual([shown[3]!.width, shown[3]!.height], [48, 48]);
    for (const f of [shown[0]!, shown[1]!, shown[3]!]) assert.equal(f.attrs, f === shown[3] ? 'lazy no-referrer 48 48' : 'lazy no-referrer 160 160');
    assert.equal(await page.getByText('Picture not available: Type 2: gone.jpg').count(), 1, 'the placeholder names the picture');
    assert.ok(await page.locator('.pic.failed .pic-missing').first().isVisible());
    assert.deepEqual(browser.problems.splice(0), [], 'no policy violation, no script error');
    const paths = images.requests.map((r) => r.path).sort();
    assert.deepEqual(paths, ['/lamp/front.png', '/lamp/gone.jpg', '/lamp/red.png']);
    assert.deepEqual(images.requests.map((r) => r.referer), [undefined, undefined, undefined], 'no Referer reaches the image host');
    await browser.screenshot(page, 'pictures-product');

    const phone = await browser.newPage(PHONE);
    await phone.goto(url(`/products/${productId}`));
    await settled(phone);
    await browser.screenshot(phone, 'phone-pictures-product');
    const wide = await phone.evaluate<string[]>(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).slice(0, 8)`);
    assert.equal(await overflowsSideways(phone), false, JSON.stringify(wide));
    await phone.close();
  });

  test('the product list shows the first picture as a thumbnail; a product without one a dash tile', async () => {
    await createEntity(live, seller, 'Products', { Title: 'No picture yet', Price: '1.00', StockAmount: 1 });
    await page.goto(url('/products'));
    await settled(page);
    assert.deepEqual((await frames(page)).map((f) => [f.alt, f.state, f.width, f.height]), [
      ['Lamp with pictures: front.png', 'loaded', 48, 48],
      ['No picture yet: no picture', 'failed', 48, 48],
    ]);
    assert.deepEqual(browser.problems.splice(0), []);
    await browser.screenshot(page, 'pictures-products');
  });

  test('the policy allows images from https and this origin, and nothing else new', async () => {
    const res = await page.goto(url('/products'));
    const policy = res!.headers()['content-security-policy']!;
    assert.match(policy, /(^|; )img-src 'self' https:(;|$)/);
    assert.doesNotMatch(policy, /http:|data:|blob:|\*/);
  });
});
