/** One order: its state, buyer, addresses, items and the order history GetSalesOrderHistory returns. */
import { etagOf, type EntityRecord } from '../../odata/entity';
import { SHIPPING_STATUSES } from '../order-actions';
import { dateTime, money, text, yesNo } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';
import { expandedList, expandedOne, type ConsoleReads } from '../reads';

function facts(rows: readonly (readonly [string, Html | string])[]): Html {
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

function address(record: EntityRecord | undefined, label: string): Html {
  if (!record) return html`<p class="muted">No ${label.toLowerCase()}.</p>`;
  const a = record.values;
  const lines = [
    a.Company,
    [a.Salutation, a.Name, a.Surname].filter(Boolean).join(' '),
    a.Street,
    a.Addition,
    [a.PostalCode, a.Town].filter(Boolean).join(' '),
    [a.State, a.Country].filter(Boolean).join(' '),
    a.Phone,
  ].filter((l) => typeof l === 'string' && l !== '') as string[];
  return html`<address aria-label="${label}">${lines.map((l, i) => html`${i > 0 ? html`<br>` : ''}${l}`)}</address>`;
}

/** The hidden fields every form of the order page carries: the session's CSRF token and the ETag of what the page shows. */
function hidden(csrfToken: string, record: EntityRecord): Html {
  return html`<input type="hidden" name="csrf" value="${csrfToken}"><input type="hidden" name="etag" value="${etagOf(record.version ?? 0n)}">`;
}

/** Payment and shipping status of the order: the MERGEs a connector sends, one button each. */
function orderActions(order: EntityRecord, csrfToken: string): Html {
  const v = order.values;
  const id = String(v.Id);
  const status = v.ShippingStatus as number;
  const statuses = SHIPPING_STATUSES.filter(([n]) => n !== 2 || status === 2);
  return html`<section aria-labelledby="actions-heading"><h2 id="actions-heading">Payment and shipping</h2>
<div class="actions">
<form method="post" action="${consoleUrl(`/orders/${id}/payment`)}">${hidden(csrfToken, order)}
<input type="hidden" name="paid" value="${v.MarkedAsPayed === true ? '0' : '1'}">
<button type="submit"${v.MarkedAsPayed === true ? html` class="danger"` : ''}>${v.MarkedAsPayed === true ? 'Mark unpaid' : 'Mark paid'}</button></form>
<form method="post" action="${consoleUrl(`/orders/${id}/shipping`)}">${hidden(csrfToken, order)}
<label class="inline">Shipping status <select name="status">${statuses.map(([n, label]) => html`<option value="${n}"${n === status ? html` selected` : ''}>${label}</option>`)}</select></label>
<button type="submit">Set shipping status</button></form>
</div></section>`;
}

/** The carrier and tracking numbers of each item (writable on items only). */
function trackingForms(order: EntityRecord, items: readonly EntityRecord[], csrfToken: string): Html {
  if (items.length === 0) return html``;
  return html`<h2>Tracking</h2><ul class="tracking">${items.map((item) => {
    const x = item.values;
    const key = String(x.Id);
    return html`<li><form class="actions" method="post" action="${consoleUrl(`/orders/${String(order.values.Id)}/items/${key}/tracking`)}">${hidden(csrfToken, item)}
<span>${text(x.Name)}</span>
<label class="inline">Carrier <input name="CarrierUsed" value="${x.CarrierUsed === null ? '' : String(x.CarrierUsed)}" aria-label="${`Carrier of ${text(x.Name)}`}"></label>
<label class="inline">Tracking numbers <input name="TrackingNumbers" value="${x.TrackingNumbers === null ? '' : String(x.TrackingNumbers)}" aria-label="${`Tracking numbers of ${text(x.Name)}`}"></label>
<button type="submit" aria-label="${`Save tracking of ${text(x.Name)}`}">Save tracking</button></form></li>`;
  })}</ul>`;
}

export async function orderPage(reads: ConsoleReads, id: bigint, csrfToken: string): Promise<{ title: string; body: Html } | undefined> {
  const order = await reads.one('SalesOrder', id, 'SalesOrderItems,Buyer,Address,ShippingAddress');
  if (!order) return undefined;
  const history = await reads.orderHistory(id);
  const v = order.values;
  const buyer = expandedOne(order, 'Buyer');
  const items = [...expandedList(order, 'SalesOrderItems')].sort((a, b) => Number(a.values.Id) - Number(b.values.Id));
  const body = html`
<p><a href="${consoleUrl('/orders')}">← All orders</a></p>
${facts([
  ['Platform order', text(v.PlatformOrderId)],
  ['Created', dateTime(v.CreationDate)],
  ['Checkout completed', dateTime(v.CheckoutCompletionDate)],
  ['Total', money(v.TotalPrice, v.CurrencyCode)],
  ['Shipping', html`${text(v.ShippingService)} (${money(v.ShippingServiceCost, v.CurrencyCode)})`],
  ['Payment', text(v.PaymentOption)],
  ['Paid', html`${yesNo(v.MarkedAsPayed)}${v.PaidDate !== null ? html` (${dateTime(v.PaidDate)})` : ''}`],
  ['Shipped', yesNo(v.MarkedAsShipped)],
  ['Imported by your ERP', v.ForeignOrderId === null ? html`<span class="badge warn">waiting for import</span>` : html`as ${text(v.ForeignOrderId)}`],
  ['Buyer message', text(v.BuyerCheckoutMessage)],
  ['Last change', dateTime(v.ModificationDate)],
])}
${orderActions(order, csrfToken)}
<h2>Buyer</h2>
${buyer ? facts([['User name', text(buyer.values.BuyerName)], ['E-mail', text(buyer.values.Email)]]) : html`<p class="muted">Unknown.</p>`}
<h2>Addresses</h2>
<div class="addresses"><div><h3>Billing address</h3>${address(expandedOne(order, 'Address'), 'Billing address')}</div>
<div><h3>Shipping address</h3>${expandedOne(order, 'ShippingAddress') ? address(expandedOne(order, 'ShippingAddress'), 'Shipping address') : html`<p class="muted">Same as the billing address.</p>`}</div></div>
<h2>Items (${items.length})</h2>
<div class="table-wrap"><table>
<thead><tr><th scope="col">Item</th><th scope="col" class="hide-narrow">Sku</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Price</th><th scope="col">Shipped</th><th scope="col" class="hide-narrow">Tracking</th></tr></thead>
<tbody>
${items.map((i) => {
  const x = i.values;
  return html`<tr>
<td>${typeof x.ProductId === 'bigint' ? html`<a href="${consoleUrl(`/products/${String(x.ProductId)}`)}">${text(x.Name)}</a>` : text(x.Name)}<br><span class="muted">${text(x.PlatformItemId)}</span></td>
<td class="hide-narrow">${text(x.Sku)}</td>
<td class="num">${text(x.Amount)}</td>
<td class="num">${money(x.Price, x.CurrencyCode)}</td>
<td>${x.ShippingStatus === 1 ? html`<span class="badge ok">shipped</span> ${dateTime(x.ShippingDate)}` : html`<span class="badge">no</span>`}</td>
<td class="hide-narrow">${text(x.CarrierUsed)} ${text(x.TrackingNumbers)}</td>
</tr>`;
})}
</tbody></table></div>
${trackingForms(order, items, csrfToken)}
<h2 id="history-heading">History</h2>
${history === '' ? html`<p class="muted">No payment or shipping change yet.</p>` : html`<pre class="history" aria-labelledby="history-heading">${history.replace(/\r\n/g, '\n')}</pre>`}`;
  return { title: `Order ${text(v.PlatformOrderId)}`, body };
}
