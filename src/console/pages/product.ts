/** One product: its facts, pictures, specifics, variations (with theirs), catalogs and listings. */
import type { EntityRecord } from '../../odata/entity';
import { dateTime, money, text, yesNo } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';
import { expandedList, type ConsoleReads } from '../reads';
import { editUrl } from './edit';
import { pictureLinks, pictureList } from './pictures';

const EXPAND = [
  'ProductImages',
  'ProductSpecifics',
  'ProductVariations/ProductVariationSpecifics',
  'ProductVariations/ProductVariationImages',
  'Catalogs',
  'Listings',
  'DiscountOffers',
].join(',');

const byNumber = (name: string) => (a: EntityRecord, b: EntityRecord) => Number(a.values[name]) - Number(b.values[name]);

function facts(rows: readonly (readonly [string, Html | string])[]): Html {
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

function specifics(list: readonly EntityRecord[]): Html {
  if (list.length === 0) return html`<p class="muted">None.</p>`;
  return facts(list.map((s) => [text(s.values.Name), text(s.values.Value)] as const));
}

/** Specifics as "Name: value" text, for a table cell. */
function specificsText(list: readonly EntityRecord[]): string {
  return list.length === 0 ? '—' : list.map((s) => `${text(s.values.Name)}: ${text(s.values.Value)}`).join(', ');
}

/** The variations as one table: a row each, headed by its Sku, with its specifics and pictures. */
function variationTable(variations: readonly EntityRecord[]): Html {
  return html`<div class="table-wrap"><table>
<caption class="visually-hidden">Variations</caption>
<thead><tr><th scope="col">Sku</th><th scope="col">Specifics</th><th scope="col" class="num">Price</th><th scope="col" class="num">Stock</th><th scope="col" class="hide-narrow">EAN</th><th scope="col">Pictures</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>
${variations.map((variation) => {
  const v = variation.values;
  const pictures = [...expandedList(variation, 'ProductVariationImages')].sort(byNumber('ImagePosition'));
  return html`<tr>
<th scope="row">${text(v.Sku)}</th>
<td>${specificsText(expandedList(variation, 'ProductVariationSpecifics'))}</td>
<td class="num">${money(v.Price)}</td>
<td class="num">${text(v.StockAmount)}</td>
<td class="hide-narrow">${text(v.Ean)}</td>
<td>${pictureLinks(pictures.map((p) => ({ url: p.values.ImageUrl, caption: `Position ${text(p.values.ImagePosition)}` })))}</td>
<td><a href="${editUrl('variation', v.Id)}">Edit<span class="visually-hidden"> variation ${text(v.Sku)}</span></a></td>
</tr>`;
})}
</tbody></table></div>`;
}

export async function productPage(reads: ConsoleReads, id: bigint): Promise<{ title: string; body: Html } | undefined> {
  const product = await reads.one('Product', id, EXPAND);
  if (!product) return undefined;
  const v = product.values;
  const images = [...expandedList(product, 'ProductImages')].sort(byNumber('Type'));
  const variations = [...expandedList(product, 'ProductVariations')].sort(byNumber('Id'));
  const listings = expandedList(product, 'Listings');
  const offers = expandedList(product, 'DiscountOffers');
  const body = html`
<p class="actions"><a href="${consoleUrl('/products')}">← All products</a> <a href="${editUrl('product', v.Id)}">Edit price, stock, title…</a></p>
${facts([
  ['Id', String(v.Id)],
  ['ForeignId', text(v.ForeignId)],
  ['Price', money(v.Price)],
  ['Stock', text(v.StockAmount)],
  ['EAN', text(v.Ean)],
  ['Brand', text(v.Brand)],
  ['MPN', text(v.Mpn)],
  ['Automatch disabled', yesNo(v.DisableAutomatch)],
  ['Created', dateTime(v.CreationDate)],
  ['Last change', dateTime(v.ModificationDate)],
])}
<h2>Pictures</h2>
${pictureList(images.map((p) => ({ url: p.values.ImageUrl, caption: `Type ${text(p.values.Type)}` })), 'Pictures of the product')}
<h2>Specifics</h2>
${specifics(expandedList(product, 'ProductSpecifics'))}
<h2>Variations (${variations.length})</h2>
${variations.length === 0 ? html`<p class="muted">This product has no variations.</p>` : variationTable(variations)}
<h2>Catalogs</h2>
${expandedList(product, 'Catalogs').length === 0 ? html`<p class="muted">In no catalog.</p>` : html`<ul>${expandedList(product, 'Catalogs').map((c) => html`<li>${text(c.values.Name)}</li>`)}</ul>`}
${offers.length > 0 ? html`<h2>Strike-through prices</h2><ul>${offers.map((o) => html`<li>${money(o.values.Price)} (type ${text(o.values.Type)}${o.values.ProductVariationId !== null ? html`, variation ${text(variations.find((x) => x.values.Id === o.values.ProductVariationId)?.values.Sku)}` : ''})</li>`)}</ul>` : ''}
<h2>Listings</h2>
${listings.length === 0 ? html`<p class="muted">Not listed.</p>` : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Item</th><th scope="col">Status</th><th scope="col">Started</th><th scope="col" class="num">Price</th><th scope="col" class="num">Sold</th></tr></thead><tbody>
${listings.map((l) => html`<tr><td>${text(l.values.PlatformItemId)}</td><td>${l.values.Status === 1 ? html`<span class="badge ok">active</span>` : html`<span class="badge">ended</span>`}</td><td>${dateTime(l.values.StartDate)}</td><td class="num">${money(l.values.Price)}</td><td class="num">${text(l.values.QuantitySold)} of ${text(l.values.Quantity)}</td></tr>`)}
</tbody></table></div>`}`;
  return { title: text(v.Title), body };
}
