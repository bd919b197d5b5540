/**
 * The console's new forms do not weaken the service (over HTTP, no browser needed): each edit,
 * order action, the bulk action, the form login and the logout refuse a POST without the CSRF
 * token, with another session's, from another origin or marked cross-site, and a body that is
 * not a form, changing nothing; another seller's ids answer 404 on every new page and action,
 * changing nothing of theirs; hostile text sent to every new field comes back escaped; the JSON
 * login endpoint for API clients is as it was.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fillDemoAccount } from '../../src/cli/platform-commands';
import { escapeHtml } from '../../src/console/html';
import { request, type HttpResponse } from '../support/http-client';
import { getCollection, getEntity } from '../support/live-client';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';

describe('console forms: CSRF, origin, tenancy and escaping', () => {
  let live: LiveService;
  let a: Seller;
  let b: Seller;
  /** Each seller's ids: a product, a variation, a catalog, an order and one of its items. */
  type Ids = { product: string; variation: string; catalog: string; order: string; item: string };
  const bIds: Ids = { product: '', variation: '', catalog: '', order: '', item: '' };
  const aIds: Ids = { ...bIds };

  const first = async (seller: Seller, path: string) => String((await getCollection(live, seller, path))[0]!.Id);

  before(async () => {
    live = await startLive();
    a = await newSeller(live, 'forms-a');
    b = await newSeller(live, 'forms-b');
    for (const [seller, ids] of [[a, aIds], [b, bIds]] as const) {
      await fillDemoAccount(live.service.app.store, seller.userName);
      ids.product = await first(seller, 'Products?$orderby=Id&$top=1');
      ids.variation = await first(seller, 'ProductVariations?$orderby=Id&$top=1');
      ids.catalog = await first(seller, 'Catalogs?$orderby=Id&$top=1');
      ids.order = await first(seller, 'SalesOrders?$filter=MarkedAsShipped eq false&$orderby=Id&$top=1');
      ids.item = await first(seller, `SalesOrders(${ids.order}L)/SalesOrderItems?$top=1`);
    }
  });

  after(async () => live?.close());

  const consoleGet = (seller: Seller, path: string) => request(`${live.origin}/console${path}`, { headers: { Cookie: `.ASPXAUTH=${seller.cookie}` } });
  const consolePost = (seller: Seller | undefined, path: string, form: string, headers: Record<string, string> = {}) =>
    request(`${live.origin}/console${path}`, {
      method: 'POST',
      headers: { ...(seller ? { Cookie: `.ASPXAUTH=${seller.cookie}` } : {}), 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
      body: form,
    });
  const field = (body: string, name: string) => {
    const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(body);
    assert.ok(m, `a field ${name}`);
    return m[1]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&').replace(/&#39;/g, "'");
  };

  /** Every new form of seller `s`, with the fields a genuine one sends (its page's CSRF token and ETags). */
  async function formsOf(s: Seller, ids: Ids): Promise<[string, string, Record<string, string>][]> {
    const productEdit = (await consoleGet(s, `/products/${ids.product}/edit`)).body;
    const variationEdit = (await consoleGet(s, `/variations/${ids.variation}/edit`)).body;
    const catalogEdit = (await consoleGet(s, `/catalogs/${ids.catalog}/edit`)).body;
    const order = (await consoleGet(s, `/orders/${ids.order}`)).body;
    const csrf = field(order, 'csrf');
    const orderEtag = field(order, 'etag');
    const itemEtag = [...order.matchAll(/name="etag" value="([^"]*)"/g)].map((m) => m[1]!.replace(/&quot;/g, '"'))[2]!;
    return [
      ['product edit', `/products/${ids.product}/edit`, { etag: field(productEdit, 'etag'), offerEtag: field(productEdit, 'offerEtag'), Price: '1.23', StockAmount: '77' }],
      ['variation edit', `/variations/${ids.variation}/edit`, { etag: field(variationEdit, 'etag'), offerEtag: field(variationEdit, 'offerEtag'), StockAmount: '77' }],
      ['catalog edit', `/catalogs/${ids.catalog}/edit`, { etag: field(catalogEdit, 'etag'), Name: 'Renamed' }],
      ['payment', `/orders/${ids.order}/payment`, { etag: orderEtag, paid: '1' }],
      ['shipping', `/orders/${ids.order}/shipping`, { etag: orderEtag, status: '1' }],
      ['tracking', `/orders/${ids.order}/items/${ids.item}/tracking`, { etag: itemEtag, CarrierUsed: 'UPS', TrackingNumbers: '1Z' }],
      ['bulk shipped', '/orders/ship', { order: ids.order }],
    ].map(([name, path, fields]) => [name as string, path as string, { csrf, ...(fields as Record<string, string>) }]);
  }

  /** What the forms above would change, as the API reads it. */
  async function state(s: Seller, ids: Ids): Promise<string> {
    const p = await getEntity(live, s, 'Products', ids.product);
    const v = await getEntity(live, s, 'ProductVariations', ids.variation);
    const c = await getEntity(live, s, 'Catalogs', ids.catalog);
    const o = await getEntity(live, s, 'SalesOrders', ids.order);
    const i = await getEntity(live, s, 'SalesOrderItems', ids.item);
    return JSON.stringify([p.Price, p.StockAmount, v.StockAmount, c.Name, o.PaidDate, o.ShippingStatus, i.CarrierUsed]);
  }

  const encode = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

  test('every new form refuses a missing or foreign CSRF token, another origin, a cross-site request and a body that is not a form', async () => {
    const forms = await formsOf(a, aIds);
    const otherCsrf = field((await consoleGet(b, '/tokens')).body, 'csrf');
    const before = await state(a, aIds);
    for (const [name, path, fields] of forms) {
      const { csrf, ...rest } = fields;
      const refused: [string, HttpResponse][] = [
        ['no CSRF token', await consolePost(a, path, encode(rest))],
        ['a wrong CSRF token', await consolePost(a, path, encode({ ...rest, csrf: 'A'.repeat(csrf!.length) }))],
        ["another session's CSRF token", await consolePost(a, path, encode({ ...rest, csrf: otherCsrf }))],
        ['another origin', await consolePost(a, path, encode(fields), { Origin: 'http://evil.example' })],
        ['a cross-site request', await consolePost(a, path, encode(fields), { 'Sec-Fetch-Site': 'cross-site' })],
        ['no session', await consolePost(undefined, path, encode(fields))],
      ];
      for (const [why, res] of refused) assert.equal(res.status, 403, `${name}: ${why}`);
      assert.equal((await consolePost(a, path, encode(fields), { 'Content-Type': 'text/plain' })).status, 415, `${name}: text/plain`);
    }
    assert.equal(await state(a, aIds), before, 'nothing changed');
    // And genuine, each goes through (so the refusals above were the checks, not a broken form).
    for (const [name, path, fields] of forms) {
      const res = await consolePost(a, path, encode(fields), { Origin: live.origin, 'Sec-Fetch-Site': 'same-origin' });
      assert.ok(res.status === 303 || res.status === 200 || res.status === 409, `${name}: ${res.status} ${res.body.slice(0, 300)}`);
    }
    assert.notEqual(await state(a, aIds), before);
  });

  test('the form login and logout refuse cross-site posts and forms without their token; the JSON login is as it was', async () => {
    const loginPage = await request(`${live.origin}/console/login`);
    const cookie = /^(console_login=[^;]+)/.exec(String(loginPage.headers['set-cookie']?.[0]))![1]!;
    const csrf = field(loginPage.body, 'csrf');
    const form = (extra: Record<string, string> = {}) => encode({ csrf, userName: a.userName, password: a.password, ...extra });
    const post = (body: string, headers: Record<string, string>) =>
      request(`${live.origin}/console/login`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body });
    const refused: [string, HttpResponse][] = [
      ['no login cookie', await post(form(), {})],
      ['no token', await post(encode({ userName: a.userName, password: a.password }), { Cookie: cookie })],
      ["another browser's token", await post(form({ csrf: 'x'.repeat(csrf.length) }), { Cookie: cookie })],
      ['another origin', await post(form(), { Cookie: cookie, Origin: 'http://evil.example' })],
      ['a cross-site request', await post(form(), { Cookie: cookie, 'Sec-Fetch-Site': 'cross-site' })],
    ];
    for (const [why, res] of refused) {
      assert.equal(res.status, 403, why);
      assert.ok(!String(res.headers['set-cookie'] ?? '').includes('.ASPXAUTH='), `${why}: no session`);
    }
    const ok = await post(form(), { Cookie: cookie, Origin: live.origin });
    assert.equal(ok.status, 303);
    const session = /\.ASPXAUTH=([^;]+);/.exec(String(ok.headers['set-cookie']))![1]!;
    const asNew = { ...a, cookie: session };
    assert.equal((await consoleGet(asNew, '/')).status, 200);

    const logoutCsrf = field((await consoleGet(asNew, '/')).body, 'csrf');
    assert.equal((await consolePost(asNew, '/logout', '')).status, 403);
    assert.equal((await consolePost(asNew, '/logout', encode({ csrf: logoutCsrf }), { Origin: 'http://evil.example' })).status, 403);
    assert.equal((await consoleGet(asNew, '/')).status, 200, 'still logged in');
    assert.equal((await consolePost(asNew, '/logout', encode({ csrf: logoutCsrf }))).status, 303);
    assert.equal((await consoleGet(asNew, '/')).status, 303, 'logged out');

    // The JSON endpoint for API clients: JSON only, cross-site refused, as before.
    const json = (body: string, headers: Record<string, string>) => request(`${live.origin}/Authentication_JSON_AppService.axd/Login`, { method: 'POST', headers, body });
    const credentials = JSON.stringify({ userName: a.userName, password: a.password, createPersistentCookie: false });
    assert.equal((await json(credentials, { 'Content-Type': 'application/json' })).body, '{"d":true}');
    assert.equal((await json(form(), { 'Content-Type': 'application/x-www-form-urlencoded' })).status, 415);
    assert.equal((await json(credentials, { 'Content-Type': 'application/json', Origin: 'http://evil.example' })).status, 403);
  });

  test("another seller's ids answer 404 on every new page and action, and nothing of theirs changes", async () => {
    for (const path of [`/products/${bIds.product}/edit`, `/variations/${bIds.variation}/edit`, `/catalogs/${bIds.catalog}/edit`, '/products/999999999/edit', '/variations/abc/edit']) {
      const res = await consoleGet(a, path);
      assert.equal(res.status, 404, path);
      assert.match(res.body, /does not exist in your account/, path);
    }
    const bBefore = await state(b, bIds);
    // A's own session and token, B's ids (and B's ETags, which A could not have seen but might guess).
    const aCsrf = field((await consoleGet(a, '/tokens')).body, 'csrf');
    for (const [name, path, fields] of await formsOf(b, bIds)) {
      const res = await consolePost(a, path, encode({ ...fields, csrf: aCsrf }));
      assert.equal(res.status, 404, `${name}: ${res.body.slice(0, 200)}`);
      assert.match(res.body, /does not exist in your account/, name);
    }
    // A's order with B's item: the item is not A's.
    const aOrder = (await consoleGet(a, `/orders/${aIds.order}`)).body;
    const res = await consolePost(a, `/orders/${aIds.order}/items/${bIds.item}/tracking`, encode({ csrf: aCsrf, etag: field(aOrder, 'etag'), CarrierUsed: 'x' }));
    assert.equal(res.status, 404);
    // A bulk selection with one of B's orders among A's: 404, and nothing done.
    const aOrders = await getCollection(live, a, 'SalesOrders?$filter=MarkedAsShipped eq false&$top=1');
    if (aOrders.length > 0) {
      const mixed = new URLSearchParams([['csrf', aCsrf], ['order', String(aOrders[0]!.Id)], ['order', bIds.order!]]);
      assert.equal((await consolePost(a, '/orders/ship', mixed.toString())).status, 404);
      assert.equal((await getEntity(live, a, 'SalesOrders', String(aOrders[0]!.Id))).MarkedAsShipped, false, 'nothing done');
    }
    assert.equal(await state(b, bIds), bBefore);
    const integrations = (await consoleGet(a, '/integrations')).body;
    assert.equal((await consoleGet(a, '/integrations')).status, 200);
    const bTokenHash = /name="token" value="([0-9a-f]{64})"/.exec((await consoleGet(b, '/tokens')).body)![1]!;
    assert.ok(!integrations.includes(bTokenHash.slice(0, 12)), "B's token is not on A's integrations page");
  });

  test('hostile text sent to every new field comes back escaped', async () => {
    const hostile = `"><script>window.__x=1</script><img src=x onerror=alert(1)>'`;
    const csrf = field((await consoleGet(a, '/tokens')).body, 'csrf');
    const edit = async (path: string, fields: Record<string, string>) => {
      const body = (await consoleGet(a, path)).body;
      const etags = { etag: field(body, 'etag'), ...(body.includes('name="offerEtag"') ? { offerEtag: field(body, 'offerEtag') } : {}) };
      return consolePost(a, path, encode({ csrf, ...etags, ...fields }));
    };
    assert.equal((await edit(`/products/${aIds.product}/edit`, { Title: hostile, ForeignId: hostile, Ean: hostile })).status, 303);
    assert.equal((await edit(`/variations/${aIds.variation}/edit`, { Sku: hostile, Ean: hostile })).status, 303);
    assert.equal((await edit(`/catalogs/${aIds.catalog}/edit`, { Name: hostile })).status, 303);
    const order = (await consoleGet(a, `/orders/${aIds.order}`)).body;
    const itemEtag = [...order.matchAll(/name="etag" value="([^"]*)"/g)].map((m) => m[1]!.replace(/&quot;/g, '"'))[2]!;
    assert.equal((await consolePost(a, `/orders/${aIds.order}/items/${aIds.item}/tracking`, encode({ csrf, etag: itemEtag, CarrierUsed: hostile, TrackingNumbers: hostile }))).status, 303);
    // A refused value is shown back as text too (a price that is not a number).
    const refused = await edit(`/products/${aIds.product}/edit`, { Price: hostile });
    assert.equal(refused.status, 400);
    const variationPage = `/variations/${aIds.variation}/edit`;
    for (const path of [`/products/${aIds.product}`, `/products/${aIds.product}/edit`, variationPage, `/catalogs/${aIds.catalog}/edit`, '/catalogs', `/orders/${aIds.order}`, '/products', '/integrations']) {
      const body = (await consoleGet(a, path)).body;
      assert.ok(!body.includes(hostile) && !body.includes('<script>window.__x'), `${path}: raw`);
      if (path !== '/integrations' && path !== '/catalogs') assert.ok(body.includes(escapeHtml(hostile)), `${path}: escaped`);
    }
    assert.ok(refused.body.includes(escapeHtml(hostile)) && !refused.body.includes(hostile));
  });
});
