/**
 * The seller console at /console/: server-rendered pages over the seller's own data, for the
 * seller logged in with the .ASPXAUTH session of the authentication service (the same session
 * the OData API uses; logging out there ends it here too). Its own login and logout forms
 * (./login.ts) run the authentication service's login and logout.
 *
 * Every page reads in one snapshot of the seller's account through the API's own read path
 * (./reads.ts); edits and order actions (./posts.ts) write through the API's write path. The
 * account comes from the session only, so another seller's ids answer as missing. POSTs need
 * the session's CSRF token and a same-origin browser. Every answer carries the console's
 * security headers (./security.ts).
 */
import { createTokenForAccount, revokeTokenOfAccount, tokensOfAccount } from '../auth/accounts';
import { ODataError } from '../odata/errors';
import { sendWhole } from '../server/compression';
import type { Handler, RequestContext } from '../server/context';
import { ASSETS } from './assets';
import type { ConsoleDeps } from './deps';
import { EDITS } from './edits';
import { html, type Html } from './html';
import { barePage, consoleUrl, type Section } from './layout';
import { formLogin, formLogout, loginFormGenuine, loginFormToken } from './login';
import { catalogsPage } from './pages/catalogs';
import { editPage } from './pages/edit';
import { integrationsPage } from './pages/integrations';
import { webhooksSection, type WebhookView } from './pages/webhooks';
import { enableSubscription, listDeliveries, listSubscriptions, redeliver } from '../webhooks/subscriptions';
import { loginPage } from './pages/login';
import { orderPage } from './pages/order';
import { ordersPage } from './pages/orders';
import { overviewPage } from './pages/overview';
import { productPage } from './pages/product';
import { productsPage } from './pages/products';
import { tokensPage } from './pages/tokens';
import { editTarget, ORDER_ACTION, postBulkShipped, postEdit, postOrderAction } from './posts';
import { readAccount, type ConsoleReads } from './reads';
import { ENTITY_ID, notFoundPage, problemPage, readForm, redirect, sellerOf, sellerPage, sendHtml, type Seller } from './respond';
import { comesFromThisOrigin, csrfTokenFor, csrfTokenMatches, SECURITY_HEADERS } from './security';

export { CONSOLE_PATH } from './layout';

const TOKEN_HASH = /^[0-9a-f]{64}$/;

/** The console's webhook buttons: /webhooks/{id}/enable and /webhooks/{id}/deliveries/{eventId}/redeliver. */
const WEBHOOK_ACTION = /^\/webhooks\/([A-Za-z0-9_-]{1,64})\/(enable|deliveries\/([0-9a-f-]{36})\/redeliver)$/;

/** Deliveries read per endpoint for the page; those that have not arrived are shown. */
const DELIVERIES_READ = 50;

async function webhookViews(deps: ConsoleDeps, accountId: number): Promise<WebhookView[]> {
  return Promise.all(
    (await listSubscriptions(deps.store, accountId)).map(async (subscription) => ({
      subscription,
      troubled: (await listDeliveries(deps.store, accountId, subscription.id, DELIVERIES_READ)).filter((d) => d.state === 'failed' || (d.state === 'pending' && d.attempts > 0)),
    })),
  );
}

async function postWebhookAction(ctx: RequestContext, deps: ConsoleDeps, seller: Seller, match: RegExpExecArray): Promise<void> {
  const [, id, action, eventId] = match as unknown as [string, string, string, string | undefined];
  const now = deps.clock.now();
  const done = action === 'enable' ? await enableSubscription(deps.store, seller.accountId, id, now) : await redeliver(deps.store, seller.accountId, id, eventId!, now);
  if (!done) return notFoundPage(ctx.res, seller, action === 'enable' ? 'That webhook endpoint' : 'That delivery');
  redirect(ctx.res, consoleUrl(`/integrations?webhook=${action === 'enable' ? 'enabled' : 'redelivered'}`));
}

type PageResult = { readonly title: string; readonly body: Html } | undefined;

