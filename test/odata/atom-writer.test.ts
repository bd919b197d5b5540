/**
 * Unit tests of the Atom / application/xml writers (src/odata/atom/writer.ts): every document is
 * parsed with jsdom and checked element by element against the wire-format table of the interface
 * specification and OData's Atom format, and read back with datajs's Atom handler the
 * way a browser client reads it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../src/model/catalogue-model';
import type { EntityRecord, WriteContext } from '../../src/odata/entity';
import {
  atomEntry,
  atomEntryDocument,
  atomFeedEnd,
  atomFeedStart,
  xmlLinkDocument,
  xmlLinksDocument,
  xmlOperationResult,
  xmlPropertyDocument,
} from '../../src/odata/atom/writer';
import { childElements, loadDatajs, parseXml, type XmlElement } from '../clients/datajs';
import { ATOM, D, M, RELATED, SCHEME } from '../support/spec';
import { entityType as typeOf } from '../support/model-types';

const XMLNS = 'http://www.w3.org/2000/xmlns/';
const XML = 'http://www.w3.org/XML/1998/namespace';
const ROOT = 'http://localhost:8080/publicapi/v1/api.svc';
const UPDATED = '2024-05-01T10:00:00Z';
const DECL = '<?xml version="1.0" encoding="utf-8" standalone="yes"?>';

const ctx: WriteContext = { serviceRoot: ROOT, version: 1, updated: UPDATED };

const ProductSpecific = typeOf('ProductSpecific');
const ProductVariation = typeOf('ProductVariation');
const ProductVariationImage = typeOf('ProductVariationImage');
const Product = typeOf('Product');

const T0 = Date.UTC(2013, 8, 16, 7, 21, 12); // 2013-09-16T07:21:12
const T1 = Date.UTC(2014, 0, 2, 3, 4, 5, 678); // 2014-01-02T03:04:05.678

const specific: EntityRecord = {
  type: ProductSpecific,
  values: { Id: 5n, ProductId: 2n, Name: 'Brand', Value: 'Acme', Type: null, CreationDate: T0, ModificationDate: T1 },
};

function variation(id: bigint, expanded?: EntityRecord['expanded']): EntityRecord {
  return {
    type: ProductVariation,
    values: {
      Id: id,
      ProductId: 2n,
      Price: '12.5',
      StockAmount: 3,
      Sku: 'SKU-1',
      ForeignId: null,
      ExternalProductId: 9007199254740993n,
      Ean: '4006381333931',
      Isbn: null,
      Upc: null,
      Mpn: null,
      CreationDate: T0,
      ModificationDate: T1,
    },
    ...(expanded ? { expanded } : {}),
  };
}

function image(id: bigint, position: number): EntityRecord {
  return {
    type: ProductVariationImage,
    values: { Id: id, ProductVariationId: 7n, ImageUrl: `http://img/${id}.jpg`, ImagePosition: position, CreationDate: T0, ModificationDate: T0 },
  };
}

const product: EntityRecord = {
  type: Product,
  values: Object.fromEntries(Product.properties.map((p) => [p.name, p.name === 'Id' ? 2n : null])),
};

// ---------------------------------------------------------------------------------------------
// helpers

function only<T>(items: ArrayLike<T>, what: string): T {
  assert.equal(items.length, 1, `expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}

function child(parent: XmlElement, ns: string, local: string): XmlElement {
  return only(childElements(parent, ns, local), `${local} in ${parent.localName}`);
}

function attrs(el: XmlElement, ...names: string[]): Record<string, string | null> {
  return Object.fromEntries(names.map((n) => [n, el.getAttribute(n)]));
}

/** [local name, m:type, m:null, text] of each m:properties child. */
function properties(entry: XmlElement): [string, string | null, string | null, string][] {
  const props = child(child(entry, ATOM, 'content'), M, 'properties');
  return Array.from(props.children).map((p) => {
    assert.equal(p.namespaceURI, D, `${p.localName} is in the d namespace`);
    return [p.localName, p.getAttributeNS(M, 'type'), p.getAttributeNS(M, 'null'), p.textContent ?? ''];
  });
}

function navLinks(entry: XmlElement): XmlElement[] {
  return childElements(entry, ATOM, 'link').filter((l) => (l.getAttribute('rel') ?? '').startsWith(RELATED));
}

