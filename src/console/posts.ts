/**
 * The console's POSTs that change catalogue data and orders (their CSRF and origin checks were
 * made by the handler): edit forms (./edits.ts) and order actions (./order-actions.ts).
 */
import type { EdmValue } from '../odata/edm';
import { ODataError } from '../odata/errors';
import type { RequestContext } from '../server/context';
import type { ConsoleDeps } from './deps';
import { applyEdit, EDITS, entriesOf, type EditKind } from './edits';
import { html } from './html';
import { consoleUrl } from './layout';
import { mergeOne, paymentValues, SHIPPING_STATUSES, trackingValue, type MergeOutcome } from './order-actions';
import { bulkShippedPage } from './pages/bulk';
import { editPage, viewUrlOf } from './pages/edit';
import { readAccount } from './reads';
import { ENTITY_ID, notFoundPage, problemPage, redirect, sellerPage, type Seller } from './respond';
import { csrfTokenFor } from './security';

/** The edit forms' addresses: /products/12/edit, /variations/34/edit, /catalogs/5/edit. */
export const EDIT_PATH = /^\/(products|variations|catalogs)\/([^/]+)\/edit$/;
const EDIT_KIND: Readonly<Record<string, EditKind>> = { products: 'product', variations: 'variation', catalogs: 'catalog' };

export function editTarget(path: string): { kind: EditKind; idText: string } | undefined {
  const m = EDIT_PATH.exec(path);
  return m ? { kind: EDIT_KIND[m[1]!]!, idText: m[2]! } : undefined;
}

/** POST of an edit form: saved leads back to the entity's page; a refusal shows the form again. */
export async function postEdit(ctx: RequestContext, deps: ConsoleDeps, seller: Seller, kind: EditKind, idText: string, form: URLSearchParams): Promise<void> {
  const what = `${EDITS[kind].what} ${idText.slice(0, 40)}`;
  if (!ENTITY_ID.test(idText)) return notFoundPage(ctx.res, seller, what);
  const id = BigInt(idText);
  const outcome = await applyEdit(deps, ctx, seller.accountId, { kind, id, form });
  if (outcome.kind === 'missing') return notFoundPage(ctx.res, seller, what);
  if (outcome.kind === 'saved' || outcome.kind === 'unchanged') {
    const record = await readAccount(deps, seller.accountId, (r) => r.one(EDITS[kind].type, id));
    if (!record) return notFoundPage(ctx.res, seller, what);
    return redirect(ctx.res, `${viewUrlOf(kind, record)}?${outcome.kind === 'saved' ? 'saved' : 'unchanged'}=1`);
  }
  const view = {
    csrfToken: csrfTokenFor(seller.cookie),
    entries: entriesOf(EDITS[kind], form),
    etag: form.get('etag') ?? '',
    offerEtag: form.get('offerEtag') ?? '',
    ...(outcome.kind === 'conflict' ? { conflict: true } : { problems: outcome.problems, ...(outcome.general ? { general: outcome.general } : {}) }),
  };
  const result = await readAccount(deps, seller.accountId, (r) => editPage(r, kind, id, view));
  if (!result) return notFoundPage(ctx.res, seller, what);
  // 409: the entity changed since the page; 400: the values break a rule. Nothing was written.
  sellerPage(ctx.res, outcome.kind === 'conflict' ? 409 : 400, seller, result.title, kind === 'catalog' ? 'catalogs' : 'products', result.body);
}

/** The order actions' addresses: /orders/12/payment, /orders/12/shipping, /orders/12/items/34/tracking. */
export const ORDER_ACTION = /^\/orders\/([^/]+)\/(payment|shipping|items\/([^/]+)\/tracking)$/;
/** Bulk "mark shipped" takes at most a page of orders. */
const MAX_BULK_ORDERS = 100;

