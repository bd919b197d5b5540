/**
 * Hygiene of everything the service says, against a `catalogue serve` child process (its pino
 * log lines captured from stdout and stderr, at LOG_LEVEL=trace so that every line the code can
 * write is seen). A corpus of succeeding and failing requests — errors of every kind, SQL-shaped
 * filters, invalid tokens and cookies, failed and throttled logins, hostile bodies, platform
 * deliveries of orders with buyers' names, addresses, e-mails and phone numbers — is sent, and:
 * - no response body and no log line holds a stack trace, SQL text or a database's error text, a
 *   file system path, or a token, password or cookie value;
 * - no log line holds a buyer's personal data (bodies may: the seller asked for them);
 * - no answer is a 5xx, and every log line is one JSON object;
 * - a request with the session cookie alone — which is all a cross-site form or image can send —
 *   is refused (401) whatever its method or content type, and changes nothing; the
 *   SubscriptionToken counts only as a header (not as a query parameter or a cookie). That header
 *   is what the design requires on every request, and a cross-site page cannot add it;
 * - CORS never answers `Access-Control-Allow-Origin: *` with `Access-Control-Allow-Credentials:
 *   true`, nor echoes a foreign origin, to preflights or simple requests;
 * - no JSONP: `$callback` is refused and `callback=` ignored; JSON is never wrapped in a call.
 * test/server/errors.test.ts checks a few error bodies in-process; test/auth/login-http.test.ts
 * that the request log of an in-process service holds no secret.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { openStore } from '../../src/store/open';
import { reportFigures } from '../support/figures';
import { request, type HttpRequest, type HttpResponse } from '../support/http-client';
import { SERVICE_PATH } from '../support/live-service';
import { loginAt, serveProcess, type ServeProcess } from '../support/serve-process';
import { freshDatabase } from '../support/test-database';

const PLATFORM_TOKEN = 'hygiene-platform-token-0123456789abcdef-XYZ';
const JSON_TYPE = 'application/json';
const AXD = '/Authentication_JSON_AppService.axd';
const EVIL_ORIGIN = 'https://evil.example';

/** A buyer's personal data, distinctive enough that any appearance in a log line is a leak. */
const BUYER = {
  BuyerName: 'hygiene-buyer-kowalczyk',
  Email: 'joanna.kowalczyk.hygiene@buyers.example.com',
};
const ADDRESS = {
  Name: 'Joanna',
  Surname: 'Kowalczykowa',
  Company: 'Kowalczyk Hygiene Sp. z o.o.',
  Street: 'Ulica Różana 17b',
  PostalCode: '00-950',
  Town: 'Wrocławek',
  Country: 'PL',
  Phone: '+48 71 555 01 99',
  Email: 'joanna.private.hygiene@example.org',
};
const PERSONAL_DATA = [...Object.values(BUYER), ...Object.entries(ADDRESS).filter(([k]) => k !== 'Country').map(([, v]) => v)];

interface Account {
  readonly userName: string;
  readonly password: string;
  readonly token: string;
  readonly cookie: string;
}

/** What must never be said: the patterns and the secrets of this run. */
const STACK_TRACE = /\bat\s+(?:[\w$.<>\[\] ]+\s+)?\(?(?:\/|file:|node:)[^\s()]*:\d+|\n\s+at\s+\S|"stack"\s*:/;
const SQL_TEXT = /\bSELECT\b[\s\S]{1,300}?\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+"?\w+"?\s+SET\b|\bDELETE\s+FROM\b|\bCREATE\s+(?:TABLE|INDEX)\b|\bWHERE\s+"?account_id/;
const DATABASE_ERROR =
  /SqliteError|SQLITE_[A-Z]{4,}|no such (?:table|column|function)|syntax error at or near|violates (?:foreign key|unique|check|not-null) constraint|duplicate key value|SQLSTATE|relation "[^"]*" does not exist|current_setting\(|better-sqlite3|invalid byte sequence for encoding|\baccount_id\b/;
