/**
 * Unit tests of the Atom request reader (src/odata/atom/reader.ts): entries as the .NET client and
 * datajs write them (one of them produced by datajs's own Atom writer), properties typed from the
 * model, navigation bindings, and every way a body is refused, hostile XML first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../src/model/catalogue-model';
import type { EntityTypeDef } from '../../src/model/types';
import { MAX_XML_DEPTH, readAtomEntry, readXmlLink } from '../../src/odata/atom/reader';
import { atomEntryDocument } from '../../src/odata/atom/writer';
import type { EntityPayload, EntityRecord } from '../../src/odata/entity';
import { ODataError } from '../../src/odata/errors';
import { loadDatajs } from '../clients/datajs';
import { ATOM, D, M, RELATED, SCHEME } from '../support/spec';
import { entityType as typeOf } from '../support/model-types';

const ROOT = 'http://host/publicapi/v1/api.svc';
const NS = `xmlns="${ATOM}" xmlns:d="${D}" xmlns:m="${M}"`;

const ProductVariation = typeOf('ProductVariation');
const ProductSpecific = typeOf('ProductSpecific');
const Catalog = typeOf('Catalog');
const SalesOrder = typeOf('SalesOrder');

const read = (type: EntityTypeDef, xml: string | Buffer): EntityPayload =>
  readAtomEntry(type, typeof xml === 'string' ? Buffer.from(xml, 'utf8') : xml);

/** An entry with the given m:properties content (inside atom:content). */
const entry = (props: string, extra = '') =>
  `<?xml version="1.0" encoding="utf-8"?><entry ${NS}><content type="application/xml"><m:properties>${props}</m:properties></content>${extra}</entry>`;

/** Asserts that `fn` throws an ODataError 400 whose message matches `message`; returns the error. */
function rejects400(fn: () => unknown, message: RegExp): ODataError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ODataError, `expected an ODataError, got ${caught instanceof Error ? `${caught.name}: ${caught.message}` : String(caught)}`);
  assert.equal(caught.status, 400);
  assert.match(caught.message, message);
  return caught;
}

const values = (p: EntityPayload) => Object.fromEntries(p.values);
const bindings = (p: EntityPayload) => Object.fromEntries(p.bindings);

// ---------------------------------------------------------------------------------------------
// what clients send

test('a .NET-client entry: category first, empty id, m:type on values, a link binding', () => {
  const xml = `<?xml version="1.0" encoding="utf-8" standalone="yes"?>
<entry xmlns:d="${D}" xmlns:m="${M}" xmlns="${ATOM}">
  <category scheme="${SCHEME}" term="CatalogueService.ProductVariation" />
  <title />
  <author>
    <name />
  </author>
  <updated>2013-09-16T07:21:12.1234567Z</updated>
  <id />
  <link href="${ROOT}/Products(2L)" rel="${RELATED}Product" type="application/atom+xml;type=entry" />
  <content type="application/xml">
    <m:properties>
      <d:Ean m:null="true" />
      <d:ExternalProductId m:type="Edm.Int64" m:null="true" />
      <d:Price m:type="Edm.Decimal">80.000000</d:Price>
      <d:ProductId m:type="Edm.Int64">2</d:ProductId>
      <d:Sku>SKU &amp; &#x31;&lt;</d:Sku>
      <d:StockAmount m:type="Edm.Int32">5</d:StockAmount>
      <d:CreationDate m:type="Edm.DateTime">2013-09-16T07:21:12.123</d:CreationDate>
    </m:properties>
  </content>
</entry>`;
  const p = read(ProductVariation, xml);
  // CreationDate is read-only: left out unread.
  assert.deepEqual([...p.values.keys()], ['Ean', 'ExternalProductId', 'Price', 'ProductId', 'Sku', 'StockAmount']);
  assert.deepEqual(values(p), {
    Ean: null,
    ExternalProductId: null,
    Price: '80',
    ProductId: 2n,
    Sku: 'SKU & 1<',
    StockAmount: 5,
  });
  assert.deepEqual(bindings(p), { Product: [`${ROOT}/Products(2L)`] });
});

