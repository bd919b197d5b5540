/**
 * Unit tests of the JSON verbose request readers (src/odata/json/reader.ts): the loosely typed
 * bodies the real connector sends (docs/protocol.md, "Formats"), bindings in all three forms, the d
 * wrapper, and every rejection as an ODataError 400 that names what is wrong.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../src/model/catalogue-model';
import type { EntityTypeDef } from '../../src/model/types';
import { ODataError } from '../../src/odata/errors';
import { readJsonEntity, readJsonLink } from '../../src/odata/json/reader';
import { entityType as type } from '../support/model-types';

const ROOT = 'http://localhost:8080/publicapi/v1/api.svc';

const Variation = type('ProductVariation');
const SalesOrder = type('SalesOrder');
const SalesOrderItem = type('SalesOrderItem');
const Catalog = type('Catalog');
const Product = type('Product');

const buf = (text: string) => Buffer.from(text, 'utf8');
const read = (t: EntityTypeDef, text: string) => readJsonEntity(t, buf(text));

/** The call must throw an ODataError 400 whose message matches. */
function rejects(fn: () => unknown, message: RegExp | string): string {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ODataError, `expected an ODataError, got ${String(caught)}`);
  assert.equal(caught.status, 400);
  if (typeof message === 'string') assert.equal(caught.message, message);
  else assert.match(caught.message, message);
  return caught.message;
}

test('the connector create body: loosely typed values, \\/ and \\u escapes, trailing \\n\\r\\r\\n', () => {
  const body =
    '{"ProductId":"2","Price":"80.000000","StockAmount":"5","Sku":"A\\/B-1","ForeignId":1234,' +
    '"ExternalProductId":null,"Ean":"4006381333931","Isbn":null,"Mpn":"M\\u00fcller \\u20ac","Upc":null}\n\r\r\n';
  const p = read(Variation, body);
  assert.deepEqual(
    [...p.values],
    [
      ['ProductId', 2n],
      ['Price', '80'],
      ['StockAmount', 5],
      ['Sku', 'A/B-1'],
      ['ForeignId', '1234'],
      ['ExternalProductId', null],
      ['Ean', '4006381333931'],
      ['Isbn', null],
      ['Mpn', 'Müller €'],
      ['Upc', null],
    ],
  );
  assert.equal(p.bindings.size, 0);
});

test('MERGE bodies of orders and items', () => {
  assert.deepEqual([...read(SalesOrderItem, '{"ShippingStatus":"1"}').values], [['ShippingStatus', 1]]);
  assert.deepEqual(
    [...read(SalesOrderItem, '{"CarrierUsed":"dhl","TrackingNumbers":"a;b"}\n\r').values],
    [
      ['CarrierUsed', 'dhl'],
      ['TrackingNumbers', 'a;b'],
    ],
  );
  assert.deepEqual([...read(SalesOrder, '{"PaidAmount":"59.90"}').values], [['PaidAmount', '59.9']]);
  assert.deepEqual([...read(SalesOrder, '{"PaidAmount":99.9}').values], [['PaidAmount', '99.9']]);
  assert.deepEqual([...read(SalesOrder, '{"ForeignOrderId":"_ORDER_IMPORT_FAILED_"}').values], [['ForeignOrderId', '_ORDER_IMPORT_FAILED_']]);
  assert.deepEqual([...read(SalesOrder, '{"PaidDate":"\\/Date(1379316072000)\\/"}').values], [['PaidDate', 1379316072000]]);
  assert.deepEqual([...read(SalesOrder, '{"PaidDate":"2013-09-16T07:21:12"}').values], [['PaidDate', Date.UTC(2013, 8, 16, 7, 21, 12)]]);
  // Offsets are converted to UTC: ISO ones, and \/Date(ms+mmmm)\/ whose ms are the local time.
  assert.deepEqual([...read(SalesOrder, '{"PaidDate":"2013-09-16T09:21:12+02:00"}').values], [['PaidDate', 1379316072000]]);
  assert.deepEqual([...read(SalesOrder, '{"PaidDate":"\\/Date(1379323272000+0120)\\/"}').values], [['PaidDate', 1379316072000]]);
  assert.deepEqual([...read(SalesOrder, '{"PaidDate":"\\/Date(-62135596800000)\\/"}').values], [['PaidDate', -62135596800000]]);
  assert.deepEqual([...read(SalesOrder, '{"PaidDate":"0001-01-01T00:00:00"}').values], [['PaidDate', -62135596800000]]);
  assert.deepEqual([...read(Catalog, '{"IsRootLevel":"true","Name":"C"}').values], [['IsRootLevel', true], ['Name', 'C']]);
  // The key is ignored unread, as WCF Data Services ignores it.
  assert.deepEqual([...read(Variation, '{"Id":"5","ProductId":7}').values], [['ProductId', 7n]]);
  assert.deepEqual([...read(Variation, '{}').values], []);
});

