/**
 * The framing of $batch answers, read over real HTTP exactly as the shop connector reads them
 * (../support/connector-batch-reader.ts): one piece per request part and, inside each changeset
 * answer, one piece per operation, for answers of query parts only, one changeset, both, and
 * failed changesets. The connector takes any extra line break between delimiters for one more
 * part: after a changeset it then looks for an operation that does not exist and dies, after the
 * service committed. The layout is WCF Data Services' own: a changeset's close delimiter is
 * followed directly by the next batch delimiter, and a bodiless 204 part has no Content-Type.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { readLikeTheConnector, type ConnectorPart } from '../support/connector-batch-reader';
import { batchBody, changesetPart, client, httpPart, jsonOperation, postBatch } from './support';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'framing');
});
after(() => live.close());

const get = (target: string) => httpPart({ method: 'GET', target, headers: ['Accept: application/json'] });

/**
 * The status of each piece, nested for changeset answers: `[200, [201, 204], 404]`. A piece
 * that is not an HTTP answer (a stray line break taken for a part) shows as its own text, so
 * a failure says what the connector would have choked on.
 */
type Shape = number | string | Shape[];
function statusOf(piece: string): number | string {
  const m = /^Content-Type: application\/http\r\nContent-Transfer-Encoding: binary\r\n(?:[^\r\n]+\r\n)*\r\nHTTP\/1\.1 (\d{3}) /.exec(piece);
  return m ? Number(m[1]) : JSON.stringify(piece.slice(0, 60));
}
function shapeOf(parts: readonly ConnectorPart[]): Shape[] {
  return parts.map((part) => (part.operations ? part.operations.map(statusOf) : statusOf(part.piece)));
}

async function readAnswer(parts: readonly string[]): Promise<{ parts: ConnectorPart[]; body: string }> {
  const res = await postBatch(live, seller, batchBody(parts));
  assert.equal(res.status, 202, res.body.slice(0, 300));
  return { parts: readLikeTheConnector(String(res.headers['content-type']), res.body), body: res.body };
}

/** Four products whose stock a changeset zeroes or which it deletes. */
async function products(label: string): Promise<bigint[]> {
  const api = client(live, seller);
  const ids: bigint[] = [];
  for (let i = 0; i < 4; i++) ids.push(await api.create('Products', { Title: `${label} ${i}`, Price: '9.90', StockAmount: 7, ForeignId: `${label}-${i}` }));
  return ids;
}

/** The connector's kind of changeset: a create, two stock zeroings and a delete (201, 204, 204, 204). */
function fourOperations(ids: readonly bigint[], label: string): string {
  return changesetPart([
    jsonOperation('POST', 'Catalogs', 1, { Name: `Katalog ${label}` }),
    jsonOperation('MERGE', `Products(${ids[0]}L)`, 2, { StockAmount: '0' }),
    jsonOperation('MERGE', `Products(${ids[1]}L)`, 3, { StockAmount: '0' }),
    jsonOperation('DELETE', `Products(${ids[2]}L)`, 4),
  ]);
}

