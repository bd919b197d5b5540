/**
 * The console's only static files, kept in the code so the service serves them from memory with
 * no build step and no file lookup: one style sheet, one small script (the placeholder of a picture
 * that fails to load; login and logout are plain forms) and an icon. Their URLs carry a hash of their content, so browsers may
 * keep them for a year and still see a new version at once.
 */
import { createHash } from 'node:crypto';

const CSS = `
:root { --ink: #1d2430; --muted: #5b6576; --line: #d9dee7; --accent: #0b57d0; --bg: #f6f7f9; --ok: #1e7b34; --warn: #9a5b00; --bad: #b3261e; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible { outline: 3px solid #f0b400; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5em 1em; }
.skip:focus { left: .5em; z-index: 10; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
header.top { background: #142033; color: #fff; padding: .6em 1em; display: flex; flex-wrap: wrap; gap: .4em 1.2em; align-items: center; }
header.top .brand { font-weight: 700; margin-right: auto; }
header.top nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .2em .9em; margin: 0; padding: 0; }
header.top nav a { color: #dfe7f5; text-decoration: none; padding: .2em .1em; }
header.top nav a[aria-current="page"] { color: #fff; border-bottom: 2px solid #f0b400; }
header.top form { margin: 0; display: flex; gap: .6em; align-items: center; }
header.top .who { color: #c9d3e3; }
main { max-width: 72em; margin: 0 auto; padding: 1em; }
h1 { font-size: 1.5em; margin: .3em 0 .6em; overflow-wrap: anywhere; }
h2 { font-size: 1.15em; margin: 1.4em 0 .5em; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(10em, 1fr)); gap: .6em; padding: 0; list-style: none; }
.cards li { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .6em .8em; overflow-wrap: anywhere; }
.cards .n { display: block; font-size: 1.4em; font-weight: 700; }
.table-wrap { position: relative; overflow-x: auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .45em .6em; border-bottom: 1px solid var(--line); vertical-align: top; }
td { overflow-wrap: anywhere; }
th { background: #eef1f6; font-weight: 600; white-space: nowrap; }
tbody th { background: transparent; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:last-child td { border-bottom: 0; }
form.filters { display: flex; flex-wrap: wrap; gap: .6em 1em; align-items: flex-end; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .8em; margin-bottom: 1em; }
form.filters label, form.stack label { display: flex; flex-direction: column; font-size: .9em; color: var(--muted); gap: .2em; }
input, select, button { font: inherit; padding: .4em .55em; border: 1px solid #aab3c2; border-radius: 4px; background: #fff; color: var(--ink); }
button { background: var(--accent); border-color: var(--accent); color: #fff; cursor: pointer; }
button.quiet { background: transparent; border-color: #9fb0c9; color: #fff; }
button.danger { background: var(--bad); border-color: var(--bad); }
form.stack { display: flex; flex-direction: column; gap: .8em; max-width: 22em; min-width: 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 1.2em; }
.pic { position: relative; display: inline-flex; flex: none; align-items: center; justify-content: center; vertical-align: middle; overflow: hidden; border-radius: 4px; background: linear-gradient(135deg, #dfe6f2, #c5d0e3); color: #44506a; font-size: .7rem; font-weight: 600; text-align: center; }
.pic.thumb { width: 48px; height: 48px; }
.pic.gallery { width: 160px; height: 160px; font-size: .85rem; margin-bottom: .3em; }
.pic-img { position: absolute; inset: 0; width: 100%; height: 100%; object-fit: contain; background: #fff; }
.pic-missing { display: none; padding: .2em; }
.pic.failed { background: repeating-linear-gradient(135deg, #f3e3e1, #f3e3e1 6px, #f8efee 6px, #f8efee 12px); color: var(--bad); }
.pic.failed .pic-img, .pic.failed .pic-kind { display: none; }
.pic.failed .pic-missing { display: block; }
.pic.thumb.failed .pic-missing { font-size: .6rem; line-height: 1.1; }
.field { display: flex; flex-direction: column; gap: .2em; min-width: 0; }
.field input, .field select { width: 100%; }
.field label { font-size: .9em; color: var(--muted); }
.field p { margin: 0; font-size: .9em; overflow-wrap: anywhere; }
.field.invalid input, .field.invalid select { border-color: var(--bad); border-width: 2px; }
.field-problem { color: var(--bad); font-weight: 600; }
.actions { display: flex; flex-wrap: wrap; gap: .5em 1em; align-items: center; margin: .6em 0; }
.actions form { margin: 0; display: flex; flex-wrap: wrap; gap: .5em; align-items: flex-end; }
label.inline { display: flex; flex-direction: column; font-size: .9em; color: var(--muted); gap: .2em; }
section.integration { margin-bottom: 1.4em; }
section.integration h3 { display: flex; flex-wrap: wrap; gap: .4em; align-items: center; overflow-wrap: anywhere; }
section.integration dl.facts { margin-bottom: .6em; }
ul.tracking, ul.results { list-style: none; padding: 0; }
ul.tracking li { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .2em .8em; margin-bottom: .5em; }
ul.tracking input { max-width: 100%; }
.pictures { display: flex; flex-wrap: wrap; gap: .6em; list-style: none; padding: 0; }
.pictures li { width: calc(160px + .8em + 2px); background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .4em; font-size: .85em; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3em 1em; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .8em; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.pager { display: flex; gap: 1em; align-items: center; margin: .8em 0; }
.badge { display: inline-block; padding: 0 .45em; border-radius: 3px; font-size: .85em; background: #e7ebf2; }
.badge.ok { background: #dcefe0; color: var(--ok); }
.badge.warn { background: #fbecd4; color: var(--warn); }
.badge.bad { background: #f7dcda; color: var(--bad); }
.notice { background: #fff; border-left: 4px solid var(--accent); padding: .7em 1em; margin: 1em 0; }
.notice.error { border-left-color: var(--bad); }
.secret { display: block; font: 1.1em ui-monospace, SFMono-Regular, Menlo, monospace; background: #fffbe6; border: 1px dashed #d6b300; padding: .5em; margin: .4em 0; overflow-wrap: anywhere; }
pre.history { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .8em; white-space: pre-wrap; overflow-wrap: anywhere; }
ul.tree, ul.tree ul { list-style: none; padding-left: 1.2em; }
ul.tree { padding-left: 0; }
ul.tree li { margin: .2em 0; }
.muted { color: var(--muted); }
.addresses { display: grid; grid-template-columns: repeat(auto-fit, minmax(14em, 1fr)); gap: .6em; }
.addresses > div { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 0 .8em .8em; }
.addresses h3 { font-size: 1em; }
address { font-style: normal; }
.login { max-width: 24em; margin: 3em auto; }
@media (max-width: 40em) {
  main { padding: .6em; }
  th, td { padding: .35em .4em; }
  .hide-narrow { display: none; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: .4em; }
}
`;