test('a datajs-style entry: author, title, content, category, link with an id-only m:inline entry', () => {
  const xml =
    `<entry ${NS}><author><name/></author><title/><content type="application/xml"><m:properties>` +
    `<d:ProductId>2</d:ProductId><d:Name>Brand</d:Name><d:Value>Acme|Other</d:Value><d:Type m:null="true"/>` +
    `</m:properties></content><category term="CatalogueService.ProductSpecific" scheme="${SCHEME}"/>` +
    `<link rel="${RELATED}Product" href="Products(2L)" type="application/atom+xml;type=entry"><m:inline><entry>` +
    `<author><name/></author><title/><content type="application/xml"><m:properties/></content><id>Products(2L)</id>` +
    `</entry></m:inline></link></entry>`;
  const p = read(ProductSpecific, xml);
  assert.deepEqual(values(p), { ProductId: 2n, Name: 'Brand', Value: 'Acme|Other', Type: null });
  assert.deepEqual(bindings(p), { Product: ['Products(2L)'] }, 'one binding, not one per href and id');
});

test("what datajs's own Atom writer produces is read, incl. an inline feed of bindings", () => {
  const request = {
    requestUri: `${ROOT}/ProductVariations`,
    method: 'POST',
    headers: {} as Record<string, string>,
    data: {
      __metadata: { type: 'CatalogueService.ProductVariation' },
      ProductId: '2',
      Price: '12.5',
      StockAmount: 5,
      Sku: ' padded ',
      Ean: null,
      CreationDate: new Date(Date.UTC(2013, 8, 16, 7, 21, 12)),
      Product: { __metadata: { uri: 'Products(2L)' } },
      ProductVariationImages: [{ __metadata: { uri: 'ProductVariationImages(3L)' } }, { __metadata: { uri: `${ROOT}/ProductVariationImages(4L)` } }],
    },
  } as { requestUri: string; method: string; headers: Record<string, string>; data: unknown; body?: string };
  assert.equal(loadDatajs().atomHandler.write(request as never, {}), true);
  assert.equal(typeof request.body, 'string');
  const p = read(ProductVariation, request.body as string);
  assert.deepEqual(values(p), {
    ProductId: 2n,
    Price: '12.5',
    StockAmount: 5,
    Sku: ' padded ',
    Ean: null,
  });
  assert.deepEqual(bindings(p), {
    Product: ['Products(2L)'],
    ProductVariationImages: ['ProductVariationImages(3L)', `${ROOT}/ProductVariationImages(4L)`],
  });
});

test('properties directly under entry, a BOM, m:null="false", CDATA and a comment', () => {
  const xml =
    `\uFEFF<?xml version="1.0" encoding="utf-8"?><!-- sent by a connector --><entry ${NS}><id/><m:properties>` +
    `<d:Name><![CDATA[a <b> & c]]></d:Name><d:IsRootLevel m:type="Edm.Boolean" m:null="false">1</d:IsRootLevel>` +
    `<d:ForeignId m:null="true">ignored</d:ForeignId><d:PaymentProfileId m:type="Edm.Int64"> 42 </d:PaymentProfileId>` +
    `<foreign:x xmlns:foreign="urn:other">anything</foreign:x>` +
    `</m:properties></entry>`;
  const p = read(Catalog, xml);
  // PaymentProfileId is read-only (set by SetCatalogProfile): ignored.
  assert.deepEqual(values(p), { Name: 'a <b> & c', IsRootLevel: true, ForeignId: null });
  assert.equal(p.bindings.size, 0);
});

test('string whitespace is kept; other types are read from the model, and an m:type must agree with it', () => {
  const p = read(
    SalesOrder,
    entry(`<d:ForeignOrderId xml:space="preserve">  100000123 </d:ForeignOrderId><d:PaidAmount m:type="Edm.Decimal">59.90</d:PaidAmount><d:PaidDate>2013-09-16T07:21:12Z</d:PaidDate><d:ShippingStatus m:type="Edm.Int32">1</d:ShippingStatus>`),
  );
  assert.deepEqual(values(p), { ForeignOrderId: '  100000123 ', PaidAmount: '59.9', PaidDate: Date.UTC(2013, 8, 16, 7, 21, 12), ShippingStatus: 1 });
  assert.throws(
    () => read(SalesOrder, entry(`<d:PaidAmount m:type="Edm.String">59.90</d:PaidAmount>`)),
    (e: unknown) => e instanceof ODataError && e.status === 400 && /'PaidAmount'.*is of type 'Edm.Decimal', but the entry gives m:type 'Edm.String'/.test(e.message),
  );
});