function datajsRead(xml: string): unknown {
  const response = {
    headers: { 'Content-Type': 'application/atom+xml;charset=utf-8', DataServiceVersion: '1.0;' },
    body: xml,
  } as { headers: Record<string, string>; body: string; data?: unknown };
  assert.equal(loadDatajs().atomHandler.read(response), true, 'datajs accepted the document');
  return response.data;
}

// ---------------------------------------------------------------------------------------------
// entries

test('a ProductSpecific entry document matches the wire-format table', () => {
  const xml = atomEntryDocument(ctx, specific);
  assert.ok(xml.startsWith(DECL + '<entry '), 'xml declaration, then the entry');
  const entry = parseXml(xml).documentElement;
  assert.equal(entry.localName, 'entry');
  assert.equal(entry.namespaceURI, ATOM);
  assert.equal(entry.getAttributeNS(XML, 'base'), `${ROOT}/`);
  assert.equal(entry.getAttributeNS(XMLNS, 'd'), D);
  assert.equal(entry.getAttributeNS(XMLNS, 'm'), M);

  assert.deepEqual(
    Array.from(entry.children).map((c) => c.localName),
    ['id', 'title', 'updated', 'author', 'link', 'link', 'category', 'content'],
  );
  assert.equal(child(entry, ATOM, 'id').textContent, `${ROOT}/ProductSpecifics(5L)`);
  const title = child(entry, ATOM, 'title');
  assert.equal(title.getAttribute('type'), 'text');
  assert.equal(title.textContent, '');
  assert.equal(child(entry, ATOM, 'updated').textContent, UPDATED);
  const author = child(entry, ATOM, 'author');
  assert.equal(child(author, ATOM, 'name').textContent, '');

  const [edit, nav] = childElements(entry, ATOM, 'link') as [XmlElement, XmlElement];
  assert.deepEqual(attrs(edit, 'rel', 'title', 'href'), { rel: 'edit', title: 'ProductSpecific', href: 'ProductSpecifics(5L)' });
  assert.deepEqual(attrs(nav, 'rel', 'type', 'title', 'href'), {
    rel: `${RELATED}Product`,
    type: 'application/atom+xml;type=entry',
    title: 'Product',
    href: 'ProductSpecifics(5L)/Product',
  });
  assert.equal(nav.children.length, 0, 'a deferred link has no m:inline');

  const category = child(entry, ATOM, 'category');
  assert.deepEqual(attrs(category, 'term', 'scheme'), { term: 'CatalogueService.ProductSpecific', scheme: SCHEME });
  assert.equal(child(entry, ATOM, 'content').getAttribute('type'), 'application/xml');

  assert.deepEqual(properties(entry), [
    ['Id', 'Edm.Int64', null, '5'],
    ['ProductId', 'Edm.Int64', null, '2'],
    ['Name', null, null, 'Brand'],
    ['Value', null, null, 'Acme'],
    ['Type', 'Edm.Int32', 'true', ''],
    ['CreationDate', 'Edm.DateTime', null, '2013-09-16T07:21:12'],
    ['ModificationDate', 'Edm.DateTime', null, '2014-01-02T03:04:05.678'],
  ]);
  // The null is an empty element, literally as the specification shows it.
  assert.ok(xml.includes('<d:Type m:type="Edm.Int32" m:null="true" />'));
});

