/**
 * Compression in the HTTP layer, on a real node:http server on 127.0.0.1 with the service's own
 * pieces (negotiateCoding, HttpResponder, readBody) and no service behind them: which coding an
 * Accept-Encoding gets, what a whole and a streamed answer look like on the wire, that a stream
 * is decodable piece by piece while it is still open, and how compressed request bodies are read
 * (decoded bytes against the limit, a zip bomb stopped, unknown codings refused).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { acceptableCodings, codingOf, negotiateCoding, type Negotiated } from '../../src/server/compression';
import { HttpResponder } from '../../src/server/http-responder';
import { readBody } from '../../src/server/body';
import { ODataError } from '../../src/odata/errors';
import type { CompressionConfig } from '../../src/config';

const ON: CompressionConfig = { enabled: true, level: 6, minBytes: 1024 };

describe('Accept-Encoding: the codings a request allows, best first', () => {
  const cases: [string | undefined, readonly string[] | undefined][] = [
    [undefined, undefined],
    ['', ['identity']],
    ['gzip, deflate', ['gzip', 'deflate', 'identity']],
    ['gzip, deflate, br', ['br', 'gzip', 'deflate', 'identity']],
    ['gzip, compress, deflate, br', ['br', 'gzip', 'deflate', 'identity']],
    ['br;q=0.5, gzip', ['gzip', 'br', 'identity']],
    ['deflate, gzip;q=0.5', ['deflate', 'gzip', 'identity']],
    ['GZIP', ['gzip', 'identity']],
    ['br', ['br', 'identity']],
    ['compress', ['identity']],
    ['*', ['br', 'gzip', 'deflate', 'identity']],
    ['gzip;q=0.5, identity', ['identity', 'gzip']],
    ['gzip, identity;q=0', ['gzip']],
    ['identity;q=0', []],
    ['*;q=0', []],
    ['compress, identity;q=0', []],
    ['gzip;q=0', ['identity']],
  ];
  for (const [header, expected] of cases) {
    test(`${JSON.stringify(header)} → ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(acceptableCodings(header, true), expected);
    });
  }

  test('with compression off only identity is offered, and identity;q=0 still leaves nothing', () => {
    assert.deepEqual(acceptableCodings('gzip, deflate', false), ['identity']);
    assert.deepEqual(acceptableCodings('gzip, identity;q=0', false), []);
  });
});

describe('the coding of one answer', () => {
  const negotiated = (codings: Negotiated['codings']): Negotiated => ({ codings, level: 6, minBytes: 1024 });
  const json = 'application/json;charset=utf-8';

  test('a whole body from minBytes up, and every stream, goes out in the first choice', () => {
    assert.equal(codingOf(negotiated(['gzip', 'identity']), json, 1024), 'gzip');
    assert.equal(codingOf(negotiated(['deflate', 'gzip', 'identity']), 'application/atom+xml;type=feed', undefined), 'deflate');
    assert.equal(codingOf(negotiated(['gzip', 'identity']), 'multipart/mixed; boundary=batch_1', 5000), 'gzip');
  });

  test('a short body stays identity, unless the client refused identity', () => {
    assert.equal(codingOf(negotiated(['gzip', 'identity']), json, 1023), 'identity');
    assert.equal(codingOf(negotiated(['gzip']), json, 10), 'gzip');
  });

  test('a type that is not text stays identity; the client\'s own preference for identity wins', () => {
    assert.equal(codingOf(negotiated(['gzip', 'identity']), 'image/jpeg', 100_000), 'identity');
    assert.equal(codingOf(negotiated(['identity', 'gzip']), json, 100_000), 'identity');
  });
});

/** What the next request is answered with, given its response. */
let answer: (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;
let server: http.Server;
let port: number;

before(async () => {
  server = http.createServer((req, res) => {
    if (!negotiateCoding(req, res, ON)) {
      res.writeHead(406).end();
      return;
    }
    void answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});
after(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);

interface Received {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The body as it came over the wire. */
  readonly wire: Buffer;
}

function get(headers: Record<string, string>, body?: Buffer): Promise<Received> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: body ? 'POST' : 'GET', path: '/', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, wire: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const feedText = (n: number) => `{"d":[${Array.from({ length: n }, (_, i) => `{"Title":"Produkt ${i} – Größe","Stock":${i}}`).join(',')}]}`;

describe('whole answers', () => {
  test('gzip: Content-Encoding, Vary, the compressed length, the same ETag; the body decodes to the identity one', async () => {
    const body = feedText(200);
    answer = (_req, res) => new HttpResponder(res).send({ status: 200, contentType: 'application/json;charset=utf-8', body, headers: { ETag: 'W/"7"' } });
    const plain = await get({});
    const gzipped = await get({ 'Accept-Encoding': 'gzip, deflate' });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, undefined);
    assert.equal(plain.wire.toString('utf8'), body);
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.equal(gzipped.headers.vary, 'Accept-Encoding');
    assert.equal(gzipped.headers.etag, 'W/"7"');
    assert.equal(gzipped.headers['content-length'], String(gzipped.wire.length));
    assert.ok(gzipped.wire.length * 4 < plain.wire.length, `${gzipped.wire.length} bytes compressed of ${plain.wire.length}`);
    assert.equal(zlib.gunzipSync(gzipped.wire).toString('utf8'), body);

    const brotli = await get({ 'Accept-Encoding': 'gzip, deflate, br' });
    assert.equal(brotli.headers['content-encoding'], 'br');
    assert.equal(zlib.brotliDecompressSync(brotli.wire).toString('utf8'), body);

    const deflated = await get({ 'Accept-Encoding': 'deflate' });
    assert.equal(deflated.headers['content-encoding'], 'deflate');
    assert.equal(zlib.inflateSync(deflated.wire).toString('utf8'), body);
  });

  test('a short answer stays identity, with Vary; with identity refused it is compressed all the same', async () => {
    const body = '{"d":{"Stock":1}}';
    answer = (_req, res) => new HttpResponder(res).send({ status: 200, contentType: 'application/json', body });
    const short = await get({ 'Accept-Encoding': 'gzip' });
    assert.equal(short.headers['content-encoding'], undefined);
    assert.equal(short.headers.vary, 'Accept-Encoding');
    assert.equal(short.wire.toString('utf8'), body);
    const forced = await get({ 'Accept-Encoding': 'gzip, identity;q=0' });
    assert.equal(forced.headers['content-encoding'], 'gzip');
    assert.equal(zlib.gunzipSync(forced.wire).toString('utf8'), body);
  });

  test('an answer without a body (304) carries Vary and no coding', async () => {
    answer = (_req, res) => new HttpResponder(res).send({ status: 304, headers: { ETag: 'W/"7"' } });
    const notModified = await get({ 'Accept-Encoding': 'gzip' });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers['content-encoding'], undefined);
    assert.equal(notModified.headers.vary, 'Accept-Encoding');
  });
});

describe('streamed answers', () => {
  // Without the flush this would wait for ever: the timeout turns that into a failure.
  for (const coding of ['gzip', 'br'] as const)
  test(`${coding}: each piece written is decodable before the stream ends (a flush per piece)`, { timeout: 10_000 }, async () => {
    // The server writes a piece, then waits for the client to have decoded all of it before it
    // writes the next: without a flush per piece zlib would hold the text back and this would hang.
    const pieces = [feedText(50), feedText(80), feedText(30)];
    let decodedSoFar = '';
    let seen: (() => void) | undefined;
    const clientHasDecoded = (text: string) =>
      new Promise<void>((resolve) => {
        const check = () => (decodedSoFar.endsWith(text) ? resolve() : (seen = check));
        check();
      });
    answer = async (_req, res) => {
      const body = new HttpResponder(res).stream({ status: 200, contentType: 'application/json', version: 1 });
      for (const piece of pieces) {
        await body.write(Buffer.from(piece));
        await clientHasDecoded(piece);
      }
      body.end();
    };
    const received = await new Promise<Received>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/', headers: { 'Accept-Encoding': coding }, agent: false }, (res) => {
        assert.equal(res.headers['content-encoding'], coding);
        assert.equal(res.headers.vary, 'Accept-Encoding');
        assert.equal(res.headers['content-length'], undefined);
        const chunks: Buffer[] = [];
        const gunzip = coding === 'gzip' ? zlib.createGunzip() : zlib.createBrotliDecompress();
        gunzip.on('data', (text: Buffer) => {
          decodedSoFar += text.toString('utf8');
          seen?.();
        });
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          gunzip.write(c);
        });
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, wire: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
    });
    const whole = coding === 'gzip' ? zlib.gunzipSync(received.wire) : zlib.brotliDecompressSync(received.wire);
    assert.equal(whole.toString('utf8'), pieces.join(''));
  });

  test('without Accept-Encoding a stream is written as before: no coding, no Vary', async () => {
    answer = async (_req, res) => {
      const body = new HttpResponder(res).stream({ status: 200, contentType: 'application/json', version: 1 });
      await body.write(Buffer.from(feedText(10)));
      body.end(Buffer.from('!'));
    };
    const plain = await get({});
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, undefined);
    assert.equal(plain.wire.toString('utf8'), feedText(10) + '!');
  });
});