/** GET pages by path: each answers its title and body, or undefined when what it names is missing. */
function pageFor(path: string, params: URLSearchParams, deps: ConsoleDeps, cookie: string): { section: Section; what: string; render: (reads: ConsoleReads) => Promise<PageResult> } | undefined {
  const setNames = [...deps.model.typeByName.keys()];
  if (path === '/') return { section: 'overview', what: 'The page', render: async (r) => ({ title: 'Overview', body: await overviewPage(r, setNames) }) };
  if (path === '/products') {
    const render = async (r: ConsoleReads): Promise<PageResult> => {
      const body = await productsPage(r, params);
      return body && { title: 'Products', body };
    };
    return { section: 'products', what: `Catalog ${(params.get('catalog') ?? '').slice(0, 40)}`, render };
  }
  if (path === '/catalogs') return { section: 'catalogs', what: 'The page', render: async (r) => ({ title: 'Catalogs', body: await catalogsPage(r) }) };
  if (path === '/orders') return { section: 'orders', what: 'The page', render: async (r) => ({ title: 'Orders', body: await ordersPage(r, params, csrfTokenFor(cookie)) }) };
  const edit = editTarget(path);
  if (edit) {
    const render = (r: ConsoleReads): Promise<PageResult> =>
      ENTITY_ID.test(edit.idText) ? editPage(r, edit.kind, BigInt(edit.idText), { csrfToken: csrfTokenFor(cookie) }) : Promise.resolve(undefined);
    return { section: edit.kind === 'catalog' ? 'catalogs' : 'products', what: `${EDITS[edit.kind].what} ${edit.idText.slice(0, 40)}`, render };
  }
  const entity = /^\/(products|orders)\/([^/]+)$/.exec(path);
  if (entity) {
    const [, kind, idText] = entity as unknown as [string, 'products' | 'orders', string];
    const what = `${kind === 'products' ? 'Product' : 'Order'} ${idText.slice(0, 40)}`;
    const render = (r: ConsoleReads): Promise<PageResult> => {
      if (!ENTITY_ID.test(idText)) return Promise.resolve(undefined);
      return kind === 'products' ? productPage(r, BigInt(idText)) : orderPage(r, BigInt(idText), csrfTokenFor(cookie));
    };
    return { section: kind, what, render };
  }
  return undefined;
}

/** The line a page shows after a form sent the seller to it (?saved=1, ?unchanged=1). */
function outcomeNotice(params: URLSearchParams): Html | string {
  if (params.get('saved') === '1') return html`<p class="notice" role="status">Your changes are saved.</p>`;
  if (params.get('unchanged') === '1') return html`<p class="notice" role="status">Nothing to save: the values were already these.</p>`;
  return '';
}

async function showTokens(ctx: RequestContext, deps: ConsoleDeps, seller: Seller, extra: { created?: string; notice?: string } = {}): Promise<void> {
  const tokens = await tokensOfAccount(deps.store, seller.accountId);
  const body = tokensPage({ tokens, csrfToken: csrfTokenFor(seller.cookie), ...extra });
  sellerPage(ctx.res, 200, seller, 'Tokens', 'tokens', body);
}
async function post(ctx: RequestContext, deps: ConsoleDeps, seller: Seller, path: string): Promise<void> {
  const edit = editTarget(path);
  const orderAction = ORDER_ACTION.exec(path);
  const webhookAction = WEBHOOK_ACTION.exec(path);
  if (path !== '/tokens' && path !== '/tokens/revoke' && path !== '/orders/ship' && !edit && !orderAction && !webhookAction) {
    return problemPage(ctx.res, 405, 'Not allowed', 'This address only shows a page; nothing can be sent to it.', seller, { Allow: 'GET, HEAD' });
  }
  const form = await readForm(ctx);
  if (!comesFromThisOrigin(ctx.req) || !csrfTokenMatches(seller.cookie, form.get('csrf') ?? undefined)) {
    return problemPage(ctx.res, 403, 'Refused', 'This form did not come from your console session. Open the page again and repeat what you did.', seller);
  }
  if (edit) return postEdit(ctx, deps, seller, edit.kind, edit.idText, form);
  if (orderAction) return postOrderAction(ctx, deps, seller, orderAction, form);
  if (webhookAction) return postWebhookAction(ctx, deps, seller, webhookAction);
  if (path === '/orders/ship') return postBulkShipped(ctx, deps, seller, form);
  if (path === '/tokens') {
    const created = await createTokenForAccount(deps.store, deps.clock, seller.accountId);
    return showTokens(ctx, deps, seller, { created });
  }
  const hash = form.get('token') ?? '';
  const revoked = TOKEN_HASH.test(hash) && (await revokeTokenOfAccount(deps.store, deps.clock, seller.accountId, hash));
  if (!revoked) return notFoundPage(ctx.res, seller, 'That live token');
  redirect(ctx.res, consoleUrl('/tokens?revoked=1'));
}

/** The login page (GET) and its form (POST): works without scripts, refuses cross-site posts. */
async function serveLogin(ctx: RequestContext, deps: ConsoleDeps, seller: Seller | undefined, method: string): Promise<void> {
  const title = 'Seller console login';
  if (method === 'GET' || method === 'HEAD') {
    if (seller) return redirect(ctx.res, consoleUrl('/'));
    const { csrfToken, setCookie } = loginFormToken(deps, ctx);
    return sendHtml(ctx.res, 200, barePage(title, loginPage({ csrfToken })), setCookie ? { 'Set-Cookie': setCookie } : {});
  }
  if (method !== 'POST') return problemPage(ctx.res, 405, 'Not allowed', 'The login page takes GET and its form.', undefined, { Allow: 'GET, HEAD, POST' });
  const form = await readForm(ctx);
  if (!comesFromThisOrigin(ctx.req) || !loginFormGenuine(ctx, form)) {
    const fresh = loginFormToken(deps, ctx);
    return sendHtml(ctx.res, 403, barePage(title, loginPage({ csrfToken: fresh.csrfToken, message: 'This login form did not come from this console page (or it is too old). Log in again here.' })), fresh.setCookie ? { 'Set-Cookie': fresh.setCookie } : {});
  }
  const outcome = await formLogin(deps, ctx, form);
  if (outcome.kind === 'ok') return redirect(ctx.res, consoleUrl('/'), { 'Set-Cookie': outcome.setCookies });
  const { csrfToken } = loginFormToken(deps, ctx);
  sendHtml(ctx.res, outcome.status, barePage(title, loginPage({ csrfToken, userName: outcome.userName, message: outcome.message })), outcome.headers);
}

