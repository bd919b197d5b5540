/**
 * What the .NET WCF Data Services client (System.Data.Services.Client, the generated classes of
 * "Add Service Reference") puts on the wire, rebuilt byte for byte in the shape it writes, and how
 * it reads an entry back.
 *
 * The client holds one object per entity with every property of its generated class, in the
 * order of the type in $metadata, and serializes all of them on insert and on update: the key as
 * 0 on insert, unset DateTime properties as DateTime.MinValue (0001-01-01T00:00:00), and on update
 * the whole object as it last read it, read-only properties included, even when the service has
 * changed them since. Atom entries carry every value inside content/m:properties, with m:type on
 * every non-String value and m:null="true" on nulls; an update carries the entity's URI as id.
 *
 * A client object here is property name -> the text XmlConvert writes for the value (null for
 * null), which is also the text it was read from: .NET round-trips what it reads.
 */
import assert from 'node:assert/strict';
import type { EntityTypeDef } from '../../src/model/types';
import { model } from '../../src/model/catalogue-model';
import { ATOM, D, M, SCHEME } from '../support/spec';
import { childElements, parseXml } from './datajs';

export type ClientEntity = Map<string, string | null>;

/** The headers the client sends with an Atom write (V2 protocol, as its default). */
export const WCF_ATOM_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'application/atom+xml',
  Accept: 'application/atom+xml,application/xml',
  DataServiceVersion: '1.0;NetFx',
  MaxDataServiceVersion: '2.0;NetFx',
};

export const JSON_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'application/json',
  Accept: 'application/json',
  DataServiceVersion: '1.0',
  MaxDataServiceVersion: '2.0',
};

/** DateTime.MinValue as XmlConvert writes it: the client's value of a date it never set. */
export const MIN_DATE = '0001-01-01T00:00:00';

export function typeOfSet(set: string): EntityTypeDef {
  const type = model.typeBySetName.get(set);
  assert.ok(type, set);
  return type;
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The Atom entry the client writes for `entity`: category first, empty title and author, updated,
 * id (empty on insert, the entity URI on update), then content with every property in the type's
 * order. Properties the object lacks are written as the CLR default of their type, as the
 * generated class holds them (0, false, DateTime.MinValue, null).
 */
export function wcfAtomEntry(type: EntityTypeDef, entity: ClientEntity, id = '', links: readonly WcfBinding[] = []): string {
  const properties = type.properties.map((p) => {
    const value = entity.has(p.name) ? entity.get(p.name)! : clrDefault(p.type, p.nullable);
    const typeAttr = p.type === 'Edm.String' ? '' : ` m:type="${p.type}"`;
    return value === null ? `      <d:${p.name}${typeAttr} m:null="true" />` : `      <d:${p.name}${typeAttr}>${escapeXml(value)}</d:${p.name}>`;
  });
  return [
    '<?xml version="1.0" encoding="utf-8" standalone="yes"?>',
    `<entry xmlns:d="${D}" xmlns:m="${M}" xmlns="${ATOM}">`,
    `  <category scheme="${SCHEME}" term="${model.namespace}.${type.name}" />`,
    '  <title />',
    '  <author>',
    '    <name />',
    '  </author>',
    '  <updated>2026-11-24T12:00:00.1234567Z</updated>',
    id === '' ? '  <id />' : `  <id>${escapeXml(id)}</id>`,
    ...links.map((l) => `  <link href="${escapeXml(l.href)}" rel="${D}/related/${l.navigation}" type="application/atom+xml;type=${l.many ? 'feed' : 'entry'}" />`),
    '  <content type="application/xml">',
    '    <m:properties>',
    ...properties,
    '    </m:properties>',
    '  </content>',
    '</entry>',
  ].join('\r\n');
}

/**
 * A binding the client writes into an entry: SetLink on an object it adds names the other end by
 * its edit link, or inside a changeset by `$n` when that end is added in the same changeset.
 */
export interface WcfBinding {
  readonly navigation: string;
  readonly href: string;
  readonly many?: boolean;
}

/** The body of AddLink and SetLink ($links POST and PUT): a uri element in the METADATA namespace. */
export function wcfLinkBody(uri: string): string {
  return `<?xml version="1.0" encoding="utf-8" standalone="yes"?><uri xmlns="${M}">${escapeXml(uri)}</uri>`;
}

function clrDefault(type: string, nullable: boolean): string | null {
  if (nullable) return null;
  switch (type) {
    case 'Edm.Int64':
    case 'Edm.Int32':
    case 'Edm.Decimal':
      return '0';
    case 'Edm.Boolean':
      return 'false';
    case 'Edm.DateTime':
      return MIN_DATE;
    default:
      return null;
  }
}

/**
 * The same object as a JSON verbose entity, every property in the type's order: Int64 and Decimal
 * as strings, Int32 as numbers, DateTime as "\/Date(ms)\/" (or, with `isoDates`, as the ISO text
 * datajs-style writers send).
 */
export function wcfJsonEntity(type: EntityTypeDef, entity: ClientEntity, isoDates = false): string {
  const members = type.properties.map((p) => {
    const text = entity.has(p.name) ? entity.get(p.name)! : clrDefault(p.type, p.nullable);
    let json: string;
    if (text === null) json = 'null';
    else if (p.type === 'Edm.Int32' || p.type === 'Edm.Boolean') json = text;
    else if (p.type === 'Edm.DateTime') json = isoDates ? JSON.stringify(text) : `"\\/Date(${dateMs(text)})\\/"`;
    else json = JSON.stringify(text);
    return `${JSON.stringify(p.name)}:${json}`;
  });
  return `{"__metadata":{"type":"${model.namespace}.${type.name}"},${members.join(',')}}`;
}

/** UTC ms of an XmlConvert date text (no offset: UTC, as the service means it). */
export function dateMs(text: string): number {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,7}))?(Z|[+-]\d\d:\d\d)?$/.exec(text);
  assert.ok(m, `an xs:dateTime: ${text}`);
  const date = new Date(0);
  date.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  date.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), Number((m[7] ?? '').padEnd(3, '0').slice(0, 3)));
  const zone = m[8] ?? 'Z';
  const offset = zone === 'Z' ? 0 : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  return date.getTime() - offset * 60_000;
}