test('a ProductVariation entry has one link per navigation with entry/feed types', () => {
  const entry = parseXml(atomEntryDocument(ctx, variation(7n))).documentElement;
  assert.deepEqual(
    navLinks(entry).map((l) => [l.getAttribute('title'), l.getAttribute('type'), l.getAttribute('href'), l.getAttribute('rel')]),
    [
      ['Product', 'application/atom+xml;type=entry', 'ProductVariations(7L)/Product', `${RELATED}Product`],
      ['ProductVariationSpecifics', 'application/atom+xml;type=feed', 'ProductVariations(7L)/ProductVariationSpecifics', `${RELATED}ProductVariationSpecifics`],
      ['ProductVariationImages', 'application/atom+xml;type=feed', 'ProductVariations(7L)/ProductVariationImages', `${RELATED}ProductVariationImages`],
      ['ProductVariationPictures', 'application/atom+xml;type=feed', 'ProductVariations(7L)/ProductVariationPictures', `${RELATED}ProductVariationPictures`],
      ['DiscountOffers', 'application/atom+xml;type=feed', 'ProductVariations(7L)/DiscountOffers', `${RELATED}DiscountOffers`],
      ['SalesOrderItems', 'application/atom+xml;type=feed', 'ProductVariations(7L)/SalesOrderItems', `${RELATED}SalesOrderItems`],
      ['ListingItems', 'application/atom+xml;type=feed', 'ProductVariations(7L)/ListingItems', `${RELATED}ListingItems`],
    ],
  );
  assert.deepEqual(attrs(childElements(entry, ATOM, 'link')[0] as XmlElement, 'rel', 'title', 'href'), {
    rel: 'edit',
    title: 'ProductVariation',
    href: 'ProductVariations(7L)',
  });
  assert.equal(child(entry, ATOM, 'category').getAttribute('term'), 'CatalogueService.ProductVariation');
  assert.deepEqual(properties(entry), [
    ['Id', 'Edm.Int64', null, '7'],
    ['ProductId', 'Edm.Int64', null, '2'],
    ['Price', 'Edm.Decimal', null, '12.5'],
    ['StockAmount', 'Edm.Int32', null, '3'],
    ['Sku', null, null, 'SKU-1'],
    ['ForeignId', null, 'true', ''],
    ['ExternalProductId', 'Edm.Int64', null, '9007199254740993'],
    ['Ean', null, null, '4006381333931'],
    ['Isbn', null, 'true', ''],
    ['Upc', null, 'true', ''],
    ['Mpn', null, 'true', ''],
    ['CreationDate', 'Edm.DateTime', null, '2013-09-16T07:21:12'],
    ['ModificationDate', 'Edm.DateTime', null, '2014-01-02T03:04:05.678'],
  ]);
  assert.ok(atomEntry(ctx, variation(7n)).includes('<d:ForeignId m:null="true" />'), 'a null string has no m:type');
});

test('Boolean and Decimal values carry their m:type', () => {
  const Catalog = typeOf('Catalog');
  const rec: EntityRecord = {
    type: Catalog,
    values: { Id: 1n, Name: 'Root', ForeignId: null, IsRootLevel: true, PaymentProfileId: null, ReturnProfileId: null, ShippingProfileId: 3n, CreationDate: T0, ModificationDate: T0 },
  };
  const entry = parseXml(atomEntryDocument(ctx, rec)).documentElement;
  const props = properties(entry);
  assert.deepEqual(props.find((p) => p[0] === 'IsRootLevel'), ['IsRootLevel', 'Edm.Boolean', null, 'true']);
  assert.deepEqual(props.find((p) => p[0] === 'PaymentProfileId'), ['PaymentProfileId', 'Edm.Int64', 'true', '']);
});

test('an entry inside a feed has no xml declaration and no namespace declarations', () => {
  const xml = atomEntry(ctx, specific);
  assert.ok(xml.startsWith('<entry><id>'), xml.slice(0, 30));
  assert.ok(!xml.includes('xmlns'));
  assert.ok(!xml.includes('xml:base'));
});

test('text and attribute values are escaped; CR and control characters survive or are replaced', () => {
  const nasty = `a<b>&c"d'e]]>f`;
  const rec: EntityRecord = { ...specific, values: { ...specific.values, Name: nasty, Value: 'x\r\ny\u0001z\u0000\uFFFF\uD800' } };
  const xml = atomEntryDocument({ ...ctx, serviceRoot: 'http://h/a&b"c' }, rec);
  const entry = parseXml(xml).documentElement;
  const props = properties(entry);
  assert.equal(props.find((p) => p[0] === 'Name')?.[3], nasty);
  // CR is written as &#xD; so that it is not normalised away; characters XML cannot hold become U+FFFD.
  assert.equal(props.find((p) => p[0] === 'Value')?.[3], 'x\r\ny\uFFFDz\uFFFD\uFFFD\uFFFD');
  assert.ok(xml.includes('&lt;b&gt;&amp;c&quot;d&apos;e]]&gt;f'));
  assert.equal(entry.getAttributeNS(XML, 'base'), 'http://h/a&b"c/');
  assert.equal(child(entry, ATOM, 'id').textContent, 'http://h/a&b"c/ProductSpecifics(5L)');
});

