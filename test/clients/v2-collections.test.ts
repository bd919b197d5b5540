/**
 * Version 2 clients get version 2 collections. A V2-only client library (./v2-reader.ts) reads a
 * JSON collection only as `{"d":{"results":[…]}}` and a version 1.0 array as an empty list, so
 * the service must answer it in 2.0 shapes when it asks (MinDataServiceVersion: 2.0), when it
 * declares no version at all (such libraries send no version header), or always when the service
 * is set to RESPONSE_VERSION=highest; inside `$batch` too, and for expanded navigations. The
 * default still answers the existing connectors, which declare their versions, in 1.0 shapes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, ConfigError } from '../../src/config';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import type { HttpResponse } from '../support/http-client';
import { batchBody, createProductWithParts, httpPart, postBatch, readBatchAnswer, singleAnswer, type ProductWithParts } from '../batch/support';
import { readBatchQueryPart, readCollection, readCount, readEntity, readExpanded, type Entity } from './v2-reader';

const V2_ONLY = { Accept: 'application/json' };
/** A client that declares the version it writes, and so reads the lowest version an answer needs. */
const DECLARED = { Accept: 'application/json', DataServiceVersion: '1.0' };
const MIN_2 = { ...V2_ONLY, MinDataServiceVersion: '2.0' };
/** What the shop connector sends on every request. */
const CONNECTOR = { Accept: 'application/json', DataServiceVersion: '2.0', MaxDataServiceVersion: '3.0' };