describe("the connector's reading of $batch answers: one piece per request part, one per operation", () => {
  test('query parts only', async () => {
    const ids = await products('queries');
    const { parts } = await readAnswer([get(`Products(${ids[0]}L)`), get('Catalogs(987654321L)'), get('Products/$count')]);
    assert.deepEqual(shapeOf(parts), [200, 404, 200]);
  });

  test('one changeset of four operations', async () => {
    const ids = await products('changeset');
    const { parts, body } = await readAnswer([fourOperations(ids, 'one')]);
    assert.deepEqual(shapeOf(parts), [[201, 204, 204, 204]]);
    assert.match(body, /\r\n--changesetresponse_[0-9a-f-]+--\r\n--batchresponse_[0-9a-f-]+--\r\n$/, 'the close delimiters follow each other directly');
    assert.equal((await client(live, seller).get(`Products(${ids[0]}L)`))?.StockAmount, 0, 'committed');
  });

  test('query parts and changesets mixed, a changeset followed by a query part and by another changeset', async () => {
    const ids = await products('mixed');
    const { parts, body } = await readAnswer([
      get(`Products(${ids[3]}L)`),
      fourOperations(ids, 'mixed'),
      get('Catalogs?$top=1'),
      changesetPart([jsonOperation('MERGE', `Products(${ids[3]}L)`, 1, { StockAmount: '0' }), jsonOperation('DELETE', `Products(${ids[1]}L)`, 2)]),
      changesetPart([jsonOperation('DELETE', `Products(${ids[0]}L)`, 1)]),
    ]);
    assert.deepEqual(shapeOf(parts), [200, [201, 204, 204, 204], 200, [204, 204], [204]]);
    // WCF's layout: the next batch delimiter right after a changeset's close delimiter.
    assert.equal((body.match(/--changesetresponse_[0-9a-f-]+--\r\n--batchresponse_/g) ?? []).length, 3);
    assert.doesNotMatch(body, /--\r\n\r\n--/);
  });

  test('failed changesets: one application/http piece each, between good parts', async () => {
    const ids = await products('failed');
    const failing = changesetPart([jsonOperation('MERGE', `Products(${ids[0]}L)`, 1, { StockAmount: '0' }), jsonOperation('DELETE', 'Products(987654321L)', 2)]);
    assert.deepEqual(shapeOf((await readAnswer([failing])).parts), [404]);
    const { parts } = await readAnswer([failing, get(`Products(${ids[0]}L)`), fourOperations(ids, 'after'), failing]);
    assert.deepEqual(shapeOf(parts), [404, 200, [201, 204, 204, 204], 404]);
  });

  test('bodiless 204 parts carry neither Content-Type nor Content-Length: their empty line, then the delimiter line break', async () => {
    const ids = await products('bodiless');
    const { parts } = await readAnswer([changesetPart([jsonOperation('DELETE', `Products(${ids[0]}L)`, 1), jsonOperation('MERGE', `Products(${ids[1]}L)`, 2, { StockAmount: '0' })])]);
    const operations = parts[0]!.operations!;
    assert.equal(operations.length, 2);
    for (const operation of operations) {
      const [, head] = /\r\n\r\n(HTTP\/1\.1 204 No Content\r\n[\s\S]*)$/.exec(operation) ?? [];
      assert.ok(head, operation);
      assert.ok(head.endsWith('\r\n\r\n\r\n'), 'its headers, the empty line and the CRLF before the next delimiter');
      assert.doesNotMatch(head, /^Content-(Type|Length):/im);
      assert.match(head, /^Content-ID: \d\r$/m);
    }
  });
});

describe("a part's Content-Length must match what the boundary frames", () => {
  test('a lying Content-Length on a changeset operation, a query part or a changeset part: 400 naming it, nothing written', async () => {
    const api = client(live, seller);
    const [id] = await products('lying-length');
    const merge = (length: number) =>
      changesetPart([httpPart({ method: 'MERGE', target: `Products(${id}L)`, headers: ['Content-Type: application/json', `Content-Length: ${length}`], body: '{"StockAmount":"0"}' })]);
    const body = Buffer.byteLength('{"StockAmount":"0"}');
    const cases: [string, string[], RegExp][] = [
      ['an operation one byte short', [get('Products?$top=1'), merge(body - 1)], /Batch part 2, changeset operation 1: the request's Content-Length 18 does not match the 19 bytes/],
      ['an operation counting more than the line break', [merge(body + 3)], /Batch part 1, changeset operation 1: the request's Content-Length 22 does not match/],
      ['a query part', [httpPart({ method: 'GET', target: 'Products', headers: ['Accept: application/json', 'Content-Length: 5'] })], /Batch part 1: the request's Content-Length 5 does not match the 0 bytes/],
      ["a changeset part's own", [get('Products?$top=1'), merge(body).replace('\r\n\r\n', '\r\nContent-Length: 7\r\n\r\n')], /Batch part 2: the part's Content-Length 7 does not match/],
    ];
    for (const [label, parts, message] of cases) {
      const res = await postBatch(live, seller, batchBody(parts), undefined, { Accept: 'application/json' });
      assert.equal(res.status, 400, `${label}: ${res.body.slice(0, 300)}`);
      assert.match((JSON.parse(res.body) as { error: { message: { value: string } } }).error.message.value, message, label);
    }
    assert.equal((await api.get(`Products(${id}L)`))?.StockAmount, 7, 'nothing was written');
    // The same changeset with the body's length, or with the delimiter's CRLF counted too (the connector's way), runs.
    for (const length of [body, body + 2]) {
      const res = await postBatch(live, seller, batchBody([merge(length)]));
      assert.equal(res.status, 202, res.body.slice(0, 300));
      assert.deepEqual(shapeOf(readLikeTheConnector(String(res.headers['content-type']), res.body)), [[204]]);
    }
  });
});
