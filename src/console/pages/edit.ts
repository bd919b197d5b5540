/**
 * The edit forms of a product, a variation and a catalog (../edits.ts runs them). A form shows
 * the stored values and carries the ETag of what it shows; after a refusal it shows the
 * seller's entries with the service's message at the field, and after a conflict the current
 * values, with what the seller had entered under each field that differs.
 */
import type { EdmValue } from '../../odata/edm';
import { etagOf, type EntityRecord } from '../../odata/entity';
import { EDITS, offerTag, PARENT, STRIKE_THROUGH, type EditField, type EditKind } from '../edits';
import { text } from '../format';
import { html, type Html } from '../html';
import { consoleUrl } from '../layout';
import { expandedList, type ConsoleReads } from '../reads';

export interface EditView {
  readonly csrfToken: string;
  /** What the seller sent (shown instead of the stored values after a refusal). */
  readonly entries?: ReadonlyMap<string, string>;
  readonly problems?: ReadonlyMap<string, string>;
  readonly general?: string;
  /** The entity changed since the seller's page: the current values are shown. */
  readonly conflict?: boolean;
  /** The ETags the refused form carried (kept, so that a change in between is still seen). */
  readonly etag?: string;
  readonly offerEtag?: string;
}

/** Where an edit's entity is shown, and where a saved edit leads. */
export function viewUrlOf(kind: EditKind, record: EntityRecord): string {
  if (kind === 'variation') return consoleUrl(`/products/${String(record.values.ProductId)}`);
  if (kind === 'catalog') return consoleUrl('/catalogs');
  return consoleUrl(`/products/${String(record.values.Id)}`);
}

export function editUrl(kind: EditKind, id: bigint | EdmValue | undefined): string {
  return consoleUrl(`/${kind === 'product' ? 'products' : kind === 'variation' ? 'variations' : 'catalogs'}/${String(id)}/edit`);
}

/** A stored value as a form field holds it ('' for null). */
function fieldText(value: EdmValue | undefined): string {
  return value === null || value === undefined ? '' : String(value);
}

async function strikeThroughOf(reads: ConsoleReads, kind: EditKind, record: EntityRecord): Promise<EntityRecord | undefined> {
  if (kind === 'catalog') return undefined;
  const filter = kind === 'product'
    ? `ProductId eq ${String(record.values.Id)}L and ProductVariationId eq null and Type eq 1`
    : `ProductVariationId eq ${String(record.values.Id)}L and Type eq 1`;
  const [offer] = await reads.list('DiscountOffer', { $filter: filter, $top: '1' });
  return offer;
}

function input(field: EditField, value: string, problem: string | undefined, entered: string | undefined): Html {
  const id = `field-${field.name}`;
  const described = [problem ? `${id}-problem` : '', entered !== undefined ? `${id}-entered` : ''].filter(Boolean).join(' ');
  return html`<div class="field${problem ? ' invalid' : ''}">
<label for="${id}">${field.label}</label>
<input id="${id}" name="${field.name}" value="${value}"${field.inputMode ? html` inputmode="${field.inputMode}"` : ''}${problem ? html` aria-invalid="true"` : ''}${described ? html` aria-describedby="${described}"` : ''}>
${problem ? html`<p class="field-problem" id="${id}-problem">${problem}</p>` : ''}
${entered !== undefined ? html`<p class="muted" id="${id}-entered">You had entered: “${entered}”</p>` : ''}
</div>`;
}

function parentSelect(field: EditField, catalogs: readonly EntityRecord[], self: bigint, value: string, problem: string | undefined): Html {
  const id = `field-${field.name}`;
  const choices = catalogs.filter((c) => c.values.Id !== self);
  return html`<div class="field${problem ? ' invalid' : ''}">
<label for="${id}">${field.label}</label>
<select id="${id}" name="${field.name}"${problem ? html` aria-invalid="true" aria-describedby="${id}-problem"` : ''}>
<option value=""${value === '' ? html` selected` : ''}>None (a top-level catalog)</option>
${choices.map((c) => html`<option value="${String(c.values.Id)}"${String(c.values.Id) === value ? html` selected` : ''}>${text(c.values.Name)}</option>`)}
</select>
${problem ? html`<p class="field-problem" id="${id}-problem">${problem}</p>` : ''}
</div>`;
}

/** The edit page of one entity, or undefined when the seller has none with this id. */
export async function editPage(reads: ConsoleReads, kind: EditKind, id: bigint, view: EditView): Promise<{ title: string; body: Html } | undefined> {
  const def = EDITS[kind];
  const record = await reads.one(def.type, id, kind === 'catalog' ? 'ParentCatalogs' : undefined);
  if (!record) return undefined;
  const offer = await strikeThroughOf(reads, kind, record);
  const stored = new Map<string, string>();
  for (const field of def.fields) {
    if (field.name === STRIKE_THROUGH) stored.set(field.name, fieldText(offer?.values.Price));
    else if (field.name === PARENT) stored.set(field.name, fieldText(expandedList(record, 'ParentCatalogs')[0]?.values.Id));
    else stored.set(field.name, fieldText(record.values[field.name]));
  }
  const catalogs = kind === 'catalog' ? await reads.list('Catalog', { $orderby: 'Name' }) : [];
  // After a conflict the form holds the stored values (and their ETags); otherwise what was sent.
  const shown = (name: string) => (view.conflict || !view.entries?.has(name) ? stored.get(name)! : view.entries.get(name)!);
  const entered = (name: string) => {
    const sent = view.entries?.get(name);
    return view.conflict && sent !== undefined && sent !== stored.get(name) ? sent : undefined;
  };
  const etag = view.conflict || view.etag === undefined ? etagOf(record.version ?? 0n) : view.etag;
  const offerEtag = view.conflict || view.offerEtag === undefined ? offerTag(offer) : view.offerEtag;
  const name = kind === 'product' ? text(record.values.Title) : kind === 'variation' ? text(record.values.Sku) : text(record.values.Name);
  const title = `Edit ${def.what.toLowerCase()} ${name}`;
  const body = html`
<p><a href="${viewUrlOf(kind, record)}">← Back${kind === 'catalog' ? ' to the catalogs' : ' to the product'}</a></p>
${view.conflict ? html`<div class="notice error" role="alert"><p><strong>Nothing was saved.</strong> This ${def.what.toLowerCase()} changed after you opened the page (your connector may have synced it).</p><p>The form now shows the current values; under each field you had changed is what you had entered. Check them and save again.</p></div>` : ''}
${view.general ? html`<p class="notice error" role="alert">${view.general}</p>` : ''}
${view.problems && view.problems.size > 0 ? html`<p class="notice error" role="alert">Nothing was saved: ${view.problems.size === 1 ? 'a field needs' : 'some fields need'} correcting.</p>` : ''}
<form class="stack edit" method="post" action="${editUrl(kind, id)}" novalidate>
<input type="hidden" name="csrf" value="${view.csrfToken}">
<input type="hidden" name="etag" value="${etag}">
${kind !== 'catalog' ? html`<input type="hidden" name="offerEtag" value="${offerEtag}">` : ''}
${def.fields.map((field) =>
  field.name === PARENT
    ? parentSelect(field, catalogs, id, shown(field.name), view.problems?.get(field.name))
    : input(field, shown(field.name), view.problems?.get(field.name), entered(field.name)),
)}
<button type="submit">Save</button>
</form>`;
  return { title, body };
}