/** POST of one order's form: done leads back to the order; a conflict or refusal says why there. */
export async function postOrderAction(ctx: RequestContext, deps: ConsoleDeps, seller: Seller, match: RegExpExecArray, form: URLSearchParams): Promise<void> {
  const [, orderText, action, itemText] = match as unknown as [string, string, string, string | undefined];
  const what = `Order ${orderText.slice(0, 40)}`;
  if (!ENTITY_ID.test(orderText) || (itemText !== undefined && !ENTITY_ID.test(itemText))) return notFoundPage(ctx.res, seller, what);
  const orderId = BigInt(orderText);
  const etag = form.get('etag') ?? '';
  let outcome: MergeOutcome;
  if (action === 'payment') {
    const paid = form.get('paid');
    if (paid !== '1' && paid !== '0') return problemPage(ctx.res, 400, 'Cannot do this', 'Choose paid or unpaid.', seller);
    outcome = await mergeOne(deps, ctx, seller.accountId, { typeName: 'SalesOrder', id: orderId, etag, values: paymentValues(paid === '1', deps.clock.now()) });
  } else if (action === 'shipping') {
    const status = Number(form.get('status'));
    if (!SHIPPING_STATUSES.some(([n]) => n === status) || !/^\d$/.test(form.get('status') ?? '')) return problemPage(ctx.res, 400, 'Cannot do this', 'Choose a shipping status of the list.', seller);
    outcome = await mergeOne(deps, ctx, seller.accountId, { typeName: 'SalesOrder', id: orderId, etag, values: () => new Map([['ShippingStatus', status]]) });
  } else {
    let values: Map<string, EdmValue>;
    try {
      values = new Map<string, EdmValue>([
        ['CarrierUsed', trackingValue(deps, 'CarrierUsed', (form.get('CarrierUsed') ?? '').slice(0, 4000))],
        ['TrackingNumbers', trackingValue(deps, 'TrackingNumbers', (form.get('TrackingNumbers') ?? '').slice(0, 4000))],
      ]);
    } catch (error) {
      if (error instanceof ODataError && error.status < 500) return problemPage(ctx.res, 400, 'Cannot do this', error.message, seller);
      throw error;
    }
    outcome = await mergeOne(deps, ctx, seller.accountId, { typeName: 'SalesOrderItem', id: BigInt(itemText!), ofOrder: orderId, etag, values: () => values });
  }
  const back = consoleUrl(`/orders/${orderText}`);
  if (outcome.kind === 'missing') return notFoundPage(ctx.res, seller, what);
  if (outcome.kind === 'saved' || outcome.kind === 'unchanged') return redirect(ctx.res, `${back}?${outcome.kind}=1`);
  if (outcome.kind === 'conflict') {
    return sellerPage(ctx.res, 409, seller, 'Nothing was changed', 'orders', html`<div class="notice error" role="alert"><p><strong>Nothing was saved.</strong> The order changed after you opened its page (your connector or the marketplace may have changed it).</p></div><p><a href="${back}">Open the order again to see its current state</a></p>`);
  }
  return sellerPage(ctx.res, 400, seller, 'Nothing was changed', 'orders', html`<p class="notice error" role="alert">${outcome.message}</p><p><a href="${back}">Back to the order</a></p>`);
}

/** POST of the orders list's selection: each order marked shipped in its own transaction. */
export async function postBulkShipped(ctx: RequestContext, deps: ConsoleDeps, seller: Seller, form: URLSearchParams): Promise<void> {
  const ids = [...new Set(form.getAll('order'))].slice(0, MAX_BULK_ORDERS);
  // Every selected order must be the seller's: an id of another account (or none) is a 404 and nothing is done.
  const missing = ids.find((idText) => !ENTITY_ID.test(idText));
  if (missing !== undefined) return notFoundPage(ctx.res, seller, `Order ${missing.slice(0, 40)}`);
  const unknown = await readAccount(deps, seller.accountId, async (r) => {
    for (const idText of ids) if (!(await r.one('SalesOrder', BigInt(idText)))) return idText;
    return undefined;
  });
  if (unknown !== undefined) return notFoundPage(ctx.res, seller, `Order ${unknown}`);
  const results: { idText: string; outcome: MergeOutcome }[] = [];
  for (const idText of ids) {
    const outcome = await mergeOne(deps, ctx, seller.accountId, {
      typeName: 'SalesOrder',
      id: BigInt(idText),
      etag: undefined,
      values: () => new Map([['ShippingStatus', 1]]),
      done: (stored) => stored.MarkedAsShipped === true && stored.ShippingStatus === 1,
    });
    results.push({ idText, outcome });
  }
  const body = await readAccount(deps, seller.accountId, (r) => bulkShippedPage(r, results));
  sellerPage(ctx.res, 200, seller, 'Mark shipped', 'orders', body);
}

