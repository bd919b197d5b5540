/**
 * Compression as clients of the running service meet it: feeds and entries in Atom and JSON, the
 * streamed export with the connector's expansions, $metadata, $batch answers and error bodies,
 * each read back with gzip and deflate and compared with the identity answer; ETags the same in
 * every coding; 406 where nothing is acceptable (and nothing written); compressed request bodies,
 * also as a $batch's outer body; the SAP Cloud SDK's HTTP client (axios, which asks for gzip)
 * reading compressed answers; and, byte for byte, the answers to requests without Accept-Encoding
 * (what the shop connector sends) the same with compression on as with it off.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { ManualClock } from '../../src/clock';
import { newSeller, startLive, CONNECTOR_VERSIONS, type LiveService, type Seller } from '../support/live-service';
import { seedCatalogue } from '../support/catalogue-seed';
import { batchBody, BATCH_BOUNDARY, changesetPart, httpPart, jsonOperation, readBatchAnswer, changesetAnswers } from '../batch/support';

const EXPAND =
  'CarParts,Catalogs,ChildProducts,DiscountOffers,OptionalProductAttributes,ProductImages,ProductSpecifics,' +
  'ProductVariations/ProductVariationSpecifics,ProductVariations/ProductVariationPictures';

// One instant for both services below, so that Atom's <updated> is the same in their answers.
const clock = new ManualClock(Date.UTC(2026, 10, 28, 12));
let live: LiveService;
let seller: Seller;
let productId: string;

before(async () => {
  live = await startLive({ clock });
  seller = await newSeller(live, 'gzip');
  const { app } = live.service;
  // 300 products with the connector's shape: the export is several pieces of a stream.
  await seedCatalogue(app.model, app.store, app.entities, seller.accountId, 300);
  const first = await ask('GET', '/Products?$top=1&$select=Id', { Accept: 'application/json' });
  productId = String((JSON.parse(first.body.toString('utf8')) as { d: { results: { Id: string }[] } }).d.results[0]!.Id);
});
after(() => live?.close());

interface Answer {
  readonly status: number;
  /** Every header line as sent, in order (node:http's rawHeaders). */
  readonly rawHeaders: readonly string[];
  readonly headers: http.IncomingHttpHeaders;
  /** The body as it came over the wire (de-chunked, not decoded). */
  readonly body: Buffer;
}

