/**
 * Pictures as the console shows them: the seller's own https addresses, loaded by the browser
 * straight from there. The Content-Security-Policy allows images from https: (and this origin)
 * and nothing else new; each <img> sends no Referer (the seller's image host learns nothing of
 * the console's addresses), loads lazily and has fixed dimensions so nothing moves as pictures
 * arrive. Under each picture lies a tile that names its kind; when the picture fails to load, the
 * console's script file (no inline script: the policy forbids it) marks the frame `failed` and
 * the tile says so. An address that is not https is never loaded: its tile says why.
 */
import type { EdmValue } from '../../odata/edm';
import { fileName, isWebAddress, text } from '../format';
import { html, type Html } from '../html';

/** Pixel sizes of the two frames (CSS keeps them; the attributes reserve the room before CSS). */
const THUMB_PX = 48;
const GALLERY_PX = 160;

/** The kind of file a picture is (JPG, PNG…), from its name: what a tile can say in little room. */
function fileKind(url: string): string {
  const extension = /\.([a-z0-9]{2,5})$/i.exec(fileName(url))?.[1];
  return extension ? extension.toUpperCase() : 'IMG';
}

/** Only https addresses are loaded: the policy allows no other scheme (http would be mixed content). */
export function isLoadable(url: EdmValue | undefined): url is string {
  return typeof url === 'string' && /^https:\/\/[^\s]+$/i.test(url);
}

/**
 * One picture in its frame: the <img> over a tile. `size` names the frame (thumb or gallery).
 * The alt text names the picture; when it fails, the tile's own text says it is not available.
 */
export function pictureFrame(url: EdmValue | undefined, alt: string, size: 'thumb' | 'gallery'): Html {
  const px = size === 'thumb' ? THUMB_PX : GALLERY_PX;
  if (!isLoadable(url)) {
    const label = typeof url === 'string' ? `${alt}: not an https address` : alt;
    return html`<span class="pic ${size} failed" role="img" aria-label="${label}"><span class="pic-missing" aria-hidden="true">${typeof url === 'string' ? 'Not shown' : '—'}</span></span>`;
  }
  return html`<span class="pic ${size}"><span class="pic-kind" aria-hidden="true">${fileKind(url)}</span><span class="pic-missing">Picture not available<span class="visually-hidden">: ${alt}</span></span><img class="pic-img" src="${url}" alt="${alt}" width="${px}" height="${px}" loading="lazy" decoding="async" referrerpolicy="no-referrer"></span>`;
}

/** A small picture for a list row: the first picture, or a dash tile. */
export function thumbnail(url: EdmValue | undefined, label: string): Html {
  return pictureFrame(url, typeof url === 'string' ? `${label}: ${fileName(url)}` : `${label}: no picture`, 'thumb');
}

/** A gallery: each picture in a fixed frame with its caption (the type or position) and a link to its address. */
export function pictureList(pictures: readonly { readonly url: EdmValue | undefined; readonly caption: string }[], label: string): Html {
  if (pictures.length === 0) return html`<p class="muted">No pictures.</p>`;
  return html`<ul class="pictures" aria-label="${label}">${pictures.map(
    (p) => html`<li>${pictureFrame(p.url, `${p.caption}: ${typeof p.url === 'string' ? fileName(p.url) : 'no address'}`, 'gallery')}${p.caption}<br>${
      isWebAddress(p.url) ? html`<a href="${p.url}" rel="noopener noreferrer" target="_blank">${fileName(p.url)}</a>` : text(p.url)
    }</li>`,
  )}</ul>`;
}

/** Pictures in a table cell: a thumbnail each, with a link to its address named by its file. */
export function pictureLinks(pictures: readonly { readonly url: EdmValue | undefined; readonly caption: string }[]): Html {
  if (pictures.length === 0) return html`—`;
  return html`${pictures.map(
    (p, i) => html`${i > 0 ? html`<br>` : ''}${pictureFrame(p.url, p.caption, 'thumb')} ${isWebAddress(p.url) ? html`<a href="${p.url}" rel="noopener noreferrer" target="_blank" title="${p.caption}">${fileName(p.url)}</a>` : text(p.url)}`,
  )}`;
}
