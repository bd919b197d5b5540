/**
 * Unit tests of the JSON verbose writers (src/odata/json/writer.ts): exact output strings for
 * entities of the real model (member order, value forms, deferred and expanded navigations in V1
 * and V2 shapes, twin navigations, $select), feeds, links, properties and operation results. Every output
 * must also be valid JSON.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../src/model/catalogue-model';
import type { EntityTypeDef } from '../../src/model/types';
import type { EdmValue } from '../../src/odata/edm';
import type { EntityRecord, WriteContext } from '../../src/odata/entity';
import {
  jsonEntity,
  jsonEntityDocument,
  jsonFeedEnd,
  jsonFeedSeparator,
  jsonFeedStart,
  jsonLinkDocument,
  jsonLinksDocument,
  jsonOperationResult,
  jsonPropertyDocument,
} from '../../src/odata/json/writer';

const ROOT = 'http://localhost:8080/publicapi/v1/api.svc';
const UPDATED = '2024-05-01T10:00:00Z';
const V1: WriteContext = { serviceRoot: ROOT, version: 1, updated: UPDATED };
const V2: WriteContext = { serviceRoot: ROOT, version: 2, updated: UPDATED };

function type(name: string): EntityTypeDef {
  const t = model.typeByName.get(name);
  assert.ok(t, `model type ${name}`);
  return t;
}

function record(
  typeName: string,
  values: Record<string, EdmValue>,
  expanded?: ReadonlyMap<string, EntityRecord | null | readonly EntityRecord[]>,
): EntityRecord {
  return { type: type(typeName), values, ...(expanded ? { expanded } : {}) };
}

/** Parses (which must succeed) and returns the output. */
function valid(json: string): string {
  assert.doesNotThrow(() => JSON.parse(json), `not valid JSON: ${json}`);
  return json;
}

// 2012-01-01T12:00:00Z and a minute later.
const T0 = 1325419200000;
const T1 = 1325419260000;

const specific = record('ProductSpecific', {
  Id: 7n,
  ProductId: 2n,
  Name: 'Brand',
  Value: 'ACME "Pro" a/b',
  Type: null,
  CreationDate: T0,
  ModificationDate: T1,
});

const SPECIFIC_JSON = String.raw`{"__metadata":{"uri":"http://localhost:8080/publicapi/v1/api.svc/ProductSpecifics(7L)","type":"CatalogueService.ProductSpecific"},"Id":"7","ProductId":"2","Name":"Brand","Value":"ACME \"Pro\" a/b","Type":null,"CreationDate":"\/Date(1325419200000)\/","ModificationDate":"\/Date(1325419260000)\/","Product":{"__deferred":{"uri":"http://localhost:8080/publicapi/v1/api.svc/ProductSpecifics(7L)/Product"}}}`;

const variation = (expanded?: ReadonlyMap<string, EntityRecord | null | readonly EntityRecord[]>) =>
  record(
    'ProductVariation',
    {
      Id: 12n,
      ProductId: 2n,
      Price: '80',
      StockAmount: 5,
      Sku: 'SKU-1',
      ForeignId: null,
      ExternalProductId: 9007199254740993n,
      Ean: '4006381333931',
      Isbn: null,
      Upc: null,
      Mpn: null,
      CreationDate: 0,
      ModificationDate: -86400000,
    },
    expanded,
  );

const VAR_URI = `${ROOT}/ProductVariations(12L)`;
const VARIATION_HEAD = String.raw`{"__metadata":{"uri":"${VAR_URI}","type":"CatalogueService.ProductVariation"},"Id":"12","ProductId":"2","Price":"80","StockAmount":5,"Sku":"SKU-1","ForeignId":null,"ExternalProductId":"9007199254740993","Ean":"4006381333931","Isbn":null,"Upc":null,"Mpn":null,"CreationDate":"\/Date(0)\/","ModificationDate":"\/Date(-86400000)\/"`;
/** A variation's navigations in model order: both ProductVariationImages and its twin ProductVariationPictures. */
const VARIATION_NAVS = ['Product', 'ProductVariationSpecifics', 'ProductVariationImages', 'ProductVariationPictures', 'DiscountOffers', 'SalesOrderItems', 'ListingItems'];
const deferred = (uri: string, nav: string) => `"${nav}":{"__deferred":{"uri":"${uri}/${nav}"}}`;
const VARIATION_JSON =
  VARIATION_HEAD +
  ',' +
  VARIATION_NAVS
    .map((n) => deferred(VAR_URI, n))
    .join(',') +
  '}';

