/** The order list with its filters: imported or not, paid, shipped, and a creation date range. */
import { dateTime, money, text } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';
import { dateTimeLiteral, expandedOne, type ConsoleReads } from '../reads';
import { WAITING_FOR_IMPORT } from './overview';
import { PAGE_ROWS, pageNumber, pager } from './paging';

type Choice = 'any' | 'yes' | 'no';
const DAY_MS = 24 * 3600_000;

export interface OrderQuery {
  readonly imported: Choice;
  readonly paid: Choice;
  readonly shipped: Choice;
  /** YYYY-MM-DD, as a date input sends it; '' for none. */
  readonly from: string;
  readonly to: string;
  readonly page: number;
}

function choice(params: URLSearchParams, name: string): Choice {
  const v = params.get(name);
  return v === 'yes' || v === 'no' ? v : 'any';
}

/** A calendar date as a date input sends it, as the UTC midnight it starts at; undefined otherwise. */
function dayStart(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return undefined;
  const ms = Date.parse(`${text}T00:00:00Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text ? undefined : ms;
}

export function orderQuery(params: URLSearchParams): OrderQuery {
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  return {
    imported: choice(params, 'imported'),
    paid: choice(params, 'paid'),
    shipped: choice(params, 'shipped'),
    from: dayStart(from) === undefined ? '' : from,
    to: dayStart(to) === undefined ? '' : to,
    page: pageNumber(params),
  };
}

function orderFilter(q: OrderQuery): string | undefined {
  const parts: string[] = [];
  if (q.imported !== 'any') parts.push(q.imported === 'no' ? WAITING_FOR_IMPORT : 'ForeignOrderId ne null');
  if (q.paid !== 'any') parts.push(`MarkedAsPayed eq ${q.paid === 'yes'}`);
  if (q.shipped !== 'any') parts.push(`MarkedAsShipped eq ${q.shipped === 'yes'}`);
  const from = dayStart(q.from);
  if (from !== undefined) parts.push(`CreationDate ge ${dateTimeLiteral(from)}`);
  const to = dayStart(q.to);
  if (to !== undefined) parts.push(`CreationDate lt ${dateTimeLiteral(to + DAY_MS)}`);
  return parts.length === 0 ? undefined : parts.join(' and ');
}

function select(name: string, label: string, value: Choice, yes: string, no: string): Html {
  const option = (v: Choice, l: string) => html`<option value="${v}"${v === value ? html` selected` : ''}>${l}</option>`;
  return html`<label>${label}<select name="${name}">${option('any', 'Any')}${option('yes', yes)}${option('no', no)}</select></label>`;
}

function status(on: unknown, yes: string, no: string, warn = false): Html {
  return on === true ? html`<span class="badge ok">${yes}</span>` : html`<span class="badge${warn ? ' warn' : ''}">${no}</span>`;
}

export async function ordersPage(reads: ConsoleReads, params: URLSearchParams, csrfToken: string): Promise<Html> {
  const q = orderQuery(params);
  const filter = orderFilter(q);
  const total = await reads.count('SalesOrder', filter);
  const orders = await reads.list('SalesOrder', {
    ...(filter ? { $filter: filter } : {}),
    $orderby: 'CreationDate desc',
    $top: String(PAGE_ROWS),
    $skip: String((q.page - 1) * PAGE_ROWS),
    $expand: 'Buyer',
  });
  const keep = new URLSearchParams();
  for (const name of ['imported', 'paid', 'shipped'] as const) if (q[name] !== 'any') keep.set(name, q[name]);
  if (q.from) keep.set('from', q.from);
  if (q.to) keep.set('to', q.to);
  return html`
<form class="filters" method="get" action="${consoleUrl('/orders')}" aria-label="Filter orders">
${select('imported', 'Imported by your ERP', q.imported, 'Imported', 'Waiting for import')}
${select('paid', 'Paid', q.paid, 'Paid', 'Not paid')}
${select('shipped', 'Shipped', q.shipped, 'Shipped', 'Not shipped')}
<label>Created from<input type="date" name="from" value="${q.from}"></label>
<label>Created until<input type="date" name="to" value="${q.to}"></label>
<button type="submit">Filter</button>
${filter ? html`<a href="${consoleUrl('/orders')}">Clear filters</a>` : ''}
</form>
${orders.length === 0 ? html`<p class="notice">No order matches these filters.</p>` : html`
<form id="bulk-form" method="post" action="${consoleUrl('/orders/ship')}">
<input type="hidden" name="csrf" value="${csrfToken}">
<div class="table-wrap"><table>
<thead><tr><th scope="col"><span class="visually-hidden">Select</span></th><th scope="col">Order</th><th scope="col">Created</th><th scope="col" class="hide-narrow">Buyer</th><th scope="col" class="num">Total</th><th scope="col">Paid</th><th scope="col">Shipped</th><th scope="col" class="hide-narrow">Imported</th></tr></thead>
<tbody>
${orders.map((o) => {
  const v = o.values;
  return html`<tr>
<td><input type="checkbox" name="order" value="${String(v.Id)}" aria-label="${`Select order ${text(v.PlatformOrderId)}`}"></td>
<td><a href="${consoleUrl(`/orders/${String(v.Id)}`)}">${text(v.PlatformOrderId)}</a></td>
<td>${dateTime(v.CreationDate)}</td>
<td class="hide-narrow">${text(expandedOne(o, 'Buyer')?.values.BuyerName)}</td>
<td class="num">${money(v.TotalPrice, v.CurrencyCode)}</td>
<td>${status(v.MarkedAsPayed, 'paid', 'not paid', true)}</td>
<td>${status(v.MarkedAsShipped, 'shipped', 'not shipped')}</td>
<td class="hide-narrow">${v.ForeignOrderId === null ? html`<span class="badge warn">waiting</span>` : text(v.ForeignOrderId)}</td>
</tr>`;
})}
</tbody></table></div>
<p class="actions"><button type="submit">Mark selected orders shipped</button></p>
</form>`}
${pager(consoleUrl('/orders'), keep, q.page, total)}`;
}
