/**
 * The ASP.NET-style login service over real HTTP: cookie attributes, success and failure,
 * logout, expiry on a manual clock, throttling, refused mutations, logs free of secrets, the
 * SubscriptionToken compared in any case, and the WWW-Authenticate challenge of every 401.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import { createAccount, revokeToken } from '../../src/auth/accounts';
import { newSessionValue, newSubscriptionToken } from '../../src/auth/credentials';
import { request, type HttpResponse } from '../support/http-client';
import { mulberry32 } from '../support/random';
import { asSeller, login, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';

const AXD = '/Authentication_JSON_AppService.axd';
const clock = new ManualClock(Date.UTC(2026, 10, 22, 8, 0, 0));
let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive({ clock });
  seller = await newSeller(live);
});
after(() => live.close());

function postLogin(body: unknown, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return request(live.origin + AXD + '/Login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const serviceDocument = (headers: Record<string, string>) => request(live.root + '/', { headers: { Accept: 'application/json', ...headers } });

describe('Login', () => {
  test('success: 200 {"d":true} and the .ASPXAUTH cookie with path=/, HttpOnly and SameSite=Lax', async () => {
    const res = await postLogin({ userName: seller.userName, password: seller.password, createPersistentCookie: false });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json;charset=utf-8');
    assert.deepEqual(JSON.parse(res.body), { d: true });
    const cookies = res.headers['set-cookie'] ?? [];
    assert.equal(cookies.length, 1);
    assert.match(cookies[0]!, /^\.ASPXAUTH=[A-Za-z0-9_-]{43,}; path=\/; HttpOnly; SameSite=Lax$/);
  });

  test('createPersistentCookie as true or "true" adds an expiry 12 hours ahead; "false" does not', async () => {
    for (const flag of [true, 'true']) {
      const res = await postLogin({ userName: seller.userName, password: seller.password, createPersistentCookie: flag });
      const cookie = res.headers['set-cookie']![0]!;
      const expires = /expires=([^;]+);/.exec(cookie)?.[1];
      assert.ok(expires, cookie);
      assert.equal(new Date(expires).getTime(), Math.floor((clock.now() + 12 * 3600_000) / 1000) * 1000);
    }
    const off = await postLogin({ userName: seller.userName, password: seller.password, createPersistentCookie: 'false' });
    assert.doesNotMatch(off.headers['set-cookie']![0]!, /expires=/);
  });

  test('SECURE_COOKIES marks the cookie Secure', async () => {
    const secure = await startLive({ env: { SECURE_COOKIES: 'true' } });
    try {
      await createAccount(secure.service.app.store, secure.service.app.clock, { userName: 'tls-user', password: 'tls-password-1' });
      const res = await request(secure.origin + AXD + '/Login', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ userName: 'tls-user', password: 'tls-password-1', createPersistentCookie: false }),
      });
      assert.match(res.headers['set-cookie']![0]!, /; path=\/; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await secure.close();
    }
  });

  test('the headers every connector request carries do not disturb the login', async () => {
    const res = await postLogin(
      { userName: seller.userName, password: seller.password, createPersistentCookie: false },
      { SubscriptionToken: seller.token, DataServiceVersion: '2.0', MaxDataServiceVersion: '3.0', Accept: 'application/json', Vendor: 'x', Version: '1' },
    );
    assert.deepEqual(JSON.parse(res.body), { d: true });
  });

  test('an unknown user and a wrong password get the identical answer, and no cookie', async () => {
    const wrong = await postLogin({ userName: seller.userName, password: 'not-the-password', createPersistentCookie: false });
    const unknown = await postLogin({ userName: 'nobody-at-all', password: 'not-the-password', createPersistentCookie: false });
    for (const res of [wrong, unknown]) {
      assert.equal(res.status, 200);
      assert.equal(res.body, '{"d":false}');
      assert.equal(res.headers['set-cookie'], undefined);
    }
    assert.equal(wrong.headers['content-type'], unknown.headers['content-type']);
    assert.equal(wrong.headers['content-length'], unknown.headers['content-length']);
  });

  test('malformed login bodies are a 400 OData error; other verbs a 405', async () => {
    for (const body of ['not json', '[]', '{"userName":1,"password":"x"}', '{"userName":"a"}', '{"userName":"a","password":"b","createPersistentCookie":"maybe"}']) {
      const res = await postLogin(body, { Accept: 'application/json' });
      assert.equal(res.status, 400, body);
      assert.ok((JSON.parse(res.body) as { error: unknown }).error, body);
    }
    const get = await request(live.origin + AXD + '/Login', { headers: { Accept: 'application/json' } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, 'POST');
    const unknownOp = await request(live.origin + AXD + '/Impersonate', { method: 'POST', body: '{}' });
    assert.equal(unknownOp.status, 404);
  });
});

describe('login CSRF: only application/json, never from another site', () => {
  const body = () => JSON.stringify({ userName: seller.userName, password: seller.password, createPersistentCookie: false });

  /** Asserts a refused login: the status, an OData error in the request's format, no cookie. */
  function assertRefused(res: HttpResponse, status: number, label: string, message: RegExp): void {
    assert.equal(res.status, status, `${label}: ${res.body}`);
    assert.equal(res.headers['set-cookie'], undefined, `${label} set a cookie`);
    assert.equal(res.headers['content-type'], 'application/json;charset=utf-8', label);
    assert.match((JSON.parse(res.body) as { error: { message: { value: string } } }).error.message.value, message, label);
  }

  test('text/plain, form-urlencoded, multipart, other types and no Content-Type: 415 and no cookie', async () => {
    const form = `userName=${encodeURIComponent(seller.userName)}&password=${encodeURIComponent(seller.password)}`;
    const multipart = ['--b', 'Content-Disposition: form-data; name="userName"', '', seller.userName, '--b', 'Content-Disposition: form-data; name="password"', '', seller.password, '--b--', ''].join('\r\n');
    const cases: [string, string | undefined, string][] = [
      // What an HTML form on any site can send: its body may even be the JSON itself.
      ['text/plain', 'text/plain', body()],
      ['text/plain with a charset', 'text/plain;charset=UTF-8', body()],
      ['form-urlencoded', 'application/x-www-form-urlencoded', form],
      ['form-urlencoded holding JSON', 'application/x-www-form-urlencoded', body()],
      ['multipart', 'multipart/form-data; boundary=b', multipart],
      ['no Content-Type', undefined, body()],
      ['an empty Content-Type', '', body()],
      ['application/xml', 'application/xml', body()],
      ['a JSON look-alike', 'application/jsonp', body()],
      ['JSON in another charset', 'application/json; charset=iso-8859-1', body()],
    ];
    for (const [label, type, payload] of cases) {
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (type !== undefined) headers['Content-Type'] = type;
      const res = await request(live.origin + AXD + '/Login', { method: 'POST', headers, body: payload });
      assertRefused(res, 415, label, /application\/json/);
    }
    // The same body as application/json, with or without a UTF-8 charset, logs in.
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;Charset="UTF-8"']) {
      const res = await postLogin(body(), { 'Content-Type': type });
      assert.equal(res.body, '{"d":true}', type);
      assert.ok(res.headers['set-cookie'], type);
    }
  });

  test('415 and 403 answer in the format the request asks for (XML by default, as every error of the service)', async () => {
    const xml = await request(live.origin + AXD + '/Login', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: body() });
    assert.equal(xml.status, 415);
    assert.equal(xml.headers['content-type'], 'application/xml;charset=utf-8');
    assert.match(xml.body, /<message xml:lang="en-US">A login is sent as application\/json/);
  });

  test('a browser login from another site or a foreign Origin: 403 and no cookie; its own origin, same-site and none log in', async () => {
    const own = new URL(live.origin);
    const refused: [string, Record<string, string>][] = [
      ['Sec-Fetch-Site: cross-site', { 'Sec-Fetch-Site': 'cross-site' }],
      ['a foreign Origin', { Origin: 'https://evil.example' }],
      ['a foreign Origin on the same host name, another port', { Origin: `http://${own.hostname}:1` }],
      ['Origin: null (a sandboxed or local document)', { Origin: 'null' }],
      ['a foreign Origin with Sec-Fetch-Site: same-origin', { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'same-origin' }],
      ['an unknown Sec-Fetch-Site value', { 'Sec-Fetch-Site': 'cross-origin' }],
    ];
    for (const [label, headers] of refused) {
      assertRefused(await postLogin(body(), { Accept: 'application/json', ...headers }), 403, label, /from another (site|origin)/);
    }
    const accepted: [string, Record<string, string>][] = [
      ['its own Origin', { Origin: live.origin, 'Sec-Fetch-Site': 'same-origin' }],
      ['Sec-Fetch-Site: same-site', { 'Sec-Fetch-Site': 'same-site' }],
      ['Sec-Fetch-Site: none (typed or bookmarked)', { 'Sec-Fetch-Site': 'none' }],
      ['no Origin and no Sec-Fetch-Site (a connector)', {}],
    ];
    for (const [label, headers] of accepted) {
      const res = await postLogin(body(), headers);
      assert.equal(res.body, '{"d":true}', label);
    }
  });

  test('PUBLIC_URL is the service\'s own origin too, behind a proxy that rewrites Host', async () => {
    const proxied = await startLive({ env: { PUBLIC_URL: 'https://shop-api.example.com/' } });
    try {
      await createAccount(proxied.service.app.store, proxied.service.app.clock, { userName: 'proxied', password: 'proxied-password' });
      const post = (origin: string) =>
        request(proxied.origin + AXD + '/Login', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json', Origin: origin },
          body: JSON.stringify({ userName: 'proxied', password: 'proxied-password' }),
        });
      assert.equal((await post('https://shop-api.example.com')).body, '{"d":true}');
      assert.equal((await post('https://shop-api.example.com:8443')).status, 403);
    } finally {
      await proxied.close();
    }
  });

  test('Logout from another site is refused and the session stays; Logout keeps any Content-Type', async () => {
    const s = await newSeller(live, 'logout-csrf');
    const logout = (headers: Record<string, string>) => request(live.origin + AXD + '/Logout', { method: 'POST', headers: { Cookie: `.ASPXAUTH=${s.cookie}`, Accept: 'application/json', ...headers }, body: '' });
    const foreign: Record<string, string>[] = [{ 'Sec-Fetch-Site': 'cross-site', 'Content-Type': 'text/plain' }, { Origin: 'https://evil.example', 'Content-Type': 'application/x-www-form-urlencoded' }];
    for (const headers of foreign) {
      const res = await logout(headers);
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.equal(res.headers['set-cookie'], undefined);
    }
    assert.equal((await serviceDocument(s.auth)).status, 200, 'the session was not ended');
    // A connector's Logout (no body type at all) and the console's form fallback still work.
    const out = await logout({ 'Content-Type': 'application/x-www-form-urlencoded', Origin: live.origin });
    assert.equal(out.status, 200);
    assert.equal((await serviceDocument(s.auth)).status, 401);
  });
});