const FILE_PATH = /\/work\/|\/tmp\/|node_modules|\bdist\/|\/home\/|\/root\/|\/usr\/(?:lib|local)\/|[A-Z]:\\\\/;

function leaksIn(text: string, secrets: readonly string[], personal: readonly string[]): string[] {
  const found: string[] = [];
  for (const [what, pattern] of [['stack trace', STACK_TRACE], ['SQL', SQL_TEXT], ['database error', DATABASE_ERROR], ['file path', FILE_PATH]] as const) {
    const m = pattern.exec(text);
    if (m) found.push(`${what}: …${text.slice(Math.max(0, m.index - 40), m.index + 80)}…`);
  }
  for (const secret of secrets) if (text.includes(secret)) found.push(`secret: ${secret.slice(0, 6)}…`);
  for (const value of personal) if (text.includes(value)) found.push(`personal data: ${value}`);
  return found;
}

let server: ServeProcess;
let seller: Account;
let other: Account;
const secrets: string[] = [PLATFORM_TOKEN];
/** Every answer of the corpus, with what was asked. */
const answers: { label: string; res: HttpResponse }[] = [];
const figures = { bodiesChecked: 0, logLinesChecked: 0, leaks: 0 };

async function account(store: ReturnType<typeof openStore>, userName: string): Promise<Account> {
  const password = `${userName}-Secret-Pw-${process.pid}`;
  const created = await createAccount(store, systemClock, { userName, password });
  const cookie = await loginAt(server.origin, userName, password);
  assert.ok(cookie, `login of ${userName}`);
  secrets.push(password, created.subscriptionToken, cookie);
  return { userName, password, token: created.subscriptionToken, cookie };
}

const authOf = (who: Account) => ({ SubscriptionToken: who.token, Cookie: `.ASPXAUTH=${who.cookie}` });

/** Sends, records the answer for the hygiene checks, and returns it. */
async function send(label: string, url: string, init: HttpRequest = {}): Promise<HttpResponse> {
  const res = await request(url, init);
  answers.push({ label, res });
  return res;
}

const svc = (path: string) => server.origin + SERVICE_PATH + path;
const asSeller = (label: string, path: string, init: HttpRequest = {}) =>
  send(label, svc(path), { ...init, headers: { ...authOf(seller), ...(init.headers ?? {}) } });

function orderDocument(platformOrderId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'order',
    PlatformOrderId: platformOrderId,
    CreationDate: '2024-05-01T09:12:00Z',
    CurrencyCode: 'PLN',
    ShippingService: 'InPost',
    ShippingServiceCost: '9.90',
    CheckoutStatus: 2,
    PaymentOption: 'PayPal',
    BuyerCheckoutMessage: `Please ring ${ADDRESS.Phone} before delivery`,
    Buyer: BUYER,
    Address: ADDRESS,
    ShippingAddress: { ...ADDRESS, Street: 'Ulica Różana 17b / 4' },
    SalesOrderItems: [{ PlatformItemId: `${platformOrderId}-1`, TransactionId: `tx-${platformOrderId}`, Name: 'Mydło', Amount: 1, Price: '19.99', CurrencyCode: 'PLN' }],
    ...extra,
  };
}

