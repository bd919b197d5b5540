/**
 * Every error path answers an OData error in the request's format (JSON when JSON was asked for,
 * XML otherwise), with the right status, and never a redirect, a stack trace or a 5xx.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { request } from '../support/http-client';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';

let live: LiveService;
let seller: Seller;
let other: Seller;

before(async () => {
  live = await startLive({ env: { HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1000' } });
  seller = await newSeller(live);
  other = await newSeller(live);
});
after(() => live.close());

function assertJsonError(body: string, pattern: RegExp): void {
  const parsed = JSON.parse(body) as { error: { code: string; message: { lang: string; value: string } } };
  assert.deepEqual(Object.keys(parsed), ['error']);
  assert.equal(parsed.error.message.lang, 'en-US');
  assert.match(parsed.error.message.value, pattern);
}

function assertXmlError(body: string, pattern: RegExp): void {
  assert.match(body, /^<\?xml version="1.0" encoding="utf-8" standalone="yes"\?><error xmlns="http:\/\/schemas.microsoft.com\/ado\/2007\/08\/dataservices\/metadata"><code>[^<]*<\/code><message xml:lang="en-US">/);
  const message = (/<message xml:lang="en-US">([^<]*)<\/message>/.exec(body)?.[1] ?? '')
    .replace(/&apos;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
  assert.match(message, pattern);
}

function assertNoLeak(body: string): void {
  assert.doesNotMatch(body, /\bat .+\.(js|ts):\d+|SELECT |INSERT |sqlite|node_modules|\/work\//i);
}

describe('401 for anything but a matching token and cookie', () => {
  const cases: [string, () => Record<string, string>][] = [
    ['no credentials', () => ({})],
    ['cookie alone', () => ({ Cookie: seller.auth.Cookie! })],
    ['token alone', () => ({ SubscriptionToken: seller.token })],
    ["A's token with B's cookie", () => ({ SubscriptionToken: seller.token, Cookie: other.auth.Cookie! })],
    ["B's token with A's cookie", () => ({ SubscriptionToken: other.token, Cookie: seller.auth.Cookie! })],
    ['a made-up token', () => ({ SubscriptionToken: '00000000-0000-0000-0000-000000000000', Cookie: seller.auth.Cookie! })],
  ];
  for (const [name, headers] of cases) {
    for (const path of ['/', '/$metadata', '/Products', '/NoSuchSet']) {
      test(`${name}: ${path} in JSON and XML`, async () => {
        const json = await request(live.root + path, { headers: { ...headers(), Accept: 'application/json' } });
        assert.equal(json.status, 401);
        assert.equal(json.headers.location, undefined);
        assert.equal(json.headers['content-type'], 'application/json;charset=utf-8');
        assertJsonError(json.body, /SubscriptionToken/);
        const xml = await request(live.root + path, { headers: headers() });
        assert.equal(xml.status, 401);
        assert.equal(xml.headers['content-type'], 'application/xml;charset=utf-8');
        assertXmlError(xml.body, /SubscriptionToken/);
      });
    }
  }
});

describe('resource and method errors', () => {
  test('an unknown segment is a 404 naming it, in both formats', async () => {
    const json = await asSeller(seller, live.root + '/Prodcts', { headers: { Accept: 'application/json' } });
    assert.equal(json.status, 404);
    assertJsonError(json.body, /Resource not found for the segment 'Prodcts'/);
    const xml = await asSeller(seller, live.root + '/Prodcts');
    assert.equal(xml.status, 404);
    assertXmlError(xml.body, /Prodcts/);
  });

  test('a path outside the service is a 404 OData error', async () => {
    const res = await request(live.origin + '/elsewhere', { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 404);
    assertJsonError(res.body, /publicapi\/v1\/api\.svc/);
  });

  test('a write to the service root is a 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'MERGE', 'PATCH']) {
      const res = await asSeller(seller, live.root + '/', { method, headers: { Accept: 'application/json' }, body: '{}' });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.allow, 'GET, HEAD');
      assertJsonError(res.body, new RegExp(`'${method}' is not allowed`));
    }
  });

  test('an unknown or repeated system query option, or a bad $format, is a 400', async () => {
    const unknown = await asSeller(seller, live.root + '/?$foo=1', { headers: { Accept: 'application/json' } });
    assert.equal(unknown.status, 400);
    assertJsonError(unknown.body, /'\$foo' begins with a system-reserved '\$' character but is not recognized/);
    const twice = await asSeller(seller, live.root + '/?$format=json&$format=atom');
    assert.equal(twice.status, 400);
    assertJsonError(twice.body, /more than once/);
    const badFormat = await asSeller(seller, live.root + '/?$format=yaml');
    assert.equal(badFormat.status, 400);
    assertXmlError(badFormat.body, /\$format value 'yaml'/);
    const notHere = await asSeller(seller, live.root + '/?$top=1', { headers: { Accept: 'application/json' } });
    assert.equal(notHere.status, 400);
    assertJsonError(notHere.body, /'\$top' cannot be applied to the service document/);
    const badEscape = await asSeller(seller, live.root + '/?$format=%zz');
    assert.equal(badEscape.status, 400);
    assertXmlError(badEscape.body, /percent-encoding/);
  });
});

describe('size and time limits', () => {
  test('a URL over the limit is a 414', async () => {
    const res = await asSeller(seller, live.root + '/?x=' + 'a'.repeat(5000), { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 414);
    assertJsonError(res.body, /URL is longer than the limit of 4096 bytes/);
  });

  test('headers over the limit are a 431 with an OData error', async () => {
    const res = await asSeller(seller, live.root + '/', { headers: { 'X-Padding': 'p'.repeat(20000) } });
    assert.equal(res.status, 431);
    assertXmlError(res.body, /headers are larger than the limit/);
  });

  test('a body over the limit is a 413, refused from its Content-Length', async () => {
    const res = await request(live.origin + '/Authentication_JSON_AppService.axd/Login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ userName: 'x', password: 'y'.repeat(20000) }),
    });
    assert.equal(res.status, 413);
    assertJsonError(res.body, /larger than the limit/);
  });

  test('headers that never finish get a 408 and the connection is closed', async () => {
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(live.origin).port), '127.0.0.1', () => {
        socket.write('GET /publicapi/v1/api.svc/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      });
      let data = '';
      socket.on('data', (c) => (data += c.toString()));
      socket.on('close', () => resolve(data));
      socket.on('error', reject);
      socket.setTimeout(10_000, () => reject(new Error('the server never closed the slow connection')));
    });
    assert.match(answer, /^HTTP\/1.1 408 /);
    assertXmlError(answer.slice(answer.indexOf('\r\n\r\n') + 4), /time limit/);
    assert.ok(Date.now() - started < 5000, 'the slow client was cut off close to its limit');
  });
});

describe('two Host headers (RFC 9112 §3.2)', () => {
  /** Sends raw bytes and reads until the server closes the connection. */
  function raw(bytes: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(live.origin).port), '127.0.0.1', () => socket.write(bytes));
      let data = '';
      socket.on('data', (c) => (data += c.toString()));
      socket.on('close', () => resolve(data));
      socket.on('error', reject);
      socket.setTimeout(10_000, () => reject(new Error('the server kept the connection open')));
    });
  }
  const bodyOf = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);

  test('a request with two Host headers is a 400 in the format asked for, and the connection closes', async () => {
    const { host } = new URL(live.origin);
    const auth = `SubscriptionToken: ${seller.token}\r\nCookie: ${seller.auth.Cookie}\r\n`;
    const cases: [string, string, 'json' | 'xml'][] = [
      ['the service, JSON', `GET /publicapi/v1/api.svc/Products HTTP/1.1\r\nHost: ${host}\r\nHost: evil.example\r\n${auth}Accept: application/json\r\n\r\n`, 'json'],
      ['the service, $format=json', `GET /publicapi/v1/api.svc/Products?$format=json HTTP/1.1\r\nHost: ${host}\r\n${auth}host: evil.example\r\n\r\n`, 'json'],
      ['the service, XML', `GET /publicapi/v1/api.svc/ HTTP/1.1\r\nHOST: ${host}\r\nHost: ${host}\r\n${auth}\r\n`, 'xml'],
      ['the login endpoint', `POST /Authentication_JSON_AppService.axd/Login HTTP/1.1\r\nHost: ${host}\r\nHost: evil.example\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 2\r\n\r\n{}`, 'json'],
      ['health', `GET /health HTTP/1.1\r\nHost: evil.example\r\nHost: ${host}\r\n\r\n`, 'xml'],
    ];
    for (const [label, bytes, format] of cases) {
      const answer = await raw(bytes);
      assert.match(answer, /^HTTP\/1.1 400 /, label);
      assert.match(answer, /\r\nConnection: close\r\n/i, label);
      if (format === 'json') assertJsonError(bodyOf(answer), /more than one Host header/);
      else assertXmlError(bodyOf(answer), /more than one Host header/);
    }
  });

  test('one Host header is answered as usual', async () => {
    const { host } = new URL(live.origin);
    const answer = await raw(`GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    assert.match(answer, /^HTTP\/1.1 200 /);
  });
});

describe('bodies never leak internals', () => {
  test('none of the error bodies above names code, SQL or paths', async () => {
    for (const path of ['/Prodcts', '/?$foo=1', '/$metadata/extra', '/%zz']) {
      const res = await asSeller(seller, live.root + path, { headers: { Accept: 'application/json' } });
      assert.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status}`);
      assertNoLeak(res.body);
    }
  });
});
