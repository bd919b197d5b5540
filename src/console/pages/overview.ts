/** The overview: how many of each set the seller has, what changed last, which orders wait for import. */
import type { EntityRecord } from '../../odata/entity';
import { dateTime, money, text } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';
import type { ConsoleReads } from '../reads';

/** Sets that change by the seller's connector or by the platform, newest first in "last changes". */
const CHANGING_SETS = ['Product', 'ProductVariation', 'Catalog', 'SalesOrder'] as const;
const LAST_CHANGES = 10;
/** An order is waiting for import until the seller's ERP has stored its own id in ForeignOrderId. */
export const WAITING_FOR_IMPORT = 'ForeignOrderId eq null';

interface Change {
  readonly kind: string;
  readonly label: string;
  readonly href: string | undefined;
  readonly at: number;
}

function changeOf(record: EntityRecord): Change {
  const v = record.values;
  const id = String(v.Id);
  switch (record.type.name) {
    case 'Product':
      return { kind: 'Product', label: text(v.Title), href: consoleUrl(`/products/${id}`), at: v.ModificationDate as number };
    case 'ProductVariation':
      return { kind: 'Variation', label: text(v.Sku), href: consoleUrl(`/products/${String(v.ProductId)}`), at: v.ModificationDate as number };
    case 'SalesOrder':
      return { kind: 'Order', label: text(v.PlatformOrderId), href: consoleUrl(`/orders/${id}`), at: v.ModificationDate as number };
    default:
      return { kind: record.type.name, label: text(v.Name), href: consoleUrl('/catalogs'), at: v.ModificationDate as number };
  }
}

export async function overviewPage(reads: ConsoleReads, setNames: readonly string[]): Promise<Html> {
  const counts: [string, number][] = [];
  for (const name of setNames) counts.push([name, await reads.count(name)]);
  const recent: EntityRecord[] = [];
  for (const name of CHANGING_SETS) recent.push(...(await reads.list(name, { $orderby: 'ModificationDate desc', $top: String(LAST_CHANGES) })));
  const changes = recent.map(changeOf).sort((a, b) => b.at - a.at).slice(0, LAST_CHANGES);
  const waitingCount = await reads.count('SalesOrder', WAITING_FOR_IMPORT);
  const waiting = await reads.list('SalesOrder', { $filter: WAITING_FOR_IMPORT, $orderby: 'CreationDate', $top: '10' });
  const setOf = (name: string) => reads.type(name).setName;
  return html`
<section aria-labelledby="counts"><h2 id="counts">Your data</h2>
<ul class="cards">${counts.map(([name, n]) => html`<li><span class="n">${n}</span>${setOf(name)}</li>`)}</ul>
</section>
<section aria-labelledby="changes"><h2 id="changes">Last changes</h2>
${changes.length === 0 ? html`<p class="muted">Nothing yet: your connector has not sent anything.</p>` : html`
<div class="table-wrap"><table><thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Name</th></tr></thead><tbody>
${changes.map((c) => html`<tr><td>${dateTime(c.at)}</td><td>${c.kind}</td><td>${c.href ? html`<a href="${c.href}">${c.label}</a>` : c.label}</td></tr>`)}
</tbody></table></div>`}
</section>
<section aria-labelledby="waiting"><h2 id="waiting">Orders waiting for import (${waitingCount})</h2>
${waiting.length === 0 ? html`<p class="muted">None: your ERP has imported every order.</p>` : html`
<div class="table-wrap"><table><thead><tr><th scope="col">Order</th><th scope="col">Created</th><th scope="col" class="num">Total</th></tr></thead><tbody>
${waiting.map((o) => html`<tr><td><a href="${consoleUrl(`/orders/${String(o.values.Id)}`)}">${text(o.values.PlatformOrderId)}</a></td><td>${dateTime(o.values.CreationDate)}</td><td class="num">${money(o.values.TotalPrice, o.values.CurrencyCode)}</td></tr>`)}
</tbody></table></div>
${waitingCount > waiting.length ? html`<p><a href="${consoleUrl('/orders?imported=no')}">All ${waitingCount} orders waiting for import</a></p>` : ''}`}
</section>`;
}