const deliver = (label: string, userName: string, doc: unknown, token = PLATFORM_TOKEN) =>
  send(label, `${server.origin}/platform/v1/accounts/${encodeURIComponent(userName)}/documents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': JSON_TYPE },
    body: typeof doc === 'string' ? doc : JSON.stringify(doc),
  });

before(async () => {
  const database = await freshDatabase();
  server = await serveProcess({ ...database.env, PLATFORM_TOKEN, LOG_LEVEL: 'trace', REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1000' });
  const store = openStore(database.url, { ownerUrl: database.ownerUrl });
  try {
    seller = await account(store, `hygiene-${process.pid}`);
    other = await account(store, `hygiene-other-${process.pid}`);
  } finally {
    await store.close();
  }
});

after(async () => {
  await server?.stop();
});

describe('the detectors', () => {
  test("find what they look for, and pass the service's ordinary messages", () => {
    const samples: [string, string][] = [
      ['stack trace', 'TypeError: x is undefined\n    at serveRequest (/srv/app/dist/src/server/dispatch.js:41:13)'],
      ['stack trace', '{"level":50,"err":{"type":"Error","message":"boom","stack":"Error: boom"}}'],
      ['stack trace', 'failed at file:///srv/app/x.mjs:3:7'],
      ['SQL', 'SELECT "id", "title" FROM "products" WHERE account_id = $1'],
      ['SQL', 'INSERT INTO sessions (session_hash) VALUES (?)'],
      ['SQL', 'UPDATE "products" SET "title" = ?'],
      ['database error', 'SqliteError: no such column: Nope'],
      ['database error', 'duplicate key value violates unique constraint "products_pkey"'],
      ['database error', 'invalid byte sequence for encoding "UTF8": 0x00'],
      ['file path', 'ENOENT: /work/main/data/catalogue.db'],
      ['file path', 'Cannot find module node_modules/pg'],
      ['secret', 'cookie=SECRET-VALUE-123'],
      ['personal data', 'buyer Kowalczykowa'],
    ];
    for (const [what, text] of samples) {
      const found = leaksIn(text, ['SECRET-VALUE-123'], ['Kowalczykowa']);
      assert.ok(found.some((f) => f.startsWith(what)), `${what} not found in ${text}: ${found.join('; ')}`);
    }
    const clean = [
      "Syntax error at position 23 in $filter: expected an operator such as 'eq' or 'and', or the end, but found 'select'.",
      "No resource exists at '/publicapi/etc/passwd'. The service is at /publicapi/v1/api.svc.",
      "Unknown function 'sqlite_version' at position 0.",
      'The HTTP method \'DELETE\' is not allowed on this resource. Allowed: GET, HEAD.',
      '{"level":30,"time":"2026-11-23T00:43:03.984Z","reqId":"abc-1","method":"GET","path":"/publicapi/v1/api.svc/Products","status":200,"ms":1.2}',
    ];
    for (const text of clean) assert.deepEqual(leaksIn(text, ['SECRET-VALUE-123'], ['Kowalczykowa']), [], text);
  });
});

describe('the corpus', () => {
  test('succeeding requests, personal data included', async () => {
    assert.equal((await asSeller('service document', '/', { headers: { Accept: JSON_TYPE } })).status, 200);
    assert.equal((await asSeller('metadata', '/$metadata')).status, 200);
    const product = await asSeller('create product', '/Products', {
      method: 'POST',
      headers: { Accept: JSON_TYPE, 'Content-Type': JSON_TYPE },
      body: JSON.stringify({ Title: 'Mydło naturalne', Price: '9.99', StockAmount: 3 }),
    });
    assert.equal(product.status, 201, product.body);
    for (const id of ['PL-1001', 'PL-1002']) assert.equal((await deliver(`order ${id}`, seller.userName, orderDocument(id))).status, 200);
    const orders = await asSeller('orders with buyers', '/SalesOrders?$expand=Buyer,Address,ShippingAddress,SalesOrderItems', { headers: { Accept: JSON_TYPE } });
    assert.equal(orders.status, 200);
    assert.ok(orders.body.includes(BUYER.Email), 'the seller reads the buyer data');
    assert.equal((await asSeller('orders atom', '/SalesOrders?$expand=Buyer,Address')).status, 200);
    assert.equal((await asSeller('buyer by e-mail', `/Buyers?$filter=${encodeURIComponent(`Email eq '${BUYER.Email}'`)}`, { headers: { Accept: JSON_TYPE } })).status, 200);
    assert.equal((await asSeller('address by street', `/Addresses?$filter=${encodeURIComponent(`substringof('Różana', Street) and Phone eq '${ADDRESS.Phone}'`)}`)).status, 200);
    const orderId = /"Id":"(\d+)"/.exec(orders.body)![1]!;
    assert.equal((await asSeller('history', `/GetSalesOrderHistory?salesOrderId=${orderId}L`, { headers: { Accept: JSON_TYPE } })).status, 200);
    await asSeller('phone through a navigation', `/SalesOrders(${orderId}L)/Address/Phone/$value`);
    const batch =
      '--b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nGET Addresses HTTP/1.1\r\nAccept: application/json\r\n\r\n\r\n--b--\r\n';
    assert.equal((await asSeller('batch of addresses', '/$batch', { method: 'POST', headers: { 'Content-Type': 'multipart/mixed; boundary=b' }, body: batch })).status, 202);
    const login = await send('login', server.origin + AXD + '/Login', {
      method: 'POST', headers: { 'Content-Type': JSON_TYPE }, body: JSON.stringify({ userName: seller.userName, password: seller.password, createPersistentCookie: false }),
    });
    assert.equal(login.body, '{"d":true}');
    secrets.push(/^\.ASPXAUTH=([^;]+)/.exec(login.headers['set-cookie']?.[0] ?? '')![1]!);
  });

  test('failing requests of every kind', async () => {
    const filters = [
      "Title eq 'a' or 1 eq 1 --",
      "Title eq 'x'; drop table products; --",
      "Title eq 'a') union select password_hash from accounts --",
      "Title eq 'a' union all select * from sessions",
      'sqlite_version() eq 1',
      'pg_sleep(10) eq 1',
      "set_config('app.tenant', '2', false) eq '2'",
      'Id add 9223372036854775807L gt 0L',
      'Price div 0M gt 1M',
      'Price mul 99999999999999M mul 99999999999999M gt 0M',
      'StockAmount add 2147483647 gt 0',
      "Title eq 'a\u0000b'",
      'length(Title) eq 99999999999999999999',
      "CreationDate eq datetime'2020-13-45T00:00:00'",
      "Id eq guid'not-a-guid'",
      "substringof('%', Title) and startswith(Title, '_')",
      'Nope eq 1',
      'Buyer/Password eq 1',
      "Title eq '" + 'x'.repeat(3000) + "'",
      '((((((((((((((((((((((((((((((((((Id eq 1))))))))))))))))))))))))))))))))',
      'Title eq',
      "'",
    ];
    for (const filter of filters) {
      for (const accept of [JSON_TYPE, 'application/atom+xml']) {
        await asSeller(`filter ${filter.slice(0, 40)}`, `/Products?$filter=${encodeURIComponent(filter)}`, { headers: { Accept: accept } });
      }
    }
    const paths = [
      '/Prodcts', '/Products(999999L)', "/Products('x')", '/Products(1L)/Nope', '/Products(1L)/$value', '/Products/$count/extra',
      '/../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/Products?$top=-1', '/Products?$skip=abc', "/Products?$skiptoken='x'",
      '/Products?$expand=Nope', '/Products?$select=Nope', '/Products?$orderby=' + encodeURIComponent('Title; drop table products'),
      '/Products?$format=sql', '/Products?$inlinecount=some', '/GetSalesOrderHistory', '/GetSalesOrderHistory?salesOrderId=abc',
      "/ProductIsListed?productId=1' or '1'='1", '/Buyers(1L)/SalesOrders?$filter=' + encodeURIComponent("Buyer/Email eq 'x'"),
    ];
    for (const path of paths) {
      for (const accept of [JSON_TYPE, 'application/atom+xml']) await asSeller(`path ${path.slice(0, 40)}`, path, { headers: { Accept: accept } });
    }
    const writes: [string, HttpRequest][] = [
      ['malformed JSON', { method: 'POST', headers: { 'Content-Type': JSON_TYPE }, body: '{"Title": "a",' }],
      ['wrong types', { method: 'POST', headers: { 'Content-Type': JSON_TYPE }, body: '{"Title": 5, "Price": "abc", "StockAmount": "1; drop table"}' }],
      ['malformed XML', { method: 'POST', headers: { 'Content-Type': 'application/atom+xml' }, body: '<entry><content>' }],
      ['external entity', { method: 'POST', headers: { 'Content-Type': 'application/atom+xml' }, body: '<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]><entry>&x;</entry>' }],
      ['billion laughs', { method: 'POST', headers: { 'Content-Type': 'application/atom+xml' }, body: '<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><entry>&b;</entry>' }],
      ['text/plain body', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'Title=a' }],
      ['unacceptable Accept', { method: 'GET', headers: { Accept: 'image/png' } }],
      ['bad DataServiceVersion', { method: 'GET', headers: { DataServiceVersion: '9.0', MaxDataServiceVersion: 'abc' } }],
      ['bad tunnel', { method: 'POST', headers: { 'X-HTTP-Method': 'TRUNCATE', 'Content-Type': JSON_TYPE }, body: '{}' }],
      ['If-Match on a missing entity', { method: 'DELETE', headers: { 'If-Match': 'W/"999"' } }],
    ];
    for (const [label, init] of writes) {
      const path = label === 'If-Match on a missing entity' ? '/Products(999999L)' : '/Products';
      // A request that names its own Accept keeps it; the others are sent asking for each format.
      const accepts = init.headers?.Accept !== undefined ? [String(init.headers.Accept)] : [JSON_TYPE, 'application/atom+xml'];
      for (const accept of accepts) await asSeller(label, path, { ...init, headers: { ...init.headers, Accept: accept } });
    }
    await asSeller('write to a read-only set', '/Buyers', { method: 'POST', headers: { 'Content-Type': JSON_TYPE }, body: JSON.stringify(BUYER) });
    await asSeller('batch without boundary', '/$batch', { method: 'POST', headers: { 'Content-Type': 'multipart/mixed' }, body: 'garbage' });
    await asSeller('batch of garbage', '/$batch', { method: 'POST', headers: { 'Content-Type': 'multipart/mixed; boundary=b' }, body: '--b\r\nContent-Type: application/http\r\n\r\nselect * from products\r\n--b--\r\n' });
    await asSeller('service operation with SQL', '/SetEbayCategory?productId=1L&categoryId1=' + encodeURIComponent('1; delete from products'), { method: 'POST' });
  });

  test('invalid credentials and failed logins', async () => {
    const credentialSets: [string, Record<string, string>][] = [
      ['none', {}],
      ['token only', { SubscriptionToken: seller.token }],
      ['malformed token', { SubscriptionToken: "' OR '1'='1", Cookie: `.ASPXAUTH=${seller.cookie}` }],
      ['unknown token', { SubscriptionToken: '00000000-0000-0000-0000-000000000000', Cookie: `.ASPXAUTH=${seller.cookie}` }],
      ["other account's token", { SubscriptionToken: other.token, Cookie: `.ASPXAUTH=${seller.cookie}` }],
      ['garbage cookie', { SubscriptionToken: seller.token, Cookie: '.ASPXAUTH=../../etc/passwd; path=/' }],
      ['huge token', { SubscriptionToken: 'a'.repeat(4000), Cookie: `.ASPXAUTH=${'b'.repeat(4000)}` }],
      ['token in braces', { SubscriptionToken: `{${seller.token.toUpperCase()}}`, Cookie: `.ASPXAUTH=${seller.cookie}` }],
    ];
    for (const [label, headers] of credentialSets) {
      for (const accept of [JSON_TYPE, 'application/atom+xml']) {
        const res = await send(`credentials: ${label}`, svc('/Products'), { headers: { ...headers, Accept: accept } });
        assert.equal(res.status, 401, label);
      }
    }
    const loginAs = (label: string, body: string, headers: Record<string, string> = {}) =>
      send(`login: ${label}`, server.origin + AXD + '/Login', { method: 'POST', headers: { 'Content-Type': JSON_TYPE, ...headers }, body });
    const wrong = [`${seller.password}x`, "' OR '1'='1", 'Secret-Pw-wrong'];
    secrets.push(...wrong);
    for (const password of wrong) await loginAs('wrong password', JSON.stringify({ userName: seller.userName, password, createPersistentCookie: false }));
    await loginAs('unknown user', JSON.stringify({ userName: "nobody'; drop table accounts; --", password: seller.password }));
    await loginAs('malformed', '{"userName":', { Accept: JSON_TYPE });
    await loginAs('missing password', JSON.stringify({ userName: seller.userName }));
    await loginAs('bad flag', JSON.stringify({ userName: seller.userName, password: seller.password, createPersistentCookie: 'maybe' }));
    // Five failures for one name, then the throttle.
    for (let i = 0; i < 6; i++) await loginAs('throttled', JSON.stringify({ userName: other.userName, password: `Secret-Pw-guess-${i}` }), { Accept: JSON_TYPE });
    secrets.push(...Array.from({ length: 6 }, (_, i) => `Secret-Pw-guess-${i}`));
    assert.equal(answers.at(-1)!.res.status, 429);
    await send('login by GET', server.origin + AXD + '/Login?userName=a&password=b');
    await send('unknown auth operation', server.origin + AXD + '/Register', { method: 'POST', body: '{}' });
  });

  test('platform deliveries that fail, with personal data in them', async () => {
    await deliver('platform: wrong token', seller.userName, orderDocument('PL-2001'), 'x'.repeat(40));
    await deliver('platform: unknown account', 'nobody-here', orderDocument('PL-2002'));
    await deliver('platform: invalid country', seller.userName, orderDocument('PL-2003', { Address: { ...ADDRESS, Country: `Polska ${ADDRESS.Street}` } }));
    await deliver('platform: e-mail of the wrong type', seller.userName, orderDocument('PL-2004', { Buyer: { BuyerName: BUYER.BuyerName, Email: 42 } }));
    await deliver('platform: unknown property', seller.userName, orderDocument('PL-2005', { Buyer: { ...BUYER, Password: ADDRESS.Phone } }));
    await deliver('platform: malformed JSON', seller.userName, `{"kind":"order","Buyer":{"Email":"${BUYER.Email}"`);
    await deliver('platform: unknown product', seller.userName, orderDocument('PL-2006', {
      SalesOrderItems: [{ PlatformItemId: 'x', TransactionId: 'y', Name: ADDRESS.Surname, Amount: 1, Price: '1.00', CurrencyCode: 'PLN', ProductId: '999999' }],
    }));
  });
});

/** Raw bytes on a socket; `abortAfterMs` destroys it from the client side, otherwise it is read until the server closes it. */
function rawExchange(label: string, text: string, abortAfterMs?: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.origin);
    const socket = net.connect(Number(url.port), url.hostname, () => {
      socket.write(text);
      if (abortAfterMs !== undefined) setTimeout(() => socket.destroy(), abortAfterMs);
    });
    let data = '';
    socket.on('data', (c: Buffer) => (data += c.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const headEnd = data.indexOf('\r\n\r\n');
      if (headEnd >= 0) {
        answers.push({ label, res: { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), headers: {}, body: data.slice(headEnd + 4) } });
      }
      resolve();
    });
  });
}

describe('clients that abort or stall', () => {
  test('an upload cut off half-way, a body that never finishes, headers that never finish', async () => {
    // A MERGE, which SalesOrders take: the method is judged before the body is read, so a method
    // the set does not take would be answered 405 at once, never waiting for the body.
    const head = (length: number) =>
      `MERGE ${SERVICE_PATH}/SalesOrders(1L) HTTP/1.1\r\nHost: ${new URL(server.origin).host}\r\nSubscriptionToken: ${seller.token}\r\nCookie: .ASPXAUTH=${seller.cookie}\r\n` +
      `Accept: application/json\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
    const partial = JSON.stringify({ BuyerCheckoutMessage: `call ${ADDRESS.Phone}`, Email: BUYER.Email });
    await rawExchange('aborted upload', head(partial.length + 500) + partial, 200);
    await rawExchange('stalled body', head(partial.length + 500) + partial);
    await rawExchange('stalled headers', `GET ${SERVICE_PATH}/Buyers?$filter=${encodeURIComponent(`Email eq '${BUYER.Email}'`)} HTTP/1.1\r\nHost: x\r\nX-Slow: `);
    // The server answered both stalled requests with its 408 and closed them.
    assert.deepEqual(answers.slice(-2).map((a) => a.res.status), [408, 408]);
  });
});

