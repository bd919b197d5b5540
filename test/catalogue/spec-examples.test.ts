/**
 * Every request and response the interface specification shows for the entity sets, over real
 * HTTP against a live server, checked element by element against the specification's wire-format
 * table: the three POSTs (Atom and JSON bodies), DELETE of an image, and the four navigations of
 * a variation (in Atom and JSON), with platform rows seeded through the real store.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultOf } from '../../src/catalogue/values';
import type { EdmValue } from '../../src/odata/edm';
import { childElements, parseXml, type XmlElement } from '../clients/datajs';
import type { HttpResponse } from '../support/http-client';
import { asSeller as asSellerDeclaring, CONNECTOR_VERSIONS, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import type { HttpRequest } from '../support/http-client';
import { ATOM, D, M, RELATED, SCHEME } from '../support/spec';

/** Every request declares its versions as the connector does, and so gets the 1.0 shapes it reads. */
const asSeller = (who: Seller, url: string, init: HttpRequest = {}) => asSellerDeclaring(who, url, { ...init, headers: { ...CONNECTOR_VERSIONS, ...(init.headers ?? {}) } });


const ATOM_TYPE = 'application/atom+xml;charset=utf-8';
const JSON_TYPE = 'application/json;charset=utf-8';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?Z$/;
const JSON_DATE = /^\/Date\(-?\d+\)\/$/;

type Edm = 'Edm.Int64' | 'Edm.Int32' | 'Edm.Decimal' | 'Edm.String' | 'Edm.Boolean' | 'Edm.DateTime';

/**
 * The shape of the three specified types, as docs/entity-sets.md lists them:
 * properties in metadata order with their Edm types, then the navigations.
 */
interface Shape {
  readonly set: string;
  readonly type: string;
  readonly properties: readonly (readonly [string, Edm])[];
  readonly navigations: readonly (readonly [string, 'entry' | 'feed'])[];
}

const SPECIFIC: Shape = {
  set: 'ProductSpecifics',
  type: 'ProductSpecific',
  properties: [['Id', 'Edm.Int64'], ['ProductId', 'Edm.Int64'], ['Name', 'Edm.String'], ['Value', 'Edm.String'], ['Type', 'Edm.Int32'], ['CreationDate', 'Edm.DateTime'], ['ModificationDate', 'Edm.DateTime']],
  navigations: [['Product', 'entry']],
};

const IMAGE: Shape = {
  set: 'ProductImages',
  type: 'ProductImage',
  properties: [['Id', 'Edm.Int64'], ['ProductId', 'Edm.Int64'], ['ImageUrl', 'Edm.String'], ['Type', 'Edm.Int32'], ['CreationDate', 'Edm.DateTime'], ['ModificationDate', 'Edm.DateTime']],
  navigations: [['Product', 'entry']],
};

const VARIATION: Shape = {
  set: 'ProductVariations',
  type: 'ProductVariation',
  properties: [
    ['Id', 'Edm.Int64'], ['ProductId', 'Edm.Int64'], ['Price', 'Edm.Decimal'], ['StockAmount', 'Edm.Int32'], ['Sku', 'Edm.String'],
    ['ForeignId', 'Edm.String'], ['ExternalProductId', 'Edm.Int64'], ['Ean', 'Edm.String'], ['Isbn', 'Edm.String'], ['Upc', 'Edm.String'],
    ['Mpn', 'Edm.String'], ['CreationDate', 'Edm.DateTime'], ['ModificationDate', 'Edm.DateTime'],
  ],
  navigations: [
    // ProductVariationPictures: the same images under the name the shop connector reads.
    ['Product', 'entry'], ['ProductVariationSpecifics', 'feed'], ['ProductVariationImages', 'feed'], ['ProductVariationPictures', 'feed'],
    ['DiscountOffers', 'feed'], ['ListingItems', 'feed'], ['SalesOrderItems', 'feed'],
  ],
};

let live: LiveService;
let seller: Seller;
let productId: string;

before(async () => {
  live = await startLive();
  seller = await newSeller(live);
  productId = await createProduct('Spec product');
});
after(() => live.close());

// ---------------------------------------------------------------------------------------------
// Helpers

const json = (res: HttpResponse) => JSON.parse(res.body) as Record<string, unknown>;
const obj = (v: unknown) => v as Record<string, unknown>;