describe('IsLoggedIn and Logout', () => {
  test('IsLoggedIn follows the session; Logout revokes it on the server', async () => {
    const s = await newSeller(live);
    const isLoggedIn = async (cookie: string) =>
      JSON.parse((await request(live.origin + AXD + '/IsLoggedIn', { method: 'POST', headers: { Cookie: `.ASPXAUTH=${cookie}` }, body: '{}' })).body) as { d: boolean };
    assert.deepEqual(await isLoggedIn(s.cookie), { d: true });
    assert.equal((await serviceDocument(s.auth)).status, 200);
    const out = await request(live.origin + AXD + '/Logout', { method: 'POST', headers: { Cookie: `.ASPXAUTH=${s.cookie}` }, body: '{}' });
    assert.equal(out.status, 200);
    assert.match(out.headers['set-cookie']![0]!, /^\.ASPXAUTH=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=\/; HttpOnly/);
    assert.deepEqual(await isLoggedIn(s.cookie), { d: false });
    // Replaying the cookie after logout is refused.
    assert.equal((await serviceDocument(s.auth)).status, 401);
  });

  test('a cookie header with echoed attribute junk still authenticates', async () => {
    const res = await serviceDocument({ SubscriptionToken: seller.token, Cookie: `.ASPXAUTH=${seller.cookie}; path=/; HttpOnly` });
    assert.equal(res.status, 200);
  });
});