describe('cookie-only requests (CSRF)', () => {
  test('the session cookie alone is refused for every method and content type a cross-site page can send, and changes nothing', async () => {
    const cookieOnly = { Cookie: `.ASPXAUTH=${seller.cookie}` };
    const created = await asSeller('csrf: setup', '/Catalogs', { method: 'POST', headers: { Accept: JSON_TYPE, 'Content-Type': JSON_TYPE }, body: '{"Name":"untouched"}' });
    assert.equal(created.status, 201);
    const id = /"Id":"(\d+)"/.exec(created.body)![1]!;
    const countBefore = (await asSeller('csrf: count', '/Catalogs/$count')).body;
    const attempts: [string, string, HttpRequest][] = [
      ['GET', '/', {}],
      ['GET', '/Catalogs', {}],
      ['form POST', '/Catalogs', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'Name=forged' }],
      ['text/plain POST', '/Catalogs', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{"Name":"forged"}' }],
      ['multipart form POST', '/Catalogs', { method: 'POST', headers: { 'Content-Type': 'multipart/form-data; boundary=f' }, body: '--f\r\nContent-Disposition: form-data; name="Name"\r\n\r\nforged\r\n--f--\r\n' }],
      ['JSON POST', '/Catalogs', { method: 'POST', headers: { 'Content-Type': JSON_TYPE }, body: '{"Name":"forged"}' }],
      ['tunnelled DELETE', `/Catalogs(${id}L)`, { method: 'POST', headers: { 'X-HTTP-Method': 'DELETE' } }],
      ['MERGE', `/Catalogs(${id}L)`, { method: 'MERGE', headers: { 'Content-Type': JSON_TYPE }, body: '{"Name":"forged"}' }],
      ['DELETE', `/Catalogs(${id}L)`, { method: 'DELETE' }],
      ['$batch as text/plain', '/$batch', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '--b\r\n' }],
      ['service operation', '/DeleteAccountData?type=0', { method: 'POST' }],
      ['token in the query string', `/DeleteAccountData?type=0&SubscriptionToken=${seller.token}`, { method: 'POST' }],
      ['token as a cookie', '/DeleteAccountData?type=0', { method: 'POST', headers: { Cookie: `.ASPXAUTH=${seller.cookie}; SubscriptionToken=${seller.token}` } }],
    ];
    for (const [label, path, init] of attempts) {
      const res = await send(`csrf: ${label}`, svc(path), { ...init, headers: { ...cookieOnly, Origin: EVIL_ORIGIN, ...(init.headers ?? {}) } });
      assert.equal(res.status, 401, `${label}: ${res.status} ${res.body.slice(0, 200)}`);
    }
    assert.equal((await asSeller('csrf: count after', '/Catalogs/$count')).body, countBefore);
    const still = await asSeller('csrf: the catalog', `/Catalogs(${id}L)`, { headers: { Accept: JSON_TYPE } });
    assert.equal(still.status, 200);
    assert.match(still.body, /"Name":"untouched"/);
  });
});