test('a UTF-8 BOM, CRLF and tabs around the body are tolerated', () => {
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf('\r\n\t{"Sku":"x"} \t\r\n')]);
  assert.deepEqual([...readJsonEntity(Variation, bom).values], [['Sku', 'x']]);
});

test('the optional d wrapper, only when it is the sole member and an object', () => {
  assert.deepEqual([...read(Variation, '{"d":{"Sku":"x","Price":"1.50"}}').values], [['Sku', 'x'], ['Price', '1.5']]);
  rejects(() => read(Variation, '{"d":{"Sku":"x"},"Price":"1"}'), "The property 'd' does not exist on type 'CatalogueService.ProductVariation'.");
  rejects(() => read(Variation, '{"d":"x"}'), "The property 'd' does not exist on type 'CatalogueService.ProductVariation'.");
  rejects(() => read(Variation, '{"d":[{"Sku":"x"}]}'), /property 'd' does not exist/);
});

test('__metadata: a matching type is accepted, another type or a non-object is refused', () => {
  const ok = read(Variation, '{"__metadata":{"type":"CatalogueService.ProductVariation","uri":"x"},"Sku":"a"}');
  assert.deepEqual([...ok.values], [['Sku', 'a']]);
  assert.equal(read(Variation, '{"__metadata":{},"Sku":"a"}').values.get('Sku'), 'a');
  rejects(() => read(Variation, '{"__metadata":{"type":"CatalogueService.Product"}}'), /'CatalogueService.Product'.*'CatalogueService.ProductVariation'/);
  rejects(() => read(Variation, '{"__metadata":{"type":"ProductVariation"}}'), /does not match/);
  rejects(() => read(Variation, '{"__metadata":"x"}'), /'__metadata' must be an object/);
});

test('values that are not of their type: 400 naming the property and the type', () => {
  assert.equal(
    rejects(() => read(Variation, '{"Price":"abc"}'), /Price/),
    "The value of property 'Price' is not a valid Edm.Decimal: 'abc' is not a Decimal.",
  );
  rejects(() => read(Variation, '{"Price":"1.1234567"}'), /property 'Price' is not a valid Edm\.Decimal: .*more than 6 decimal places/);
  rejects(() => read(Variation, '{"Price":1e21}'), /property 'Price' is not a valid Edm\.Decimal/);
  rejects(() => read(Variation, '{"StockAmount":1.5}'), /property 'StockAmount' is not a valid Edm\.Int32/);
  rejects(() => read(Variation, '{"StockAmount":"2147483648"}'), /property 'StockAmount' is not a valid Edm\.Int32: .*outside the Int32 range/);
  rejects(() => read(Variation, '{"StockAmount":true}'), "The value of property 'StockAmount' is not a valid Edm.Int32: true was sent.");
  rejects(() => read(Variation, '{"ProductId":"2x"}'), /property 'ProductId' is not a valid Edm\.Int64/);
  rejects(() => read(Variation, '{"ProductId":1e20}'), /property 'ProductId' is not a valid Edm\.Int64/);
  rejects(() => read(Variation, '{"ProductId":"9223372036854775808"}'), /property 'ProductId' is not a valid Edm\.Int64/);
  rejects(() => read(Variation, '{"Sku":{"a":1}}'), "The value of property 'Sku' is not a valid Edm.String: an object was sent.");
  rejects(() => read(Variation, '{"Sku":["a"]}'), "The value of property 'Sku' is not a valid Edm.String: an array was sent.");
  rejects(() => read(Variation, '{"Sku":true}'), /property 'Sku' is not a valid Edm\.String/);
  rejects(() => read(Catalog, '{"IsRootLevel":"yes"}'), /property 'IsRootLevel' is not a valid Edm\.Boolean/);
  rejects(() => read(Catalog, '{"IsRootLevel":1}'), /property 'IsRootLevel' is not a valid Edm\.Boolean/);
  rejects(() => read(SalesOrder, '{"PaidDate":"tomorrow"}'), /property 'PaidDate' is not a valid Edm\.DateTime/);
  rejects(() => read(SalesOrder, '{"PaidDate":1379316072000}'), /property 'PaidDate' is not a valid Edm\.DateTime/);
  // Lengths are the catalogue layer's business, not the reader's.
  assert.equal(read(Variation, `{"Sku":"${'x'.repeat(1000)}"}`).values.get('Sku'), 'x'.repeat(1000));
});