test('strings with leading or trailing whitespace get xml:space="preserve"', () => {
  const rec: EntityRecord = { ...specific, values: { ...specific.values, Name: '  padded', Value: 'tab\t' } };
  const xml = atomEntryDocument(ctx, rec);
  const entry = parseXml(xml).documentElement;
  const props = child(child(entry, ATOM, 'content'), M, 'properties');
  assert.equal(child(props, D, 'Name').getAttributeNS(XML, 'space'), 'preserve');
  assert.equal(child(props, D, 'Name').textContent, '  padded');
  assert.equal(child(props, D, 'Value').getAttributeNS(XML, 'space'), 'preserve');
  assert.equal(child(props, D, 'ProductId').getAttributeNS(XML, 'space'), null);
  assert.ok(xml.includes('<d:Name xml:space="preserve">  padded</d:Name>'));
});

// ---------------------------------------------------------------------------------------------
// feeds

test('a feed has title, id, updated, self link, m:count before the entries and the next link after them', () => {
  const xml =
    atomFeedStart(ctx, { title: 'ProductVariations', id: `${ROOT}/ProductVariations`, selfHref: 'ProductVariations?$inlinecount=allpages&$top=2', count: 42n }) +
    atomEntry(ctx, variation(7n)) +
    atomEntry(ctx, variation(8n)) +
    atomFeedEnd({ next: `${ROOT}/ProductVariations?$inlinecount=allpages&$top=2&$skiptoken=8L` });
  assert.ok(xml.startsWith(DECL + '<feed '));
  const feed = parseXml(xml).documentElement;
  assert.equal(feed.localName, 'feed');
  assert.equal(feed.namespaceURI, ATOM);
  assert.equal(feed.getAttributeNS(XML, 'base'), `${ROOT}/`);
  assert.equal(feed.getAttributeNS(XMLNS, 'd'), D);
  assert.equal(feed.getAttributeNS(XMLNS, 'm'), M);
  assert.deepEqual(
    Array.from(feed.children).map((c) => c.localName),
    ['title', 'id', 'updated', 'link', 'count', 'entry', 'entry', 'link'],
  );
  const title = child(feed, ATOM, 'title');
  assert.deepEqual([title.textContent, title.getAttribute('type')], ['ProductVariations', 'text']);
  assert.equal(child(feed, ATOM, 'id').textContent, `${ROOT}/ProductVariations`);
  assert.equal(child(feed, ATOM, 'updated').textContent, UPDATED);
  const [self, next] = childElements(feed, ATOM, 'link') as [XmlElement, XmlElement];
  assert.deepEqual(attrs(self, 'rel', 'title', 'href'), { rel: 'self', title: 'ProductVariations', href: 'ProductVariations?$inlinecount=allpages&$top=2' });
  assert.deepEqual(attrs(next, 'rel', 'href'), { rel: 'next', href: `${ROOT}/ProductVariations?$inlinecount=allpages&$top=2&$skiptoken=8L` });
  assert.equal(child(feed, M, 'count').textContent, '42');
  assert.deepEqual(
    childElements(feed, ATOM, 'entry').map((e) => child(e, ATOM, 'id').textContent),
    [`${ROOT}/ProductVariations(7L)`, `${ROOT}/ProductVariations(8L)`],
  );
});

test('an empty feed without count or next is the bare envelope', () => {
  const xml = atomFeedStart(ctx, { title: 'ProductImages', id: `${ROOT}/ProductImages`, selfHref: 'ProductImages' }) + atomFeedEnd();
  const feed = parseXml(xml).documentElement;
  assert.deepEqual(Array.from(feed.children).map((c) => c.localName), ['title', 'id', 'updated', 'link']);
  assert.ok(!xml.includes('m:count'));
  assert.ok(!xml.includes('rel="next"'));
  assert.equal(atomFeedEnd({}), '</feed>');
});

// ---------------------------------------------------------------------------------------------
// $expand

