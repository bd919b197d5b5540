/** The product list: searchable (title, ForeignId, EAN, brand), sortable, paged. */
import { money, text } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';
import { expandedList, stringLiteral, type ConsoleReads } from '../reads';
import { PAGE_ROWS, pageNumber, pager } from './paging';
import { thumbnail } from './pictures';

/** The columns a seller may sort by, and the property each sorts on. */
const SORTS: Readonly<Record<string, readonly [string, string]>> = {
  title: ['Title', 'Title'],
  foreignid: ['ForeignId', 'Sku / ForeignId'],
  price: ['Price', 'Price'],
  stock: ['StockAmount', 'Stock'],
  modified: ['ModificationDate', 'Last change'],
};
const SEARCHED = ['Title', 'ForeignId', 'Ean', 'Brand'];
/** Longer search text than a title holds finds nothing anyway; the limit keeps the $filter small. */
const MAX_SEARCH = 80;

export interface ProductQuery {
  readonly search: string;
  /** Only the products of this catalog (its id), when set. */
  readonly catalog: string | undefined;
  readonly sort: string;
  readonly descending: boolean;
  readonly page: number;
}

export function productQuery(params: URLSearchParams): ProductQuery {
  const sort = params.get('sort') ?? 'title';
  const catalog = params.get('catalog') ?? '';
  return {
    // Control characters cannot be typed into a search box, and PostgreSQL refuses a NUL in text.
    search: (params.get('q') ?? '').replace(/\p{Cc}/gu, '').trim().slice(0, MAX_SEARCH),
    catalog: /^[1-9]\d{0,17}$/.test(catalog) ? catalog : undefined,
    sort: sort in SORTS ? sort : 'title',
    descending: params.get('dir') === 'desc',
    page: pageNumber(params),
  };
}

/** Case-insensitive "contains" over the searched properties. */
function searchFilter(search: string): string | undefined {
  if (search === '') return undefined;
  const literal = stringLiteral(search.toLowerCase());
  return SEARCHED.map((p) => `substringof(${literal}, tolower(${p}))`).join(' or ');
}

function sortHeader(query: ProductQuery, key: string, className = ''): Html {
  const [, label] = SORTS[key]!;
  const active = query.sort === key;
  const params = new URLSearchParams();
  if (query.search) params.set('q', query.search);
  if (query.catalog) params.set('catalog', query.catalog);
  params.set('sort', key);
  if (active && !query.descending) params.set('dir', 'desc');
  const state = active ? (query.descending ? 'descending' : 'ascending') : 'none';
  return html`<th scope="col" class="${className}" aria-sort="${state}"><a href="${consoleUrl(`/products?${params.toString()}`)}">${label}${active ? (query.descending ? ' ▼' : ' ▲') : ''}</a></th>`;
}

/** The page, or undefined when it names a catalog the seller does not have. */
export async function productsPage(reads: ConsoleReads, params: URLSearchParams): Promise<Html | undefined> {
  const query = productQuery(params);
  const filter = searchFilter(query.search);
  const catalog = query.catalog === undefined ? undefined : await reads.one('Catalog', BigInt(query.catalog));
  // A catalog of another account (or none) is missing like any other id.
  if (query.catalog !== undefined && !catalog) return undefined;
  const source = catalog ? reads.navigationSource('Catalog', 'Products', BigInt(query.catalog!)) : undefined;
  const total = await reads.count('Product', filter, source);
  const products = await reads.list('Product', {
    ...(filter ? { $filter: filter } : {}),
    $orderby: `${SORTS[query.sort]![0]} ${query.descending ? 'desc' : 'asc'}`,
    $top: String(PAGE_ROWS),
    $skip: String((query.page - 1) * PAGE_ROWS),
    $expand: 'ProductImages,Catalogs,ProductVariations',
  }, source);
  const keep = new URLSearchParams();
  if (query.search) keep.set('q', query.search);
  if (query.catalog) keep.set('catalog', query.catalog);
  keep.set('sort', query.sort);
  if (query.descending) keep.set('dir', 'desc');
  return html`
<form class="filters" method="get" action="${consoleUrl('/products')}" role="search">
<label>Search title, ForeignId, EAN or brand<input type="search" name="q" value="${query.search}" maxlength="${MAX_SEARCH}"></label>
<input type="hidden" name="sort" value="${query.sort}">
${catalog ? html`<input type="hidden" name="catalog" value="${query.catalog}">` : ''}
${query.descending ? html`<input type="hidden" name="dir" value="desc">` : ''}
<button type="submit">Search</button>
${query.search || catalog ? html`<a href="${consoleUrl('/products')}">Clear</a>` : ''}
</form>
${catalog ? html`<p class="notice" role="status">Only the products of the catalog ${text(catalog.values.Name)}.</p>` : ''}
${products.length === 0 ? html`<p class="notice">${total > 0 ? 'No products on this page.' : query.search ? html`No product matches “${query.search}”.` : 'No products yet.'}</p>` : html`
<div class="table-wrap"><table>
<caption class="visually-hidden">Products${query.search ? html` matching “${query.search}”` : ''}</caption>
<thead><tr><th scope="col"><span class="visually-hidden">Picture</span></th>${sortHeader(query, 'title')}${sortHeader(query, 'foreignid', 'hide-narrow')}${sortHeader(query, 'price', 'num')}${sortHeader(query, 'stock', 'num')}<th scope="col" class="hide-narrow">Catalogs</th></tr></thead>
<tbody>
${products.map((p) => {
  const v = p.values;
  const images = [...expandedList(p, 'ProductImages')].sort((a, b) => Number(a.values.Type) - Number(b.values.Type));
  const variations = expandedList(p, 'ProductVariations');
  const variationStock = variations.reduce((n, x) => n + Number(x.values.StockAmount ?? 0), 0);
  return html`<tr>
<td>${thumbnail(images[0]?.values.ImageUrl, text(v.Title))}</td>
<td><a href="${consoleUrl(`/products/${String(v.Id)}`)}">${text(v.Title)}</a>${variations.length > 0 ? html`<br><span class="muted">${variations.length} variations</span>` : ''}</td>
<td class="hide-narrow">${text(v.ForeignId)}</td>
<td class="num">${money(v.Price)}</td>
<td class="num">${text(v.StockAmount)}${variations.length > 0 ? html`<br><span class="muted">${variationStock} in variations</span>` : ''}</td>
<td class="hide-narrow">${expandedList(p, 'Catalogs').map((c, i) => html`${i > 0 ? ', ' : ''}${text(c.values.Name)}`)}</td>
</tr>`;
})}
</tbody></table></div>`}
${pager(consoleUrl('/products'), keep, query.page, total)}`;
}
