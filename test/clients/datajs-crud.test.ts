/**
 * Microsoft datajs (the browser OData client many shop back-ends embed), driven from Node against
 * the live service in Atom (OData.atomHandler) and JSON verbose (OData.jsonHandler): it reads
 * collections and entities of Products, ProductVariations, ProductImages and ProductSpecifics,
 * creates them (POST with data), changes them (MERGE) and deletes them, and every typed value
 * comes back as datajs types it: Atom Int32 as number, Int64 and Decimal as strings, DateTime as
 * Date; JSON Int64 and Decimal as strings, Int32 as numbers, DateTime as "/Date(ms)/" strings.
 * After each write a GET shows the change.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../support/http-client';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { loadDatajs, odataRequest, ODataRequestError, parseXml, type ODataHandler, type ODataResponse } from './datajs';

type Entity = Record<string, unknown>;

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'datajs');
});
after(() => live.close());

interface Format {
  readonly name: 'Atom' | 'JSON';
  readonly handler: () => ODataHandler;
  /** Content-Type of what datajs sends and of what the service answers. */
  readonly requestType: RegExp;
  readonly responseType: RegExp;
}

const FORMATS: readonly Format[] = [
  { name: 'Atom', handler: () => loadDatajs().atomHandler, requestType: /^application\/atom\+xml/, responseType: /^application\/atom\+xml;charset=utf-8/ },
  { name: 'JSON', handler: () => loadDatajs().jsonHandler, requestType: /^application\/json/, responseType: /^application\/json;charset=utf-8/ },
];

/** A header of a datajs response, whatever its case. */
function headerOf(response: ODataResponse, name: string): string | undefined {
  const key = Object.keys(response.headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : response.headers[key];
}

const DATE_LITERAL = /^\/Date\((-?\d+)\)\/$/;

/** The stored entity as the service writes it in JSON, read without datajs (raw HTTP). */
async function raw(path: string): Promise<Entity> {
  const res = await request(live.root + path, { headers: { ...seller.auth, Accept: 'application/json' } });
  assert.equal(res.status, 200, res.body);
  return (JSON.parse(res.body) as { d: Entity }).d;
}

/** Milliseconds of a "/Date(ms)/" literal. */
function dateMs(value: unknown): number {
  const m = DATE_LITERAL.exec(String(value));
  assert.ok(m, `a /Date(ms)/ literal, not ${String(value)}`);
  return Number(m[1]);
}

/** The message of an OData error document, JSON or XML. */
function errorMessage(body: string): string {
  if (body.startsWith('{')) return (JSON.parse(body) as { error: { message: { value: string } } }).error.message.value;
  const doc = parseXml(body);
  assert.equal(doc.documentElement.localName, 'error');
  return doc.getElementsByTagNameNS('http://schemas.microsoft.com/ado/2007/08/dataservices/metadata', 'message')[0]?.textContent ?? '';
}

function client(format: Format) {
  const handler = format.handler();
  const uri = (path: string) => live.root + path;
  return {
    async get(path: string): Promise<Entity> {
      const { data, response } = await odataRequest({ requestUri: uri(path), headers: seller.auth }, handler);
      assert.match(headerOf(response, 'Content-Type') ?? '', format.responseType);
      return data as Entity;
    },
    async feed(path: string): Promise<Entity[]> {
      const { data } = await odataRequest({ requestUri: uri(path), headers: seller.auth }, handler);
      const results = (data as { results?: Entity[] }).results;
      assert.ok(Array.isArray(results), `${format.name} feed parsed into results`);
      return results;
    },
    async create(path: string, data: Entity): Promise<{ entity: Entity; response: ODataResponse }> {
      const { data: entity, response } = await odataRequest({ requestUri: uri(path), method: 'POST', headers: seller.auth, data }, handler);
      assert.equal(response.statusCode, 201);
      assert.match(headerOf(response, 'Content-Type') ?? '', format.responseType);
      return { entity: entity as Entity, response };
    },
    async merge(path: string, data: Entity): Promise<void> {
      const { response } = await odataRequest({ requestUri: uri(path), method: 'MERGE', headers: seller.auth, data }, handler);
      assert.equal(response.statusCode, 204);
    },
    async remove(path: string): Promise<void> {
      const { response } = await odataRequest({ requestUri: uri(path), method: 'DELETE', headers: seller.auth }, handler);
      assert.equal(response.statusCode, 204);
    },
    /** The request must fail with this status; answers the message of its OData error. */
    async fails(status: number, req: { path: string; method?: string; data?: Entity }): Promise<string> {
      const err = await odataRequest({ requestUri: uri(req.path), headers: seller.auth, ...(req.method ? { method: req.method } : {}), ...(req.data ? { data: req.data } : {}) }, handler).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof ODataRequestError, `the ${req.method ?? 'GET'} of ${req.path} failed`);
      assert.equal(err.response?.statusCode, status, err.response?.body ?? '');
      return errorMessage(err.response?.body ?? '');
    },
  };
}