/** The text XmlConvert writes for a UTC DateTime read from "\/Date(ms)\/". */
function isoOfMs(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
}

/** An Atom entry read as the client's materializer reads it: m:properties, m:null, the texts. */
export function readAtomEntity(type: EntityTypeDef, xml: string): ClientEntity {
  const entry = parseXml(xml).documentElement;
  assert.equal(entry.localName, 'entry');
  const content = childElements(entry, ATOM, 'content')[0];
  assert.ok(content, 'an entry with content');
  const properties = childElements(content, M, 'properties')[0];
  assert.ok(properties, 'content with m:properties');
  const entity: ClientEntity = new Map();
  for (const element of Array.from(properties.children)) {
    assert.equal(element.namespaceURI, D);
    entity.set(element.localName, element.getAttributeNS(M, 'null') === 'true' ? null : (element.textContent ?? ''));
  }
  assert.deepEqual([...entity.keys()], type.properties.map((p) => p.name), 'every property, in the order of the type');
  return entity;
}

/** A JSON verbose entity ({"d":{…}}) read into the same texts. */
export function readJsonEntity(type: EntityTypeDef, json: string): ClientEntity {
  const d = (JSON.parse(json) as { d: Record<string, unknown> }).d;
  const entity: ClientEntity = new Map();
  for (const p of type.properties) {
    assert.ok(p.name in d, `the property ${p.name}`);
    const value = d[p.name];
    if (value === null) entity.set(p.name, null);
    else if (p.type === 'Edm.DateTime') {
      const m = /^\/Date\((-?\d+)\)\/$/.exec(String(value));
      assert.ok(m, `${p.name} as /Date(ms)/: ${String(value)}`);
      entity.set(p.name, isoOfMs(Number(m[1])));
    } else entity.set(p.name, String(value));
  }
  return entity;
}