describe('session expiry (manual clock)', () => {
  test('20 minutes idle ends a session; use within them slides it', async () => {
    const s = await newSeller(live);
    clock.advance(15 * 60_000);
    assert.equal((await serviceDocument(s.auth)).status, 200);
    clock.advance(15 * 60_000); // 30 minutes after login, 15 after the last use
    assert.equal((await serviceDocument(s.auth)).status, 200);
    clock.advance(21 * 60_000);
    const expired = await serviceDocument(s.auth);
    assert.equal(expired.status, 401);
    assert.equal(expired.headers.location, undefined);
  });

  test('12 hours after login a session ends even when used continually', async () => {
    const s = await newSeller(live);
    for (let minutes = 0; minutes < 12 * 60 - 10; minutes += 10) {
      clock.advance(10 * 60_000);
      assert.equal((await serviceDocument(s.auth)).status, 200, `after ${minutes + 10} minutes`);
    }
    clock.advance(11 * 60_000);
    assert.equal((await serviceDocument(s.auth)).status, 401);
    // A new login gives a new, working session.
    const cookie = await login(live, s.userName, s.password);
    assert.equal((await serviceDocument({ SubscriptionToken: s.token, Cookie: `.ASPXAUTH=${cookie}` })).status, 200);
  });
});

describe('mutated credentials', () => {
  /**
   * Deterministic mutations of a credential: flips, replacements, truncation, growth, case.
   * `same` tells a mutation that is still the credential (a token in another case).
   */
  function mutations(value: string, count: number, same: (m: string) => boolean = (m) => m === value): string[] {
    const out = new Set<string>();
    const add = (m: string) => {
      if (!same(m)) out.add(m);
    };
    const alphabet = 'abcdef0123456789ABCDEF-_x';
    const random = mulberry32(7);
    const rand = (n: number) => Math.floor(random() * n);
    add('');
    add(value.toUpperCase());
    add(value + 'a');
    add(value.slice(1));
    while (out.size < count) {
      const i = rand(value.length);
      switch (rand(4)) {
        case 0:
          add(value.slice(0, i) + alphabet[rand(alphabet.length)] + value.slice(i + 1));
          break;
        case 1:
          add(value.slice(0, i));
          break;
        case 2:
          add(value.slice(0, i) + alphabet[rand(alphabet.length)] + value.slice(i));
          break;
        default:
          add(value.slice(0, i) + value.slice(i + 1));
      }
    }
    return [...out].slice(0, count);
  }

  test('1,000 mutated tokens and 1,000 mutated cookies are all refused', async () => {
    // A fresh login: earlier tests moved the shared clock past the first seller's session.
    const seller = await newSeller(live);
    const badTokens = mutations(seller.token, 1000, (m) => m.toLowerCase() === seller.token);
    const badCookies = mutations(seller.cookie, 1000);
    assert.equal(badTokens.length, 1000);
    assert.equal(badCookies.length, 1000);
    let refused = 0;
    for (let i = 0; i < badTokens.length; i += 50) {
      const batch = [
        ...badTokens.slice(i, i + 50).map((t) => serviceDocument({ SubscriptionToken: t, Cookie: `.ASPXAUTH=${seller.cookie}` })),
        ...badCookies.slice(i, i + 50).map((c) => serviceDocument({ SubscriptionToken: seller.token, Cookie: `.ASPXAUTH=${c}` })),
      ];
      for (const res of await Promise.all(batch)) if (res.status === 401) refused++;
    }
    assert.equal(refused, 2000);
    // The real pair still works.
    assert.equal((await asSeller(seller, live.root + '/')).status, 200);
  });
});