function get(live: LiveService, seller: Seller, path: string, headers: Record<string, string>): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${path}`, { headers });
}

async function ok(res: Promise<HttpResponse>): Promise<HttpResponse> {
  const answer = await res;
  assert.equal(answer.status, 200, answer.body.slice(0, 400));
  return answer;
}

const ids = (rows: readonly Entity[]) => rows.map((row) => String(row.Id)).sort();
const idsOf = (values: readonly bigint[]) => values.map(String).sort();

/** The message of a JSON OData error answer. */
function jsonError(res: HttpResponse): string {
  assert.match(String(res.headers['content-type']), /^application\/json/);
  return (JSON.parse(res.body) as { error: { message: { value: string } } }).error.message.value;
}

describe('RESPONSE_VERSION', () => {
  test('is auto by default, takes auto, lowest or highest, and refuses anything else', () => {
    assert.equal(loadConfig({}).responseVersion, 'auto');
    assert.equal(loadConfig({ RESPONSE_VERSION: 'lowest' }).responseVersion, 'lowest');
    assert.equal(loadConfig({ RESPONSE_VERSION: 'highest' }).responseVersion, 'highest');
    assert.equal(loadConfig({ RESPONSE_VERSION: 'Lowest' }).responseVersion, 'lowest');
    assert.throws(() => loadConfig({ RESPONSE_VERSION: '2.0' }), ConfigError);
  });
});

describe('default (RESPONSE_VERSION=auto)', () => {
  let live: LiveService;
  let seller: Seller;
  let p: ProductWithParts;

  before(async () => {
    live = await startLive();
    seller = await newSeller(live, 'v2lowest');
    p = await createProductWithParts(live, seller, 'v2a');
    await createProductWithParts(live, seller, 'v2b');
  });
  after(() => live.close());

  describe('MinDataServiceVersion: 2.0', () => {
    test('a V2 reader sees every row of an entity set, with __count when asked, and DataServiceVersion 2.0', async () => {
      const all = await ok(get(live, seller, 'Products', MIN_2));
      assert.equal(all.headers['dataserviceversion'], '2.0;');
      assert.equal(readCollection(all.body).length, 2);
      const counted = await ok(get(live, seller, 'Products?$inlinecount=allpages&$top=1', MIN_2));
      assert.equal(readCollection(counted.body).length, 1);
      assert.equal(readCount(counted.body), 2);
    });

    test('navigation collections and $links collections are results objects', async () => {
      const images = await ok(get(live, seller, `Products(${p.product}L)/ProductImages`, MIN_2));
      assert.deepEqual(ids(readCollection(images.body)), idsOf(p.images));
      const links = await ok(get(live, seller, `Products(${p.product}L)/$links/Catalogs`, MIN_2));
      assert.equal(links.headers['dataserviceversion'], '2.0;');
      assert.deepEqual(readCollection(links.body).map((l) => l.uri).sort(), p.catalogs.map((c) => `${live.root}/Catalogs(${c}L)`).sort());
    });

    test('expanded collections are results objects, in a feed, two levels deep, and in a single entity', async () => {
      const feed = await ok(get(live, seller, `Products?$filter=Id%20eq%20${p.product}L&$expand=ProductImages,ProductVariations/ProductVariationSpecifics`, MIN_2));
      const [product] = readCollection(feed.body);
      assert.ok(product, 'the product');
      assert.deepEqual(ids(readExpanded(product, 'ProductImages')), idsOf(p.images));
      const variations = readExpanded(product, 'ProductVariations');
      assert.deepEqual(ids(variations), idsOf(p.variations));
      assert.deepEqual(ids(variations.flatMap((v) => readExpanded(v, 'ProductVariationSpecifics'))), idsOf(p.variationSpecifics));

      const one = await ok(get(live, seller, `Products(${p.product}L)?$expand=ProductImages`, MIN_2));
      assert.equal(one.headers['dataserviceversion'], '2.0;');
      assert.deepEqual(ids(readExpanded(readEntity(one.body), 'ProductImages')), idsOf(p.images));
    });

    test('answers that look the same in both versions say 2.0: entity, property, service document, 204', async () => {
      for (const path of [`Products(${p.product}L)`, `Products(${p.product}L)/Title`, '']) {
        const res = await ok(get(live, seller, path, MIN_2));
        assert.equal(res.headers['dataserviceversion'], '2.0;', path);
      }
      assert.equal(readEntity((await ok(get(live, seller, `Products(${p.product}L)`, MIN_2))).body).Id, String(p.product));
      const merge = await asSeller(seller, `${live.root}/Products(${p.product}L)`, { method: 'MERGE', headers: { ...MIN_2, 'Content-Type': 'application/json' }, body: '{"StockAmount":4}' });
      assert.equal(merge.status, 204, merge.body);
      assert.equal(merge.headers['dataserviceversion'], '2.0;');
    });

    test('a MaxDataServiceVersion below it is a 400 OData error naming both headers', async () => {
      const res = await get(live, seller, 'Products', { ...MIN_2, MaxDataServiceVersion: '1.0' });
      assert.equal(res.status, 400);
      const message = jsonError(res);
      assert.match(message, /MaxDataServiceVersion '1\.0'/);
      assert.match(message, /MinDataServiceVersion '2\.0'/);
      // 1.2 needs a 2.0 answer, which a client reading up to 1.5 cannot take.
      const between = await get(live, seller, 'Products', { ...V2_ONLY, MinDataServiceVersion: '1.2', MaxDataServiceVersion: '1.5' });
      assert.equal(between.status, 400);
      assert.match(jsonError(between), /MinDataServiceVersion '1\.2' and the MaxDataServiceVersion '1\.5'/);
    });

    test('an invalid MinDataServiceVersion, or one above 2.0, is a 400 naming the header', async () => {
      for (const value of ['x.y', '2', '3.0']) {
        const res = await get(live, seller, 'Products', { ...V2_ONLY, MinDataServiceVersion: value });
        assert.equal(res.status, 400, value);
        assert.match(jsonError(res), /MinDataServiceVersion/, value);
      }
      // 1.0 asks for nothing more than the default.
      const v1 = await ok(get(live, seller, 'Products', { ...V2_ONLY, MinDataServiceVersion: '1.0' }));
      assert.ok(Array.isArray(readEntity(v1.body)));
    });

    test('Atom is the same document in both versions; only the DataServiceVersion header differs', async () => {
      const path = `Products?$filter=Id%20eq%20${p.product}L&$expand=ProductImages`;
      const v1 = await ok(get(live, seller, path, { DataServiceVersion: '2.0', MaxDataServiceVersion: '3.0' }));
      const v2 = await ok(get(live, seller, path, { MinDataServiceVersion: '2.0' }));
      assert.equal(v1.headers['dataserviceversion'], '1.0;');
      assert.equal(v2.headers['dataserviceversion'], '2.0;');
      const timeless = (xml: string) => xml.replace(/<updated>[^<]*<\/updated>/g, '<updated/>');
      assert.match(v2.body, /<feed /);
      assert.equal(timeless(v2.body), timeless(v1.body));
    });
  });

  describe('without it, the existing connectors read 1.0 shapes as before', () => {
    test("the connector's headers get arrays, expanded arrays and DataServiceVersion 1.0", async () => {
      for (const headers of [CONNECTOR, DECLARED]) {
        const res = await ok(get(live, seller, `Products?$expand=ProductImages`, headers));
        assert.equal(res.headers['dataserviceversion'], '1.0;');
        const d = readEntity(res.body) as unknown as Entity[];
        assert.ok(Array.isArray(d), 'a 1.0 array');
        assert.equal(d.length, 2);
        assert.ok(d.every((product) => Array.isArray(product.ProductImages)), 'expanded collections as arrays');
        // What goes wrong for a V2-only client without the header or the setting.
        assert.deepEqual(readCollection(res.body), []);
      }
    });

    test('a 2.0 feature still makes a 2.0 answer, and MaxDataServiceVersion absent means 2.0 even after DataServiceVersion 1.0', async () => {
      const res = await ok(get(live, seller, 'Products?$inlinecount=allpages', { ...V2_ONLY, DataServiceVersion: '1.0' }));
      assert.equal(res.headers['dataserviceversion'], '2.0;');
      assert.equal(readCount(res.body), 2);
    });
  });

  describe('a request that declares no version (no DataServiceVersion, MaxDataServiceVersion or MinDataServiceVersion)', () => {
    test('gets 2.0 shapes: entity sets, navigation collections, $links, expanded collections', async () => {
      const feed = await ok(get(live, seller, `Products?$filter=Id%20eq%20${p.product}L&$expand=ProductImages,ProductVariations/ProductVariationSpecifics`, V2_ONLY));
      assert.equal(feed.headers['dataserviceversion'], '2.0;');
      const [product] = readCollection(feed.body);
      assert.ok(product, 'the product');
      assert.deepEqual(ids(readExpanded(product, 'ProductImages')), idsOf(p.images));
      assert.deepEqual(ids(readExpanded(product, 'ProductVariations').flatMap((v) => readExpanded(v, 'ProductVariationSpecifics'))), idsOf(p.variationSpecifics));
      assert.equal(readCollection((await ok(get(live, seller, 'Products', V2_ONLY))).body).length, 2);
      assert.deepEqual(ids(readCollection((await ok(get(live, seller, `Products(${p.product}L)/ProductImages`, V2_ONLY))).body)), idsOf(p.images));
      assert.equal(readCollection((await ok(get(live, seller, `Products(${p.product}L)/$links/Catalogs`, V2_ONLY))).body).length, p.catalogs.length);
      const one = await ok(get(live, seller, `Products(${p.product}L)?$expand=ProductImages`, V2_ONLY));
      assert.equal(one.headers['dataserviceversion'], '2.0;');
      assert.deepEqual(ids(readExpanded(readEntity(one.body), 'ProductImages')), idsOf(p.images));
    });

    test('an empty version header declares nothing; any one version header sent keeps the lowest version', async () => {
      const blank = await ok(get(live, seller, 'Products', { ...V2_ONLY, DataServiceVersion: '', MaxDataServiceVersion: '' }));
      assert.equal(blank.headers['dataserviceversion'], '2.0;');
      for (const declared of [{ DataServiceVersion: '2.0' }, { MaxDataServiceVersion: '2.0' }, { MinDataServiceVersion: '1.0' }] as Record<string, string>[]) {
        const res = await ok(get(live, seller, 'Products', { ...V2_ONLY, ...declared }));
        assert.equal(res.headers['dataserviceversion'], '1.0;', JSON.stringify(declared));
      }
    });

    test('in $batch, a query part takes its own version headers, else the batch request\'s; with none anywhere it answers 2.0', async () => {
      const body = batchBody([
        httpPart({ method: 'GET', target: 'Products', headers: ['Accept: application/json'] }),
        httpPart({ method: 'GET', target: `Products(${p.product}L)?$expand=ProductImages`, headers: ['Accept: application/json'] }),
        httpPart({ method: 'GET', target: 'Products', headers: ['Accept: application/json', 'DataServiceVersion: 1.0'] }),
      ]);
      const bare = { DataServiceVersion: '', MaxDataServiceVersion: '' };
      const parts = readBatchAnswer(await postBatch(live, seller, body, undefined, bare)).map(singleAnswer);
      assert.deepEqual(parts.map((part) => part.headers.get('dataserviceversion')), ['2.0;', '2.0;', '1.0;']);
      const read = readBatchQueryPart(parts[0]!.body);
      assert.equal(read.kind === 'collection' ? read.rows.length : -1, 2);
      assert.deepEqual(ids(readExpanded(readEntity(parts[1]!.body), 'ProductImages')), idsOf(p.images));
      // The batch request declares its versions (the connector's headers): its parts keep 1.0.
      const declared = readBatchAnswer(await postBatch(live, seller, body)).map(singleAnswer);
      assert.deepEqual(declared.map((part) => part.headers.get('dataserviceversion')), ['1.0;', '1.0;', '1.0;']);
    });
  });

  describe('$batch query parts', () => {
    const query = (target: string, headers: readonly string[]) => httpPart({ method: 'GET', target, headers: ['Accept: application/json', ...headers] });

    test('answer in the shape their own headers, or else the batch request\'s, ask for', async () => {
      const body = batchBody([
        query('Products', ['MinDataServiceVersion: 2.0']),
        query(`Products(${p.product}L)/ProductImages`, []),
        query(`Products(${p.product}L)?$expand=ProductVariations`, []),
        query('Products', ['MaxDataServiceVersion: 1.0']),
      ]);
      // The batch request asks for 2.0 answers: parts that say nothing take that.
      const parts = readBatchAnswer(await postBatch(live, seller, body, undefined, { MinDataServiceVersion: '2.0' })).map(singleAnswer);
      assert.deepEqual(parts.map((part) => part.status), [200, 200, 200, 400]);
      const read = parts.slice(0, 2).map((part) => readBatchQueryPart(part.body));
      assert.deepEqual(read.map((r) => r.kind), ['collection', 'collection']);
      assert.equal(read[0]!.kind === 'collection' ? read[0]!.rows.length : -1, 2);
      assert.deepEqual(read[1]!.kind === 'collection' ? ids(read[1]!.rows) : [], idsOf(p.images));
      assert.deepEqual(ids(readExpanded(readEntity(parts[2]!.body), 'ProductVariations')), idsOf(p.variations));
      assert.ok(parts.slice(0, 3).every((part) => part.headers.get('dataserviceversion') === '2.0;'));
      // Its own MaxDataServiceVersion 1.0 cannot meet the batch's MinDataServiceVersion 2.0.
      assert.match(parts[3]!.body, /MinDataServiceVersion/);
    });

    test('without a MinDataServiceVersion anywhere, parts answer 1.0 arrays as before', async () => {
      const parts = readBatchAnswer(await postBatch(live, seller, batchBody([query('Products', [])]))).map(singleAnswer);
      assert.equal(parts[0]!.headers.get('dataserviceversion'), '1.0;');
      const read = readBatchQueryPart(parts[0]!.body);
      // A V2-only library takes the 1.0 list for one entity with the rows under "0" and "1".
      assert.equal(read.kind, 'entity');
      assert.deepEqual(read.kind === 'entity' ? Object.keys(read.entity).sort() : [], ['0', '1']);
    });
  });
});

describe('RESPONSE_VERSION=highest', () => {
  let live: LiveService;
  let seller: Seller;
  let p: ProductWithParts;

  before(async () => {
    live = await startLive({ env: { RESPONSE_VERSION: 'highest' } });
    seller = await newSeller(live, 'v2highest');
    p = await createProductWithParts(live, seller, 'v2h');
  });
  after(() => live.close());

  test('a V2 reader that sends no version headers sees every collection', async () => {
    const feed = await ok(get(live, seller, `Products?$expand=ProductImages,ProductVariations/ProductVariationPictures`, V2_ONLY));
    assert.equal(feed.headers['dataserviceversion'], '2.0;');
    const [product] = readCollection(feed.body);
    assert.ok(product, 'the product');
    assert.equal(product.Id, String(p.product));
    assert.deepEqual(ids(readExpanded(product, 'ProductImages')), idsOf(p.images));
    const variations = readExpanded(product, 'ProductVariations');
    assert.deepEqual(ids(variations.flatMap((v) => readExpanded(v, 'ProductVariationPictures'))), idsOf(p.variationPictures));

    assert.deepEqual(ids(readCollection((await ok(get(live, seller, `Products(${p.product}L)/ProductSpecifics`, V2_ONLY))).body)), idsOf(p.specifics));
    assert.equal(readCollection((await ok(get(live, seller, `Products(${p.product}L)/$links/Catalogs`, V2_ONLY))).body).length, p.catalogs.length);
    const one = await ok(get(live, seller, `Products(${p.product}L)?$expand=ProductImages`, V2_ONLY));
    assert.equal(one.headers['dataserviceversion'], '2.0;');
    assert.deepEqual(ids(readExpanded(readEntity(one.body), 'ProductImages')), idsOf(p.images));
  });

  test('the connector\'s headers (MaxDataServiceVersion 3.0) get 2.0 too', async () => {
    const res = await ok(get(live, seller, 'Products', CONNECTOR));
    assert.equal(res.headers['dataserviceversion'], '2.0;');
    assert.equal(readCollection(res.body).length, 1);
  });

  test('a client that reads only 1.0 (MaxDataServiceVersion: 1.0) still gets 1.0 arrays', async () => {
    const res = await ok(get(live, seller, 'Products?$expand=ProductImages', { ...V2_ONLY, MaxDataServiceVersion: '1.0' }));
    assert.equal(res.headers['dataserviceversion'], '1.0;');
    const d = readEntity(res.body) as unknown as Entity[];
    assert.ok(Array.isArray(d) && d.length === 1 && Array.isArray(d[0]!.ProductImages));
  });

  test('$batch query parts without version headers answer 2.0 shapes', async () => {
    const body = batchBody([httpPart({ method: 'GET', target: 'Products', headers: ['Accept: application/json'] }), httpPart({ method: 'GET', target: `Products(${p.product}L)/ProductImages`, headers: ['Accept: application/json'] })]);
    const parts = readBatchAnswer(await postBatch(live, seller, body, undefined, { DataServiceVersion: '', MaxDataServiceVersion: '' })).map(singleAnswer);
    const read = parts.map((part) => readBatchQueryPart(part.body));
    assert.deepEqual(read.map((r) => r.kind), ['collection', 'collection']);
    assert.deepEqual(read[1]!.kind === 'collection' ? ids(read[1]!.rows) : [], idsOf(p.images));
    assert.ok(parts.every((part) => part.headers.get('dataserviceversion') === '2.0;'));
  });
});

describe('RESPONSE_VERSION=lowest', () => {
  let live: LiveService;
  let seller: Seller;

  before(async () => {
    live = await startLive({ env: { RESPONSE_VERSION: 'lowest' } });
    seller = await newSeller(live, 'v2lowestonly');
    await createProductWithParts(live, seller, 'v2l');
  });
  after(() => live.close());

  test('answers 1.0 arrays also to a request that declares no version', async () => {
    const res = await ok(get(live, seller, 'Products?$expand=ProductImages', V2_ONLY));
    assert.equal(res.headers['dataserviceversion'], '1.0;');
    const d = readEntity(res.body) as unknown as Entity[];
    assert.ok(Array.isArray(d) && d.length === 1 && Array.isArray(d[0]!.ProductImages));
  });
});
