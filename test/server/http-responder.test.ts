/**
 * HttpResponder.send writes a whole answer's head with writeHead() and a list of lines. A client
 * must still see what setHeader() gave it: one line per name, the later value where a reply
 * names a header the OData headers or the body's own already set, and node:http's own framing of
 * an answer without a body. Read from the raw bytes of a real node:http server on 127.0.0.1, so
 * that a repeated line cannot hide behind a client that keeps the first or the last.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { HttpResponder } from '../../src/server/http-responder';
import type { Reply } from '../../src/service/responder';

/** The reply the next request is answered with. */
let next: Reply;
let server: http.Server;
let port: number;

before(async () => {
  server = http.createServer((_req, res) => new HttpResponder(res).send(next));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface RawAnswer {
  readonly statusLine: string;
  /** Every header line as sent, names lower-cased, in order. */
  readonly lines: readonly (readonly [string, string])[];
  readonly body: string;
}

/** One request on a connection of its own, and the answer's bytes as they arrived. */
function ask(reply: Reply, method = 'GET'): Promise<RawAnswer> {
  next = reply;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      const headEnd = raw.indexOf('\r\n\r\n');
      const [statusLine, ...headerLines] = raw.slice(0, headEnd).split('\r\n');
      const lines = headerLines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as const;
      });
      resolve({ statusLine: statusLine!, lines, body: raw.slice(headEnd + 4) });
    });
    socket.end(`${method} / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  });
}

const valuesOf = (answer: RawAnswer, name: string) => answer.lines.filter(([n]) => n === name).map(([, v]) => v);

test('a body: the OData headers, the reply\'s own, its type and its exact length, each once', async () => {
  const body = '{"d":{"Title":"Größe"}}';
  const answer = await ask({ status: 200, version: 2, contentType: 'application/json;charset=utf-8', body, headers: { ETag: 'W/"3"' } });
  assert.equal(answer.statusLine, 'HTTP/1.1 200 OK');
  assert.deepEqual(valuesOf(answer, 'dataserviceversion'), ['2.0;']);
  assert.deepEqual(valuesOf(answer, 'cache-control'), ['no-cache']);
  assert.deepEqual(valuesOf(answer, 'etag'), ['W/"3"']);
  assert.deepEqual(valuesOf(answer, 'content-type'), ['application/json;charset=utf-8']);
  assert.deepEqual(valuesOf(answer, 'content-length'), [String(Buffer.byteLength(body))]);
  assert.deepEqual(valuesOf(answer, 'transfer-encoding'), []);
  assert.equal(Buffer.from(answer.body, 'latin1').toString('utf8'), body);
});

test('a name the reply repeats, in any case, replaces the earlier line instead of adding one', async () => {
  const answer = await ask({
    status: 201,
    contentType: 'application/atom+xml;type=entry;charset=utf-8',
    body: '<entry/>',
    // A stored answer replayed (Idempotency-Key) carries its own type and may carry a version.
    headers: { 'content-type': 'text/plain', dataserviceversion: '2.0;', 'CACHE-CONTROL': 'no-store', 'Content-Length': '999' },
  });
  assert.equal(answer.statusLine, 'HTTP/1.1 201 Created');
  assert.deepEqual(valuesOf(answer, 'dataserviceversion'), ['2.0;']);
  assert.deepEqual(valuesOf(answer, 'cache-control'), ['no-store']);
  // The body's own type and length come last and win, as they did with setHeader().
  assert.deepEqual(valuesOf(answer, 'content-type'), ['application/atom+xml;type=entry;charset=utf-8']);
  assert.deepEqual(valuesOf(answer, 'content-length'), ['8']);
  assert.equal(answer.body, '<entry/>');
});

test('without a body, node:http frames the answer as before: nothing on a 204, a length of 0 otherwise', async () => {
  const noContent = await ask({ status: 204, version: 1, headers: { ETag: 'W/"4"' } });
  assert.equal(noContent.statusLine, 'HTTP/1.1 204 No Content');
  assert.deepEqual(valuesOf(noContent, 'etag'), ['W/"4"']);
  assert.deepEqual(valuesOf(noContent, 'content-length'), []);
  assert.deepEqual(valuesOf(noContent, 'transfer-encoding'), []);
  assert.equal(noContent.body, '');

  const empty = await ask({ status: 200, version: 1 });
  assert.deepEqual(valuesOf(empty, 'content-length'), ['0']);
  assert.deepEqual(valuesOf(empty, 'transfer-encoding'), []);
  assert.deepEqual(valuesOf(empty, 'dataserviceversion'), ['1.0;']);
});

test('HEAD: the head of the answer with its length, and no body', async () => {
  const answer = await ask({ status: 200, contentType: 'application/json;charset=utf-8', body: '{"d":[]}' }, 'HEAD');
  assert.deepEqual(valuesOf(answer, 'content-length'), ['8']);
  assert.equal(answer.body, '');
});