test('the writer output reads back to the same values, and deferred links are reported as sent', () => {
  const rec: EntityRecord = {
    type: ProductSpecific,
    values: { Id: 5n, ProductId: 2n, Name: `<&>"'`, Value: ' x\r\n', Type: null, CreationDate: 0, ModificationDate: 1700000000123 },
  };
  const p = read(ProductSpecific, atomEntryDocument({ serviceRoot: ROOT, version: 1, updated: '2024-05-01T10:00:00Z' }, rec));
  // All but the key and the read-only dates, which a write ignores.
  const { Id: _id, CreationDate: _created, ModificationDate: _modified, ...writable } = rec.values;
  assert.deepEqual(values(p), writable);
  // The response carries xml:base, so the deferred link's href comes back absolute.
  assert.deepEqual(bindings(p), { Product: [`${ROOT}/ProductSpecifics(5L)/Product`] });
});

test('link hrefs are resolved against xml:base; a link binds the navigation its rel names', () => {
  const xml =
    `<entry ${NS} xml:base="http://other/svc/"><link rel="${RELATED}ProductVariationPictures" href="ProductVariationImages(9L)"/>` +
    `<link rel="edit" href="ProductVariations(1L)"/><link rel="self" href="x"/>` +
    `<link rel="${RELATED}Product" href="Products(1L)"><m:inline/></link>` +
    `<link rel="${RELATED}DiscountOffers" href=""/>` +
    `<content type="application/xml"><m:properties/></content></entry>`;
  const p = read(ProductVariation, xml);
  assert.equal(p.values.size, 0);
  // An empty m:inline (a null entry) and an empty href bind nothing.
  assert.deepEqual(bindings(p), { ProductVariationPictures: ['http://other/svc/ProductVariationImages(9L)'] });
});

// ---------------------------------------------------------------------------------------------
// hostile XML

test('any DOCTYPE is refused: XXE, billion laughs, two DOCTYPEs, plain, lower case', () => {
  const xxe = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><entry ${NS}><m:properties><d:Name>&e;</d:Name></m:properties></entry>`;
  const laughs =
    `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">` +
    Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`).join('') +
    `]><entry ${NS}><m:properties><d:Name>&lol9;</d:Name></m:properties></entry>`;
  const two = `<!DOCTYPE a><!DOCTYPE b><entry ${NS}/>`;
  const plain = `<!DOCTYPE entry><entry ${NS}/>`;
  const lower = `<!doctype entry><entry ${NS}/>`;
  for (const body of [xxe, laughs, two, plain, lower]) {
    rejects400(() => read(Catalog, body), /^XML with a DOCTYPE is not accepted\.$/);
    rejects400(() => readXmlLink(Buffer.from(body)), /^XML with a DOCTYPE is not accepted\.$/);
  }
});

test('entity references other than the predefined and numeric ones are refused', () => {
  rejects400(() => read(Catalog, entry('<d:Name>&nbsp;</d:Name>')), /not well-formed XML: .*undefined entity/);
  rejects400(() => read(Catalog, entry('<d:Name>&#0;</d:Name>')), /not well-formed XML/);
  assert.equal(read(Catalog, entry('<d:Name>&lt;&gt;&amp;&quot;&apos;&#65;&#x42;</d:Name>')).values.get('Name'), `<>&"'AB`);
});

test('processing instructions other than the XML declaration are refused', () => {
  rejects400(() => read(Catalog, `<?xml version="1.0"?><?xml-stylesheet href="x"?><entry ${NS}/>`), /Processing instructions are not accepted \('xml-stylesheet'\)/);
  rejects400(() => read(Catalog, entry('<d:Name>a<?php echo 1 ?></d:Name>')), /Processing instructions are not accepted/);
});

test(`elements nest at most ${MAX_XML_DEPTH} levels`, () => {
  assert.equal(MAX_XML_DEPTH, 64);
  const nest = (levels: number) => `<entry ${NS}>${'<x:a xmlns:x="urn:x">'.repeat(levels - 1)}${'</x:a>'.repeat(levels - 1)}</entry>`;
  assert.equal(read(Catalog, nest(64)).values.size, 0, '64 levels are fine');
  rejects400(() => read(Catalog, nest(65)), /nested deeper than 64 levels/);
});

test('100000-deep nesting answers 400 quickly, without a stack overflow', () => {
  const body = `<entry ${NS}>${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</entry>`;
  const started = process.hrtime.bigint();
  rejects400(() => read(Catalog, body), /nested deeper than 64 levels/);
  rejects400(() => readXmlLink(Buffer.from(`<uri xmlns="${D}">${'<a>'.repeat(100_000)}`)), /uri element must hold only text|nested/);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  assert.ok(ms < 1000, `took ${ms} ms`);
});