/**
 * Checks datajs's typing of a value against the raw JSON the service wrote: Int64/Decimal strings
 * in both formats, Int32 numbers, Boolean booleans, DateTime a Date (Atom) or "/Date(ms)/" (JSON).
 */
function assertTyped(format: Format, entity: Entity, stored: Entity, types: Record<string, 'Int64' | 'Int32' | 'Decimal' | 'String' | 'Boolean' | 'DateTime'>): void {
  for (const [name, type] of Object.entries(types)) {
    const value = entity[name];
    const expected = stored[name];
    if (expected === null) {
      assert.equal(value, null, `${format.name} ${name} is null`);
      continue;
    }
    switch (type) {
      case 'Int64':
      case 'Decimal':
        assert.equal(typeof value, 'string', `${format.name} ${name} (${type}) is a string`);
        assert.equal(value, expected, `${format.name} ${name} keeps every digit`);
        break;
      case 'Int32':
        assert.equal(typeof value, 'number', `${format.name} ${name} (Int32) is a number`);
        assert.equal(value, expected);
        break;
      case 'Boolean':
        assert.equal(typeof value, 'boolean', `${format.name} ${name} is a boolean`);
        assert.equal(value, expected);
        break;
      case 'String':
        assert.equal(value, expected);
        break;
      case 'DateTime':
        if (format.name === 'Atom') {
          assert.ok(value instanceof Date, `${format.name} ${name} is a Date`);
          assert.equal(value.getTime(), dateMs(expected), `${format.name} ${name} keeps the milliseconds`);
        } else {
          assert.equal(typeof value, 'string');
          assert.match(String(value), DATE_LITERAL);
          assert.equal(dateMs(value), dateMs(expected));
        }
        break;
    }
  }
}

const PRODUCT_TYPES = {
  Id: 'Int64',
  ForeignId: 'String',
  ExternalProductId: 'Int64',
  ProductType: 'Int32',
  Title: 'String',
  Price: 'Decimal',
  StockAmount: 'Int32',
  UnitQuantity: 'Decimal',
  DisableAutomatch: 'Boolean',
  AutoMatched: 'Boolean',
  EbayCategoryId1: 'Int64',
  CreationDate: 'DateTime',
  ModificationDate: 'DateTime',
} as const;

const VARIATION_TYPES = { Id: 'Int64', ProductId: 'Int64', Price: 'Decimal', StockAmount: 'Int32', Sku: 'String', ExternalProductId: 'Int64', Ean: 'String', CreationDate: 'DateTime', ModificationDate: 'DateTime' } as const;
const IMAGE_TYPES = { Id: 'Int64', ProductId: 'Int64', ImageUrl: 'String', Type: 'Int32', CreationDate: 'DateTime', ModificationDate: 'DateTime' } as const;
const SPECIFIC_TYPES = { Id: 'Int64', ProductId: 'Int64', Name: 'String', Value: 'String', Type: 'Int32', CreationDate: 'DateTime', ModificationDate: 'DateTime' } as const;

const ids = (rows: Entity[]) => rows.map((r) => String(r.Id));