describe('CORS', () => {
  test('never a wildcard origin with credentials, never a foreign origin echoed, to preflights and simple requests', async () => {
    const urls = [svc('/'), svc('/Products'), svc('/$batch'), server.origin + AXD + '/Login', server.origin + '/health', server.origin + '/platform/v1/schema'];
    let checked = 0;
    for (const url of urls) {
      for (const origin of [EVIL_ORIGIN, 'null', server.origin]) {
        const preflight = await send(`CORS preflight ${url}`, url, {
          method: 'OPTIONS',
          headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'subscriptiontoken, content-type' },
        });
        const simple = await send(`CORS simple ${url}`, url, { headers: { Origin: origin, ...authOf(seller) } });
        for (const res of [preflight, simple]) {
          const allowOrigin = res.headers['access-control-allow-origin'];
          const allowCredentials = res.headers['access-control-allow-credentials'];
          assert.ok(res.status < 500, `${url}: ${res.status}`);
          assert.ok(!(allowOrigin === '*' && allowCredentials === 'true'), `${url}: * with credentials`);
          if (origin !== server.origin) assert.notEqual(allowOrigin, origin, `${url} allows the foreign origin ${origin}`);
          checked++;
        }
      }
    }
    assert.equal(checked, urls.length * 3 * 2);
  });
});