test('malformed XML is a 400 with a short message that does not echo the body', () => {
  const secret = 'S'.repeat(500);
  const e = rejects400(() => read(Catalog, `<entry ${NS}><m:properties><d:Name>${secret}</d:Nam></m:properties></entry>`), /^The request body is not well-formed XML: /);
  assert.ok(e.message.length < 160, e.message);
  assert.ok(!e.message.includes('SSSSSSSSSS'));
  rejects400(() => read(Catalog, `<entry ${NS}><x:y/></entry>`), /not well-formed XML: .*unbound namespace prefix/);
  rejects400(() => read(Catalog, `<entry ${NS}>`), /not well-formed XML/);
  rejects400(() => read(Catalog, `<entry ${NS}/><entry ${NS}/>`), /not well-formed XML/);
  rejects400(() => read(Catalog, `text`), /not well-formed XML/);
  rejects400(() => read(Catalog, ''), /request body is empty/);
  rejects400(() => read(Catalog, ' \r\n'), /request body is empty/);
  rejects400(() => read(Catalog, Buffer.from([0x3c, 0x65, 0xff, 0xfe, 0x3e])), /not valid UTF-8/);
});

// ---------------------------------------------------------------------------------------------
// structure and values

test('the root must be an Atom entry', () => {
  rejects400(() => read(Catalog, `<feed xmlns="${ATOM}"/>`), /must be an Atom entry, not 'feed'/);
  rejects400(() => read(Catalog, `<entry/>`), /must be an Atom entry/);
  rejects400(() => read(Catalog, `<d:Name xmlns:d="${D}">x</d:Name>`), /must be an Atom entry, not 'd:Name'/);
});

test('an unknown property names itself and the qualified type', () => {
  rejects400(() => read(ProductSpecific, entry('<d:Colour>red</d:Colour>')), /^The property 'Colour' does not exist on type 'CatalogueService\.ProductSpecific'\.$/);
  // A navigation is not a property either.
  rejects400(() => read(ProductSpecific, entry('<d:Product>1</d:Product>')), /^The property 'Product' does not exist/);
});

test('a bad value names the property and its type', () => {
  rejects400(() => read(ProductVariation, entry('<d:Price m:type="Edm.Decimal">12,5</d:Price>')), /property 'Price' \(Edm\.Decimal\): '12,5' is not a Decimal/);
  rejects400(() => read(ProductVariation, entry('<d:StockAmount>3000000000</d:StockAmount>')), /property 'StockAmount' \(Edm\.Int32\).*outside the Int32 range/);
  rejects400(() => read(ProductVariation, entry('<d:ProductId>2L</d:ProductId>')), /property 'ProductId' \(Edm\.Int64\)/);
  rejects400(() => read(Catalog, entry('<d:IsRootLevel>yes</d:IsRootLevel>')), /property 'IsRootLevel' \(Edm\.Boolean\)/);
  rejects400(() => read(SalesOrder, entry('<d:PaidDate>2013-02-30T00:00:00</d:PaidDate>')), /property 'PaidDate' \(Edm\.DateTime\)/);
  rejects400(() => read(SalesOrder, entry('<d:PaidDate>0000-12-31T00:00:00</d:PaidDate>')), /property 'PaidDate'/);
});

test('a property holding elements, a repeated property and an unknown navigation are refused', () => {
  rejects400(() => read(ProductSpecific, entry('<d:Name><d:First>a</d:First></d:Name>')), /property 'Name' must hold a Edm\.String value, not XML elements/);
  rejects400(() => read(ProductSpecific, entry('<d:Name>a</d:Name><d:Name>b</d:Name>')), /property 'Name' appears more than once/);
  rejects400(() => read(ProductSpecific, entry('', `<link rel="${RELATED}Catalogs" href="Catalogs(1L)"/>`)), /navigation property 'Catalogs' does not exist on type 'CatalogueService\.ProductSpecific'/);
});

