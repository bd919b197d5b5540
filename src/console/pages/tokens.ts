/**
 * The seller's SubscriptionTokens: a new one is shown once (only its hash is stored, so nobody
 * can show it again), and a live one can be revoked. Tokens are named by the start of their hash.
 */
import type { TokenRow } from '../../auth/accounts';
import { dateTime } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';

/** How much of a token's hash names it on the page. */
const FINGERPRINT_LENGTH = 12;

export interface TokensView {
  readonly tokens: readonly TokenRow[];
  readonly csrfToken: string;
  /** A token created by this request: its plain text, shown this once. */
  readonly created?: string;
  readonly notice?: string;
}

export function tokensPage(view: TokensView): Html {
  const live = view.tokens.filter((t) => t.revokedAt === null).length;
  return html`
${view.created ? html`<div class="notice" role="status"><p><strong>Your new SubscriptionToken</strong>. Copy it now: it is shown only this once.</p>
<output class="secret" id="new-token" aria-label="New SubscriptionToken">${view.created}</output></div>` : ''}
${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
<p>Your connector sends a SubscriptionToken with every request. Give each connector its own, and revoke one you no longer use or that may have leaked: requests with it are refused at once.</p>
<form method="post" action="${consoleUrl('/tokens')}">
<input type="hidden" name="csrf" value="${view.csrfToken}">
<button type="submit">Create a new token</button>
</form>
<h2>Your tokens (${live} live)</h2>
<div class="table-wrap"><table>
<thead><tr><th scope="col">Token</th><th scope="col">Created</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>
${view.tokens.map((t) => {
  const name = `token ${t.tokenHash.slice(0, FINGERPRINT_LENGTH)}…`;
  return html`<tr>
<td><code>${t.tokenHash.slice(0, FINGERPRINT_LENGTH)}…</code></td>
<td>${dateTime(t.createdAt)}</td>
<td>${t.revokedAt === null ? html`<span class="badge ok">live</span>` : html`<span class="badge bad">revoked</span> ${dateTime(t.revokedAt)}`}</td>
<td>${t.revokedAt === null ? html`<form method="post" action="${consoleUrl('/tokens/revoke')}">
<input type="hidden" name="csrf" value="${view.csrfToken}"><input type="hidden" name="token" value="${t.tokenHash}">
<button type="submit" class="danger" aria-label="${`Revoke ${name}`}">Revoke</button></form>` : ''}</td>
</tr>`;
})}
</tbody></table></div>`;
}