const image = (id: bigint, position: number) =>
  record('ProductVariationImage', {
    Id: id,
    ProductVariationId: 12n,
    ImageUrl: `http://img.example/${id}.jpg`,
    ImagePosition: position,
    CreationDate: T0,
    ModificationDate: T0,
  });
const imageJson = (id: bigint, position: number) =>
  String.raw`{"__metadata":{"uri":"${ROOT}/ProductVariationImages(${id}L)","type":"CatalogueService.ProductVariationImage"},"Id":"${id}","ProductVariationId":"12","ImageUrl":"http://img.example/${id}.jpg","ImagePosition":${position},"CreationDate":"\/Date(${T0})\/","ModificationDate":"\/Date(${T0})\/",` +
  deferred(`${ROOT}/ProductVariationImages(${id}L)`, 'ProductVariation') +
  '}';

test('the model order the expected strings assume', () => {
  assert.deepEqual(
    type('ProductVariation').navigations.map((n) => n.name),
    VARIATION_NAVS,
  );
  assert.deepEqual(type('ProductSpecific').navigations.map((n) => n.name), ['Product']);
});

test('a ProductSpecific: __metadata, properties in model order, typed values, deferred navigation', () => {
  assert.equal(valid(jsonEntity(V1, specific)), SPECIFIC_JSON);
  assert.equal(valid(jsonEntity(V2, specific)), SPECIFIC_JSON);
  assert.equal(valid(jsonEntityDocument(V1, specific)), `{"d":${SPECIFIC_JSON}}`);
  const d = JSON.parse(jsonEntityDocument(V1, specific)).d;
  assert.deepEqual(Object.keys(d), ['__metadata', 'Id', 'ProductId', 'Name', 'Value', 'Type', 'CreationDate', 'ModificationDate', 'Product']);
  assert.equal(d.CreationDate, `/Date(${T0})/`);
  assert.equal(d.Value, 'ACME "Pro" a/b');
});

test('a ProductVariation: Int64 and Decimal as strings, Int32 as a number, DateTime escaped, nulls, seven deferred navigations', () => {
  const json = valid(jsonEntity(V1, variation()));
  assert.equal(json, VARIATION_JSON);
  assert.ok(json.includes('"ModificationDate":"\\/Date(-86400000)\\/"'), 'raw text carries the \\/ escape');
  assert.ok(json.includes('"StockAmount":5,'));
  assert.ok(json.includes('"ExternalProductId":"9007199254740993"'), 'beyond 2^53, exact');
  // The shop connector reads both names from every variation.
  const d = JSON.parse(json);
  assert.equal(d.ProductVariationPictures.__deferred.uri, `${VAR_URI}/ProductVariationPictures`);
  assert.equal(d.ProductVariationImages.__deferred.uri, `${VAR_URI}/ProductVariationImages`);
});

test('a property missing from values is written as null', () => {
  const rec = record('ProductSpecific', { Id: 1n, ProductId: 2n, Name: 'n', Value: 'v', CreationDate: T0, ModificationDate: T0 });
  assert.ok(valid(jsonEntity(V1, rec)).includes('"Value":"v","Type":null,"CreationDate"'));
});

test('expanded to-many under ProductVariationPictures: V1 plain array, V2 results; ProductVariationImages stays deferred', () => {
  const rec = variation(new Map([['ProductVariationPictures', [image(31n, 0), image(32n, 1)]]]));
  const others = (except: string) =>
    VARIATION_NAVS.map((n) =>
      n === except ? null : deferred(VAR_URI, n),
    );
  const members = (pictures: string) =>
    others('ProductVariationPictures')
      .map((m) => m ?? `"ProductVariationPictures":${pictures}`)
      .join(',');
  const images = `${imageJson(31n, 0)},${imageJson(32n, 1)}`;
  assert.equal(valid(jsonEntity(V1, rec)), `${VARIATION_HEAD},${members(`[${images}]`)}}`);
  assert.equal(valid(jsonEntity(V2, rec)), `${VARIATION_HEAD},${members(`{"results":[${images}]}`)}}`);
  const v1 = JSON.parse(jsonEntity(V1, rec));
  assert.equal(v1.ProductVariationImages.__deferred.uri, `${VAR_URI}/ProductVariationImages`);
  assert.equal(v1.ProductVariationPictures[1].__metadata.uri, `${ROOT}/ProductVariationImages(32L)`);
  // Empty collections.
  const empty = variation(new Map([['ProductVariationImages', []]]));
  assert.ok(valid(jsonEntity(V1, empty)).includes(`,"ProductVariationImages":[],"ProductVariationPictures":{"__deferred"`));
  assert.ok(valid(jsonEntity(V2, empty)).includes(`,"ProductVariationImages":{"results":[]},"ProductVariationPictures":{"__deferred"`));
});

