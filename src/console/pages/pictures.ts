/**
 * Pictures as the console shows them. The Content-Security-Policy lets the page load images from
 * this origin only, and a seller's pictures live on their own servers: so a picture is a tile
 * that names it and links to it, never an <img> that would fetch from a third party (or fail
 * offline).
 */
import type { EdmValue } from '../../odata/edm';
import { fileName, isWebAddress, text } from '../format';
import { html, type Html } from '../html';

/** The kind of file a picture is (JPG, PNG…), from its name: what a tile can say in little room. */
function fileKind(url: string): string {
  const extension = /\.([a-z0-9]{2,5})$/i.exec(fileName(url))?.[1];
  return extension ? extension.toUpperCase() : 'IMG';
}

/** A small tile for a list row: the kind of its first picture (named in full for a screen reader), or a dash. */
export function thumbnail(url: EdmValue | undefined, label: string): Html {
  if (typeof url !== 'string') return html`<span class="thumb" role="img" aria-label="${`${label}: no picture`}">—</span>`;
  return html`<span class="thumb" role="img" aria-label="${`${label}: ${fileName(url)}`}">${fileKind(url)}</span>`;
}

/** A list of pictures with a caption each (the type or position) and a link to the address. */
export function pictureList(pictures: readonly { readonly url: EdmValue | undefined; readonly caption: string }[], label: string): Html {
  if (pictures.length === 0) return html`<p class="muted">No pictures.</p>`;
  return html`<ul class="pictures" aria-label="${label}">${pictures.map(
    (p) => html`<li><span class="thumb" aria-hidden="true">${p.caption}</span>${p.caption}<br>${
      isWebAddress(p.url) ? html`<a href="${p.url}" rel="noopener noreferrer" target="_blank">${fileName(p.url)}</a>` : text(p.url)
    }</li>`,
  )}</ul>`;
}

/** Pictures as links in a line (a table cell): the caption names each for a screen reader. */
export function pictureLinks(pictures: readonly { readonly url: EdmValue | undefined; readonly caption: string }[]): Html {
  if (pictures.length === 0) return html`—`;
  return html`${pictures.map(
    (p, i) => html`${i > 0 ? html`<br>` : ''}${isWebAddress(p.url) ? html`<a href="${p.url}" rel="noopener noreferrer" target="_blank" title="${p.caption}">${fileName(p.url)}</a>` : text(p.url)}`,
  )}`;
}
