/**
 * The login form: a plain HTML form posted to the console (/console/login), so that it works with
 * scripts off. It carries a login CSRF token (../login.ts); the JSON login endpoint stays as it
 * is for API clients.
 */
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';

export interface LoginView {
  readonly csrfToken: string;
  /** The user name sent, shown again after a failed login. */
  readonly userName?: string;
  readonly message?: string;
}

export function loginPage(view: LoginView): Html {
  return html`
<p>Log in with the user name and password of your seller account: the same ones your connector uses.</p>
${view.message ? html`<p class="notice error" role="alert" id="login-message">${view.message}</p>` : ''}
<form id="login-form" class="stack" method="post" action="${consoleUrl('/login')}">
<input type="hidden" name="csrf" value="${view.csrfToken}">
<label>User name<input name="userName" autocomplete="username" required value="${view.userName ?? ''}"${view.userName ? '' : html` autofocus`}></label>
<label>Password<input name="password" type="password" autocomplete="current-password" required${view.userName ? html` autofocus` : ''}></label>
<button type="submit">Log in</button>
</form>`;
}