function ask(method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | string, service = live): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const all = { ...seller.auth, ...headers, ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) };
    const req = http.request(service.root + path, { method, headers: all, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function decoded(answer: Answer): Buffer {
  const coding = answer.headers['content-encoding'];
  if (coding === 'gzip') return zlib.gunzipSync(answer.body);
  if (coding === 'deflate') return zlib.inflateSync(answer.body);
  if (coding === 'br') return zlib.brotliDecompressSync(answer.body);
  assert.equal(coding, undefined);
  return answer.body;
}

/** The requests every coding is checked on: each kind of answer the service writes. */
const REQUESTS: readonly { name: string; method: string; path: () => string; headers: Record<string, string>; body?: () => string }[] = [
  { name: 'an Atom feed', method: 'GET', path: () => '/Products?$top=20', headers: { ...CONNECTOR_VERSIONS } },
  { name: 'a JSON feed', method: 'GET', path: () => '/Products?$top=20&$expand=ProductVariations', headers: { ...CONNECTOR_VERSIONS, Accept: 'application/json' } },
  { name: 'an Atom entry', method: 'GET', path: () => `/Products(${productId}L)?$expand=ProductSpecifics`, headers: { ...CONNECTOR_VERSIONS } },
  { name: 'a JSON entry', method: 'GET', path: () => `/Products(${productId}L)`, headers: { ...CONNECTOR_VERSIONS, Accept: 'application/json' } },
  { name: 'the export', method: 'GET', path: () => `/Products?$expand=${EXPAND}`, headers: { ...CONNECTOR_VERSIONS, Accept: 'application/json' } },
  { name: '$metadata', method: 'GET', path: () => '/$metadata', headers: {} },
  { name: 'an error', method: 'GET', path: () => '/NoSuchSet', headers: { Accept: 'application/json' } },
  {
    name: 'a $batch answer',
    method: 'POST',
    path: () => '/$batch',
    headers: { 'Content-Type': `multipart/mixed; boundary=${BATCH_BOUNDARY}`, ...CONNECTOR_VERSIONS },
    body: () => batchBody([httpPart({ method: 'GET', target: 'Products?$top=10', headers: ['Accept: application/json'] })]),
  },
];

test('gzip, deflate and brotli: each kind of answer decodes to the identity answer, with Vary and the same ETag', async () => {
  for (const r of REQUESTS) {
    const plain = await ask(r.method, r.path(), r.headers, r.body?.());
    assert.ok(plain.status === 200 || plain.status === 202 || plain.status === 404, `${r.name}: ${plain.status}`);
    for (const coding of ['gzip', 'deflate', 'br'] as const) {
      const coded = await ask(r.method, r.path(), { ...r.headers, 'Accept-Encoding': coding }, r.body?.());
      assert.equal(coded.status, plain.status, r.name);
      assert.equal(coded.headers.vary, 'Accept-Encoding', r.name);
      assert.equal(coded.headers.etag, plain.headers.etag, `${r.name}: the ETag is the entity's version, whatever the coding`);
      const text = decoded(coded);
      if (r.name === 'a $batch answer') {
        // Each batch answer has its own boundary: compare what is between them.
        const parts = (b: Buffer) => b.toString('utf8').replace(/batchresponse_[0-9a-f-]+/g, 'B');
        assert.equal(parts(text), parts(plain.body), r.name);
      } else if (r.name === 'an error') {
        assert.deepEqual(JSON.parse(text.toString('utf8')), JSON.parse(plain.body.toString('utf8')), r.name);
      } else assert.ok(text.equals(plain.body), `${r.name} in ${coding}`);
      // Worth compressing: every answer here but the short error is at least a KiB.
      if (plain.body.length >= 1024) {
        assert.equal(coded.headers['content-encoding'], coding, r.name);
        assert.ok(coded.body.length * 3 < plain.body.length, `${r.name}: ${coded.body.length} of ${plain.body.length} bytes`);
      } else assert.equal(coded.headers['content-encoding'], undefined, r.name);
    }
  }
});

test('an ETag from a gzip answer validates the identity one: 304 for If-None-Match in either coding', async () => {
  const path = `/Products(${productId}L)`;
  const gz = await ask('GET', path, { Accept: 'application/json', 'Accept-Encoding': 'gzip' });
  const etag = gz.headers.etag!;
  assert.match(etag, /^W\//);
  assert.equal((await ask('GET', path, { Accept: 'application/json', 'If-None-Match': etag })).status, 304);
  const again = await ask('GET', path, { Accept: 'application/json', 'If-None-Match': etag, 'Accept-Encoding': 'gzip' });
  assert.equal(again.status, 304);
  assert.equal(again.headers.vary, 'Accept-Encoding');
});

test('identity;q=0 with no coding the service has: 406 as an OData error, and a write is not made', async () => {
  const before = await ask('GET', '/Products/$count');
  const refused = await ask(
    'POST',
    '/Products',
    { Accept: 'application/json', 'Content-Type': 'application/json', 'Accept-Encoding': 'compress, identity;q=0' },
    JSON.stringify({ Title: 'Refused', Price: '1.00', StockAmount: 1, ForeignId: 'F-refused' }),
  );
  assert.equal(refused.status, 406, refused.body.toString());
  assert.equal(refused.headers['content-encoding'], undefined);
  assert.match(String((JSON.parse(refused.body.toString('utf8')) as { error: { message: { value: string } } }).error.message.value), /Accept-Encoding/);
  assert.equal((await ask('GET', '/Products/$count')).body.toString(), before.body.toString());
  // gzip with identity refused is still served.
  const gzipOnly = await ask('GET', '/Products?$top=1', { 'Accept-Encoding': 'gzip, identity;q=0' });
  assert.equal(gzipOnly.status, 200);
  assert.equal(gzipOnly.headers['content-encoding'], 'gzip');
});

test('a POST and a $batch whose bodies are gzip: created as if sent plain; an unknown coding is 415', async () => {
  const product = (label: string) => JSON.stringify({ Title: `Produkt ${label}`, Price: '9.90', StockAmount: 3, ForeignId: `F-${label}` });
  const created = await ask('POST', '/Products', { Accept: 'application/json', 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, zlib.gzipSync(product('gz')));
  assert.equal(created.status, 201, created.body.toString());
  const deflated = await ask('POST', '/Products', { Accept: 'application/json', 'Content-Type': 'application/json', 'Content-Encoding': 'deflate' }, zlib.deflateSync(product('dfl')));
  assert.equal(deflated.status, 201, deflated.body.toString());

  const batch = batchBody([changesetPart([jsonOperation('POST', 'Products', 1, JSON.parse(product('batch-gz')))])]);
  const answer = await ask('POST', '/$batch', { 'Content-Type': `multipart/mixed; boundary=${BATCH_BOUNDARY}`, ...CONNECTOR_VERSIONS, 'Content-Encoding': 'gzip' }, zlib.gzipSync(batch));
  assert.equal(answer.status, 202, answer.body.toString());
  const parts = changesetAnswers(readBatchAnswer({ status: answer.status, headers: answer.headers, body: answer.body.toString('utf8') })[0]);
  assert.equal(parts[0]?.status, 201);
  const found = await ask('GET', "/Products?$filter=ForeignId eq 'F-batch-gz'&$select=Id".replace(/ /g, '%20'), { Accept: 'application/json' });
  assert.equal((JSON.parse(found.body.toString('utf8')) as { d: { results: unknown[] } }).d.results.length, 1);

  const unknown = await ask('POST', '/Products', { Accept: 'application/json', 'Content-Type': 'application/json', 'Content-Encoding': 'br' }, product('br'));
  assert.equal(unknown.status, 415);
  assert.equal(unknown.headers['accept-encoding'], 'gzip, deflate');
  assert.match(unknown.body.toString('utf8'), /Content-Encoding 'br' is not supported/);
});

test('the SAP Cloud SDK\'s HTTP client (axios) asks for compression, gets it, and reads the feed', async () => {
  const { executeHttpRequest } = await import('@sap-cloud-sdk/http-client');
  const res = await executeHttpRequest(
    { url: live.origin, headers: { ...seller.auth, MinDataServiceVersion: '2.0' } },
    { method: 'get', url: '/publicapi/v1/api.svc/Products?$top=20&$expand=ProductImages', headers: { Accept: 'application/json' } },
    { fetchCsrfToken: false },
  );
  // axios removes Content-Encoding from the headers it hands on once it decoded the body: the raw
  // lines of the answer show what came over the wire.
  const raw = (res.request as { res: http.IncomingMessage }).res.rawHeaders;
  const coding = raw.findIndex((h) => h.toLowerCase() === 'content-encoding');
  assert.ok(coding >= 0 && /^(br|gzip|deflate)$/.test(raw[coding + 1]!), `the answer was compressed: ${raw.join(' ')}`);
  const plain = await ask('GET', '/Products?$top=20&$expand=ProductImages', { Accept: 'application/json', MinDataServiceVersion: '2.0' });
  assert.deepEqual(res.data, JSON.parse(plain.body.toString('utf8')));
});

test('the console: its pages and files are compressed for a browser that asks, and unchanged for one that does not', async () => {
  const { ASSETS } = await import('../../src/console/assets');
  const style = [...ASSETS.values()].find((a) => a.contentType.startsWith('text/css'))!;
  for (const path of [`/console${style.path}`, '/console/login']) {
    const get = (headers: Record<string, string>) =>
      new Promise<Answer>((resolve, reject) => {
        http.get(live.origin + path, { headers, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, headers: res.headers, body: Buffer.concat(chunks) }));
        }).on('error', reject);
      });
    const plain = await get({});
    const gz = await get({ 'Accept-Encoding': 'gzip, deflate' });
    assert.equal(plain.status, 200, path);
    assert.ok(plain.body.length >= 1024, `${path} is worth compressing`);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, undefined);
    assert.equal(gz.headers['content-encoding'], 'gzip', path);
    assert.equal(gz.headers.vary, 'Accept-Encoding');
    assert.equal(gz.headers['content-security-policy'], plain.headers['content-security-policy']);
    // The login form carries a fresh token of its own in every answer: compared without it.
    const withoutToken = (body: Buffer) => body.toString('utf8').replace(/name="csrf" value="[^"]*"/, 'name="csrf" value=""');
    assert.equal(withoutToken(zlib.gunzipSync(gz.body)), withoutToken(plain.body), path);
  }
});