test('unknown members, __proto__ and constructor are refused without touching any prototype', () => {
  rejects(() => read(Variation, '{"Colour":"red"}'), "The property 'Colour' does not exist on type 'CatalogueService.ProductVariation'.");
  rejects(() => read(Variation, '{"sku":"x"}'), "The property 'sku' does not exist on type 'CatalogueService.ProductVariation'.");
  rejects(() => read(Variation, '{"__proto__":{"Sku":"x"}}'), "The property '__proto__' does not exist on type 'CatalogueService.ProductVariation'.");
  rejects(() => read(Variation, '{"d":{"__proto__":{"polluted":true}}}'), /property '__proto__' does not exist/);
  rejects(() => read(Variation, '{"constructor":{"prototype":{"polluted":true}}}'), /property 'constructor' does not exist/);
  rejects(() => read(Variation, '{"hasOwnProperty":"x"}'), /property 'hasOwnProperty' does not exist/);
  rejects(() => read(Variation, '{"toString":"x"}'), /property 'toString' does not exist/);
  rejects(() => read(Variation, '{"Product":{"__metadata":{"uri":"Products(1L)"}},"__proto__":1}'), /property '__proto__' does not exist/);
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  // A long unknown name is clipped in the message.
  const message = rejects(() => read(Variation, `{"${'N'.repeat(5000)}":1}`), /does not exist/);
  assert.ok(message.length < 200, message);
});

test('malformed bodies: empty, not UTF-8, not JSON, not an object', () => {
  rejects(() => readJsonEntity(Variation, Buffer.alloc(0)), /request body is empty/);
  rejects(() => read(Variation, ' \r\n\r\n'), /request body is empty/);
  rejects(() => readJsonEntity(Variation, Buffer.from([0xef, 0xbb, 0xbf])), /request body is empty/);
  rejects(() => readJsonEntity(Variation, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])), /not valid UTF-8/);
  rejects(() => read(Variation, '{"Price":1'), "The request body is not valid JSON: Expected ',' or '}' after property value at position 10.");
  rejects(() => read(Variation, '{"Price" 1}'), "The request body is not valid JSON: Expected ':' after property name at position 9.");
  rejects(() => read(Variation, '{"Price":1} x'), /not valid JSON: Unexpected non-whitespace character after JSON at position 12/);
  rejects(() => read(Variation, '{"Sku":"a\u0001b"}'), /not valid JSON: Bad control character .* at position 9/);
  rejects(() => read(Variation, "{'Sku':'x'}"), /not valid JSON/);
  rejects(() => read(Variation, '{"Sku":x}'), /not valid JSON/);
  // The body is not echoed back.
  const secret = 'A'.repeat(3000);
  const message = rejects(() => read(Variation, `{"Sku":"${secret}", oops}`), /not valid JSON/);
  assert.ok(message.length < 200, message);
  rejects(() => read(Variation, `{"Sku":x${secret}}`), "The request body is not valid JSON: Unexpected token 'x'.");
  rejects(() => read(Variation, '[{"Sku":"x"}]'), /must be a JSON object/);
  rejects(() => read(Variation, 'null'), /must be a JSON object/);
  rejects(() => read(Variation, '"Sku"'), /must be a JSON object/);
  rejects(() => read(Variation, '42'), /must be a JSON object/);
});