test('expanded navigations are written inline: feed under ProductVariationPictures, entry, and null', () => {
  const rec = variation(
    7n,
    new Map<string, EntityRecord | null | readonly EntityRecord[]>([
      ['ProductVariationPictures', [image(11n, 0), image(12n, 1)]],
      ['Product', product],
      ['ProductVariationSpecifics', []],
    ]),
  );
  const xml = atomEntryDocument(ctx, rec);
  const entry = parseXml(xml).documentElement;
  const links = navLinks(entry);
  assert.deepEqual(
    links.map((l) => l.getAttribute('title')),
    ['Product', 'ProductVariationSpecifics', 'ProductVariationImages', 'ProductVariationPictures', 'DiscountOffers', 'SalesOrderItems', 'ListingItems'],
  );
  const [toOne, emptyFeed, deferred, pictures] = links as [XmlElement, XmlElement, XmlElement, XmlElement];

  // to-many under the navigation the client asked for; its twin ProductVariationImages stays deferred
  assert.deepEqual(attrs(pictures, 'rel', 'type', 'href'), {
    rel: `${RELATED}ProductVariationPictures`,
    type: 'application/atom+xml;type=feed',
    href: 'ProductVariations(7L)/ProductVariationPictures',
  });
  const inlineFeed = child(child(pictures, M, 'inline'), ATOM, 'feed');
  assert.deepEqual(Array.from(inlineFeed.children).map((c) => c.localName), ['title', 'id', 'updated', 'link', 'entry', 'entry']);
  assert.equal(child(inlineFeed, ATOM, 'title').textContent, 'ProductVariationPictures');
  assert.equal(child(inlineFeed, ATOM, 'id').textContent, `${ROOT}/ProductVariations(7L)/ProductVariationPictures`);
  assert.equal(child(inlineFeed, ATOM, 'updated').textContent, UPDATED);
  assert.deepEqual(attrs(child(inlineFeed, ATOM, 'link'), 'rel', 'href'), { rel: 'self', href: 'ProductVariations(7L)/ProductVariationPictures' });
  assert.equal(childElements(inlineFeed, M, 'count').length, 0, 'no m:count inside an inline feed');
  const images = childElements(inlineFeed, ATOM, 'entry');
  assert.deepEqual(images.map((e) => child(e, ATOM, 'id').textContent), [`${ROOT}/ProductVariationImages(11L)`, `${ROOT}/ProductVariationImages(12L)`]);
  assert.deepEqual(properties(images[1] as XmlElement).find((p) => p[0] === 'ImagePosition'), ['ImagePosition', 'Edm.Int32', null, '1']);
  assert.equal(child(images[0] as XmlElement, ATOM, 'category').getAttribute('term'), 'CatalogueService.ProductVariationImage');

  // to-one entry
  assert.equal(toOne.getAttribute('type'), 'application/atom+xml;type=entry');
  const inlineEntry = child(child(toOne, M, 'inline'), ATOM, 'entry');
  assert.equal(child(inlineEntry, ATOM, 'id').textContent, `${ROOT}/Products(2L)`);
  assert.equal(navLinks(inlineEntry).length, Product.navigations.length);

  // empty collection: a feed without entries; deferred stays deferred
  assert.equal(childElements(child(child(emptyFeed, M, 'inline'), ATOM, 'feed'), ATOM, 'entry').length, 0);
  assert.equal(deferred.getAttribute('title'), 'ProductVariationImages');
  assert.equal(deferred.children.length, 0);

  // a null to-one is an empty m:inline
  const nullXml = atomEntry(ctx, variation(7n, new Map([['Product', null]])));
  assert.ok(nullXml.includes(`title="Product" href="ProductVariations(7L)/Product"><m:inline /></link>`), nullXml);
  const nullLink = navLinks(parseXml(atomEntryDocument(ctx, variation(7n, new Map([['Product', null]])))).documentElement)[0] as XmlElement;
  assert.equal(child(nullLink, M, 'inline').children.length, 0);
});

test('expanding a name that is not a navigation of the type is a fault', () => {
  assert.throws(() => atomEntry(ctx, variation(7n, new Map([['Catalogs', []]]))), /no navigation Catalogs/);
});

// ---------------------------------------------------------------------------------------------
// $select

test('$select keeps only the selected properties and navigation links', () => {
  const entry = parseXml(atomEntryDocument({ ...ctx, select: new Set(['Id', 'Price', 'ProductVariationSpecifics']) }, variation(7n))).documentElement;
  assert.deepEqual(properties(entry).map((p) => p[0]), ['Id', 'Price']);
  assert.deepEqual(navLinks(entry).map((l) => l.getAttribute('title')), ['ProductVariationSpecifics']);
  assert.equal(childElements(entry, ATOM, 'link')[0]?.getAttribute('rel'), 'edit', 'the edit link stays');

  const star = parseXml(atomEntryDocument({ ...ctx, select: new Set(['*']) }, variation(7n))).documentElement;
  assert.equal(properties(star).length, ProductVariation.properties.length);
  assert.equal(navLinks(star).length, 0);

  // Only a navigation selected: content without m:properties.
  const navOnly = atomEntry({ ...ctx, select: new Set(['Product']) }, variation(7n));
  assert.ok(navOnly.includes('<content type="application/xml" />'));
});

