/**
 * datajs (OData.request with OData.batchHandler) against the live $batch, once with JSON parts
 * and once with Atom parts (inner requests with Atom bodies, answers in Atom), each written and
 * read by datajs's own part handler (the default handler, which picks the format by Content-Type
 * and Accept): a read, a changeset of creates (one through `$1`) and
 * updates (MERGE and PUT), and a read after it that sees the changeset. datajs reads the answer
 * itself; the data is then read back over plain HTTP.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { datajsHttpClient, loadDatajs, ODataRequestError, type ODataHttpClient } from '../clients/datajs';
import { client, type Entity } from './support';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'datajs-batch');
});
after(() => live.close());

interface PartResponse {
  readonly statusCode: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly data?: Entity;
}
interface FailedPart {
  readonly message: string;
  readonly response: PartResponse;
}
interface ChangeResponses {
  readonly __changeResponses: readonly (PartResponse | FailedPart)[];
}

/**
 * The inner headers that make datajs's default part handler write and ask for a format. (Setting
 * jsonHandler or atomHandler as the part handler instead breaks datajs on any 204 part: it reads
 * the missing Content-Type of a bodiless answer, the datajs bug test/clients/datajs.ts works around.)
 */
const FORMATS: readonly { name: 'JSON' | 'Atom'; headers: Record<string, string>; contentType: RegExp }[] = [
  { name: 'JSON', headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, contentType: /^application\/json;charset=utf-8/ },
  { name: 'Atom', headers: { Accept: 'application/atom+xml', 'Content-Type': 'application/atom+xml' }, contentType: /^application\/atom\+xml;charset=utf-8/ },
];

type Part = { headers?: Record<string, string> } & Record<string, unknown>;

/**
 * Sends `requests` as one datajs batch, every inner request with the format's headers; answers
 * datajs's reading of the response and the request body datajs wrote.
 */
async function datajsBatch(formatHeaders: Record<string, string>, requests: Part[]): Promise<{ answers: unknown[]; sent: string }> {
  const withHeaders = (r: Part): Part => ({ ...r, headers: { ...formatHeaders, ...(r.headers ?? {}) } });
  const parts = requests.map((part) => (Array.isArray(part.__changeRequests) ? { __changeRequests: (part.__changeRequests as Part[]).map(withHeaders) } : withHeaders(part)));
  const OData = loadDatajs();
  let sent = '';
  const capturing: ODataHttpClient = {
    request: (request, success, error) => {
      sent = String((request as { body?: unknown }).body);
      return datajsHttpClient().request(request, success, error);
    },
  };
  return new Promise((resolve, reject) => {
    OData.request(
      { requestUri: `${live.root}/$batch`, method: 'POST', headers: { ...seller.auth }, data: { __batchRequests: parts } },
      (data, response) => {
        assert.equal(response.statusCode, 202);
        resolve({ answers: (data as { __batchResponses: unknown[] }).__batchResponses, sent });
      },
      (err) => reject(new ODataRequestError(err)),
      OData.batchHandler,
      capturing,
    );
  });
}

const headerOf = (response: PartResponse, name: string) => response.headers[Object.keys(response.headers).find((k) => k.toLowerCase() === name.toLowerCase()) ?? ''];