test('nesting: 100 levels are parsed, 101 are refused before JSON.parse', () => {
  // 1 object + 99 arrays = 100 levels: gets past the limit, then fails on the type.
  const hundred = '{"Sku":' + '['.repeat(99) + ']'.repeat(99) + '}';
  rejects(() => read(Variation, hundred), /property 'Sku' is not a valid Edm\.String/);
  const hundredOne = '{"Sku":' + '['.repeat(100) + ']'.repeat(100) + '}';
  rejects(() => read(Variation, hundredOne), /JSON nesting deeper than 100/);
  // Unbalanced and deep (not even valid JSON): the limit still answers first, with a 400.
  rejects(() => read(Variation, '['.repeat(100000)), /JSON nesting deeper than 100/);
  // Brackets inside strings do not count, escaped quotes do not end a string.
  const inString = '[{'.repeat(300);
  assert.equal(read(Variation, JSON.stringify({ Sku: inString })).values.get('Sku'), inString);
  const tricky = '\\"[[[' + '['.repeat(200);
  assert.equal(read(Variation, JSON.stringify({ Sku: tricky, Mpn: '\\' })).values.get('Sku'), tricky);
  // Separate nestings do not add up.
  const wide = '{"Product":{"__metadata":{"uri":"Products(1L)"}},"Sku":"' + '{'.repeat(150) + '"}';
  assert.equal(read(Variation, wide).bindings.get('Product')?.[0], 'Products(1L)');
});

test('numbers a double cannot hold are read from the digits sent, with the same rules as every other body', () => {
  const exact = (text: string) => read(Variation, text).values;
  assert.deepEqual([...exact('{"ExternalProductId":9007199254740993,"ProductId":-9223372036854775808}')], [['ExternalProductId', 9007199254740993n], ['ProductId', -9223372036854775808n]]);
  assert.deepEqual([...exact('{"Price":123456789012.123456}')], [['Price', '123456789012.123456']]);
  // Another member of such a body: numbers a double holds are read as ever (1.0 is an Int32 1),
  // the last of repeated names wins as with JSON.parse, and a String takes the digits as sent.
  assert.deepEqual(
    [...exact('{"ExternalProductId":9007199254740993,"StockAmount":1.0,"Sku":"a","Sku":"b","Mpn":123456789012345678901234567890}')],
    [['ExternalProductId', 9007199254740993n], ['StockAmount', 1], ['Sku', 'b'], ['Mpn', '123456789012345678901234567890']],
  );
  rejects(() => read(Variation, '{"ExternalProductId":9223372036854775808}'), "The value of property 'ExternalProductId' is not a valid Edm.Int64: 9223372036854775808 is outside the Int64 range.");
  rejects(() => read(Variation, '{"ExternalProductId":1e400}'), /property 'ExternalProductId' is not a valid Edm\.Int64: '1e400' is not an Int64/);
  rejects(() => read(Variation, '{"StockAmount":99999999999999999}'), /'StockAmount' is not a valid Edm\.Int32: 99999999999999999 is outside the Int32 range/);
  rejects(() => read(Variation, '{"Price":1.12345678901234567}'), /'Price' is not a valid Edm\.Decimal: 1\.12345678901234567 has more than 6 decimal places/);
  rejects(() => read(Catalog, '{"IsRootLevel":12345678901234567}'), /'IsRootLevel' is not a valid Edm\.Boolean: 12345678901234567 was sent/);
  // The same guards as on the common path: __proto__ is a plain (unknown) name, nesting is capped,
  // and a syntax error is a clean message.
  rejects(() => read(Variation, '{"ExternalProductId":9007199254740993,"__proto__":{"Sku":"x"}}'), /property '__proto__' does not exist/);
  assert.equal(({} as Record<string, unknown>).Sku, undefined);
  rejects(() => read(Variation, '{"ExternalProductId":9007199254740993,"Sku":' + '['.repeat(100) + ']'.repeat(100) + '}'), /JSON nesting deeper than 100/);
  rejects(() => read(Variation, '{"ExternalProductId":9007199254740993,'), /^The request body is not valid JSON: [^]* at position 38\.$/);
});

