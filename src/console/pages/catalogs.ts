/** The catalogs as a tree (roots first, children under their parents) with their product counts. */
import type { EntityRecord } from '../../odata/entity';
import { text } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';
import { editUrl } from './edit';
import { expandedList, type ConsoleReads } from '../reads';

/** Catalog links may form a cycle (nothing forbids it): a catalog is never drawn inside itself. */
function branch(catalog: EntityRecord, byId: ReadonlyMap<string, EntityRecord>, counts: ReadonlyMap<string, number>, path: ReadonlySet<string>): Html {
  const id = String(catalog.values.Id);
  const children = expandedList(catalog, 'ChildCatalogs')
    .map((c) => byId.get(String(c.values.Id))!)
    .filter((c) => c && !path.has(String(c.values.Id)));
  const inner = new Set(path).add(id);
  const n = counts.get(id) ?? 0;
  return html`<li><a href="${consoleUrl(`/products?catalog=${id}`)}">${text(catalog.values.Name)}</a> <span class="badge">${n} ${n === 1 ? 'product' : 'products'}</span> <a class="edit-link" href="${editUrl('catalog', id)}">Edit<span class="visually-hidden"> catalog ${text(catalog.values.Name)}</span></a>${
    children.length > 0 ? html`<ul>${children.map((c) => branch(c, byId, counts, inner))}</ul>` : ''
  }</li>`;
}

export async function catalogsPage(reads: ConsoleReads): Promise<Html> {
  const catalogs = await reads.list('Catalog', { $orderby: 'Name', $expand: 'ChildCatalogs' });
  if (catalogs.length === 0) return html`<p class="notice">No catalogs yet.</p>`;
  const byId = new Map(catalogs.map((c) => [String(c.values.Id), c]));
  const counts = new Map<string, number>();
  for (const c of catalogs) counts.set(String(c.values.Id), await reads.countRelated('Catalog', 'Products', c.values.Id as bigint));
  const isChild = new Set(catalogs.flatMap((c) => expandedList(c, 'ChildCatalogs').map((x) => String(x.values.Id))));
  // Roots: catalogs no other catalog holds (IsRootLevel is the connector's word, not always kept).
  const roots = catalogs.filter((c) => !isChild.has(String(c.values.Id)));
  return html`<ul class="tree" aria-label="Catalog tree">${roots.map((r) => branch(r, byId, counts, new Set()))}</ul>`;
}
