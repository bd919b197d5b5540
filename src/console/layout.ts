/** The frame of every console page: head, skip link, navigation with the current page marked, logout. */
import { FAVICON, SCRIPT, STYLE } from './assets';
import { html, type Html } from './html';

export const CONSOLE_PATH = '/console';

export type Section = 'overview' | 'products' | 'catalogs' | 'orders' | 'tokens' | 'integrations';

const SECTIONS: readonly (readonly [Section, string, string])[] = [
  ['overview', 'Overview', '/'],
  ['products', 'Products', '/products'],
  ['catalogs', 'Catalogs', '/catalogs'],
  ['orders', 'Orders', '/orders'],
  ['tokens', 'Tokens', '/tokens'],
  ['integrations', 'Integrations', '/integrations'],
];

export const consoleUrl = (path: string) => CONSOLE_PATH + path;

function head(title: string): Html {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Seller console</title>
<link rel="icon" href="${consoleUrl(FAVICON.path)}" type="image/svg+xml">
<link rel="stylesheet" href="${consoleUrl(STYLE.path)}">
<script src="${consoleUrl(SCRIPT.path)}" defer></script>
</head>`;
}

export interface PageFrame {
  readonly title: string;
  readonly section: Section | undefined;
  readonly userName: string;
  /** The session's CSRF token (the logout form carries it). */
  readonly csrfToken: string;
}

/** A page of a logged-in seller. */
export function page(frame: PageFrame, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
${head(frame.title)}
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<span class="brand">Seller console</span>
<nav aria-label="Sections"><ul>
${SECTIONS.map(([key, label, path]) => html`<li><a href="${consoleUrl(path)}"${key === frame.section ? html` aria-current="page"` : ''}>${label}</a></li>`)}
</ul></nav>
<form id="logout-form" method="post" action="${consoleUrl('/logout')}">
<input type="hidden" name="csrf" value="${frame.csrfToken}">
<span class="who">${frame.userName}</span>
<button type="submit" class="quiet">Log out</button>
</form>
</header>
<main id="main" tabindex="-1">
<h1>${frame.title}</h1>
${body}
</main>
</body>
</html>`;
}

/** A page for someone not logged in (the login form, and errors before login). */
export function barePage(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
${head(title)}
<body>
<main id="main" class="login">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}