test('expanded to-one: the nested entity with its own absolute uri, or null', () => {
  const img = record(
    'ProductVariationImage',
    { Id: 31n, ProductVariationId: 12n, ImageUrl: 'http://img.example/31.jpg', ImagePosition: 0, CreationDate: T0, ModificationDate: T0 },
    new Map([['ProductVariation', variation()]]),
  );
  const head = imageJson(31n, 0).slice(0, imageJson(31n, 0).indexOf(',"ProductVariation":'));
  assert.equal(valid(jsonEntity(V1, img)), `${head},"ProductVariation":${VARIATION_JSON}}`);
  assert.equal(valid(jsonEntity(V2, img)), `${head},"ProductVariation":${VARIATION_JSON}}`);

  const orphan = record('ProductSpecific', { ...specific.values }, new Map([['Product', null]]));
  assert.equal(valid(jsonEntity(V2, orphan)), SPECIFIC_JSON.replace(/"Product":\{"__deferred".*\}\}\}$/, '"Product":null}'));
});

test('nested expansions use the V2 results shape at every level', () => {
  const rec = record(
    'ProductSpecific',
    { ...specific.values },
    new Map([
      [
        'Product',
        record(
          'Product',
          { Id: 2n, Title: 'T', Price: '1.5' },
          new Map([['ProductVariations', [variation(new Map([['ProductVariationPictures', [image(31n, 0)]]]))]]]),
        ),
      ],
    ]),
  );
  const d = JSON.parse(valid(jsonEntity(V2, rec)));
  assert.equal(d.Product.__metadata.uri, `${ROOT}/Products(2L)`);
  assert.equal(d.Product.Price, '1.5');
  assert.equal(d.Product.Description, null);
  assert.equal(d.Product.ProductVariations.results[0].ProductVariationPictures.results[0].Id, '31');
  const d1 = JSON.parse(valid(jsonEntity(V1, rec)));
  assert.equal(d1.Product.ProductVariations[0].ProductVariationPictures[0].Id, '31');
});

test('$select: only the selected properties; navigations only when selected, deferred unless expanded', () => {
  const ctx: WriteContext = { ...V2, select: new Set(['Sku', 'Price', 'Product']) };
  assert.equal(
    valid(jsonEntity(ctx, variation())),
    `{"__metadata":{"uri":"${VAR_URI}","type":"CatalogueService.ProductVariation"},"Price":"80","Sku":"SKU-1",${deferred(VAR_URI, 'Product')}}`,
  );
  // An expanded navigation that is selected is written expanded.
  const rec = variation(new Map([['ProductVariationPictures', [image(31n, 0)]]]));
  const withPictures: WriteContext = { ...V1, select: new Set(['Id', 'ProductVariationPictures']) };
  assert.equal(
    valid(jsonEntity(withPictures, rec)),
    `{"__metadata":{"uri":"${VAR_URI}","type":"CatalogueService.ProductVariation"},"Id":"12","ProductVariationPictures":[${imageJson(31n, 0)}]}`,
  );
  // Expanded but not selected: not written at all.
  assert.equal(
    valid(jsonEntity({ ...V1, select: new Set(['Id']) }, rec)),
    `{"__metadata":{"uri":"${VAR_URI}","type":"CatalogueService.ProductVariation"},"Id":"12"}`,
  );
  // Nav/Prop selects inside the expanded entities.
  const nested: WriteContext = { ...V1, select: new Set(['Id', 'ProductVariationPictures/ImageUrl']) };
  assert.equal(
    valid(jsonEntity(nested, rec)),
    `{"__metadata":{"uri":"${VAR_URI}","type":"CatalogueService.ProductVariation"},"Id":"12","ProductVariationPictures":[{"__metadata":{"uri":"${ROOT}/ProductVariationImages(31L)","type":"CatalogueService.ProductVariationImage"},"ImageUrl":"http://img.example/31.jpg"}]}`,
  );
  // Nav together with Nav/Prop: the whole navigation wins.
  const both: WriteContext = { ...V1, select: new Set(['Id', 'ProductVariationPictures/ImageUrl', 'ProductVariationPictures']) };
  assert.equal(
    valid(jsonEntity(both, rec)),
    `{"__metadata":{"uri":"${VAR_URI}","type":"CatalogueService.ProductVariation"},"Id":"12","ProductVariationPictures":[${imageJson(31n, 0)}]}`,
  );
  // Nav/* is * inside the expanded entities: all their properties and (deferred) navigations.
  const star: WriteContext = { ...V2, select: new Set(['ProductVariationPictures/*']) };
  assert.equal(
    valid(jsonEntity(star, rec)),
    `{"__metadata":{"uri":"${VAR_URI}","type":"CatalogueService.ProductVariation"},"ProductVariationPictures":{"results":[${imageJson(31n, 0)}]}}`,
  );
  const starProps: WriteContext = { ...V2, select: new Set(['ProductVariationPictures/Id']) };
  assert.equal(
    valid(jsonEntity(starProps, rec)),
    `{"__metadata":{"uri":"${VAR_URI}","type":"CatalogueService.ProductVariation"},"ProductVariationPictures":{"results":[{"__metadata":{"uri":"${ROOT}/ProductVariationImages(31L)","type":"CatalogueService.ProductVariationImage"},"Id":"31"}]}}`,
  );
  // * selects every property and every navigation: the same as no $select.
  assert.equal(valid(jsonEntity({ ...V1, select: new Set(['*']) }, variation())), VARIATION_JSON);
  // An empty selection still writes __metadata.
  assert.equal(
    valid(jsonEntity({ ...V1, select: new Set(['Nothing']) }, specific)),
    `{"__metadata":{"uri":"${ROOT}/ProductSpecifics(7L)","type":"CatalogueService.ProductSpecific"}}`,
  );
});