for (const format of FORMATS) {
  describe(`datajs batch with ${format.name} parts`, () => {
    test('a read, a changeset of creates (one through $1) and updates (MERGE, PUT), and a read that sees it', async () => {
      const api = client(live, seller);
      const label = format.name;
      const existing = await api.create('Products', { Title: `${label} vorher`, Price: '10', StockAmount: 1, Brand: 'Alt' });
      const variation = await api.create('ProductVariations', { ProductId: String(existing), Sku: `${label}-V`, Price: '10', StockAmount: 4, Ean: 'E-1' });

      const { answers, sent } = await datajsBatch(format.headers, [
        { requestUri: `Products(${existing}L)`, method: 'GET' },
        {
          __changeRequests: [
            { requestUri: 'Products', method: 'POST', headers: { 'Content-ID': '1' }, data: { Title: `${label} Neu «ü»`, Price: '12.50', StockAmount: 3 } },
            { requestUri: '$1/ProductImages', method: 'POST', headers: { 'Content-ID': '2' }, data: { Type: 1, ImageUrl: `https://img.example.com/${label}.jpg` } },
            { requestUri: '$1/ProductSpecifics', method: 'POST', headers: { 'Content-ID': '3' }, data: { Name: 'Marke', Value: label } },
            { requestUri: `Products(${existing}L)`, method: 'MERGE', headers: { 'Content-ID': '4' }, data: { Title: `${label} nachher` } },
            { requestUri: `ProductVariations(${variation}L)`, method: 'PUT', headers: { 'Content-ID': '5' }, data: { ProductId: String(existing), Sku: `${label}-V2`, Price: '11', StockAmount: 0 } },
            { requestUri: '$1', method: 'MERGE', headers: { 'Content-ID': '6' }, data: { StockAmount: 9 } },
          ],
        },
        { requestUri: `Products(${existing}L)`, method: 'GET' },
      ]);

      // datajs wrote the inner bodies in the format under test, with relative URIs and Content-ID inside.
      if (format.name === 'Atom') assert.match(sent, /\r\nPOST Products HTTP\/1\.1\r\n[^]*?Content-ID: 1\r\n[^]*?\r\n\r\n<entry xmlns="http:\/\/www\.w3\.org\/2005\/Atom"/);
      else assert.match(sent, /\r\nPOST Products HTTP\/1\.1\r\n[^]*?Content-ID: 1\r\n[^]*?\r\n\r\n\{"Title":/);
      assert.match(sent, /\r\nPOST \$1\/ProductImages HTTP\/1\.1\r\n/);

      assert.equal(answers.length, 3);
      const [readBefore, changeset, readAfter] = answers as [PartResponse, ChangeResponses, PartResponse];
      assert.equal(readBefore.statusCode, '200');
      assert.match(headerOf(readBefore, 'Content-Type') ?? '', format.contentType);
      assert.equal(readBefore.data?.Title, `${label} vorher`);

      const responses = changeset.__changeResponses as PartResponse[];
      assert.deepEqual(
        responses.map((r) => [r.statusCode, headerOf(r, 'Content-ID')]),
        [['201', '1'], ['201', '2'], ['201', '3'], ['204', '4'], ['204', '5'], ['204', '6']],
        responses.map((r) => r.body).join('\n'),
      );
      const created = responses[0]!;
      assert.match(headerOf(created, 'Content-Type') ?? '', format.contentType);
      const createdId = String(created.data?.Id);
      assert.equal(headerOf(created, 'Location'), `${live.root}/Products(${createdId}L)`);
      assert.equal(created.data?.Title, `${label} Neu «ü»`);
      assert.equal(String(responses[1]!.data?.ProductId), createdId, 'the image was created below the product $1 named');
      assert.equal(String(responses[2]!.data?.ProductId), createdId);

      assert.equal(readAfter.statusCode, '200');
      assert.equal(readAfter.data?.Title, `${label} nachher`, 'the read after the changeset sees it');

      // Read back over plain HTTP.
      const product = await api.get(`Products(${createdId}L)`);
      assert.equal(product?.Title, `${label} Neu «ü»`);
      assert.equal(product?.StockAmount, 9, '$1 in a MERGE changed the created product');
      assert.deepEqual((await api.feed(`Products(${createdId}L)/ProductImages`)).map((i) => [i.Type, i.ImageUrl]), [[1, `https://img.example.com/${label}.jpg`]]);
      assert.deepEqual((await api.feed(`Products(${createdId}L)/ProductSpecifics`)).map((s) => [s.Name, s.Value]), [['Marke', label]]);
      const merged = await api.get(`Products(${existing}L)`);
      assert.equal(merged?.Title, `${label} nachher`);
      assert.equal(merged?.Brand, 'Alt', 'MERGE kept what it did not name');
      const replaced = await api.get(`ProductVariations(${variation}L)`);
      assert.deepEqual([replaced?.Sku, replaced?.Price, replaced?.StockAmount, replaced?.Ean], [`${label}-V2`, '11', 0, null], 'PUT replaced the variation, Ean reset');
    });

    test('a failing changeset comes back to datajs as one failed part, the reads beside it as usual, and nothing is written', async () => {
      const api = client(live, seller);
      const existing = await api.create('Products', { Title: `${format.name} bleibt`, Price: '10', StockAmount: 1 });
      const rowsBefore = await tenantRows(live, seller.accountId);
      const { answers } = await datajsBatch(format.headers, [
        {
          __changeRequests: [
            { requestUri: 'Products', method: 'POST', headers: { 'Content-ID': '1' }, data: { Title: 'nie', Price: '1', StockAmount: 1 } },
            { requestUri: `Products(${existing}L)`, method: 'MERGE', headers: { 'Content-ID': '2' }, data: { Title: 'x'.repeat(81) } },
          ],
        },
        { requestUri: `Products(${existing}L)`, method: 'GET' },
        { requestUri: 'Products(999999999L)', method: 'GET' },
      ]);
      assert.equal(answers.length, 3);
      const [failed, read, missing] = answers as [FailedPart, PartResponse, FailedPart];
      assert.equal(failed.message, 'HTTP request failed');
      assert.equal(failed.response.statusCode, '400');
      assert.equal(headerOf(failed.response, 'Content-ID'), '2');
      assert.match(failed.response.body, /Title/);
      assert.equal(read.statusCode, '200');
      assert.equal(read.data?.Title, `${format.name} bleibt`);
      assert.equal(missing.response.statusCode, '404');
      assert.deepEqual(await tenantRows(live, seller.accountId), rowsBefore);
    });
  });
}