describe('throttling', () => {
  test('failed logins per user name are throttled with 429 and Retry-After, even for the right password', async () => {
    const s = await newSeller(live, 'throttled');
    let throttled: HttpResponse | undefined;
    for (let i = 0; i < 10 && !throttled; i++) {
      const res = await postLogin({ userName: s.userName, password: 'wrong-password', createPersistentCookie: false }, { Accept: 'application/json' });
      if (res.status === 429) throttled = res;
      else assert.equal(res.body, '{"d":false}');
    }
    assert.ok(throttled, 'no 429 after 10 failures');
    assert.ok(Number(throttled.headers['retry-after']) > 0);
    assert.match((JSON.parse(throttled.body) as { error: { message: { value: string } } }).error.message.value, /Too many failed logins/);
    const right = await postLogin({ userName: s.userName, password: s.password, createPersistentCookie: false });
    assert.equal(right.status, 429);
    // Other accounts are not affected by this user's block.
    assert.ok(await login(live, seller.userName, seller.password));
    // Once the block has passed the right password works again.
    clock.advance(16 * 60_000);
    assert.ok(await login(live, s.userName, s.password));
  });
});

describe('logging', () => {
  test('one line per request with method, path, status, ms and request id; no secrets', async () => {
    const seller = await newSeller(live, 'logged');
    const before = live.logLines.length;
    await asSeller(seller, live.root + '/?$format=json');
    const line = live.logLines.slice(before).find((l) => l.path === '/publicapi/v1/api.svc/');
    assert.ok(line, 'no log line for the request');
    assert.equal(line.method, 'GET');
    assert.equal(line.status, 200);
    assert.equal(typeof line.ms, 'number');
    assert.match(String(line.reqId), /^[a-z0-9]+-[a-z0-9]+$/);
    const everything = JSON.stringify(live.logLines);
    assert.ok(!everything.includes(seller.token), 'a token was logged');
    assert.ok(!everything.includes(seller.cookie), 'a cookie was logged');
    assert.ok(!everything.includes(seller.password), 'a password was logged');
  });
});