test('$select paths through an expanded navigation select inside the inline entries', () => {
  const rec = variation(7n, new Map<string, EntityRecord | null | readonly EntityRecord[]>([['ProductVariationPictures', [image(11n, 0)]], ['Product', product]]));
  const select = new Set(['Id', 'ProductVariationPictures/ImageUrl', 'Product']);
  const entry = parseXml(atomEntryDocument({ ...ctx, select }, rec)).documentElement;
  assert.deepEqual(properties(entry).map((p) => p[0]), ['Id']);
  const links = navLinks(entry);
  assert.deepEqual(links.map((l) => l.getAttribute('title')), ['Product', 'ProductVariationPictures']);
  const [productLink, picturesLink] = links as [XmlElement, XmlElement];
  const img = child(child(child(picturesLink, M, 'inline'), ATOM, 'feed'), ATOM, 'entry');
  assert.deepEqual(properties(img), [['ImageUrl', null, null, 'http://img/11.jpg']]);
  assert.equal(navLinks(img).length, 0);
  // A bare navigation in $select selects the whole expanded entity.
  const p = child(child(productLink, M, 'inline'), ATOM, 'entry');
  assert.equal(properties(p).length, Product.properties.length);
});

// ---------------------------------------------------------------------------------------------
// application/xml documents

test('property documents: typed, string, null, whitespace', () => {
  const int = xmlPropertyDocument('StockAmount', 'Edm.Int32', 5);
  assert.equal(int, `${DECL}<StockAmount xmlns="${D}" xmlns:m="${M}" m:type="Edm.Int32">5</StockAmount>`);
  const root = parseXml(int).documentElement;
  assert.deepEqual([root.localName, root.namespaceURI, root.getAttributeNS(M, 'type'), root.textContent], ['StockAmount', D, 'Edm.Int32', '5']);

  const str = parseXml(xmlPropertyDocument('Title', 'Edm.String', 'A & <B>')).documentElement;
  assert.deepEqual([str.localName, str.namespaceURI, str.getAttributeNS(M, 'type'), str.textContent], ['Title', D, null, 'A & <B>']);
  assert.equal(xmlPropertyDocument('Title', 'Edm.String', 'x'), `${DECL}<Title xmlns="${D}">x</Title>`);

  const nul = parseXml(xmlPropertyDocument('Type', 'Edm.Int32', null)).documentElement;
  assert.deepEqual([nul.getAttributeNS(M, 'null'), nul.getAttributeNS(M, 'type'), nul.textContent], ['true', 'Edm.Int32', '']);
  const nulStr = parseXml(xmlPropertyDocument('Sku', 'Edm.String', null)).documentElement;
  assert.deepEqual([nulStr.getAttributeNS(M, 'null'), nulStr.getAttributeNS(M, 'type')], ['true', null]);

  assert.equal(parseXml(xmlPropertyDocument('Price', 'Edm.Decimal', '80')).documentElement.textContent, '80');
  assert.equal(parseXml(xmlPropertyDocument('Id', 'Edm.Int64', 9223372036854775807n)).documentElement.textContent, '9223372036854775807');
  assert.equal(parseXml(xmlPropertyDocument('PaidDate', 'Edm.DateTime', T0)).documentElement.textContent, '2013-09-16T07:21:12');
  assert.equal(parseXml(xmlPropertyDocument('Name', 'Edm.String', ' x ')).documentElement.getAttributeNS(XML, 'space'), 'preserve');
});

test('operation results: a root element named after the operation with its type', () => {
  assert.equal(xmlOperationResult('ProductIsListed', 'Edm.Boolean', true), `${DECL}<ProductIsListed xmlns="${D}" xmlns:m="${M}" m:type="Edm.Boolean">true</ProductIsListed>`);
  const b = parseXml(xmlOperationResult('SetEbayCategory', 'Edm.Boolean', false)).documentElement;
  assert.deepEqual([b.localName, b.namespaceURI, b.getAttributeNS(M, 'type'), b.textContent], ['SetEbayCategory', D, 'Edm.Boolean', 'false']);
  const s = parseXml(xmlOperationResult('GetSalesOrderHistory', 'Edm.String', '<history/>')).documentElement;
  assert.deepEqual([s.localName, s.namespaceURI, s.hasAttribute('m:type'), s.textContent], ['GetSalesOrderHistory', D, false, '<history/>']);
});