test('feeds: V1 array, V2 results with __count (a string) before and __next after', () => {
  const other = record('ProductSpecific', { ...specific.values, Id: 8n, Name: 'Colour', Value: 'Red' });
  const otherJson = jsonEntity(V1, other);
  const feed = (ctx: WriteContext, count?: bigint | number, next?: string) =>
    jsonFeedStart(ctx, count === undefined ? {} : { count }) +
    jsonEntity(ctx, specific) +
    jsonFeedSeparator +
    jsonEntity(ctx, other) +
    jsonFeedEnd(ctx, next === undefined ? {} : { next });
  const next = `${ROOT}/ProductSpecifics?$skiptoken=8L`;
  assert.equal(valid(feed(V1, 2n, next)), `{"d":[${SPECIFIC_JSON},${otherJson}]}`);
  assert.equal(valid(feed(V1)), `{"d":[${SPECIFIC_JSON},${otherJson}]}`);
  assert.equal(valid(feed(V2, 2n, next)), `{"d":{"__count":"2","results":[${SPECIFIC_JSON},${otherJson}],"__next":"${next}"}}`);
  assert.equal(valid(feed(V2, 42)), `{"d":{"__count":"42","results":[${SPECIFIC_JSON},${otherJson}]}}`);
  assert.equal(valid(feed(V2)), `{"d":{"results":[${SPECIFIC_JSON},${otherJson}]}}`);
  assert.equal(valid(jsonFeedStart(V2, {}) + jsonFeedEnd(V2, {})), '{"d":{"results":[]}}');
  assert.equal(valid(jsonFeedStart(V1, {}) + jsonFeedEnd(V1, {})), '{"d":[]}');
  assert.equal(jsonFeedSeparator, ',');
  const parsed = JSON.parse(feed(V2, 2n, next)).d;
  assert.deepEqual(Object.keys(parsed), ['__count', 'results', '__next']);
  assert.equal(parsed.__count, '2');
});

test('property documents and operation results', () => {
  assert.equal(valid(jsonPropertyDocument('Price', 'Edm.Decimal', '-0.5')), '{"d":{"Price":"-0.5"}}');
  assert.equal(valid(jsonPropertyDocument('StockAmount', 'Edm.Int32', 0)), '{"d":{"StockAmount":0}}');
  assert.equal(valid(jsonPropertyDocument('Id', 'Edm.Int64', 9223372036854775807n)), '{"d":{"Id":"9223372036854775807"}}');
  assert.equal(valid(jsonPropertyDocument('PaidDate', 'Edm.DateTime', T0)), String.raw`{"d":{"PaidDate":"\/Date(1325419200000)\/"}}`);
  assert.equal(valid(jsonPropertyDocument('Type', 'Edm.Int32', null)), '{"d":{"Type":null}}');
  assert.equal(valid(jsonOperationResult('ProductIsListed', 'Edm.Boolean', true)), '{"d":{"ProductIsListed":true}}');
  assert.equal(valid(jsonOperationResult('SetEbayCategory', 'Edm.Boolean', false)), '{"d":{"SetEbayCategory":false}}');
  assert.equal(valid(jsonOperationResult('GetSalesOrderHistory', 'Edm.String', 'a\nb')), '{"d":{"GetSalesOrderHistory":"a\\nb"}}');
});