async function serve(ctx: RequestContext, deps: ConsoleDeps, rest: string): Promise<void> {
  const method = ctx.req.method ?? 'GET';
  const isRead = method === 'GET' || method === 'HEAD';
  if (rest === '') return redirect(ctx.res, consoleUrl('/'));
  const asset = ASSETS.get(rest);
  if (asset) {
    if (!isRead) return problemPage(ctx.res, 405, 'Not allowed', 'Files can only be read.', undefined, { Allow: 'GET, HEAD' });
    sendWhole(ctx.res, 200, { ...SECURITY_HEADERS, 'Content-Type': asset.contentType, 'Content-Length': String(asset.body.length), 'Cache-Control': 'public, max-age=31536000, immutable' }, asset.body);
    return;
  }
  const seller = await sellerOf(ctx, deps);
  if (rest === '/login') return serveLogin(ctx, deps, seller, method);
  if (rest === '/logout') {
    if (method !== 'POST') return problemPage(ctx.res, 405, 'Not allowed', 'Log out with the button of a console page.', seller, { Allow: 'POST' });
    if (!seller) return redirect(ctx.res, consoleUrl('/login'));
    const form = await readForm(ctx);
    if (!comesFromThisOrigin(ctx.req) || !csrfTokenMatches(seller.cookie, form.get('csrf') ?? undefined)) {
      return problemPage(ctx.res, 403, 'Refused', 'This form did not come from your console session. Open the page again and repeat what you did.', seller);
    }
    return redirect(ctx.res, consoleUrl('/login'), { 'Set-Cookie': await formLogout(deps, ctx) });
  }
  if (!seller) {
    if (isRead) return redirect(ctx.res, consoleUrl('/login'));
    return problemPage(ctx.res, 403, 'Refused', 'You are not logged in (or your session ended). Log in again.');
  }
  if (method === 'POST') return post(ctx, deps, seller, rest);
  if (!isRead) return problemPage(ctx.res, 405, 'Not allowed', `The console does not take ${method.slice(0, 20)} requests.`, seller, { Allow: 'GET, HEAD, POST' });
  const params = new URLSearchParams(ctx.query);
  if (rest === '/tokens') return showTokens(ctx, deps, seller, params.get('revoked') === '1' ? { notice: 'The token is revoked.' } : {});
  if (rest === '/integrations') {
    const tokens = (await tokensOfAccount(deps.store, seller.accountId)).map((token) => ({ token, use: deps.tokenActivity.useOf(token.tokenHash) }));
    const body = await readAccount(deps, seller.accountId, (r) => integrationsPage(r, tokens, deps.clock.now()));
    const outcome = params.get('webhook');
    const notice = outcome === 'enabled' ? 'The endpoint is enabled: its waiting deliveries go out now.' : outcome === 'redelivered' ? 'The delivery is sent again, with the same event id.' : undefined;
    const hooks = webhooksSection(await webhookViews(deps, seller.accountId), csrfTokenFor(seller.cookie), notice);
    return sellerPage(ctx.res, 200, seller, 'Integrations', 'integrations', html`${body}${hooks}`);
  }
  const target = pageFor(rest, params, deps, seller.cookie);
  if (!target) return problemPage(ctx.res, 404, 'Not found', 'The console has no page at this address.', seller);
  const result = await readAccount(deps, seller.accountId, target.render);
  if (!result) return notFoundPage(ctx.res, seller, target.what);
  sellerPage(ctx.res, 200, seller, result.title, target.section, html`${outcomeNotice(params)}${result.body}`);
}

export function consoleHandler(deps: ConsoleDeps): Handler {
  return async (ctx, rest) => {
    try {
      await serve(ctx, deps, rest);
    } catch (error) {
      if (ctx.res.headersSent) throw error;
      // Bad input the read path refused (it speaks OData errors) is said as a page; a fault is
      // logged with its request id and named by it, never shown.
      if (error instanceof ODataError && error.status < 500) return problemPage(ctx.res, error.status, 'Cannot show this', error.message);
      ctx.log.error({ reqId: ctx.id, err: error }, 'console request failed');
      problemPage(ctx.res, 500, 'Something went wrong', `The console could not answer. Quote request id ${ctx.id} when reporting it.`);
    }
  };
}
