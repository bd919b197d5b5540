/**
 * Property-level writes against the live service, as WCF Data Services takes them: PUT of
 * `Set(key)/Property` with the body a GET of the property answers (JSON `{"d":{"Title":…}}` or
 * `{"Title":…}`, XML `<d:Title>…</d:Title>`), PUT of `…/Property/$value` with text/plain, and
 * DELETE of `…/Property/$value` to write null. Each is read back by GET of the property; If-Match
 * applies; the key and read-only properties answer 405; the rules of the set hold.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, storeRow, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { createEntity, getEntity } from '../support/live-client';
import { errorMessage } from '../support/odata-error';
import { D, M } from '../support/spec';
import { batchBody, changesetAnswers, changesetPart, httpPart, postBatch, readBatchAnswer } from '../batch/support';

let live: LiveService;
let seller: Seller;
let productId: string;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'props');
  productId = await createEntity(live, seller, 'Products', { Title: 'Original', Price: '10', StockAmount: 1, Brand: 'Acme', Description: 'text' });
});
after(() => live.close());

function send(method: string, path: string, contentType: string | undefined, body?: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${path}`, {
    method,
    headers: { ...(contentType ? { 'Content-Type': contentType } : {}), ...headers },
    ...(body === undefined ? {} : { body }),
  });
}

const product = (suffix = '') => `Products(${productId}L)${suffix}`;

async function rawValue(path: string): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${path}/$value`);
}

function assertNoContent(res: HttpResponse): void {
  assert.equal(res.status, 204, res.body);
  assert.match(String(res.headers.etag), /^W\/"\d+"$/, 'the new ETag');
}

describe('PUT of a property', () => {
  test('JSON with and without the d wrapper, then XML as a GET of the property answers it', async () => {
    assertNoContent(await send('PUT', product('/Title'), 'application/json', JSON.stringify({ d: { Title: 'From d' } })));
    assert.equal((await rawValue(product('/Title'))).body, 'From d');
    assertNoContent(await send('PUT', product('/Title'), 'application/json', JSON.stringify({ Title: 'Bare' })));
    assert.equal((await rawValue(product('/Title'))).body, 'Bare');
    // The XML body is what GET Products(1L)/Title answers.
    const read = await asSeller(seller, `${live.root}/${product('/Price')}`);
    assert.equal(read.status, 200);
    const xml = read.body.replace(/>[^<]*<\/Price>$/, '>12.25</Price>');
    assert.notEqual(xml, read.body, `the Price element of ${read.body}`);
    assertNoContent(await send('PUT', product('/Price'), 'application/xml', xml));
    assert.equal(Number((await rawValue(product('/Price'))).body), 12.25);
    assertNoContent(await send('PUT', product('/Title'), 'application/xml', `<Title xmlns="${D}">Plain &amp; XML</Title>`));
    assert.equal((await rawValue(product('/Title'))).body, 'Plain & XML');
    // m:null writes null where the property may be null.
    assertNoContent(await send('PUT', product('/Brand'), 'application/xml', `<d:Brand xmlns:d="${D}" xmlns:m="${M}" m:null="true"/>`));
    assert.equal((await getEntity(live, seller, 'Products', productId)).Brand, null);
    assertNoContent(await send('PUT', product('/Brand'), 'application/json', '{"Brand":"Back"}'));
    assert.equal((await getEntity(live, seller, 'Products', productId)).Brand, 'Back');
  });

  test('PUT of $value with text/plain, and DELETE of $value writes null', async () => {
    assertNoContent(await send('PUT', product('/Title/$value'), 'text/plain', 'Raw title ü'));
    assert.equal((await rawValue(product('/Title'))).body, 'Raw title ü');
    assertNoContent(await send('PUT', product('/StockAmount/$value'), 'text/plain;charset=utf-8', '42'));
    assert.equal((await getEntity(live, seller, 'Products', productId)).StockAmount, 42);
    assertNoContent(await send('DELETE', product('/Description/$value'), undefined));
    assert.equal((await getEntity(live, seller, 'Products', productId)).Description, null);
    assert.equal((await rawValue(product('/Description'))).status, 404, 'a null value has no $value');
  });

  test('a property that cannot be null, a bad value or a broken rule is a 400 naming it, and nothing changes', async () => {
    const before = await tenantRows(live, seller.accountId);
    const cases: [HttpResponse, RegExp][] = [
      [await send('DELETE', product('/Title/$value'), undefined), /'Title' .*cannot be null/],
      [await send('PUT', product('/Title'), 'application/json', '{"Title":null}'), /'Title' .*cannot be null/],
      [await send('PUT', product('/StockAmount/$value'), 'text/plain', 'many'), /StockAmount/],
      [await send('PUT', product('/StockAmount/$value'), 'text/plain', '-1'), /'StockAmount' must be at least 0/],
      [await send('PUT', product('/Title'), 'application/json', JSON.stringify({ Title: 'x'.repeat(81) })), /'Title' is longer than its maximum length of 80/],
      [await send('PUT', product('/Title'), 'application/json', '{"Brand":"x"}'), /must be \{"Title":<value>\}/],
      [await send('PUT', product('/Title'), 'application/json', '{"Title":"x","Brand":"y"}'), /must be \{"Title":<value>\}/],
      [await send('PUT', product('/Title'), 'application/xml', `<d:Brand xmlns:d="${D}">x</d:Brand>`), /element 'Title'/],
      [await send('PUT', product('/Title'), 'application/xml', `<d:Title xmlns:d="${D}"><d:x/></d:Title>`), /not XML elements/],
    ];
    for (const [res, message] of cases) {
      assert.equal(res.status, 400, res.body);
      assert.match(errorMessage(res), message);
    }
    assert.equal((await send('PUT', product('/Title/$value'), 'application/json', '"x"')).status, 415);
    assert.equal((await send('PUT', product('/Title'), 'text/plain', 'x')).status, 415);
    assert.deepEqual(await tenantRows(live, seller.accountId), before);
  });

  test('the key and read-only properties take no writes: 405 with Allow GET, HEAD', async () => {
    for (const [method, path, type, body] of [
      ['PUT', product('/Id'), 'application/json', '{"Id":"5"}'],
      ['PUT', product('/CreationDate/$value'), 'text/plain', '2020-01-01T00:00:00'],
      ['PUT', product('/EbayCategoryId1'), 'application/json', '{"EbayCategoryId1":"5"}'],
      ['DELETE', product('/PaymentProfileId/$value'), undefined, undefined],
    ] as [string, string, string | undefined, string | undefined][]) {
      const res = await send(method, path, type, body);
      assert.equal(res.status, 405, `${method} ${path}: ${res.body}`);
    }
    const res = await send('PUT', product('/Id'), 'application/json', '{"Id":"5"}');
    assert.equal(res.headers.allow, 'GET, HEAD');
    // DELETE of a property (not its $value) is no write either.
    assert.equal((await send('DELETE', product('/Title'), undefined)).status, 405);
  });

  test('If-Match applies: a stale ETag is 412 and writes nothing; the current one passes', async () => {
    const stale = await asSeller(seller, `${live.root}/${product()}`, { headers: { Accept: 'application/json' } });
    const staleTag = String(stale.headers.etag);
    const moved = await send('PUT', product('/Title'), 'application/json', '{"Title":"Moved on"}');
    assertNoContent(moved);
    const refused = await send('PUT', product('/Title/$value'), 'text/plain', 'Lost update', { 'If-Match': staleTag });
    assert.equal(refused.status, 412, refused.body);
    assert.equal((await rawValue(product('/Title'))).body, 'Moved on');
    assertNoContent(await send('PUT', product('/Title/$value'), 'text/plain', 'Current', { 'If-Match': String(moved.headers.etag) }));
    assert.equal((await rawValue(product('/Title'))).body, 'Current');
  });

  test('a writable property of an order is written alone; what the platform set is not writable', async () => {
    const types = live.service.app.model.typeByName;
    const buyer = await storeRow(live, seller.accountId, types.get('Buyer')!, { BuyerName: 'b', Email: 'b@example.com' });
    const order = String(await storeRow(live, seller.accountId, types.get('SalesOrder')!, { BuyerId: buyer, PlatformOrderId: 'P-1', ForeignOrderId: 'F-1' }));
    assertNoContent(await send('PUT', `SalesOrders(${order}L)/ForeignOrderId/$value`, 'text/plain', 'ERP-42'));
    const stored = await getEntity(live, seller, 'SalesOrders', order);
    assert.equal(stored.ForeignOrderId, 'ERP-42');
    assert.equal(stored.PlatformOrderId, 'P-1');
    assert.equal((await send('PUT', `SalesOrders(${order}L)/PlatformOrderId`, 'application/json', '{"PlatformOrderId":"x"}')).status, 405);
    assert.equal((await send('PUT', `Buyers(${buyer}L)/Email`, 'application/json', '{"Email":"x"}')).status, 405);
  });

  test('property writes inside a $batch changeset', async () => {
    const res = await postBatch(
      live,
      seller,
      batchBody([
        changesetPart([
          httpPart({ method: 'PUT', target: `Products(${productId}L)/Title`, headers: ['Content-Type: application/json'], body: '{"Title":"In batch"}' }),
          httpPart({ method: 'PUT', target: `Products(${productId}L)/Mpn/$value`, headers: ['Content-Type: text/plain'], body: 'MPN-1' }),
        ]),
      ]),
    );
    assert.deepEqual(changesetAnswers(readBatchAnswer(res)[0]).map((a) => a.status), [204, 204]);
    const stored = await getEntity(live, seller, 'Products', productId);
    assert.equal(stored.Title, 'In batch');
    assert.equal(stored.Mpn, 'MPN-1');
  });
});
