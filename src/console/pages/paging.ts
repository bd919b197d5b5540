/** Paging of the console's lists: a page number from the query, and the links around it. */
import { html, type Html } from '../html';

export const PAGE_ROWS = 25;

/** The 1-based page the query asks for; anything that is not a sensible page number is page 1. */
export function pageNumber(params: URLSearchParams): number {
  const text = params.get('page') ?? '1';
  const n = /^\d{1,6}$/.test(text) ? Number(text) : 1;
  return n >= 1 ? n : 1;
}

/** Previous/next links that keep every other parameter of the query. */
export function pager(base: string, params: URLSearchParams, current: number, total: number): Html {
  const pages = Math.max(1, Math.ceil(total / PAGE_ROWS));
  const link = (n: number) => {
    const next = new URLSearchParams(params);
    next.set('page', String(n));
    return `${base}?${next.toString()}`;
  };
  return html`<nav class="pager" aria-label="Pages">
${current > 1 ? html`<a href="${link(current - 1)}" rel="prev">Previous page</a>` : ''}
<span>Page ${Math.min(current, pages)} of ${pages} · ${total} in all</span>
${current < pages ? html`<a href="${link(current + 1)}" rel="next">Next page</a>` : ''}
</nav>`;
}
