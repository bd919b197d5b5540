/** What "mark selected orders shipped" did, order by order (each was its own transaction). */
import { text } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';
import type { MergeOutcome } from '../order-actions';
import type { ConsoleReads } from '../reads';

const SAID: Readonly<Record<MergeOutcome['kind'], string>> = {
  saved: 'marked shipped',
  unchanged: 'was shipped already',
  missing: 'does not exist in your account',
  conflict: 'changed meanwhile: not changed',
  refused: 'refused',
};

export async function bulkShippedPage(reads: ConsoleReads, results: readonly { readonly idText: string; readonly outcome: MergeOutcome }[]): Promise<Html> {
  const shipped = results.filter((r) => r.outcome.kind === 'saved').length;
  const rows: Html[] = [];
  for (const { idText, outcome } of results) {
    const order = outcome.kind === 'missing' ? undefined : await reads.one('SalesOrder', BigInt(idText));
    rows.push(html`<li>${order ? html`<a href="${consoleUrl(`/orders/${idText}`)}">Order ${text(order.values.PlatformOrderId)}</a>` : html`Order ${idText.slice(0, 40)}`}: <span class="${outcome.kind === 'saved' ? 'badge ok' : outcome.kind === 'unchanged' ? 'badge' : 'badge bad'}">${SAID[outcome.kind]}</span>${outcome.kind === 'refused' ? html` ${outcome.message}` : ''}</li>`);
  }
  return html`<p class="notice" role="status">${results.length === 0 ? 'No order was selected.' : `${shipped} of ${results.length} ${results.length === 1 ? 'order' : 'orders'} marked shipped.`}</p>
<ul class="results">${rows}</ul>
<p><a href="${consoleUrl('/orders')}">Back to the orders</a></p>`;
}