describe('the SubscriptionToken in any case', () => {
  /** The token with every other hex letter upper-cased. */
  const mixedCase = (token: string) => [...token].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');

  test('login, then requests with the token upper-cased or in mixed case, as a .NET client may send a GUID', async () => {
    const s = await newSeller(live, 'upper');
    // The .NET client's login carries the token too.
    const res = await postLogin({ userName: s.userName, password: s.password, createPersistentCookie: false }, { SubscriptionToken: s.token.toUpperCase(), Accept: 'application/json' });
    assert.equal(res.body, '{"d":true}');
    const cookie = /^\.ASPXAUTH=([^;]+);/.exec(res.headers['set-cookie']![0]!)![1]!;
    for (const token of [s.token.toUpperCase(), mixedCase(s.token)]) {
      const auth = { SubscriptionToken: token, Cookie: `.ASPXAUTH=${cookie}` };
      assert.equal((await serviceDocument(auth)).status, 200, token);
      const atom = await request(live.root + '/Catalogs', { headers: auth });
      assert.equal(atom.status, 200);
      assert.match(atom.body, /<feed /);
      const created = await request(live.root + '/Catalogs', { method: 'POST', headers: { ...auth, Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify({ Name: `Katalog ${token}` }) });
      assert.equal(created.status, 201, created.body);
      const id = (JSON.parse(created.body) as { d: { Id: string } }).d.Id;
      // The same account as the issued (lower-case) token.
      const back = await asSeller({ ...s, auth: { SubscriptionToken: s.token, Cookie: `.ASPXAUTH=${cookie}` } }, `${live.root}/Catalogs(${id}L)`, { headers: { Accept: 'application/json' } });
      assert.equal(back.status, 200);
      assert.equal((JSON.parse(back.body) as { d: { Name: string } }).d.Name, `Katalog ${token}`);
    }
  });

  test('a token revoked in upper case is revoked in every case', async () => {
    const s = await newSeller(live, 'revoked');
    const { app } = live.service;
    assert.equal(await revokeToken(app.store, app.clock, s.token.toUpperCase()), true);
    for (const token of [s.token, s.token.toUpperCase(), mixedCase(s.token)]) {
      assert.equal((await serviceDocument({ SubscriptionToken: token, Cookie: `.ASPXAUTH=${s.cookie}` })).status, 401, token);
    }
  });
});

describe('every 401 names the scheme in WWW-Authenticate', () => {
  const CHALLENGE = 'SubscriptionToken realm="publicapi"';
  const FORMATS: { name: string; headers: Record<string, string>; contentType: RegExp; body: RegExp }[] = [
    { name: 'Atom', headers: {}, contentType: /^application\/xml;charset=utf-8$/, body: /^<\?xml [^>]*\?><error xmlns="http:\/\/schemas\.microsoft\.com\/ado\/2007\/08\/dataservices\/metadata">/ },
    { name: 'JSON', headers: { Accept: 'application/json' }, contentType: /^application\/json;charset=utf-8$/, body: /^\{"error":\{"code":"","message":\{"lang":"en-US","value":"[^"]*SubscriptionToken/ },
  ];

  /** The service document, a feed, $metadata and a $batch with the given credentials, in both formats. */
  async function assertChallenged(what: string, auth: Record<string, string>): Promise<void> {
    for (const format of FORMATS) {
      const headers = { ...auth, ...format.headers };
      const answers = [
        await request(live.root + '/', { headers }),
        await request(live.root + '/Products?$top=1', { headers }),
        await request(live.root + '/$metadata', { headers }),
        await request(live.root + '/$batch', { method: 'POST', headers: { ...headers, 'Content-Type': 'multipart/mixed; boundary=b' }, body: '--b--\r\n' }),
      ];
      for (const res of answers) {
        const label = `${what}, ${format.name}`;
        assert.equal(res.status, 401, label);
        assert.equal(res.headers['www-authenticate'], CHALLENGE, label);
        assert.match(String(res.headers['content-type']), format.contentType, label);
        assert.match(res.body, format.body, label);
        assert.equal(res.headers.location, undefined, 'never a redirect');
      }
    }
  }

  test('missing, wrong, foreign or malformed credentials, unknown, logged-out and expired sessions', async () => {
    const s = await newSeller(live, 'challenged');
    const other = await newSeller(live, 'other');
    const cookie = `.ASPXAUTH=${s.cookie}`;
    await assertChallenged('no credentials', {});
    await assertChallenged('no SubscriptionToken', { Cookie: cookie });
    await assertChallenged('no session cookie', { SubscriptionToken: s.token });
    await assertChallenged('an empty SubscriptionToken', { SubscriptionToken: '', Cookie: cookie });
    await assertChallenged('a token never issued', { SubscriptionToken: newSubscriptionToken(), Cookie: cookie });
    await assertChallenged('a malformed token', { SubscriptionToken: `{${s.token}}`, Cookie: cookie });
    await assertChallenged("another account's token", { SubscriptionToken: other.token, Cookie: cookie });
    await assertChallenged('an unknown session', { SubscriptionToken: s.token, Cookie: `.ASPXAUTH=${newSessionValue()}` });

    const out = await newSeller(live, 'logged-out');
    await request(live.origin + AXD + '/Logout', { method: 'POST', headers: { Cookie: `.ASPXAUTH=${out.cookie}` }, body: '{}' });
    await assertChallenged('a logged-out session', out.auth);

    assert.equal((await serviceDocument(s.auth)).status, 200, 'the real pair works');
    clock.advance(21 * 60_000);
    await assertChallenged('an expired session', s.auth);
  });
});
