/**
 * The state of the seller's integrations: for each SubscriptionToken (named by the start of its
 * hash; the token itself is never shown again) when it was last used and by which client, its
 * requests and errors in the last 24 hours and its last errors with their request ids
 * (auth/token-activity.ts says where these come from and what they cost); and the orders
 * waiting for the seller's ERP to import them, with the oldest one's age.
 */
import type { TokenRow } from '../../auth/accounts';
import type { TokenUse } from '../../auth/token-activity';
import { dateTime, text } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';
import type { ConsoleReads } from '../reads';
import { WAITING_FOR_IMPORT } from './overview';

const FINGERPRINT_LENGTH = 12;

/** An age in words: "3 days 4 hours", "25 minutes". */
export function age(ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (days > 0) return `${plural(days, 'day')}${hours > 0 ? ` ${plural(hours, 'hour')}` : ''}`;
  if (hours > 0) return `${plural(hours, 'hour')} ${plural(minutes % 60, 'minute')}`;
  return plural(minutes, 'minute');
}

export interface TokenView {
  readonly token: TokenRow;
  /** What this process saw of it (undefined: nothing since it started). */
  readonly use: TokenUse | undefined;
}

function tokenSection(view: TokenView, now: number): Html {
  const { token, use } = view;
  const fingerprint = `${token.tokenHash.slice(0, FINGERPRINT_LENGTH)}…`;
  const lastUsedAt = Math.max(token.lastUsedAt ?? 0, use?.lastUsedAt ?? 0);
  const userAgent = use?.userAgent ?? token.lastUserAgent;
  const headingId = `token-${token.tokenHash.slice(0, FINGERPRINT_LENGTH)}`;
  return html`<section class="integration" aria-labelledby="${headingId}">
<h3 id="${headingId}">Token <code>${fingerprint}</code> ${token.revokedAt === null ? html`<span class="badge ok">live</span>` : html`<span class="badge bad">revoked</span>`}${
    use && use.errors24h > 0 ? html` <span class="badge warn">failing requests</span>` : ''
  }</h3>
<dl class="facts">
<dt>Last used</dt><dd>${lastUsedAt > 0 ? html`${dateTime(lastUsedAt)} (${age(now - lastUsedAt)} ago)` : 'never'}</dd>
<dt>By the client</dt><dd>${userAgent === null ? '—' : html`<code>${userAgent}</code>`}</dd>
<dt>Requests in the last 24 hours</dt><dd>${use ? String(use.requests24h) : '0'}</dd>
<dt>Errors in the last 24 hours</dt><dd>${use ? String(use.errors24h) : '0'}</dd>
</dl>
${use && use.recentErrors.length > 0 ? html`<div class="table-wrap"><table>
<caption class="visually-hidden">Last errors of token ${fingerprint}</caption>
<thead><tr><th scope="col">When</th><th scope="col" class="num">Status</th><th scope="col">Request</th><th scope="col">Request id</th></tr></thead>
<tbody>${use.recentErrors.map((e) => html`<tr><td>${dateTime(e.at)}</td><td class="num">${e.status}</td><td><code>${e.method} ${e.path}</code></td><td><code>${e.requestId}</code></td></tr>`)}</tbody>
</table></div>` : ''}
</section>`;
}

export async function integrationsPage(reads: ConsoleReads, tokens: readonly TokenView[], now: number): Promise<Html> {
  const waiting = await reads.count('SalesOrder', WAITING_FOR_IMPORT);
  const [oldest] = await reads.list('SalesOrder', { $filter: WAITING_FOR_IMPORT, $orderby: 'CreationDate', $top: '1' });
  const live = tokens.filter((t) => t.token.revokedAt === null || t.use !== undefined);
  return html`
<section aria-labelledby="import-heading"><h2 id="import-heading">Order import</h2>
${waiting === 0 ? html`<p>No order is waiting: your ERP has imported every order.</p>` : html`<p><a href="${consoleUrl('/orders?imported=no')}">${waiting} ${waiting === 1 ? 'order is' : 'orders are'} waiting for import</a>; the oldest, ${
    oldest ? html`<a href="${consoleUrl(`/orders/${String(oldest.values.Id)}`)}">${text(oldest.values.PlatformOrderId)}</a>, was created ${age(now - (oldest.values.CreationDate as number))} ago` : ''
  }.</p>`}
</section>
<section aria-labelledby="tokens-heading"><h2 id="tokens-heading">Connectors (SubscriptionTokens)</h2>
<p class="muted">Counts and errors are those this server process saw since it started; “last used” is kept in the database (at most a minute behind). Tokens are named by the start of their hash: the token itself is shown only once, when it is created.</p>
${live.length === 0 ? html`<p>No token yet.</p>` : live.map((t) => tokenSection(t, now))}
</section>`;
}
