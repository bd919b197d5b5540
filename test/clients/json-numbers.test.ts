/**
 * Int64 and Decimal values sent as bare JSON numbers, as some clients (pyodata among them) write
 * every Int64, against the live service: a value above 2^53 is read from the digits sent, never
 * rounded through a double; one beyond the Int64 range is a 400 naming the digits the client sent;
 * a Decimal number with more digits than a double holds is stored exactly. Also inside a $batch
 * changeset.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { batchBody, changesetAnswers, changesetPart, httpPart, postBatch, readBatchAnswer } from '../batch/support';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { JSON_HEADERS } from './wcf-client';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'numbers');
});
after(() => live.close());

/** Sends a body written by hand: JSON.stringify cannot write these numbers. */
function send(method: string, path: string, body: string): Promise<HttpResponse> {
  return asSeller(seller, live.root + path, { method, headers: { ...JSON_HEADERS }, body });
}

/** The product as the service writes it: Int64 and Decimal are JSON strings, exact. */
async function product(id: string): Promise<Record<string, unknown>> {
  const res = await asSeller(seller, `${live.root}/Products(${id}L)`, { headers: { Accept: 'application/json' } });
  assert.equal(res.status, 200, res.body);
  return (JSON.parse(res.body) as { d: Record<string, unknown> }).d;
}

function createdId(res: HttpResponse): string {
  assert.equal(res.status, 201, res.body);
  return String((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
}

const productBody = (members: string) => `{"Title":"Numbers","Price":"1","StockAmount":1,${members}}`;

describe('Int64 as a bare JSON number', () => {
  test('9007199254740993 (2^53 + 1) is stored and read back exactly, by POST and by MERGE', async () => {
    const id = createdId(await send('POST', '/Products', productBody('"ExternalProductId":9007199254740993')));
    assert.equal((await product(id)).ExternalProductId, '9007199254740993');
    for (const value of ['9223372036854775807', '-9223372036854775808', '9007199254740995', '12']) {
      const res = await send('MERGE', `/Products(${id}L)`, `{"ExternalProductId":${value}}`);
      assert.equal(res.status, 204, res.body);
      assert.equal((await product(id)).ExternalProductId, value);
    }
  });

  test('a number beyond the Int64 range is a 400 naming the digits sent', async () => {
    for (const digits of ['9223372036854775808', '-9223372036854775809', '99999999999999999999']) {
      const res = await send('POST', '/Products', productBody(`"ExternalProductId":${digits}`));
      assert.equal(res.status, 400, res.body);
      const message = (JSON.parse(res.body) as { error: { message: { value: string } } }).error.message.value;
      assert.match(message, /ExternalProductId/);
      assert.ok(message.includes(digits), `the message names ${digits}: ${message}`);
    }
  });

  test('inside a $batch changeset', async () => {
    const body = batchBody([
      changesetPart([
        httpPart({
          method: 'POST',
          target: 'Products',
          headers: ['Content-ID: 1', 'Content-Type: application/json', 'Accept: application/json'],
          body: productBody('"ExternalProductId":9007199254740993'),
        }),
      ]),
    ]);
    const [answer] = changesetAnswers(readBatchAnswer(await postBatch(live, seller, body))[0]);
    assert.equal(answer?.status, 201, answer?.body);
    const id = String((JSON.parse(answer!.body) as { d: { Id: string } }).d.Id);
    assert.equal((await product(id)).ExternalProductId, '9007199254740993');
  });
});

describe('Decimal as a bare JSON number', () => {
  test('all 18 digits of Decimal(18,6) are kept; 12.345678 stays 12.345678', async () => {
    const id = createdId(await send('POST', '/Products', `{"Title":"Decimals","Price":123456789012.123456,"StockAmount":1,"UnitQuantity":12.345678}`));
    const stored = await product(id);
    assert.equal(stored.Price, '123456789012.123456');
    assert.equal(stored.UnitQuantity, '12.345678');
    const res = await send('MERGE', `/Products(${id}L)`, '{"Price":999999999999.999999,"UnitQuantity":0.000001}');
    assert.equal(res.status, 204, res.body);
    const merged = await product(id);
    assert.deepEqual([merged.Price, merged.UnitQuantity], ['999999999999.999999', '0.000001']);
  });

  test('a number with more decimals than Decimal(18,6) is a 400 naming it, not rounded', async () => {
    const res = await send('POST', '/Products', '{"Title":"Decimals","Price":1.12345678901234567,"StockAmount":1}');
    assert.equal(res.status, 400, res.body);
    assert.match(res.body, /Price/);
    assert.ok(res.body.includes('1.12345678901234567'), res.body);
  });
});