/** Same decimal value, whatever the number of trailing zeros. */
function decimalText(s: string): string {
  const [i = '', f = ''] = s.split('.');
  const fraction = f.replace(/0+$/, '');
  return fraction ? `${i}.${fraction}` : i;
}

async function createProduct(title: string): Promise<string> {
  const res = await asSeller(seller, live.root + '/Products', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ Title: title, Price: '10.00', StockAmount: '1' }),
  });
  assert.equal(res.status, 201, res.body);
  return String(obj(json(res).d).Id);
}

/** An Atom entry as the specification describes a request body. */
function atomEntryBody(properties: readonly (readonly [string, string, Edm | undefined])[]): string {
  const props = properties
    .map(([name, value, type]) => `<d:${name}${type && type !== 'Edm.String' ? ` m:type="${type}"` : ''}>${value}</d:${name}>`)
    .join('');
  return (
    '<?xml version="1.0" encoding="utf-8" standalone="yes"?>' +
    `<entry xmlns="${ATOM}" xmlns:d="${D}" xmlns:m="${M}">` +
    '<title /><author><name /></author><updated>2015-06-29T10:00:00Z</updated><id />' +
    `<content type="application/xml"><m:properties>${props}</m:properties></content>` +
    '</entry>'
  );
}

function postAtom(set: string, body: string): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${set}`, { method: 'POST', headers: { 'Content-Type': 'application/atom+xml' }, body });
}

function postJson(set: string, body: Record<string, unknown>): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${set}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
}

function get(path: string, format: 'atom' | 'json'): Promise<HttpResponse> {
  return asSeller(seller, live.root + path, format === 'json' ? { headers: { Accept: 'application/json' } } : {});
}

/** The protocol headers of the wire-format table. */
function assertHeaders(res: HttpResponse, contentType: string): void {
  assert.equal(res.headers['content-type'], contentType);
  assert.equal(res.headers['dataserviceversion'], '1.0;');
  assert.equal(res.headers['cache-control'], 'no-cache');
}

/** 201 with Location = the absolute entity URI; answers the assigned Id read from Location. */
function assertCreated(res: HttpResponse, shape: Shape, contentType: string): string {
  assert.equal(res.status, 201, res.body);
  assertHeaders(res, contentType);
  const location = String(res.headers.location);
  const m = new RegExp(`^${live.root.replace(/[.]/g, '\\.')}/${shape.set}\\((\\d+)L\\)$`).exec(location);
  assert.ok(m, `Location ${location}`);
  return m[1]!;
}

interface AtomProperty {
  readonly type: string | null;
  readonly isNull: boolean;
  readonly text: string;
}

/**
 * Checks one Atom entry element by element (the wire-format table's "Atom response body") and
 * answers its properties. `top` entries carry xml:base and the namespace declarations.
 */
function checkAtomEntry(entry: XmlElement, shape: Shape, id: string, top: boolean): Map<string, AtomProperty> {
  const uri = `${live.root}/${shape.set}(${id}L)`;
  assert.equal(entry.namespaceURI, ATOM);
  assert.equal(entry.localName, 'entry');
  if (top) assert.equal(entry.getAttribute('xml:base'), live.root + '/');

  const one = (local: string) => {
    const found = childElements(entry, ATOM, local);
    assert.equal(found.length, 1, `one atom:${local}`);
    return found[0]!;
  };
  assert.equal(one('id').textContent, uri);
  const title = one('title');
  assert.equal(title.textContent, '');
  assert.equal(title.getAttribute('type'), 'text');
  assert.match(one('updated').textContent ?? '', ISO_UTC);
  const author = one('author');
  const names = childElements(author, ATOM, 'name');
  assert.equal(names.length, 1);
  assert.equal(names[0]!.textContent, '');

  const links = childElements(entry, ATOM, 'link');
  const edit = links.filter((l) => l.getAttribute('rel') === 'edit');
  assert.equal(edit.length, 1);
  assert.equal(edit[0]!.getAttribute('title'), shape.type);
  assert.equal(edit[0]!.getAttribute('href'), `${shape.set}(${id}L)`);
  const related = links.filter((l) => (l.getAttribute('rel') ?? '').startsWith(RELATED));
  assert.deepEqual(
    related.map((l) => l.getAttribute('title')).sort(),
    shape.navigations.map(([n]) => n).sort(),
  );
  for (const [name, kind] of shape.navigations) {
    const link = related.find((l) => l.getAttribute('title') === name)!;
    assert.equal(link.getAttribute('rel'), RELATED + name);
    assert.equal(link.getAttribute('type'), `application/atom+xml;type=${kind}`);
    assert.equal(link.getAttribute('href'), `${shape.set}(${id}L)/${name}`);
  }

  const category = one('category');
  assert.equal(category.getAttribute('term'), `CatalogueService.${shape.type}`);
  assert.equal(category.getAttribute('scheme'), SCHEME);

  const content = one('content');
  assert.equal(content.getAttribute('type'), 'application/xml');
  const properties = childElements(content, M, 'properties');
  assert.equal(properties.length, 1);
  const elements = Array.from(properties[0]!.children);
  assert.deepEqual(elements.map((e) => e.localName), shape.properties.map(([n]) => n), 'the properties in metadata order');
  const values = new Map<string, AtomProperty>();
  for (const [i, [name, type]] of shape.properties.entries()) {
    const e = elements[i]!;
    assert.equal(e.namespaceURI, D, name);
    const mType = e.getAttributeNS(M, 'type');
    // Typed values carry m:type; strings carry none.
    assert.equal(mType, type === 'Edm.String' ? null : type, `m:type of ${name}`);
    const isNull = e.getAttributeNS(M, 'null') === 'true';
    if (isNull) assert.equal(e.textContent, '', `${name} is null and empty`);
    values.set(name, { type: mType, isNull, text: e.textContent ?? '' });
  }
  assert.equal(values.get('Id')!.text, id);
  if (values.has('CreationDate')) assert.match(values.get('CreationDate')!.text, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?$/);
  return values;
}

function atomEntryOf(res: HttpResponse, shape: Shape, id: string): Map<string, AtomProperty> {
  const doc = parseXml(res.body);
  return checkAtomEntry(doc.documentElement, shape, id, true);
}

/**
 * Checks one JSON verbose entity (the wire-format table's "JSON response body") and answers it:
 * __metadata (uri, type — and the etag that optimistic concurrency adds after them), then the
 * properties, then one __deferred member per navigation.
 */
function checkJsonEntity(d: Record<string, unknown>, shape: Shape, id: string): Record<string, unknown> {
  const uri = `${live.root}/${shape.set}(${id}L)`;
  const keys = Object.keys(d);
  const propertyCount = shape.properties.length;
  // __metadata, then the properties (metadata order), then the navigations (in any order).
  assert.deepEqual(keys.slice(0, 1 + propertyCount), ['__metadata', ...shape.properties.map(([n]) => n)]);
  assert.deepEqual(keys.slice(1 + propertyCount).sort(), shape.navigations.map(([n]) => n).sort());
  const meta = obj(d.__metadata);
  assert.deepEqual({ uri: meta.uri, type: meta.type }, { uri, type: `CatalogueService.${shape.type}` });
  assert.deepEqual(Object.keys(meta), ['uri', 'type', 'etag']);
  assert.match(String(meta.etag), /^W\/"\d+"$/);
  for (const [name, type] of shape.properties) {
    const v = d[name];
    if (v === null) continue;
    switch (type) {
      case 'Edm.Int64':
        assert.equal(typeof v, 'string', `${name} is an Int64 string`);
        assert.match(v as string, /^-?\d+$/, name);
        break;
      case 'Edm.Decimal':
        assert.equal(typeof v, 'string', `${name} is a Decimal string`);
        assert.match(v as string, /^-?\d+(\.\d+)?$/, name);
        break;
      case 'Edm.Int32':
        assert.equal(typeof v, 'number', `${name} is an Int32 number`);
        assert.ok(Number.isInteger(v), name);
        break;
      case 'Edm.DateTime':
        assert.match(v as string, JSON_DATE, name);
        break;
      case 'Edm.String':
        assert.equal(typeof v, 'string', name);
        break;
      case 'Edm.Boolean':
        assert.equal(typeof v, 'boolean', name);
        break;
    }
  }
  assert.equal(d.Id, id);
  for (const [name] of shape.navigations) assert.deepEqual(d[name], { __deferred: { uri: `${uri}/${name}` } }, name);
  return d;
}

function jsonEntityOf(res: HttpResponse, shape: Shape, id: string): Record<string, unknown> {
  const body = json(res);
  assert.deepEqual(Object.keys(body), ['d']);
  return checkJsonEntity(obj(body.d), shape, id);
}

/** Inserts a row directly through the real store, as the platform side does; answers its Id. */
async function seed(set: string, values: Record<string, EdmValue>): Promise<bigint> {
  const app = live.service.app;
  const type = app.model.typeBySetName.get(set)!;
  return app.store.write(seller.accountId, async (tx) => {
    const id = await app.store.nextId(tx);
    const now = app.clock.now();
    const row: Record<string, EdmValue> = {};
    for (const p of type.properties) row[p.name] = p.timestamp ? now : defaultOf(p);
    Object.assign(row, values, { Id: id });
    await app.entities.insert(tx, seller.accountId, type, row);
    return id;
  });
}

// ---------------------------------------------------------------------------------------------

describe('POST /ProductSpecifics', () => {
  test('Atom entry body: 201 with the created entry, Type null, navigation Product', async () => {
    const res = await postAtom(
      'ProductSpecifics',
      atomEntryBody([['ProductId', productId, 'Edm.Int64'], ['Name', 'Marke', 'Edm.String'], ['Value', 'Acme', 'Edm.String']]),
    );
    const id = assertCreated(res, SPECIFIC, ATOM_TYPE);
    const props = atomEntryOf(res, SPECIFIC, id);
    assert.deepEqual(props.get('ProductId'), { type: 'Edm.Int64', isNull: false, text: productId });
    assert.deepEqual(props.get('Name'), { type: null, isNull: false, text: 'Marke' });
    assert.deepEqual(props.get('Value'), { type: null, isNull: false, text: 'Acme' });
    assert.deepEqual(props.get('Type'), { type: 'Edm.Int32', isNull: true, text: '' });
  });

  test('JSON body with numeric values as strings: 201 with {d:{__metadata, properties, Product:{__deferred}}}', async () => {
    const res = await postJson('ProductSpecifics', { ProductId: productId, Name: 'Farbe', Value: 'Rot|Blau' });
    const id = assertCreated(res, SPECIFIC, JSON_TYPE);
    const d = jsonEntityOf(res, SPECIFIC, id);
    assert.equal(d.ProductId, productId);
    assert.equal(d.Name, 'Farbe');
    assert.equal(d.Value, 'Rot|Blau');
    assert.equal(d.Type, null);
  });
});

describe('POST /ProductImages', () => {
  test('Atom entry body (no m:type on the values): 201 with the created entry', async () => {
    const res = await postAtom(
      'ProductImages',
      atomEntryBody([['ProductId', productId, undefined], ['ImageUrl', 'http://images.example.com/list.jpg', undefined], ['Type', '1', undefined]]),
    );
    const id = assertCreated(res, IMAGE, ATOM_TYPE);
    const props = atomEntryOf(res, IMAGE, id);
    assert.deepEqual(props.get('ProductId'), { type: 'Edm.Int64', isNull: false, text: productId });
    assert.deepEqual(props.get('ImageUrl'), { type: null, isNull: false, text: 'http://images.example.com/list.jpg' });
    assert.deepEqual(props.get('Type'), { type: 'Edm.Int32', isNull: false, text: '1' });
  });

  test('JSON body: 201, Id and ProductId as strings, Type as a number', async () => {
    const res = await postJson('ProductImages', { ProductId: productId, ImageUrl: 'https://images.example.com/offer.jpg', Type: '2' });
    const id = assertCreated(res, IMAGE, JSON_TYPE);
    const d = jsonEntityOf(res, IMAGE, id);
    assert.equal(d.ProductId, productId);
    assert.equal(d.ImageUrl, 'https://images.example.com/offer.jpg');
    assert.equal(d.Type, 2);
  });
});

describe('POST /ProductVariations', () => {
  const ids: string[] = [];

  test('Atom entry body with the required and optional fields: 201 with the created entry and its four navigations', async () => {
    const res = await postAtom(
      'ProductVariations',
      atomEntryBody([
        ['ProductId', productId, 'Edm.Int64'],
        ['Price', '19.99', 'Edm.Decimal'],
        ['StockAmount', '10', 'Edm.Int32'],
        ['Sku', 'SKU-RED-M', 'Edm.String'],
        ['ForeignId', 'shop-4711', 'Edm.String'],
        ['Ean', '4006381333931', 'Edm.String'],
        ['Mpn', 'MPN-1', 'Edm.String'],
      ]),
    );
    const id = assertCreated(res, VARIATION, ATOM_TYPE);
    ids.push(id);
    const props = atomEntryOf(res, VARIATION, id);
    assert.deepEqual(props.get('ProductId'), { type: 'Edm.Int64', isNull: false, text: productId });
    assert.equal(props.get('Price')!.type, 'Edm.Decimal');
    assert.equal(decimalText(props.get('Price')!.text), '19.99');
    assert.deepEqual(props.get('StockAmount'), { type: 'Edm.Int32', isNull: false, text: '10' });
    assert.equal(props.get('Sku')!.text, 'SKU-RED-M');
    assert.equal(props.get('ForeignId')!.text, 'shop-4711');
    assert.equal(props.get('Ean')!.text, '4006381333931');
    assert.equal(props.get('Mpn')!.text, 'MPN-1');
    for (const optional of ['Isbn', 'Upc']) assert.deepEqual(props.get(optional), { type: null, isNull: true, text: '' }, optional);
    assert.deepEqual(props.get('ExternalProductId'), { type: 'Edm.Int64', isNull: true, text: '' });
  });

  test('JSON body with numeric values as strings: 201, Price a Decimal string, StockAmount a number', async () => {
    const res = await postJson('ProductVariations', {
      ProductId: productId, Price: '24.50', StockAmount: '3', Sku: 'SKU-BLUE-L', ForeignId: 'shop-4712',
      Ean: '4006381333948', Isbn: '9783161484100', Upc: '036000291452', Mpn: 'MPN-2',
    });
    const id = assertCreated(res, VARIATION, JSON_TYPE);
    ids.push(id);
    const d = jsonEntityOf(res, VARIATION, id);
    assert.equal(d.ProductId, productId);
    assert.equal(decimalText(d.Price as string), '24.5');
    assert.equal(d.StockAmount, 3);
    assert.deepEqual(
      [d.Sku, d.ForeignId, d.Ean, d.Isbn, d.Upc, d.Mpn],
      ['SKU-BLUE-L', 'shop-4712', '4006381333948', '9783161484100', '036000291452', 'MPN-2'],
    );
    assert.equal(d.ExternalProductId, null);
  });

  test('the Ids are assigned by the service and unique', () => {
    assert.equal(ids.length, 2);
    assert.notEqual(ids[0], ids[1]);
    for (const id of ids) assert.ok(BigInt(id) > 0n);
  });

  test('Required fields missing: 400 naming the property, nothing created', async () => {
    const res = await postJson('ProductVariations', { ProductId: productId, StockAmount: '3' });
    assert.equal(res.status, 400);
    assert.match(res.body, /Price/);
  });
});

describe('DELETE /ProductImages(<id>L)', () => {
  test('204 without body, then the image is gone (404)', async () => {
    const created = await postJson('ProductImages', { ProductId: productId, ImageUrl: 'http://images.example.com/3.jpg', Type: '3' });
    const id = assertCreated(created, IMAGE, JSON_TYPE);
    const res = await asSeller(seller, `${live.root}/ProductImages(${id}L)`, { method: 'DELETE' });
    assert.equal(res.status, 204);
    assert.equal(res.body, '');
    assert.equal(res.headers['dataserviceversion'], '1.0;');
    for (const format of ['atom', 'json'] as const) {
      const gone = await get(`/ProductImages(${id}L)`, format);
      assert.equal(gone.status, 404, format);
    }
    const again = await asSeller(seller, `${live.root}/ProductImages(${id}L)`, { method: 'DELETE' });
    assert.equal(again.status, 404);
  });
});

describe('GET /ProductVariations(<id>L)/<Navigation>', () => {
  const PRODUCT_NAVS: Shape['navigations'] = [
    ['ProductImages', 'feed'], ['ProductSpecifics', 'feed'], ['ProductVariations', 'feed'], ['OptionalProductAttributes', 'feed'],
    ['DiscountOffers', 'feed'], ['CarParts', 'feed'], ['Catalogs', 'feed'], ['ChildProducts', 'feed'], ['ParentProducts', 'feed'],
    ['Listings', 'feed'], ['ListingItems', 'feed'], ['SalesOrderItems', 'feed'],
  ];
  const PRODUCT: Shape = {
    set: 'Products',
    type: 'Product',
    properties: [
      ['Id', 'Edm.Int64'], ['ForeignId', 'Edm.String'], ['ExternalProductId', 'Edm.Int64'], ['ProductType', 'Edm.Int32'],
      ['Title', 'Edm.String'], ['Description', 'Edm.String'], ['ShortDescription', 'Edm.String'], ['Price', 'Edm.Decimal'],
      ['StockAmount', 'Edm.Int32'], ['UnitQuantity', 'Edm.Decimal'], ['UnitType', 'Edm.String'], ['Ean', 'Edm.String'],
      ['Isbn', 'Edm.String'], ['Upc', 'Edm.String'], ['Mpn', 'Edm.String'], ['Brand', 'Edm.String'], ['ConditionId', 'Edm.Int32'],
      ['DisableAutomatch', 'Edm.Boolean'], ['BestOfferAutoAcceptPrice', 'Edm.Decimal'], ['BestOfferMinimumPrice', 'Edm.Decimal'],
      ['EbayCategoryId1', 'Edm.Int64'], ['EbayCategoryId2', 'Edm.Int64'], ['AutoMatched', 'Edm.Boolean'],
      ['PaymentProfileId', 'Edm.Int64'], ['ReturnProfileId', 'Edm.Int64'], ['ShippingProfileId', 'Edm.Int64'],
      ['CreationDate', 'Edm.DateTime'], ['ModificationDate', 'Edm.DateTime'],
    ],
    navigations: PRODUCT_NAVS,
  };
  const VARIATION_SPECIFIC: Shape = {
    set: 'ProductVariationSpecifics',
    type: 'ProductVariationSpecific',
    properties: [['Id', 'Edm.Int64'], ['ProductVariationId', 'Edm.Int64'], ['Name', 'Edm.String'], ['Value', 'Edm.String'], ['CreationDate', 'Edm.DateTime'], ['ModificationDate', 'Edm.DateTime']],
    navigations: [['ProductVariation', 'entry']],
  };
  const LISTING_ITEM: Shape = {
    set: 'ListingItems',
    type: 'ListingItem',
    properties: [
      ['Id', 'Edm.Int64'], ['ListingId', 'Edm.Int64'], ['ProductId', 'Edm.Int64'], ['ProductVariationId', 'Edm.Int64'], ['Sku', 'Edm.String'],
      ['Price', 'Edm.Decimal'], ['Quantity', 'Edm.Int32'], ['QuantitySold', 'Edm.Int32'],
    ],
    navigations: [['Listing', 'entry'], ['Product', 'entry'], ['ProductVariation', 'entry']],
  };
  const SALES_ORDER_ITEM: Shape = {
    set: 'SalesOrderItems',
    type: 'SalesOrderItem',
    properties: [
      ['Id', 'Edm.Int64'], ['SalesOrderId', 'Edm.Int64'], ['ProductId', 'Edm.Int64'], ['ProductVariationId', 'Edm.Int64'],
      ['PlatformItemId', 'Edm.String'], ['TransactionId', 'Edm.String'], ['Name', 'Edm.String'], ['Amount', 'Edm.Int32'],
      ['Price', 'Edm.Decimal'], ['OriginalPrice', 'Edm.Decimal'], ['CurrencyCode', 'Edm.String'], ['OriginalCurrencyCode', 'Edm.String'],
      ['Sku', 'Edm.String'], ['ForeignId', 'Edm.String'], ['ProductVariationSku', 'Edm.String'], ['ProductVariationForeignId', 'Edm.String'],
      ['CreationDate', 'Edm.DateTime'], ['ShippingDate', 'Edm.DateTime'], ['ModificationDate', 'Edm.DateTime'],
      ['ShippingStatus', 'Edm.Int32'], ['CarrierUsed', 'Edm.String'], ['TrackingNumbers', 'Edm.String'],
    ],
    navigations: [['SalesOrder', 'entry'], ['Product', 'entry'], ['ProductVariation', 'entry']],
  };

  let variationId: string;
  let otherVariationId: string;
  const specificIds: string[] = [];
  let listingItemId: bigint;
  let salesOrderItemId: bigint;

  before(async () => {
    const variation = await postJson('ProductVariations', { ProductId: productId, Price: '5', StockAmount: '2', Sku: 'NAV-1' });
    variationId = assertCreated(variation, VARIATION, JSON_TYPE);
    const other = await postJson('ProductVariations', { ProductId: productId, Price: '6', StockAmount: '2', Sku: 'NAV-2' });
    otherVariationId = assertCreated(other, VARIATION, JSON_TYPE);
    for (const [id, name, value] of [[variationId, 'Farbe', 'Rot'], [variationId, 'Größe', 'M'], [otherVariationId, 'Farbe', 'Blau']] as const) {
      const res = await postJson('ProductVariationSpecifics', { ProductVariationId: id, Name: name, Value: value });
      assert.equal(res.status, 201, res.body);
      if (id === variationId) specificIds.push(String(obj(json(res).d).Id));
    }
    // Platform rows: a listing with an item of each variation, an order with an item of each.
    const pid = BigInt(productId);
    const listingId = await seed('Listings', { ProductId: pid, PlatformItemId: '110000000001', Title: 'Spec product', Status: 1, Price: '5', Quantity: 4 });
    listingItemId = await seed('ListingItems', { ListingId: listingId, ProductId: pid, ProductVariationId: BigInt(variationId), Sku: 'NAV-1', Price: '5', Quantity: 2, QuantitySold: 1 });
    await seed('ListingItems', { ListingId: listingId, ProductId: pid, ProductVariationId: BigInt(otherVariationId), Sku: 'NAV-2', Price: '6', Quantity: 2 });
    const buyerId = await seed('Buyers', { BuyerName: 'buyer-1', Email: 'buyer@example.com' });
    const orderId = await seed('SalesOrders', { BuyerId: buyerId, PlatformOrderId: '110000000001-0001', CurrencyCode: 'EUR', ItemCount: 1, TotalAmount: 1, TotalPrice: '5' });
    salesOrderItemId = await seed('SalesOrderItems', {
      SalesOrderId: orderId, ProductId: pid, ProductVariationId: BigInt(variationId), PlatformItemId: '110000000001', TransactionId: 'T-1',
      Name: 'Spec product', Amount: 1, Price: '5', CurrencyCode: 'EUR', Sku: 'NAV-1', ProductVariationSku: 'NAV-1',
    });
    await seed('SalesOrderItems', {
      SalesOrderId: orderId, ProductId: pid, ProductVariationId: BigInt(otherVariationId), PlatformItemId: '110000000001', TransactionId: 'T-2',
      Name: 'Spec product', Amount: 1, Price: '6', CurrencyCode: 'EUR', Sku: 'NAV-2',
    });
  });

  /** A navigation feed in Atom: the feed envelope and every entry, element by element. */
  function checkAtomFeed(res: HttpResponse, nav: string, shape: Shape, ids: readonly string[]): Map<string, AtomProperty>[] {
    assert.equal(res.status, 200, res.body);
    assertHeaders(res, ATOM_TYPE);
    const feed = parseXml(res.body).documentElement;
    assert.equal(feed.namespaceURI, ATOM);
    assert.equal(feed.localName, 'feed');
    assert.equal(feed.getAttribute('xml:base'), live.root + '/');
    assert.equal(childElements(feed, ATOM, 'title')[0]?.textContent, nav);
    assert.equal(childElements(feed, ATOM, 'id')[0]?.textContent, `${live.root}/ProductVariations(${variationId}L)/${nav}`);
    assert.match(childElements(feed, ATOM, 'updated')[0]?.textContent ?? '', ISO_UTC);
    const self = childElements(feed, ATOM, 'link').find((l) => l.getAttribute('rel') === 'self');
    assert.equal(self?.getAttribute('href'), `ProductVariations(${variationId}L)/${nav}`);
    const entries = childElements(feed, ATOM, 'entry');
    assert.equal(entries.length, ids.length);
    return entries.map((e, i) => checkAtomEntry(e, shape, ids[i]!, false));
  }

  /** A navigation feed in JSON: DataServiceVersion 1.0, so {"d":[…]}. */
  function checkJsonFeed(res: HttpResponse, shape: Shape, ids: readonly string[]): Record<string, unknown>[] {
    assert.equal(res.status, 200, res.body);
    assertHeaders(res, JSON_TYPE);
    const body = json(res);
    assert.deepEqual(Object.keys(body), ['d']);
    assert.ok(Array.isArray(body.d), 'a V1 collection is an array');
    const items = body.d as Record<string, unknown>[];
    assert.equal(items.length, ids.length);
    return items.map((item, i) => checkJsonEntity(item, shape, ids[i]!));
  }

  test('Product: the owning product as an entry, in Atom and JSON', async () => {
    const atom = await get(`/ProductVariations(${variationId}L)/Product`, 'atom');
    assert.equal(atom.status, 200, atom.body);
    assertHeaders(atom, ATOM_TYPE);
    const props = atomEntryOf(atom, PRODUCT, productId);
    assert.equal(props.get('Title')!.text, 'Spec product');
    assert.deepEqual(props.get('DisableAutomatch'), { type: 'Edm.Boolean', isNull: false, text: 'false' });

    const res = await get(`/ProductVariations(${variationId}L)/Product`, 'json');
    assert.equal(res.status, 200, res.body);
    assertHeaders(res, JSON_TYPE);
    const d = jsonEntityOf(res, PRODUCT, productId);
    assert.equal(d.Title, 'Spec product');
    assert.equal(d.DisableAutomatch, false);
  });

  test('ProductVariationSpecifics: the variant\'s characteristics only, in Atom and JSON', async () => {
    const atom = checkAtomFeed(await get(`/ProductVariations(${variationId}L)/ProductVariationSpecifics`, 'atom'), 'ProductVariationSpecifics', VARIATION_SPECIFIC, specificIds);
    assert.deepEqual(atom.map((p) => [p.get('Name')!.text, p.get('Value')!.text]), [['Farbe', 'Rot'], ['Größe', 'M']]);
    assert.ok(atom.every((p) => p.get('ProductVariationId')!.text === variationId));
    const items = checkJsonFeed(await get(`/ProductVariations(${variationId}L)/ProductVariationSpecifics`, 'json'), VARIATION_SPECIFIC, specificIds);
    assert.deepEqual(items.map((d) => [d.Name, d.Value, d.ProductVariationId]), [['Farbe', 'Rot', variationId], ['Größe', 'M', variationId]]);
  });

  test('ListingItems: the listed items of the variant, in Atom and JSON', async () => {
    const ids = [String(listingItemId)];
    const atom = checkAtomFeed(await get(`/ProductVariations(${variationId}L)/ListingItems`, 'atom'), 'ListingItems', LISTING_ITEM, ids);
    assert.equal(atom[0]!.get('Sku')!.text, 'NAV-1');
    assert.deepEqual(atom[0]!.get('QuantitySold'), { type: 'Edm.Int32', isNull: false, text: '1' });
    const items = checkJsonFeed(await get(`/ProductVariations(${variationId}L)/ListingItems`, 'json'), LISTING_ITEM, ids);
    assert.deepEqual([items[0]!.Sku, items[0]!.ProductVariationId, items[0]!.Quantity, decimalText(items[0]!.Price as string)], ['NAV-1', variationId, 2, '5']);
  });

  test('SalesOrderItems: the sold items of the variant, in Atom and JSON', async () => {
    const ids = [String(salesOrderItemId)];
    const atom = checkAtomFeed(await get(`/ProductVariations(${variationId}L)/SalesOrderItems`, 'atom'), 'SalesOrderItems', SALES_ORDER_ITEM, ids);
    assert.equal(atom[0]!.get('PlatformItemId')!.text, '110000000001');
    assert.equal(atom[0]!.get('ProductVariationSku')!.text, 'NAV-1');
    const items = checkJsonFeed(await get(`/ProductVariations(${variationId}L)/SalesOrderItems`, 'json'), SALES_ORDER_ITEM, ids);
    assert.deepEqual([items[0]!.TransactionId, items[0]!.Sku, items[0]!.Amount, items[0]!.ShippingStatus], ['T-1', 'NAV-1', 1, 0]);
  });

  test('a variation without platform rows has empty ListingItems and SalesOrderItems feeds', async () => {
    const created = await postJson('ProductVariations', { ProductId: productId, Price: '7', StockAmount: '1', Sku: 'NAV-3' });
    const id = assertCreated(created, VARIATION, JSON_TYPE);
    for (const nav of ['ListingItems', 'SalesOrderItems']) {
      const atom = await get(`/ProductVariations(${id}L)/${nav}`, 'atom');
      assert.equal(atom.status, 200);
      assert.equal(childElements(parseXml(atom.body).documentElement, ATOM, 'entry').length, 0, nav);
      const res = await get(`/ProductVariations(${id}L)/${nav}`, 'json');
      assert.deepEqual(json(res), { d: [] }, nav);
    }
  });

  test('another seller sees none of it (404)', async () => {
    const stranger = await newSeller(live, 'stranger');
    for (const nav of ['Product', 'ProductVariationSpecifics', 'ListingItems', 'SalesOrderItems']) {
      const res = await asSeller(stranger, `${live.root}/ProductVariations(${variationId}L)/${nav}`, { headers: { Accept: 'application/json' } });
      assert.equal(res.status, 404, nav);
    }
  });
});