test('links: single and collections in V1 and V2 shapes', () => {
  const a = `${ROOT}/Catalogs(5L)`;
  const b = `${ROOT}/Catalogs(6L)`;
  assert.equal(valid(jsonLinkDocument(a)), `{"d":{"uri":"${a}"}}`);
  assert.equal(valid(jsonLinksDocument(V1, [a, b], { count: 2 })), `{"d":[{"uri":"${a}"},{"uri":"${b}"}]}`);
  assert.equal(valid(jsonLinksDocument(V2, [a, b], { count: 2n })), `{"d":{"__count":"2","results":[{"uri":"${a}"},{"uri":"${b}"}]}}`);
  assert.equal(valid(jsonLinksDocument(V2, [a], {})), `{"d":{"results":[{"uri":"${a}"}]}}`);
  assert.equal(valid(jsonLinksDocument(V1, [], {})), '{"d":[]}');
});

test('any string content gives valid JSON that reads back exactly', () => {
  const nasty = 'q"b\\s/\u0000\u0001\u001f\t\r\n\u2028\u2029\u007f\ud800 lone \udfff é 🎉 </script>';
  const rec = record('ProductSpecific', { ...specific.values, Name: nasty, Value: nasty });
  for (const ctx of [V1, V2]) {
    const d = JSON.parse(valid(jsonEntityDocument(ctx, rec))).d;
    assert.equal(d.Name, nasty);
    assert.equal(d.Value, nasty);
  }
  assert.equal(JSON.parse(valid(jsonOperationResult('GetSalesOrderHistory', 'Edm.String', nasty))).d.GetSalesOrderHistory, nasty);
  assert.equal(JSON.parse(valid(jsonPropertyDocument('Name', 'Edm.String', nasty))).d.Name, nasty);
  assert.equal(JSON.parse(valid(jsonLinkDocument(nasty))).d.uri, nasty);
  assert.equal(JSON.parse(valid(jsonLinksDocument(V2, [nasty], {}))).d.results[0].uri, nasty);
  assert.equal(JSON.parse(valid(jsonFeedStart(V2, {}) + jsonFeedEnd(V2, { next: nasty }))).d.__next, nasty);
  // A service root with characters that need escaping (it comes from the Host header).
  const odd: WriteContext = { serviceRoot: 'http://h"o\\st/x', version: 1, updated: UPDATED };
  const d = JSON.parse(valid(jsonEntity(odd, specific)));
  assert.equal(d.__metadata.uri, 'http://h"o\\st/x/ProductSpecifics(7L)');
  assert.equal(d.Product.__deferred.uri, 'http://h"o\\st/x/ProductSpecifics(7L)/Product');
});

test('every entity type of the model writes valid JSON with one deferred member per navigation', () => {
  for (const t of model.entityTypes) {
    const values: Record<string, EdmValue> = {};
    for (const p of t.properties) values[p.name] = null;
    values['Id'] = 1n;
    const d = JSON.parse(valid(jsonEntityDocument(V2, { type: t, values }))).d;
    assert.deepEqual(Object.keys(d), ['__metadata', ...t.properties.map((p) => p.name), ...t.navigations.map((n) => n.name)]);
    assert.equal(d.__metadata.uri, `${ROOT}/${t.setName}(1L)`);
    assert.equal(d.__metadata.type, `CatalogueService.${t.name}`);
  }
});

test('a record without an Int64 Id, or expanded with the wrong shape, is a programming error', () => {
  assert.throws(() => jsonEntity(V1, record('ProductSpecific', { Id: null })), /without an Int64 Id/);
  assert.throws(() => jsonEntity(V1, variation(new Map([['ProductVariationImages', image(31n, 0)]]))), /to-many/);
  assert.throws(() => jsonEntity(V1, record('ProductSpecific', { Id: 1n }, new Map([['Product', []]]))), /to-one/);
});