test('bindings: to-one object, to-many array, to-many {"results":[…]}, keyed by the navigation named', () => {
  const body = JSON.stringify({
    ProductId: '2',
    Product: { __metadata: { uri: `${ROOT}/Products(2L)` } },
    ProductVariationPictures: [{ __metadata: { uri: `${ROOT}/ProductVariationImages(3L)` } }, { __metadata: { uri: 'ProductVariationImages(4L)' } }],
    DiscountOffers: { results: [{ __metadata: { uri: 'DiscountOffers(9L)', type: 'CatalogueService.DiscountOffer' } }] },
    ProductVariationSpecifics: { __deferred: { uri: `${ROOT}/ProductVariations(1L)/ProductVariationSpecifics` } },
    SalesOrderItems: [],
  }).replace(/\//g, '\\/');
  const p = read(Variation, body);
  assert.deepEqual([...p.values], [['ProductId', 2n]]);
  assert.deepEqual(
    [...p.bindings],
    [
      ['Product', [`${ROOT}/Products(2L)`]],
      ['ProductVariationPictures', [`${ROOT}/ProductVariationImages(3L)`, 'ProductVariationImages(4L)']],
      ['DiscountOffers', ['DiscountOffers(9L)']],
      ['SalesOrderItems', []],
    ],
  );
  // A single binding object on a to-many navigation is one binding.
  assert.deepEqual([...read(Product, '{"Catalogs":{"__metadata":{"uri":"Catalogs(5L)"}}}').bindings], [['Catalogs', ['Catalogs(5L)']]]);
  // __deferred alone binds nothing.
  assert.equal(read(Variation, '{"Product":{"__deferred":{"uri":"x"}}}').bindings.size, 0);
});

test('entities sent inline are read against the navigation\'s type (deep insert); malformed navigation content is refused', () => {
  const deep = read(Variation, '{"Sku":"A","ProductVariationSpecifics":[{"Name":"Colour","Value":"Red"}],"ProductVariationPictures":{"results":[{"ImageUrl":"u","__metadata":{"type":"CatalogueService.ProductVariationImage"}},{"__metadata":{"uri":"ProductVariationImages(4L)"}}]}}');
  assert.deepEqual(
    [...deep.inline!].map(([nav, entities]) => [nav, entities.map((e) => Object.fromEntries(e.values))]),
    [
      ['ProductVariationSpecifics', [{ Name: 'Colour', Value: 'Red' }]],
      ['ProductVariationPictures', [{ ImageUrl: 'u' }]],
    ],
  );
  // A binding and an inline entity under one navigation: each is kept as what it is.
  assert.deepEqual([...deep.bindings], [['ProductVariationPictures', ['ProductVariationImages(4L)']]]);
  // Nested inline content is read against each level's type; an unknown member there is named.
  const product = model.typeByName.get('Product')!;
  const nested = read(product, '{"ProductVariations":[{"Sku":"B","ProductVariationSpecifics":[{"Name":"Size","Value":"M"}]}]}');
  assert.equal(nested.inline!.get('ProductVariations')![0]!.inline!.get('ProductVariationSpecifics')![0]!.values.get('Value'), 'M');
  rejects(() => read(product, '{"ProductVariations":[{"Title":"x"}]}'), /'Title' does not exist on type 'CatalogueService.ProductVariation'/);
  rejects(() => read(product, '{"ProductVariations":[{"__metadata":{"type":"CatalogueService.Product"},"Sku":"x"}]}'), /__metadata type 'CatalogueService.Product' does not match/);
  // To-one inline content is read too; the write refuses it (only owned to-many navigations take inline entities).
  assert.equal(read(Variation, '{"Product":{"Title":"New","Price":"1"}}').inline!.get('Product')!.length, 1);
  assert.equal(read(Variation, '{"Product":{}}').inline!.get('Product')!.length, 1);
  rejects(() => read(Variation, '{"Product":{"__metadata":{"uri":5}}}'), /uri in the navigation property 'Product' .*non-empty string/);
  rejects(() => read(Variation, '{"Product":{"__metadata":{"uri":""}}}'), /non-empty string/);
  rejects(() => read(Variation, '{"Product":{"__metadata":{"uri":"Products(1L)","type":"CatalogueService.Catalog"}}}'), /must be 'CatalogueService.Product'/);
  rejects(() => read(Variation, '{"Product":[{"__metadata":{"uri":"Products(1L)"}}]}'), /'Product' .*leads to one entity/);
  rejects(() => read(Variation, '{"Product":{"results":[]}}'), /'Product' .*leads to one entity/);
  rejects(() => read(Variation, '{"Product":null}'), /navigation property 'Product' .*cannot be null.*foreign-key/);
  rejects(() => read(Variation, '{"Product":"Products(1L)"}'), /navigation property 'Product' .*must hold \{"__metadata":\{"uri":…\}\}/);
  rejects(() => read(Variation, '{"DiscountOffers":[1]}'), /Every item of the navigation property 'DiscountOffers' .*must be an object/);
  rejects(() => read(Variation, '{"DiscountOffers":{"results":{}}}'), /'results' of the navigation property 'DiscountOffers' .*must be an array/);
  // An entity read with both twin navigations deferred, sent back as it was read, binds nothing.
  const echoed = read(Variation, '{"ProductVariationImages":{"__deferred":{"uri":"a"}},"ProductVariationPictures":{"__deferred":{"uri":"b"}}}');
  assert.equal(echoed.bindings.size, 0);
});

test('readJsonLink: {"uri":…}, also in a d wrapper, with escapes and trailing whitespace', () => {
  assert.equal(readJsonLink(buf(`{"uri":"${ROOT}/Catalogs(5L)"}`)), `${ROOT}/Catalogs(5L)`);
  assert.equal(readJsonLink(buf('{"uri":"http:\\/\\/host\\/publicapi\\/v1\\/api.svc\\/Catalogs(5L)"}\n\r\r\n')), 'http://host/publicapi/v1/api.svc/Catalogs(5L)');
  assert.equal(readJsonLink(buf('{"d":{"uri":"Catalogs(6L)"}}')), 'Catalogs(6L)');
  assert.equal(readJsonLink(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf('{"uri":"Catalogs(7L)"}')])), 'Catalogs(7L)');
  const bad = /A link body must be \{"uri":"<entity URI>"\}/;
  rejects(() => readJsonLink(buf('{"url":"Catalogs(5L)"}')), bad);
  rejects(() => readJsonLink(buf('{"uri":5}')), bad);
  rejects(() => readJsonLink(buf('{"uri":""}')), bad);
  rejects(() => readJsonLink(buf('{"uri":"a","x":1}')), bad);
  rejects(() => readJsonLink(buf('{"__metadata":{"uri":"Catalogs(5L)"}}')), bad);
  rejects(() => readJsonLink(buf('{"__proto__":{"uri":"x"}}')), bad);
  rejects(() => readJsonLink(buf('["Catalogs(5L)"]')), /must be a JSON object/);
  rejects(() => readJsonLink(buf('"Catalogs(5L)"')), /must be a JSON object/);
  rejects(() => readJsonLink(buf('')), /request body is empty/);
  rejects(() => readJsonLink(buf('{"uri":')), /not valid JSON/);
  rejects(() => readJsonLink(buf('{"uri":' + '['.repeat(101) + ']'.repeat(101) + '}')), /JSON nesting deeper than 100/);
});