for (const format of FORMATS) {
  describe(`datajs with the ${format.name} handler`, () => {
    const c = () => client(format);

    test(`the ${format.name} handler writes ${format.name} request bodies (what the tests below send)`, () => {
      const req = { requestUri: live.root + '/Products', method: 'POST', headers: {} as Record<string, string>, data: { Title: 'x', StockAmount: 1 } as unknown };
      assert.equal(format.handler().write(req, {}), true);
      assert.match(req.headers['Content-Type'] ?? '', format.requestType);
      const body = String((req as { body?: unknown }).body);
      if (format.name === 'Atom') assert.match(body, /^<entry xmlns="http:\/\/www\.w3\.org\/2005\/Atom".*<d:Title>x<\/d:Title>/);
      else assert.deepEqual(JSON.parse(body), { Title: 'x', StockAmount: 1 });
    });

    test('Products: create, read, list, MERGE, delete', async () => {
      const odata = c();
      const title = `${format.name} Kaffeemühle «Spezial»`;
      const { entity: made, response } = await odata.create('/Products', {
        Title: title,
        Price: '1234567.123456',
        StockAmount: 7,
        ExternalProductId: '9007199254740993',
        ForeignId: `${format.name}-F1`,
        ProductType: 1,
        UnitQuantity: '0.5',
      });
      const id = String(made.Id);
      const path = `/Products(${id}L)`;
      assert.match(headerOf(response, 'Location') ?? '', new RegExp(`/Products\\(${id}L\\)$`));
      let stored = await raw(path);
      assert.equal(stored.Title, title);
      assert.equal(stored.Price, '1234567.123456');
      assert.equal(stored.ExternalProductId, '9007199254740993');
      assertTyped(format, made, stored, PRODUCT_TYPES);

      assertTyped(format, await odata.get(path), stored, PRODUCT_TYPES);
      const listed = await odata.feed('/Products');
      assert.ok(ids(listed).includes(id));
      assertTyped(format, listed.find((r) => String(r.Id) === id)!, stored, PRODUCT_TYPES);

      await odata.merge(path, { Title: `${title} v2`, StockAmount: 0, Price: '0.01' });
      const merged = await odata.get(path);
      stored = await raw(path);
      assert.equal(merged.Title, `${title} v2`);
      assert.equal(merged.StockAmount, 0);
      assert.equal(merged.Price, '0.01');
      assert.equal(merged.ForeignId, `${format.name}-F1`, 'MERGE keeps what it does not send');
      assert.equal(merged.ExternalProductId, '9007199254740993');
      assertTyped(format, merged, stored, PRODUCT_TYPES);

      await odata.remove(path);
      await odata.fails(404, { path });
      assert.ok(!ids(await odata.feed('/Products')).includes(id));
    });

    test('ProductVariations: create, read through the product, MERGE, delete', async () => {
      const odata = c();
      const { entity: product } = await odata.create('/Products', { Title: `${format.name} shirt`, Price: '20', StockAmount: 10, ProductType: 1 });
      const productId = String(product.Id);
      const { entity: made } = await odata.create('/ProductVariations', {
        ProductId: productId,
        Price: '19.99',
        StockAmount: 3,
        Sku: `${format.name}-RED-M`,
        ExternalProductId: '9223372036854775807',
        Ean: '4006381333931',
      });
      const id = String(made.Id);
      const path = `/ProductVariations(${id}L)`;
      let stored = await raw(path);
      assert.equal(stored.ProductId, productId);
      assert.equal(stored.ExternalProductId, '9223372036854775807');
      assertTyped(format, made, stored, VARIATION_TYPES);
      assertTyped(format, await odata.get(path), stored, VARIATION_TYPES);

      const { entity: second } = await odata.create(`/Products(${productId}L)/ProductVariations`, { Price: '21.5', StockAmount: 1, Sku: `${format.name}-RED-L` });
      assert.equal(second.ProductId, productId);
      const listed = await odata.feed(`/Products(${productId}L)/ProductVariations`);
      assert.deepEqual(ids(listed), [id, String(second.Id)]);
      assert.ok(ids(await odata.feed('/ProductVariations')).includes(id));
      assert.equal(String((await odata.get(`${path}/Product`)).Id), productId);

      await odata.merge(path, { Price: '17.5', StockAmount: 12, Sku: null });
      const merged = await odata.get(path);
      stored = await raw(path);
      assert.equal(merged.Price, '17.5');
      assert.equal(merged.StockAmount, 12);
      assert.equal(merged.Sku, null);
      assert.equal(merged.Ean, '4006381333931');
      assertTyped(format, merged, stored, VARIATION_TYPES);

      await odata.remove(path);
      await odata.fails(404, { path });
      assert.deepEqual(ids(await odata.feed(`/Products(${productId}L)/ProductVariations`)), [String(second.Id)]);
    });

    test('ProductImages: create (also through the product), MERGE, delete; a refused write is an OData error', async () => {
      const odata = c();
      const { entity: product } = await odata.create('/Products', { Title: `${format.name} lamp`, Price: '5', StockAmount: 1 });
      const productId = String(product.Id);
      const { entity: made } = await odata.create('/ProductImages', { ProductId: productId, ImageUrl: 'https://img.example.com/lamp-1.jpg', Type: 1 });
      const id = String(made.Id);
      const path = `/ProductImages(${id}L)`;
      let stored = await raw(path);
      assert.equal(stored.Type, 1);
      assertTyped(format, made, stored, IMAGE_TYPES);
      assertTyped(format, await odata.get(path), stored, IMAGE_TYPES);
      const { entity: offer } = await odata.create(`/Products(${productId}L)/ProductImages`, { ImageUrl: 'https://img.example.com/lamp-2.jpg', Type: 2 });
      assert.equal(offer.ProductId, productId);
      assert.equal(offer.Type, 2);
      assert.deepEqual(ids(await odata.feed(`/Products(${productId}L)/ProductImages`)), [id, String(offer.Id)]);

      // The slot rule and the Type range reach datajs as OData errors.
      const conflict = await odata.fails(409, { path: '/ProductImages', method: 'POST', data: { ProductId: productId, ImageUrl: 'https://img.example.com/x.jpg', Type: 1 } });
      assert.match(conflict, /each Type slot/);
      const range = await odata.fails(400, { path: '/ProductImages', method: 'POST', data: { ProductId: productId, ImageUrl: 'https://img.example.com/x.jpg', Type: 13 } });
      assert.match(range, /'Type' must be from 1 to 12/);
      assert.equal((await odata.feed(`/Products(${productId}L)/ProductImages`)).length, 2);

      await odata.merge(path, { Type: 3, ImageUrl: 'https://img.example.com/lamp-3.jpg' });
      const merged = await odata.get(path);
      stored = await raw(path);
      assert.equal(merged.Type, 3);
      assert.equal(merged.ImageUrl, 'https://img.example.com/lamp-3.jpg');
      assertTyped(format, merged, stored, IMAGE_TYPES);

      await odata.remove(path);
      await odata.fails(404, { path });
      assert.deepEqual(ids(await odata.feed(`/Products(${productId}L)/ProductImages`)), [String(offer.Id)]);
    });

    test('ProductSpecifics: create with pipe-separated values, MERGE, delete', async () => {
      const odata = c();
      const { entity: product } = await odata.create('/Products', { Title: `${format.name} brake disc`, Price: '45', StockAmount: 4 });
      const productId = String(product.Id);
      const value = 'VW Golf IV|Audi A3 8L|Škoda Octavia';
      const { entity: made } = await odata.create('/ProductSpecifics', { ProductId: productId, Name: 'Passend für', Value: value });
      const id = String(made.Id);
      const path = `/ProductSpecifics(${id}L)`;
      let stored = await raw(path);
      assert.equal(stored.Value, value);
      assert.equal(stored.Type, null);
      assertTyped(format, made, stored, SPECIFIC_TYPES);
      assertTyped(format, await odata.get(path), stored, SPECIFIC_TYPES);
      const { entity: brand } = await odata.create(`/Products(${productId}L)/ProductSpecifics`, { Name: 'Marke', Value: 'Brembo', Type: 2 });
      assert.equal(brand.Type, 2);
      assert.deepEqual(ids(await odata.feed(`/Products(${productId}L)/ProductSpecifics`)), [id, String(brand.Id)]);
      assert.ok(ids(await odata.feed('/ProductSpecifics')).includes(id));

      const duplicate = await odata.fails(409, { path: '/ProductSpecifics', method: 'POST', data: { ProductId: productId, Name: 'Marke', Value: 'ATE' } });
      assert.match(duplicate, /Name may be used once per product/);

      await odata.merge(path, { Value: `${value}|Seat Leon 1M`, Type: 1 });
      const merged = await odata.get(path);
      stored = await raw(path);
      assert.equal(merged.Value, `${value}|Seat Leon 1M`);
      assert.equal(merged.Type, 1);
      assert.equal(merged.Name, 'Passend für');
      assertTyped(format, merged, stored, SPECIFIC_TYPES);

      await odata.remove(path);
      await odata.fails(404, { path });
      assert.deepEqual(ids(await odata.feed(`/Products(${productId}L)/ProductSpecifics`)), [String(brand.Id)]);
      // Deleting the product takes its remaining specific along.
      await odata.remove(`/Products(${productId}L)`);
      await odata.fails(404, { path: `/ProductSpecifics(${String(brand.Id)}L)` });
    });
  });
}