describe('request bodies with Content-Encoding', () => {
  const LIMIT = 64 * 1024;
  /** Answers what readBody made of the body: its length and a digest, or the error's status. */
  before(() => {
    answer = async (req, res) => {
      try {
        const body = await readBody(req, LIMIT);
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end(body);
      } catch (error) {
        const status = error instanceof ODataError ? error.status : 500;
        const headers = error instanceof ODataError ? error.headers : {};
        res.writeHead(status, { ...headers, 'Content-Type': 'text/plain', Connection: 'close' }).end(error instanceof Error ? error.message : '');
      }
    };
  });
  const text = Buffer.from(feedText(300));

  test('gzip, x-gzip and deflate bodies are decoded; identity is read as it is', async () => {
    for (const [coding, encoded] of [
      ['gzip', zlib.gzipSync(text)],
      ['x-gzip', zlib.gzipSync(text)],
      ['deflate', zlib.deflateSync(text)],
      ['identity', text],
    ] as const) {
      const res = await get({ 'Content-Encoding': coding }, encoded);
      assert.equal(res.status, 200, `${coding}: ${res.wire.toString()}`);
      assert.ok(res.wire.equals(text), coding);
    }
  });

  test('the limit counts decoded bytes: a body that inflates past it is 413, though small on the wire', async () => {
    const justUnder = Buffer.alloc(LIMIT, 'a');
    assert.equal((await get({ 'Content-Encoding': 'gzip' }, zlib.gzipSync(justUnder))).status, 200);
    const justOver = Buffer.alloc(LIMIT + 1, 'a');
    const over = await get({ 'Content-Encoding': 'gzip' }, zlib.gzipSync(justOver));
    assert.equal(over.status, 413, over.wire.toString());
  });

  test('a zip bomb is refused with 413: a body within the limit on the wire that would inflate a thousandfold', async () => {
    // Zeros at level 9 shrink about 1000×: the first 64 KiB of this stream inflate to about 64 MiB.
    const gzip = zlib.createGzip({ level: 9 });
    const wire: Buffer[] = [];
    gzip.on('data', (c: Buffer) => wire.push(c));
    const zeros = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < 128; i++) gzip.write(zeros);
    await new Promise<void>((resolve) => gzip.end(resolve));
    const bomb = Buffer.concat(wire).subarray(0, LIMIT);
    const res = await get({ 'Content-Encoding': 'gzip' }, bomb);
    assert.equal(res.status, 413, res.wire.toString());
    assert.match(res.wire.toString(), /larger than the limit of 65536 bytes/);
    assert.equal(res.headers.connection, 'close');
  });

  test('an unknown coding or a list of codings is 415 with the codings that are read', async () => {
    for (const coding of ['br', 'compress', 'gzip, gzip']) {
      const res = await get({ 'Content-Encoding': coding }, text);
      assert.equal(res.status, 415, coding);
      assert.equal(res.headers['accept-encoding'], 'gzip, deflate');
    }
  });

  test('a body that is not what its Content-Encoding says is 400', async () => {
    assert.equal((await get({ 'Content-Encoding': 'gzip' }, text)).status, 400);
    assert.equal((await get({ 'Content-Encoding': 'deflate' }, zlib.gzipSync(text))).status, 400);
    // Cut off half-way: the body ended before the compressed stream did.
    const cut = zlib.gzipSync(text);
    assert.equal((await get({ 'Content-Encoding': 'gzip' }, cut.subarray(0, cut.length >> 1))).status, 400);
  });
});