describe('JSONP', () => {
  test('$callback is refused and callback= ignored; JSON is never wrapped in a function call', async () => {
    const cases: [string, string, HttpRequest][] = [
      ['$callback on a feed', svc('/Products?$format=json&$callback=steal'), { headers: authOf(seller) }],
      ['$callback on the service document', svc('/?$callback=steal'), { headers: { ...authOf(seller), Accept: JSON_TYPE } }],
      ['callback= on a feed', svc('/SalesOrders?$format=json&$expand=Buyer&callback=steal'), { headers: authOf(seller) }],
      ['callback= on an entity', svc('/Products?$format=json&callback=steal&jsonp=steal'), { headers: { ...authOf(seller), Accept: 'application/javascript' } }],
      ['callback= on an operation', svc('/ProductIsListed?productId=1L&callback=steal'), { headers: { ...authOf(seller), Accept: JSON_TYPE } }],
      ['callback= without credentials', svc('/Products?$format=json&callback=steal'), {}],
      ['callback= on IsLoggedIn', server.origin + AXD + '/IsLoggedIn?callback=steal', { method: 'POST', headers: { Cookie: `.ASPXAUTH=${seller.cookie}` } }],
    ];
    for (const [label, url, init] of cases) {
      const res = await send(`JSONP: ${label}`, url, init);
      assert.doesNotMatch(res.body, /^\s*\/?\*?\*?\/?\s*steal\s*\(/, label);
      assert.doesNotMatch(String(res.headers['content-type']), /javascript/, label);
      if (label.startsWith('$callback')) assert.equal(res.status, 400, `${label}: ${res.status}`);
      if (String(res.headers['content-type']).startsWith('application/json')) assert.doesNotThrow(() => JSON.parse(res.body), label);
    }
  });
});

describe('what was said', () => {
  test('no body and no log line leaks; no log line holds personal data; no 5xx', async (t) => {
    // Stop first, so every log line has been written.
    await server.stop();
    const leaks: string[] = [];
    for (const { label, res } of answers) {
      if (res.status >= 500) leaks.push(`${label}: answered ${res.status}`);
      for (const leak of leaksIn(res.body, secrets, [])) leaks.push(`body of ${label} (${res.status}): ${leak}`);
      figures.bodiesChecked++;
    }
    const lines = server.output().split('\n').filter((line) => line.trim() !== '');
    for (const line of lines) {
      try {
        JSON.parse(line);
      } catch {
        leaks.push(`log line that is not JSON: ${line.slice(0, 120)}`);
      }
      for (const leak of leaksIn(line, secrets, PERSONAL_DATA)) leaks.push(`log line: ${leak}`);
      figures.logLinesChecked++;
    }
    figures.leaks = leaks.length;
    reportFigures('hygiene', figures, t);
    assert.ok(answers.length >= 150, `only ${answers.length} answers`);
    assert.ok(lines.length >= answers.length, `only ${lines.length} log lines for ${answers.length} requests`);
    assert.deepEqual(leaks, []);
  });
});
