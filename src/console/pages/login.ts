/** The login form. The script sends it to the authentication service the connectors use. */
import { html, type Html } from '../html';

export function loginPage(): Html {
  return html`
<p>Log in with the user name and password of your seller account: the same ones your connector uses.</p>
<form id="login-form" class="stack" method="post" action="/Authentication_JSON_AppService.axd/Login">
<label>User name<input name="userName" autocomplete="username" required autofocus></label>
<label>Password<input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button>
<p id="login-message" role="status" aria-live="polite"></p>
</form>
<noscript><p class="notice error">The console needs JavaScript to log in.</p></noscript>`;
}
