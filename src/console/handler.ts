/**
 * The seller console at /console/: server-rendered pages over the seller's own data, for the
 * seller logged in with the .ASPXAUTH session of the authentication service (the same session
 * the OData API uses; logging out there ends it here too).
 *
 * Every page reads in one snapshot of the seller's account through the API's own read path
 * (./reads.ts); the account comes from the session only, so another seller's ids answer as
 * missing. POSTs need the session's CSRF token and a same-origin browser. Every answer carries
 * the console's security headers (./security.ts).
 */
import type { ServerResponse } from 'node:http';
import { createTokenForAccount, revokeTokenOfAccount, tokensOfAccount, userNameOf } from '../auth/accounts';
import { sessionCookieOf } from '../server/auth-endpoints';
import { ODataError } from '../odata/errors';
import { readBody } from '../server/body';
import { sendWhole } from '../server/compression';
import type { Handler, RequestContext } from '../server/context';
import { ASSETS } from './assets';
import type { ConsoleDeps } from './deps';
import { html, type Html } from './html';
import { barePage, consoleUrl, page, type Section } from './layout';
import { catalogsPage } from './pages/catalogs';
import { loginPage } from './pages/login';
import { orderPage } from './pages/order';
import { ordersPage } from './pages/orders';
import { overviewPage } from './pages/overview';
import { productPage } from './pages/product';
import { productsPage } from './pages/products';
import { tokensPage } from './pages/tokens';
import { readAccount, type ConsoleReads } from './reads';
import { comesFromThisOrigin, csrfTokenFor, csrfTokenMatches, SECURITY_HEADERS } from './security';

export { CONSOLE_PATH } from './layout';

/** A console form is a few hidden fields; anything bigger is not one of ours. */
const MAX_FORM_BYTES = 8 * 1024;
const TOKEN_HASH = /^[0-9a-f]{64}$/;
const ENTITY_ID = /^[1-9]\d{0,17}$/;

/** The seller a request acts for. */
interface Seller {
  readonly accountId: number;
  readonly userName: string;
  readonly cookie: string;
}

function sendHtml(res: ServerResponse, status: number, body: Html, headers: Record<string, string> = {}): void {
  const bytes = Buffer.from(body.toString(), 'utf8');
  sendWhole(res, status, {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(bytes.length),
    // Pages show one seller's data: never kept by a shared cache, nor shown again from history.
    'Cache-Control': 'no-store',
    ...headers,
  }, bytes);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { ...SECURITY_HEADERS, Location: location, 'Cache-Control': 'no-store', 'Content-Length': '0' });
  res.end();
}

function problemPage(res: ServerResponse, status: number, title: string, message: string, seller?: Seller, headers: Record<string, string> = {}): void {
  const body = html`<p class="notice error">${message}</p><p><a href="${consoleUrl('/')}">Back to the overview</a></p>`;
  sendHtml(res, status, seller ? page({ title, section: undefined, userName: seller.userName }, body) : barePage(title, body), headers);
}

const notFoundPage = (res: ServerResponse, seller: Seller | undefined, what: string) =>
  problemPage(res, 404, 'Not found', `${what} does not exist in your account.`, seller);

async function sellerOf(ctx: RequestContext, deps: ConsoleDeps): Promise<Seller | undefined> {
  const cookie = sessionCookieOf(ctx);
  if (!cookie) return undefined;
  const accountId = await deps.sessions.accountOfSession(cookie);
  if (accountId === undefined) return undefined;
  const userName = await userNameOf(deps.store, accountId);
  return userName === undefined ? undefined : { accountId, userName, cookie };
}