/**
 * The one script: a picture that fails to load shows its placeholder. Everything else works
 * without it (login and logout are plain forms).
 */
const JS = `
'use strict';
(function () {
  // A picture that fails to load shows its tile's "not available" (CSS hides the broken image).
  // Errors before this script ran are found by the check below, later ones by the listener.
  function pictureFailed(img) {
    var frame = img.closest('.pic');
    if (frame) frame.classList.add('failed');
  }
  document.addEventListener('error', function (event) {
    var target = event.target;
    if (target && target.classList && target.classList.contains('pic-img')) pictureFailed(target);
  }, true);
  Array.prototype.forEach.call(document.querySelectorAll('img.pic-img'), function (img) {
    if (img.complete && img.naturalWidth === 0) pictureFailed(img);
  });
})();
`;

/** A small mark for the browser tab (browsers ask for an icon; without one they log a 404). */
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#142033"/><path d="M8 11h16v3H8zm0 6h16v3H8z" fill="#f0b400"/></svg>`;

export interface Asset {
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
}

function asset(name: string, extension: string, contentType: string, text: string): Asset {
  const body = Buffer.from(text.trimStart(), 'utf8');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `/assets/${name}.${hash}.${extension}`, contentType, body };
}

export const STYLE = asset('console', 'css', 'text/css; charset=utf-8', CSS);
export const SCRIPT = asset('console', 'js', 'text/javascript; charset=utf-8', JS);
export const FAVICON = asset('icon', 'svg', 'image/svg+xml', ICON);
export const ASSETS: ReadonlyMap<string, Asset> = new Map([STYLE, SCRIPT, FAVICON].map((a) => [a.path, a]));
