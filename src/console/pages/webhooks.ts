/**
 * The seller's webhook endpoints on the integrations page: each one's state (live, or disabled
 * and why), its failures in a row, and its latest failed deliveries with their last error; with
 * a button to enable a disabled endpoint and one to send a failed delivery again. Plain forms
 * (no script), each with the session's CSRF token, as every console form.
 */
import type { DeliveryView, Subscription } from '../../webhooks/subscriptions';
import { dateTime } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';

export interface WebhookView {
  readonly subscription: Subscription;
  /** Its latest deliveries that have not arrived (pending after a failure, or failed). */
  readonly troubled: readonly DeliveryView[];
}

function endpointSection(view: WebhookView, csrfToken: string): Html {
  const s = view.subscription;
  const headingId = `webhook-${s.id}`;
  return html`<section class="integration" aria-labelledby="${headingId}">
<h3 id="${headingId}">Endpoint <code>${s.url}</code> ${s.enabled ? html`<span class="badge ok">live</span>` : html`<span class="badge bad">disabled</span>`}${
    s.enabled && s.failureCount > 0 ? html` <span class="badge warn">failing</span>` : ''
  }</h3>
<dl class="facts">
<dt>Events</dt><dd>${s.eventTypes.join(', ')}</dd>
<dt>Failed attempts in a row</dt><dd>${String(s.failureCount)}</dd>
${s.disabledReason ? html`<dt>Why disabled</dt><dd>${s.disabledReason}</dd>` : ''}
</dl>
${s.enabled ? '' : html`<form method="post" action="${consoleUrl(`/webhooks/${s.id}/enable`)}"><input type="hidden" name="csrf" value="${csrfToken}"><button type="submit">Enable this endpoint</button></form>`}
${view.troubled.length > 0 ? html`<div class="table-wrap"><table>
<caption class="visually-hidden">Deliveries to ${s.url} that have not arrived</caption>
<thead><tr><th scope="col">Event</th><th scope="col">State</th><th scope="col" class="num">Attempts</th><th scope="col">Last attempt</th><th scope="col">Last error</th><th scope="col">Send again</th></tr></thead>
<tbody>${view.troubled.map(
    (d) => html`<tr><td><code>${d.type}</code> <code>${d.eventId}</code></td><td>${d.state}</td><td class="num">${String(d.attempts)}</td><td>${d.lastAttemptAt === null ? '—' : dateTime(d.lastAttemptAt)}</td><td>${d.lastError ?? '—'}</td><td><form method="post" action="${consoleUrl(`/webhooks/${s.id}/deliveries/${d.eventId}/redeliver`)}"><input type="hidden" name="csrf" value="${csrfToken}"><button type="submit">Redeliver</button></form></td></tr>`,
  )}</tbody>
</table></div>` : ''}
</section>`;
}

export function webhooksSection(views: readonly WebhookView[], csrfToken: string, notice?: string): Html {
  return html`<section aria-labelledby="webhooks-heading"><h2 id="webhooks-heading">Webhooks</h2>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
<p class="muted">Endpoints are registered at <code>/publicapi/v1/webhooks</code> with your SubscriptionToken (see the README's “Webhooks”). An endpoint that keeps failing is disabled; enable it here once it answers again.</p>
${views.length === 0 ? html`<p>No webhook endpoint yet.</p>` : views.map((v) => endpointSection(v, csrfToken))}
</section>`;
}