test('nothing but ODataError 400 escapes, whatever the bytes', () => {
  // Deterministic pseudo-random bodies: mutations of a valid body and random JSON-ish bytes.
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  const base = buf(
    '{"__metadata":{"type":"CatalogueService.ProductVariation"},"ProductId":"2","Price":"80.000000","Sku":"a\\/b","Product":{"__metadata":{"uri":"Products(2L)"}},"DiscountOffers":{"results":[{"__metadata":{"uri":"DiscountOffers(1L)"}}]}}',
  );
  const alphabet = Buffer.from('{}[]":,\\ 0123456789.-eEtrufalsn_dLuri\u00ff\n');
  let accepted = 0;
  for (let round = 0; round < 3000; round++) {
    const body = Buffer.from(base);
    const edits = 1 + (next() % 4);
    for (let e = 0; e < edits; e++) body[next() % body.length] = alphabet[next() % alphabet.length]!;
    const random = Buffer.from(Array.from({ length: next() % 40 }, () => alphabet[next() % alphabet.length]!));
    for (const candidate of [body, random]) {
      for (const fn of [() => readJsonEntity(Variation, candidate), () => readJsonLink(candidate)]) {
        try {
          fn();
          accepted++;
        } catch (error) {
          assert.ok(error instanceof ODataError, `not an ODataError for ${candidate.toString('latin1')}: ${String(error)}`);
          assert.equal(error.status, 400);
        }
      }
    }
  }
  assert.ok(accepted > 0, 'some mutations stay valid');
});
