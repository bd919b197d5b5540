/**
 * Request bodies for entities, as clients send them: an Atom entry with its category, the empty
 * title, author, updated and id that generated clients write, and one `d:` element per property.
 * The one builder the tests use for Atom writes.
 */
import { model } from '../../src/model/catalogue-model';
import type { EntityTypeDef } from '../../src/model/types';
import { ATOM, D, M, SCHEME } from './spec';

export type EntryValue = string | number | bigint | boolean | null;

export interface EntryOptions {
  /** Write m:type on every property that is not a String, as datajs and the .NET client do. */
  readonly typed?: boolean;
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * An Atom entry of `type` (or the type of that name) holding `values` as element text; null is
 * `m:null="true"`. Names that are not properties of the type are written all the same (untyped),
 * so that a test can send what the service must refuse.
 */
export function atomEntry(type: EntityTypeDef | string, values: Readonly<Record<string, EntryValue>>, options: EntryOptions = {}): string {
  const entityType = typeof type === 'string' ? model.typeByName.get(type) : type;
  if (!entityType) throw new Error(`atomEntry: no entity type ${String(type)}`);
  const properties = Object.entries(values)
    .map(([name, value]) => {
      const edm = entityType.properties.find((p) => p.name === name)?.type;
      const typeAttribute = options.typed && edm && edm !== 'Edm.String' ? ` m:type="${edm}"` : '';
      return value === null ? `<d:${name}${typeAttribute} m:null="true" />` : `<d:${name}${typeAttribute}>${escapeXml(String(value))}</d:${name}>`;
    })
    .join('');
  return (
    '<?xml version="1.0" encoding="utf-8" standalone="yes"?>' +
    `<entry xmlns="${ATOM}" xmlns:d="${D}" xmlns:m="${M}">` +
    `<category term="${model.namespace}.${entityType.name}" scheme="${SCHEME}" />` +
    '<title /><author><name /></author><updated>2015-06-29T00:00:00Z</updated><id />' +
    `<content type="application/xml"><m:properties>${properties}</m:properties></content></entry>`
  );
}