test('link and links documents', () => {
  const one = xmlLinkDocument(`${ROOT}/Products(1L)`);
  assert.equal(one, `${DECL}<uri xmlns="${D}">${ROOT}/Products(1L)</uri>`);
  const uri = parseXml(one).documentElement;
  assert.deepEqual([uri.localName, uri.namespaceURI, uri.textContent], ['uri', D, `${ROOT}/Products(1L)`]);

  const many = parseXml(xmlLinksDocument([`${ROOT}/Catalogs(1L)`, `${ROOT}/Catalogs(2L)`], { count: 7 })).documentElement;
  assert.deepEqual([many.localName, many.namespaceURI], ['links', D]);
  assert.deepEqual(Array.from(many.children).map((c) => [c.namespaceURI, c.localName, c.textContent]), [
    [M, 'count', '7'],
    [D, 'uri', `${ROOT}/Catalogs(1L)`],
    [D, 'uri', `${ROOT}/Catalogs(2L)`],
  ]);

  assert.equal(xmlLinksDocument([]), `${DECL}<links xmlns="${D}"></links>`);
  const paged = parseXml(xmlLinksDocument(['a&b'], { next: 'n?x=1&y=2' })).documentElement;
  assert.deepEqual(Array.from(paged.children).map((c) => [c.localName, c.textContent]), [['uri', 'a&b'], ['next', 'n?x=1&y=2']]);
});

// ---------------------------------------------------------------------------------------------
// datajs reads what the writer wrote

interface DatajsEntry {
  __metadata: { uri: string; type: string; edit?: string };
  [name: string]: unknown;
}

test("datajs's Atom reader returns typed values from an entry", () => {
  const data = datajsRead(atomEntryDocument(ctx, specific)) as DatajsEntry;
  assert.equal(data.__metadata.uri, `${ROOT}/ProductSpecifics(5L)`);
  assert.equal(data.__metadata.type, 'CatalogueService.ProductSpecific');
  assert.equal(data.Id, '5', 'Int64 is a string');
  assert.equal(data.ProductId, '2');
  assert.equal(data.Name, 'Brand');
  assert.equal(data.Type, null);
  assert.ok(data.CreationDate instanceof Date, 'DateTime is a Date');
  assert.equal((data.CreationDate as Date).getTime(), T0);
  assert.equal((data.ModificationDate as Date).getTime(), T1);
  assert.deepEqual(data.Product, { __deferred: { uri: `${ROOT}/ProductSpecifics(5L)/Product` } });
});

test("datajs's Atom reader reads a feed with count, next and inline content", () => {
  const rec = variation(7n, new Map<string, EntityRecord | null | readonly EntityRecord[]>([['ProductVariationPictures', [image(11n, 4)]], ['Product', null]]));
  const xml =
    atomFeedStart(ctx, { title: 'ProductVariations', id: `${ROOT}/ProductVariations`, selfHref: 'ProductVariations', count: 1 }) +
    atomEntry(ctx, rec) +
    atomFeedEnd({ next: `${ROOT}/ProductVariations?$skiptoken=7L` });
  const data = datajsRead(xml) as { results: DatajsEntry[]; __count: number; __next: string };
  assert.equal(data.__count, 1);
  assert.equal(data.__next, `${ROOT}/ProductVariations?$skiptoken=7L`);
  const v = only(data.results, 'datajs entry');
  assert.equal(v.StockAmount, 3, 'Int32 is a number');
  assert.equal(v.Price, '12.5', 'Decimal is a string');
  assert.equal(v.ExternalProductId, '9007199254740993', 'Int64 keeps every digit');
  assert.equal(v.ForeignId, null);
  assert.equal(v.Sku, 'SKU-1');
  assert.equal((v.ModificationDate as Date).toISOString(), '2014-01-02T03:04:05.678Z');
  assert.equal(v.Product, null, 'a null to-one arrives as null');
  const pics = v.ProductVariationPictures as { results: DatajsEntry[] };
  const img = only(pics.results, 'inline image');
  assert.equal(img.__metadata.uri, `${ROOT}/ProductVariationImages(11L)`);
  assert.equal(img.ImagePosition, 4);
  assert.equal(img.ImageUrl, 'http://img/11.jpg');
  assert.deepEqual(v.DiscountOffers, { __deferred: { uri: `${ROOT}/ProductVariations(7L)/DiscountOffers` } });
});