async function readForm(ctx: RequestContext): Promise<URLSearchParams> {
  const type = (ctx.req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new ODataError(415, 'The console takes forms only (application/x-www-form-urlencoded).');
  return new URLSearchParams((await readBody(ctx.req, MAX_FORM_BYTES)).toString('utf8'));
}

type PageResult = { readonly title: string; readonly body: Html } | undefined;

/** GET pages by path: each answers its title and body, or undefined when what it names is missing. */
function pageFor(path: string, params: URLSearchParams, deps: ConsoleDeps): { section: Section; what: string; render: (reads: ConsoleReads) => Promise<PageResult> } | undefined {
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
  if (path === '/orders') return { section: 'orders', what: 'The page', render: async (r) => ({ title: 'Orders', body: await ordersPage(r, params) }) };
  const entity = /^\/(products|orders)\/([^/]+)$/.exec(path);
  if (entity) {
    const [, kind, idText] = entity as unknown as [string, 'products' | 'orders', string];
    const what = `${kind === 'products' ? 'Product' : 'Order'} ${idText.slice(0, 40)}`;
    const render = (r: ConsoleReads): Promise<PageResult> => {
      if (!ENTITY_ID.test(idText)) return Promise.resolve(undefined);
      return kind === 'products' ? productPage(r, BigInt(idText)) : orderPage(r, BigInt(idText));
    };
    return { section: kind, what, render };
  }
  return undefined;
}

async function showTokens(ctx: RequestContext, deps: ConsoleDeps, seller: Seller, extra: { created?: string; notice?: string } = {}): Promise<void> {
  const tokens = await tokensOfAccount(deps.store, seller.accountId);
  const body = tokensPage({ tokens, csrfToken: csrfTokenFor(seller.cookie), ...extra });
  sendHtml(ctx.res, 200, page({ title: 'Tokens', section: 'tokens', userName: seller.userName }, body));
}

async function post(ctx: RequestContext, deps: ConsoleDeps, seller: Seller, path: string): Promise<void> {
  if (path !== '/tokens' && path !== '/tokens/revoke') {
    return problemPage(ctx.res, 405, 'Not allowed', 'This address only shows a page; nothing can be sent to it.', seller, { Allow: 'GET, HEAD' });
  }
  const form = await readForm(ctx);
  if (!comesFromThisOrigin(ctx.req) || !csrfTokenMatches(seller.cookie, form.get('csrf') ?? undefined)) {
    return problemPage(ctx.res, 403, 'Refused', 'This form did not come from your console session. Open the page again and repeat what you did.', seller);
  }
  if (path === '/tokens') {
    const created = await createTokenForAccount(deps.store, deps.clock, seller.accountId);
    return showTokens(ctx, deps, seller, { created });
  }
  const hash = form.get('token') ?? '';
  const revoked = TOKEN_HASH.test(hash) && (await revokeTokenOfAccount(deps.store, deps.clock, seller.accountId, hash));
  if (!revoked) return notFoundPage(ctx.res, seller, 'That live token');
  redirect(ctx.res, consoleUrl('/tokens?revoked=1'));
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
  if (rest === '/login') {
    if (!isRead) return problemPage(ctx.res, 405, 'Not allowed', 'The login form is sent to the authentication service.', undefined, { Allow: 'GET, HEAD' });
    if (seller) return redirect(ctx.res, consoleUrl('/'));
    return sendHtml(ctx.res, 200, barePage('Seller console login', loginPage()));
  }
  if (!seller) {
    if (isRead) return redirect(ctx.res, consoleUrl('/login'));
    return problemPage(ctx.res, 403, 'Refused', 'You are not logged in (or your session ended). Log in again.');
  }
  if (method === 'POST') return post(ctx, deps, seller, rest);
  if (!isRead) return problemPage(ctx.res, 405, 'Not allowed', `The console does not take ${method.slice(0, 20)} requests.`, seller, { Allow: 'GET, HEAD, POST' });
  const params = new URLSearchParams(ctx.query);
  if (rest === '/tokens') return showTokens(ctx, deps, seller, params.get('revoked') === '1' ? { notice: 'The token is revoked.' } : {});
  const target = pageFor(rest, params, deps);
  if (!target) return problemPage(ctx.res, 404, 'Not found', 'The console has no page at this address.', seller);
  const result = await readAccount(deps, seller.accountId, target.render);
  if (!result) return notFoundPage(ctx.res, seller, target.what);
  sendHtml(ctx.res, 200, page({ title: result.title, section: target.section, userName: seller.userName }, result.body));
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
