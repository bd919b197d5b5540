/**
 * The $batch protocol over real HTTP, piece by piece (docs/protocol.md, "$batch"): the batch
 * request itself (POST only, no tunnelling, multipart/mixed, size), the answer's framing and
 * headers, query parts (each its own read, its error its own), the forms of inner targets, where
 * a Content-ID may sit, `$n` references, inner headers and options, limits at N and N+1, the
 * bound on buffered answers, and that a changeset is acknowledged only once it is committed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../src/store/open';
import { EntityStore } from '../../src/store/entities';
import { newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { asSeller } from '../support/live-service';
import { seedCatalogue } from '../support/catalogue-seed';
import {
  BATCH_BOUNDARY,
  batchBody,
  changesetAnswers,
  changesetPart,
  client,
  errorMessageOf,
  httpPart,
  jsonOperation,
  postBatch,
  readBatchAnswer,
  singleAnswer,
  type PartAnswer,
} from './support';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'protocol');
});
after(() => live.close());

const get = (target: string, headers: string[] = ['Accept: application/json'], partHeaders: string[] = []) => httpPart({ method: 'GET', target, headers }, partHeaders);
const json = (answer: PartAnswer) => JSON.parse(answer.body) as { d: Record<string, unknown> & { results?: unknown[] } };

describe('the batch request itself', () => {
  test('only POST: other methods are 405 with Allow: POST', async () => {
    for (const method of ['GET', 'PUT', 'MERGE', 'DELETE', 'PATCH']) {
      const res = await asSeller(seller, `${live.root}/$batch`, { method, headers: { 'Content-Type': `multipart/mixed; boundary=${BATCH_BOUNDARY}` }, ...(method === 'GET' || method === 'DELETE' ? {} : { body: batchBody([]) }) });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.allow, 'POST');
      assert.match(res.body, /<error/);
    }
  });

  test('X-HTTP-Method on the batch is a 400, also with a verb that could be tunnelled', async () => {
    for (const header of ['X-HTTP-Method', 'X-HTTP-Method-Override']) {
      for (const verb of ['MERGE', 'DELETE', 'POST']) {
        const res = await postBatch(live, seller, batchBody([get('Products')]), undefined, { [header]: verb, Accept: 'application/json' });
        assert.equal(res.status, 400, `${header}: ${verb}`);
        assert.match(res.body, /^\{"error":/);
      }
    }
  });

  test('a Content-Type that is not multipart/mixed is 415; multipart/mixed without a usable boundary is 400', async () => {
    for (const contentType of ['application/json', 'text/plain', 'multipart/related; boundary=x', 'application/http']) {
      assert.equal((await postBatch(live, seller, batchBody([get('Products')]), contentType)).status, 415, contentType);
    }
    const none = await asSeller(seller, `${live.root}/$batch`, { method: 'POST', body: batchBody([get('Products')]) });
    assert.equal(none.status, 415);
    for (const contentType of ['multipart/mixed', 'multipart/mixed; boundary=', 'multipart/mixed; boundary="unclosed', 'multipart/mixed; boundary=other', 'multipart/mixed;;; =x']) {
      assert.equal((await postBatch(live, seller, batchBody([get('Products')]), contentType)).status, 400, contentType);
    }
  });

  test('system query options on $batch are a 400; authentication comes first (401)', async () => {
    const res = await asSeller(seller, `${live.root}/$batch?$format=json`, { method: 'POST', headers: { 'Content-Type': `multipart/mixed; boundary=${BATCH_BOUNDARY}` }, body: batchBody([get('Products')]) });
    assert.equal(res.status, 400);
    assert.equal((await postBatch(live, { ...seller, auth: {} }, batchBody([get('Products')]))).status, 401);
  });

  test('the answer: 202, boundary= last in the Content-Type, DataServiceVersion 1.0;, one part per request part', async () => {
    const res = await postBatch(live, seller, batchBody([get('Products'), changesetPart([jsonOperation('POST', 'Catalogs', 1, { Name: 'K' })]), get('Catalogs')]));
    assert.equal(res.status, 202);
    assert.match(String(res.headers['content-type']), /^multipart\/mixed; boundary=batchresponse_[0-9a-f-]{36}$/);
    assert.equal(res.headers['dataserviceversion'], '1.0;');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body));
    const answers = readBatchAnswer(res);
    assert.deepEqual(answers.map((a) => a.kind), ['response', 'changeset', 'response']);
  });
});

describe('query parts', () => {
  test('each is its own read; a failing one answers alone and the others as on their own', async () => {
    const api = client(live, seller);
    const product = await api.create('Products', { Title: 'Lesbar', Price: '2', StockAmount: 1 });
    const answers = readBatchAnswer(
      await postBatch(
        live,
        seller,
        batchBody([
          get(`Products(${product}L)`),
          get('Products(987654321L)'),
          get(`Products?$filter=Title%20eq%20'Lesbar'&$select=Title`, ['Accept: application/json', 'MaxDataServiceVersion: 2.0']),
          get(`Products?$filter=Title%20eq`),
          get(`ProductIsListed?productId=${product}L`),
          get('$metadata', []),
          get('/publicapi/v1/api.svc', ['Accept: application/json']),
          get(`Products(${product}L)/Title/$value`, []),
          get(`Products(${product}L)`, []),
        ]),
      ),
    );
    const parts = answers.map(singleAnswer);
    assert.deepEqual(parts.map((p) => p.status), [200, 404, 200, 400, 200, 200, 200, 200, 200]);
    assert.equal(json(parts[0]!).d.Title, 'Lesbar');
    assert.match(errorMessageOf(parts[1]!), /Products\(987654321L\)/);
    assert.equal(parts[1]!.headers.get('content-type'), 'application/json;charset=utf-8', 'the error in the format the part asked for');
    assert.equal(parts[2]!.headers.get('dataserviceversion'), '2.0;', '$select makes a 2.0 answer');
    assert.deepEqual(json(parts[2]!).d.results!.map((e) => (e as { Title: string }).Title), ['Lesbar']);
    assert.equal(parts[3]!.headers.get('content-type'), 'application/json;charset=utf-8');
    assert.deepEqual(json(parts[4]!).d, { ProductIsListed: false });
    assert.match(parts[5]!.body, /<edmx:Edmx/);
    assert.ok(Array.isArray((json(parts[6]!).d as { EntitySets?: unknown }).EntitySets));
    assert.equal(parts[7]!.body, 'Lesbar');
    assert.match(parts[8]!.headers.get('content-type') ?? '', /^application\/atom\+xml/, 'Atom without an Accept');
  });

  test('inner headers and options count: $format, Accept, MaxDataServiceVersion, DataServiceVersion', async () => {
    const parts = readBatchAnswer(
      await postBatch(
        live,
        seller,
        batchBody([
          get('Products?$format=json', []),
          get('Products?$inlinecount=allpages', ['Accept: application/json', 'MaxDataServiceVersion: 1.0']),
          get('Products', ['Accept: application/json', 'DataServiceVersion: 3.0']),
          get('Products', ['Accept: image/png']),
        ]),
      ),
    ).map(singleAnswer);
    assert.deepEqual(parts.map((p) => p.status), [200, 400, 400, 406]);
    assert.equal(parts[0]!.headers.get('content-type'), 'application/json;charset=utf-8');
  });

  test('Content-ID in the MIME part headers or in the request headers is echoed', async () => {
    const parts = readBatchAnswer(await postBatch(live, seller, batchBody([get('Catalogs', ['Accept: application/json'], ['Content-ID: mime-1']), get('Catalogs', ['Accept: application/json', 'Content-ID: inner-2']), get('Nope', [], ['Content-ID: 3'])]))).map(singleAnswer);
    assert.deepEqual(parts.map((p) => [p.status, p.headers.get('content-id')]), [[200, 'mime-1'], [200, 'inner-2'], [404, '3']]);
  });

  test('targets: relative, absolute path, absolute URI of any host, the service path in any case; outside the service is a 400', async () => {
    const product = await client(live, seller).create('Products', { Title: 'Ziel', Price: '2', StockAmount: 1 });
    const path = `Products(${product}L)`;
    const parts = readBatchAnswer(
      await postBatch(
        live,
        seller,
        batchBody([
          get(path),
          get(`/publicapi/v1/api.svc/${path}`),
          get(`https://proxy.example.com/publicapi/v1/api.svc/${path}`),
          get(`${live.origin}/PublicApi/v1/Api.svc/${path}`),
          get(`/other.svc/${path}`),
          get(`${live.origin}/publicapi/v1/api.svc/../api.svc/${path}`),
        ]),
      ),
    ).map(singleAnswer);
    assert.deepEqual(parts.map((p) => p.status), [200, 200, 200, 200, 400, 400]);
    for (const part of parts.slice(0, 4)) assert.equal((json(part).d.__metadata as { uri: string }).uri, `${live.root}/${path}`, 'URIs are built on the batch request’s service root');
  });
});

describe('changesets', () => {
  test('$n: the canonical path of the entity n created or changed, plus the rest of the target', async () => {
    const api = client(live, seller);
    const catalog = await api.create('Catalogs', { Name: 'Ref' });
    const responses = changesetAnswers(
      readBatchAnswer(
        await postBatch(
          live,
          seller,
          batchBody([
            changesetPart([
              jsonOperation('POST', 'Products', 'p', { Title: 'Ref', Price: '3', StockAmount: 1 }),
              jsonOperation('POST', '$p/ProductVariations', 'v', { Sku: 'R-1', Price: '3', StockAmount: 1 }),
              jsonOperation('POST', '$v/ProductVariationSpecifics', 3, { Name: 'Farbe', Value: 'Rot' }),
              jsonOperation('MERGE', `Catalogs(${catalog}L)`, 'c', { Name: 'Ref 2' }),
              jsonOperation('POST', '$p/$links/Catalogs', 5, { uri: `${live.root}/Catalogs(${catalog}L)` }),
              jsonOperation('MERGE', '$c', 6, { ForeignId: 'C-1' }),
              jsonOperation('DELETE', '$v', 7),
            ]),
          ]),
        ),
      )[0],
    );
    assert.deepEqual(responses.map((r) => r.status), [201, 201, 201, 204, 204, 204, 204], responses.map((r) => r.body).join('\n'));
    assert.deepEqual(responses.map((r) => r.headers.get('content-id')), ['p', 'v', '3', 'c', '5', '6', '7']);
    const productId = (json(responses[0]!).d.Id as string);
    assert.equal(json(responses[1]!).d.ProductId, productId);
    assert.deepEqual(await api.feed(`Products(${productId}L)/ProductVariations`), [], '$v was deleted again');
    assert.deepEqual((await api.get(`Catalogs(${catalog}L)`))?.ForeignId, 'C-1');
    assert.deepEqual((await api.feed(`Products(${productId}L)/Catalogs`)).map((c) => c.Id), [String(catalog)]);
  });

  test('methods and resources a changeset cannot write are its single error (405 with Allow)', async () => {
    const product = await client(live, seller).create('Products', { Title: 'M', Price: '3', StockAmount: 1 });
    for (const [method, target, allow] of [
      ['POST', `Products(${product}L)`, 'GET, HEAD, PUT, MERGE, PATCH, DELETE'],
      ['DELETE', 'Products', 'GET, HEAD, POST'],
      ['PUT', '$metadata', 'GET, HEAD'],
      ['POST', `ProductIsListed?productId=${product}L`, 'GET, HEAD'],
    ] as const) {
      const failure = singleAnswer(readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart([jsonOperation(method, target, 1, method === 'DELETE' ? undefined : {})])])))[0]);
      assert.equal(failure.status, 405, `${method} ${target}: ${failure.body}`);
      assert.equal(failure.headers.get('allow'), allow);
    }
  });

  test('If-Match inside a changeset: the ETag read is the one written, a stale one is a 412 that rolls back the changeset', async () => {
    const api = client(live, seller);
    const product = await api.create('Products', { Title: 'Version', Price: '3', StockAmount: 1 });
    const etag = ((await api.get(`Products(${product}L)`))?.__metadata as { etag: string }).etag;
    const merge = (tag: string, cid: number) => httpPart({ method: 'MERGE', target: `Products(${product}L)`, headers: ['Accept: application/json', 'Content-Type: application/json', `Content-ID: ${cid}`, `If-Match: ${tag}`], body: JSON.stringify({ Title: `Version ${cid}` }) });
    const rowsBefore = await tenantRows(live, seller.accountId);
    const stale = singleAnswer(readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart([jsonOperation('POST', 'Catalogs', 1, { Name: 'nie' }), merge('W/"0"', 2)])])))[0]);
    assert.equal(stale.status, 412, stale.body);
    assert.equal(stale.headers.get('content-id'), '2');
    assert.deepEqual(await tenantRows(live, seller.accountId), rowsBefore);
    const [written] = changesetAnswers(readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart([merge(etag, 1)])])))[0]);
    assert.equal(written!.status, 204);
    const newTag = written!.headers.get('etag');
    assert.ok(newTag && newTag !== etag, 'the part carries the new ETag');
    // Two MERGEs naming the same version: the first replaces it, so the second is a 412 and the
    // first is rolled back with it.
    const rowsBetween = await tenantRows(live, seller.accountId);
    const twice = singleAnswer(readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart([merge(newTag, 1), merge(newTag, 2)])])))[0]);
    assert.equal(twice.status, 412);
    assert.equal(twice.headers.get('content-id'), '2');
    assert.deepEqual(await tenantRows(live, seller.accountId), rowsBetween);
  });

  test('Idempotency-Key on a POST inside a changeset: kept with the changeset, replayed on a retry, and $n still names the entity', async () => {
    const api = client(live, seller);
    const retried = batchBody([
      changesetPart([
        httpPart({ method: 'POST', target: 'Products', headers: ['Accept: application/json', 'Content-Type: application/json', 'Content-ID: 1', 'Idempotency-Key: batch-key-1'], body: JSON.stringify({ Title: 'Einmal', Price: '3', StockAmount: 1 }) }),
        jsonOperation('MERGE', '$1', 2, { StockAmount: 8 }),
      ]),
    ]);
    const first = changesetAnswers(readBatchAnswer(await postBatch(live, seller, retried))[0]);
    assert.deepEqual(first.map((r) => r.status), [201, 204]);
    const id = json(first[0]!).d.Id as string;
    const again = changesetAnswers(readBatchAnswer(await postBatch(live, seller, retried))[0]);
    assert.deepEqual(again.map((r) => r.status), [201, 204], again.map((r) => r.body).join('\n'));
    assert.equal(again[0]!.headers.get('idempotent-replayed'), 'true');
    assert.equal(json(again[0]!).d.Id, id, 'the first answer, nothing created twice');
    assert.deepEqual((await api.feed(`Products?$filter=Title%20eq%20'Einmal'`)).map((p) => p.Id), [id]);
    assert.equal((await api.get(`Products(${id}L)`))?.StockAmount, 8);

    // A key used in a changeset that failed was rolled back with it: the same POST creates then.
    const failing = batchBody([
      changesetPart([
        httpPart({ method: 'POST', target: 'Catalogs', headers: ['Accept: application/json', 'Content-Type: application/json', 'Content-ID: 1', 'Idempotency-Key: batch-key-2'], body: '{"Name":"Zweimal"}' }),
        jsonOperation('DELETE', 'Catalogs(987654321L)', 2),
      ]),
    ]);
    assert.equal(singleAnswer(readBatchAnswer(await postBatch(live, seller, failing))[0]).status, 404);
    const created = changesetAnswers(
      readBatchAnswer(
        await postBatch(live, seller, batchBody([changesetPart([httpPart({ method: 'POST', target: 'Catalogs', headers: ['Accept: application/json', 'Content-Type: application/json', 'Idempotency-Key: batch-key-2'], body: '{"Name":"Zweimal"}' })])])),
      )[0],
    );
    assert.equal(created[0]!.status, 201);
    assert.equal(created[0]!.headers.get('idempotent-replayed'), undefined);
  });

  test('an operation body above MAX_BODY_BYTES is a 413 for that operation', async () => {
    const limited = await startLive({ env: { MAX_BODY_BYTES: '1024' } });
    try {
      const s = await newSeller(limited, 'body-limit');
      const big = { Title: 'Gross', Price: '1', StockAmount: 1, Description: 'x'.repeat(1100) };
      const failure = singleAnswer(readBatchAnswer(await postBatch(limited, s, batchBody([changesetPart([jsonOperation('POST', 'Products', 1, big)])])))[0]);
      assert.equal(failure.status, 413);
      assert.equal(failure.headers.get('content-id'), '1');
    } finally {
      await limited.close();
    }
  });

  test('a changeset is answered only after COMMIT, and its rows are then there for another connection', async () => {
    // The store's transactions are made slow to finish (300 ms between the last statement and
    // COMMIT): an answer sent before COMMIT would arrive before the transaction ended.
    const { store } = live.service.app;
    const write = store.write.bind(store);
    let committedAt = 0;
    (store as { write: typeof store.write }).write = async (accountId, fn) => {
      const value = await write(accountId, async (tx) => {
        const result = await fn(tx);
        await new Promise((r) => setTimeout(r, 300));
        return result;
      });
      committedAt = performance.now();
      return value;
    };
    let res;
    try {
      res = await postBatch(live, seller, batchBody([changesetPart([jsonOperation('POST', 'Catalogs', 1, { Name: 'Dauerhaft' }), jsonOperation('POST', 'Catalogs', 2, { Name: 'Auch' })])]));
    } finally {
      (store as { write: typeof store.write }).write = write;
    }
    const receivedAt = performance.now();
    assert.ok(committedAt > 0 && committedAt <= receivedAt, 'the answer came after COMMIT');
    const ids = changesetAnswers(readBatchAnswer(res)[0]).map((r) => BigInt(json(r).d.Id as string));
    // A second store of its own on the same database: it sees committed rows only.
    const other = openStore(live.service.app.config.databaseUrl);
    try {
      const type = live.service.app.model.typeBySetName.get('Catalogs')!;
      const entities = new EntityStore(live.service.app.model, other);
      const names = await other.read(seller.accountId, async (tx) => Promise.all(ids.map(async (id) => (await entities.find(tx, seller.accountId, type, id))?.values.Name)));
      assert.deepEqual(names, ['Dauerhaft', 'Auch']);
    } finally {
      await other.close();
    }
  });
});

describe('limits, at N and at N+1', () => {
  let limited: LiveService;
  let s: Seller;
  before(async () => {
    limited = await startLive({ env: { MAX_BATCH_PARTS: '5', MAX_CHANGESET_OPERATIONS: '4', MAX_BATCH_BODY_BYTES: '8192', MAX_BATCH_RESPONSE_BYTES: '6000' } });
    s = await newSeller(limited, 'limits');
  });
  after(() => limited.close());

  const catalogs = (n: number) => Array.from({ length: n }, (_, i) => jsonOperation('POST', 'Catalogs', i + 1, { Name: `L${i}` }));

  test('MAX_BATCH_PARTS: 5 parts answer, 6 are a 400 naming the limit', async () => {
    const parts = (n: number) => batchBody(Array.from({ length: n }, () => get('Catalogs')));
    assert.equal(readBatchAnswer(await postBatch(limited, s, parts(5))).length, 5);
    const res = await postBatch(limited, s, parts(6), undefined, { Accept: 'application/json' });
    assert.equal(res.status, 400);
    assert.match(res.body, /more than 5 parts/);
  });

  test('MAX_CHANGESET_OPERATIONS: 4 operations run, 5 are a 400 and nothing runs', async () => {
    assert.equal(changesetAnswers(readBatchAnswer(await postBatch(limited, s, batchBody([changesetPart(catalogs(4))])))[0]).length, 4);
    const before = (await client(limited, s).feed('Catalogs')).length;
    const res = await postBatch(limited, s, batchBody([changesetPart(catalogs(5))]));
    assert.equal(res.status, 400);
    assert.match(res.body, /more than 4 operations/);
    assert.equal((await client(limited, s).feed('Catalogs')).length, before);
  });

  test('MAX_BATCH_BODY_BYTES: a body of exactly the limit is read, one byte more is a 413', async () => {
    const body = batchBody([get('Catalogs')]);
    // The preamble before the first delimiter is ignored: it pads the body to the size wanted.
    const padded = (size: number) => ' '.repeat(size - Buffer.byteLength(body) - 2) + '\r\n' + body;
    assert.equal(readBatchAnswer(await postBatch(limited, s, padded(8192))).length, 1);
    const res = await postBatch(limited, s, padded(8193));
    assert.equal(res.status, 413);
    assert.match(res.body, /8192 bytes/);
  });

  test('MAX_BATCH_RESPONSE_BYTES: a query part whose answer would not fit is its own 400; the other parts and later reads are fine', async () => {
    // 300 products: more than one page of rows (256), so the answer passes the bound while its
    // statement is still open, and the part's failure must end that statement.
    const { app } = limited.service;
    await seedCatalogue(app.model, app.store, app.entities, s.accountId, 300);
    const parts = readBatchAnswer(await postBatch(limited, s, batchBody([get('Products?$top=1'), get('Products'), get('Catalogs?$top=1')]))).map(singleAnswer);
    assert.deepEqual(parts.map((p) => p.status), [200, 400, 200]);
    assert.match(errorMessageOf(parts[1]!), /larger than 6000 bytes/);
    // Every reader connection is usable again (8 of them), and so is the writer.
    for (let i = 0; i < 12; i++) assert.equal((await client(limited, s).feed('Products?$top=3')).length, 3);
    assert.equal(changesetAnswers(readBatchAnswer(await postBatch(limited, s, batchBody([changesetPart(catalogs(1))])))[0])[0]!.status, 201);
    // (The service closes in after(): a statement left open would make closing its connection throw.)
  });
});

describe('the default limits: 100 parts and 100 operations', () => {
  test('100 query parts answer, 101 are a 400; 100 operations run, 101 are a 400', async () => {
    const parts = (n: number) => batchBody(Array.from({ length: n }, () => get('Catalogs?$top=1')));
    assert.equal(readBatchAnswer(await postBatch(live, seller, parts(100))).length, 100);
    assert.equal((await postBatch(live, seller, parts(101))).status, 400);
    const ops = (n: number) => batchBody([changesetPart(Array.from({ length: n }, (_, i) => jsonOperation('POST', 'Catalogs', i + 1, { Name: `D${i}` })))]);
    const responses = changesetAnswers(readBatchAnswer(await postBatch(live, seller, ops(100)))[0]);
    assert.equal(responses.length, 100);
    assert.ok(responses.every((r) => r.status === 201));
    assert.equal((await postBatch(live, seller, ops(101))).status, 400);
  });
});