test('without Accept-Encoding every answer is byte for byte what it is with compression off', async () => {
  // The vendor's connector sends no Accept-Encoding: its answers must not change at all.
  const withoutDate = (raw: readonly string[]) => raw.filter((_, i) => !(i % 2 === 0 ? raw[i]! : raw[i - 1]!).match(/^date$/i));
  const capture = async (service: LiveService) => {
    const answers: { name: string; head: string[]; body: Buffer; status: number }[] = [];
    for (const r of REQUESTS.filter((r) => r.method === 'GET')) {
      const a = await ask(r.method, r.path(), r.headers, undefined, service);
      // The second service listens on another port: its URIs differ in that alone.
      const portless = (text: string) => text.split(service.origin).join('http://ORIGIN');
      answers.push({ name: r.name, status: a.status, head: withoutDate(a.rawHeaders).map(portless), body: Buffer.from(portless(a.body.toString('latin1')), 'latin1') });
    }
    return answers;
  };
  const on = await capture(live);
  assert.ok(on.every((a) => !a.head.some((h) => /^(vary|content-encoding)$/i.test(h))), 'no coding headers without Accept-Encoding');
  await live.close();
  const database = live.database;
  live = await startLive({ clock, database, env: { COMPRESSION: 'off' } });
  const off = await capture(live);
  for (let i = 0; i < on.length; i++) {
    assert.equal(on[i]!.status, off[i]!.status, on[i]!.name);
    assert.deepEqual(on[i]!.head, off[i]!.head, on[i]!.name);
    assert.ok(on[i]!.body.equals(off[i]!.body), `${on[i]!.name}: the same bytes`);
  }
  // And with compression off a client that asks for gzip gets identity, with nothing about codings.
  const asked = await ask('GET', '/Products?$top=20', { 'Accept-Encoding': 'gzip' });
  assert.equal(asked.headers['content-encoding'], undefined);
  assert.equal(asked.headers.vary, undefined);
});