test('deep insert: an inline entry with properties or links is read as a new entity of the navigation\'s type', () => {
  const inline = (content: string) => entry('', `<link rel="${RELATED}Product" href=""><m:inline>${content}</m:inline></link>`);
  const titled = read(ProductSpecific, inline(`<entry><id>Products(2L)</id><content type="application/xml"><m:properties><d:Title>New</d:Title></m:properties></content></entry>`));
  assert.equal(titled.inline!.get('Product')![0]!.values.get('Title'), 'New');
  assert.equal(titled.bindings.size, 0);
  assert.equal(read(ProductSpecific, inline(`<entry><m:properties><d:Title>New</d:Title></m:properties></entry>`)).inline!.get('Product')!.length, 1);
  // Without an id and without content: a new entity with no values (the write then names what is missing).
  assert.equal(read(ProductSpecific, inline(`<entry><title/></entry>`)).inline!.get('Product')!.length, 1);
  // A nested feed: ids alone bind, entries with content are created; nested links go one level deeper.
  const variation = read(
    ProductVariation,
    entry('', `<link rel="${RELATED}ProductVariationSpecifics" href=""><m:inline><feed><entry><id>ProductVariationSpecifics(1L)</id></entry><entry><m:properties><d:Name>x</d:Name></m:properties></entry></feed></m:inline></link>`),
  );
  assert.deepEqual(bindings(variation), { ProductVariationSpecifics: ['ProductVariationSpecifics(1L)'] });
  assert.equal(variation.inline!.get('ProductVariationSpecifics')![0]!.values.get('Name'), 'x');
  rejects400(() => read(ProductSpecific, inline(`<entry><m:properties><d:Sku>x</d:Sku></m:properties></entry>`)), /property 'Sku' does not exist on type 'CatalogueService\.Product'/);
  // id-only entries with category and an m:etag are still bindings
  const ok = read(ProductSpecific, inline(`<entry m:etag="W/&quot;1&quot;"><category term="CatalogueService.Product" scheme="${SCHEME}"/><id> Products(2L) </id><content type="application/xml"><m:properties/></content></entry>`));
  assert.deepEqual(bindings(ok), { Product: ['Products(2L)'] });
});

// ---------------------------------------------------------------------------------------------
// $links bodies

test('readXmlLink answers the trimmed uri', () => {
  assert.equal(readXmlLink(Buffer.from(`<?xml version="1.0" encoding="utf-8"?>\n<uri xmlns="${D}">\n  ${ROOT}/Catalogs(5L)\n</uri>\n`)), `${ROOT}/Catalogs(5L)`);
  assert.equal(readXmlLink(Buffer.from(`\uFEFF<d:uri xmlns:d="${D}">Catalogs(5L)</d:uri>`)), 'Catalogs(5L)');
  assert.equal(readXmlLink(Buffer.from(`<uri xmlns="${D}">Catalogs(5L)?a=1&amp;b=2</uri>`)), 'Catalogs(5L)?a=1&b=2');
});

test('readXmlLink takes the uri element in the metadata namespace too, as the .NET client writes it', () => {
  assert.equal(readXmlLink(Buffer.from(`<?xml version="1.0" encoding="utf-8" standalone="yes"?><uri xmlns="${M}">${ROOT}/Catalogs(7L)</uri>`)), `${ROOT}/Catalogs(7L)`);
  assert.equal(readXmlLink(Buffer.from(`<m:uri xmlns:m="${M}">$2</m:uri>`)), '$2');
  rejects400(() => readXmlLink(Buffer.from(`<uri xmlns="${ATOM}">Catalogs(5L)</uri>`)), /must be a uri element in the namespace/);
});

test('readXmlLink refuses anything else', () => {
  rejects400(() => readXmlLink(Buffer.from('<uri>Catalogs(5L)</uri>')), /must be a uri element in the namespace/);
  rejects400(() => readXmlLink(Buffer.from(`<links xmlns="${D}"><uri>Catalogs(5L)</uri></links>`)), /must be a uri element/);
  rejects400(() => readXmlLink(Buffer.from(`<uri xmlns="${D}"><a/>Catalogs(5L)</uri>`)), /must hold only text/);
  rejects400(() => readXmlLink(Buffer.from(`<uri xmlns="${D}">  </uri>`)), /uri element is empty/);
  rejects400(() => readXmlLink(Buffer.from(`<uri xmlns="${D}">&ext;</uri>`)), /not well-formed XML/);
  rejects400(() => readXmlLink(Buffer.from(`<uri xmlns="${D}">a</uri><uri xmlns="${D}">b</uri>`)), /not well-formed XML/);
  rejects400(() => readXmlLink(Buffer.from(`<?pi x?><uri xmlns="${D}">a</uri>`)), /Processing instructions/);
  rejects400(() => readXmlLink(Buffer.from('{"uri":"Catalogs(5L)"}')), /not well-formed XML/);
  rejects400(() => readXmlLink(Buffer.alloc(0)), /request body is empty/);
});
