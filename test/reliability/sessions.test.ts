/**
 * Sessions and brute force over real HTTP, from the attacker's side. What test/auth/* already
 * proves (cookie attributes, expiry, IsLoggedIn, the throttle's arithmetic on the service layer,
 * the per-user 429 once) is not repeated; this suite adds:
 * - session fixation: a session value the client chose, or one it held before logging in (its
 *   own, another account's, a logged-out one), is never accepted or promoted: every login issues
 *   a fresh value, and nothing before a login issues any;
 * - replay after logout: the old cookie answers 401 everywhere under api.svc ($metadata, sets,
 *   $batch, service operations), in both formats, also after the account logs in again;
 * - throttling through HTTP per (user name, address) and per client address (distinct loopback
 *   addresses 127.0.0.x stand for distinct clients): the exact 429, its Retry-After (30 s, then
 *   doubling), its OData error in the request's format, and that one address's block leaves
 *   others alone; wrong passwords from many other addresses never refuse the seller's own
 *   login; a burst of 20 simultaneous guesses at one name from one address gets exactly 5
 *   passwords verified;
 * - an unknown user and a wrong password get byte-identical answers (status, every header but
 *   Date, body), before and during a block; their timings are reported, not asserted.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../../src/clock';
import { createAccount } from '../../src/auth/accounts';
import { reportFigures } from '../support/figures';
import { request, type HttpResponse } from '../support/http-client';
import { byTier } from '../support/tier';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { errorMessage } from '../support/odata-error';

const AXD = '/Authentication_JSON_AppService.axd';
const MINUTE = 60_000;

function loginRequest(live: LiveService, userName: string, password: string, options: { from?: string; headers?: Record<string, string> } = {}): Promise<HttpResponse> {
  return request(live.origin + AXD + '/Login', {
    localAddress: options.from ?? '127.0.0.1',
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(options.headers ?? {}) },
    body: JSON.stringify({ userName, password, createPersistentCookie: false }),
  });
}

function cookieOf(res: HttpResponse): string | undefined {
  const m = /^\.ASPXAUTH=([^;]*);/.exec(res.headers['set-cookie']?.[0] ?? '');
  return m ? m[1] : undefined;
}

/** A well-formed session value nobody was issued (43 base64url characters). */
const chosenSessionValue = () => randomBytes(32).toString('base64url');

/** Every header but Date (and the connection bookkeeping that depends on the socket, not the answer). */
function comparableHeaders(res: HttpResponse): Record<string, unknown> {
  const { date: _date, ...rest } = res.headers;
  return rest;
}

const figures: Record<string, number> = {};

describe('session fixation', () => {
  let live: LiveService;
  let seller: Seller;
  let other: Seller;
  before(async () => {
    live = await startLive();
    seller = await newSeller(live, 'fixation');
    other = await newSeller(live, 'fixation-other');
  });
  after(() => live.close());

  test('nothing before a login issues a session: anonymous calls, failed logins and refused requests set no cookie', async () => {
    const answers = [
      await request(live.origin + AXD + '/IsLoggedIn', { method: 'POST' }),
      await request(live.origin + AXD + '/Logout', { method: 'POST' }),
      await loginRequest(live, seller.userName, 'not-the-password'),
      await loginRequest(live, 'nobody-' + process.pid, 'whatever'),
      await request(live.root + '/'),
      await request(live.root + '/Products', { headers: { SubscriptionToken: seller.token } }),
    ];
    for (const res of answers) {
      const cookie = cookieOf(res);
      // Logout clears the cookie (an empty value that expired in 1970); nothing sets a value.
      assert.ok(cookie === undefined || cookie === '', `a cookie was issued without a login: ${String(res.headers['set-cookie'])}`);
    }
  });

  test('a session value chosen by the client is ignored by Login and never accepted afterwards', async () => {
    const chosen = chosenSessionValue();
    const res = await loginRequest(live, seller.userName, seller.password, { headers: { Cookie: `.ASPXAUTH=${chosen}` } });
    assert.equal(res.body, '{"d":true}');
    const issued = cookieOf(res);
    assert.ok(issued, 'the login issued a cookie');
    assert.notEqual(issued, chosen, 'the login kept the value the client chose');
    const withChosen = await request(live.root + '/', { headers: { SubscriptionToken: seller.token, Cookie: `.ASPXAUTH=${chosen}` } });
    assert.equal(withChosen.status, 401);
    assert.equal((await request(live.origin + AXD + '/IsLoggedIn', { method: 'POST', headers: { Cookie: `.ASPXAUTH=${chosen}` } })).body, '{"d":false}');
    assert.equal((await request(live.root + '/', { headers: { SubscriptionToken: seller.token, Cookie: `.ASPXAUTH=${issued}` } })).status, 200);
    figures.fixationCases = (figures.fixationCases ?? 0) + 1;
  });

  test("a login carrying another account's live session gets a fresh one; the planted one is not promoted", async () => {
    // The attacker's own live session is planted in the victim's browser before the victim logs in.
    const planted = other.cookie;
    const res = await loginRequest(live, seller.userName, seller.password, { headers: { Cookie: `.ASPXAUTH=${planted}` } });
    const issued = cookieOf(res);
    assert.ok(issued);
    assert.notEqual(issued, planted);
    // The planted session still belongs to the attacker's account only: with the victim's token it is refused.
    const victimWithPlanted = await request(live.root + '/', { headers: { SubscriptionToken: seller.token, Cookie: `.ASPXAUTH=${planted}` } });
    assert.equal(victimWithPlanted.status, 401);
    assert.equal((await asSeller(other, live.root + '/')).status, 200);
    // The victim's new session does not serve the attacker's token either.
    assert.equal((await request(live.root + '/', { headers: { SubscriptionToken: other.token, Cookie: `.ASPXAUTH=${issued}` } })).status, 401);
    figures.fixationCases = (figures.fixationCases ?? 0) + 1;
  });

  test('a login carrying its own earlier session, or a logged-out one, still gets a new value', async () => {
    const first = cookieOf(await loginRequest(live, seller.userName, seller.password));
    assert.ok(first);
    const second = cookieOf(await loginRequest(live, seller.userName, seller.password, { headers: { Cookie: `.ASPXAUTH=${first}` } }));
    assert.ok(second);
    assert.notEqual(second, first);
    await request(live.origin + AXD + '/Logout', { method: 'POST', headers: { Cookie: `.ASPXAUTH=${second}` } });
    const third = cookieOf(await loginRequest(live, seller.userName, seller.password, { headers: { Cookie: `.ASPXAUTH=${second}` } }));
    assert.ok(third);
    assert.notEqual(third, second);
    assert.equal((await request(live.root + '/', { headers: { SubscriptionToken: seller.token, Cookie: `.ASPXAUTH=${second}` } })).status, 401, 'the logged-out value came back to life');
    figures.fixationCases = (figures.fixationCases ?? 0) + 2;
  });
});

describe('replay after logout', () => {
  let live: LiveService;
  before(async () => {
    live = await startLive();
  });
  after(() => live.close());

  test('the old cookie answers 401 on every kind of resource, in both formats, also after a new login', async () => {
    const seller = await newSeller(live, 'replay');
    const second = await newSeller(live, 'replay-untouched');
    const created = await asSeller(seller, live.root + '/Catalogs', {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify({ Name: 'before logout' }),
    });
    assert.equal(created.status, 201, created.body);
    const catalogId = String((JSON.parse(created.body) as { d: { Id: string } }).d.Id);
    const batchBody = (boundary: string) =>
      `--${boundary}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nGET Catalogs HTTP/1.1\r\n\r\n\r\n--${boundary}--\r\n`;
    const attempts: { method: string; path: string; headers?: Record<string, string>; body?: string }[] = [
      { method: 'GET', path: '/' },
      { method: 'GET', path: '/$metadata' },
      { method: 'GET', path: '/Catalogs' },
      { method: 'GET', path: `/Catalogs(${catalogId}L)` },
      { method: 'MERGE', path: `/Catalogs(${catalogId}L)`, headers: { 'Content-Type': 'application/json' }, body: '{"Name":"replayed"}' },
      { method: 'DELETE', path: `/Catalogs(${catalogId}L)` },
      { method: 'POST', path: '/Catalogs', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"replayed"}' },
      { method: 'GET', path: '/ProductIsListed?productId=1L' },
      { method: 'POST', path: '/$batch', headers: { 'Content-Type': 'multipart/mixed; boundary=b1' }, body: batchBody('b1') },
    ];
    // Works before the logout.
    for (const a of attempts.filter((x) => x.method === 'GET')) {
      const res = await asSeller(seller, live.root + a.path);
      assert.ok(res.status === 200 || res.status === 404, `${a.path} before logout: ${res.status}`);
    }
    const logout = await request(live.origin + AXD + '/Logout', { method: 'POST', headers: { Cookie: seller.auth.Cookie! } });
    assert.equal(logout.body, '{"d":null}');
    assert.match(String(logout.headers['set-cookie']), /^\.ASPXAUTH=; expires=Thu, 01 Jan 1970/);
    let replays = 0;
    const check = async (label: string) => {
      for (const a of attempts) {
        for (const accept of ['application/json', 'application/atom+xml']) {
          const res = await request(live.root + a.path, { method: a.method, headers: { ...seller.auth, Accept: accept, ...(a.headers ?? {}) }, ...(a.body ? { body: a.body } : {}) });
          replays++;
          assert.equal(res.status, 401, `${label}: ${a.method} ${a.path} (${accept}) answered ${res.status}`);
          assert.equal(res.headers.location, undefined);
          assert.match(errorMessage(res), /SubscriptionToken/);
        }
      }
      assert.equal((await request(live.origin + AXD + '/IsLoggedIn', { method: 'POST', headers: { Cookie: seller.auth.Cookie! } })).body, '{"d":false}');
    };
    await check('after logout');
    // A second logout with the dead cookie is harmless and still answers the same.
    assert.equal((await request(live.origin + AXD + '/Logout', { method: 'POST', headers: { Cookie: seller.auth.Cookie! } })).status, 200);
    // Logging in again issues a new session; the old value stays dead.
    const fresh = await loginRequest(live, seller.userName, seller.password);
    assert.ok(cookieOf(fresh));
    await check('after a new login');
    // Nothing the replays tried was done.
    const still = await request(live.root + `/Catalogs(${catalogId}L)`, {
      headers: { SubscriptionToken: seller.token, Cookie: `.ASPXAUTH=${cookieOf(fresh)!}`, Accept: 'application/json' },
    });
    assert.equal(still.status, 200);
    assert.equal((JSON.parse(still.body) as { d: { Name: string } }).d.Name, 'before logout');
    const all = await request(live.root + '/Catalogs/$count', { headers: { SubscriptionToken: seller.token, Cookie: `.ASPXAUTH=${cookieOf(fresh)!}` } });
    assert.equal(all.body, '1');
    // Another account's session was not touched by this one's logout.
    assert.equal((await asSeller(second, live.root + '/')).status, 200);
    figures.replayRequests = replays;
  });
});

describe('throttling over HTTP', () => {
  let live: LiveService;
  const clock = new ManualClock(Date.UTC(2026, 10, 23, 9, 0, 0));
  before(async () => {
    live = await startLive({ clock });
  });
  after(() => live.close());

  async function account(userName: string): Promise<{ userName: string; password: string }> {
    const password = `${userName}-password`;
    await createAccount(live.service.app.store, clock, { userName, password });
    return { userName, password };
  }

  test('per user name and address: the 6th attempt is a 429 with Retry-After 30, as XML or JSON; after the block one more failure blocks for 60 s', async () => {
    const victim = await account(`throttle-user-${process.pid}`);
    const from = '127.0.0.11';
    for (let i = 1; i <= 5; i++) {
      const res = await loginRequest(live, victim.userName, `guess-${i}`, { from });
      assert.equal(res.status, 200, `attempt ${i}`);
      assert.equal(res.body, '{"d":false}');
    }
    const xml = await loginRequest(live, victim.userName, victim.password, { from });
    assert.equal(xml.status, 429, 'the right password during the block is throttled too');
    assert.equal(xml.headers['retry-after'], '30');
    assert.equal(xml.headers['set-cookie'], undefined);
    assert.equal(xml.headers['content-type'], 'application/xml;charset=utf-8');
    assert.match(errorMessage(xml), /Too many failed logins/);
    const json = await loginRequest(live, victim.userName, 'guess', { from, headers: { Accept: 'application/json' } });
    assert.equal(json.status, 429);
    assert.equal(json.headers['content-type'], 'application/json;charset=utf-8');
    assert.match(errorMessage(json), /Too many failed logins/);
    assert.ok(Number(json.headers['retry-after']) <= 30 && Number(json.headers['retry-after']) >= 1);
    // The block is per (user name, address): from an address with no failures the seller logs in.
    const elsewhere = await loginRequest(live, victim.userName, victim.password, { from: '127.0.0.12' });
    assert.equal(elsewhere.body, '{"d":true}', 'a clean address is not refused for failures made elsewhere');
    clock.advance(29_000);
    assert.equal((await loginRequest(live, victim.userName, victim.password, { from })).headers['retry-after'], '1');
    clock.advance(2_000);
    // The block is over; another failure in the same run blocks again, for twice as long.
    assert.equal((await loginRequest(live, victim.userName, 'guess-6', { from })).body, '{"d":false}');
    const again = await loginRequest(live, victim.userName, victim.password, { from });
    assert.equal(again.status, 429);
    assert.equal(again.headers['retry-after'], '60');
    clock.advance(61_000);
    const ok = await loginRequest(live, victim.userName, victim.password, { from });
    assert.equal(ok.body, '{"d":true}');
    assert.ok(cookieOf(ok));
    figures.userLimit = 5;
    clock.advance(16 * MINUTE);
  });

  test('per address: 20 failures over 20 user names block that address for every name, the right password too; other addresses are free', async () => {
    const spraying = '127.0.0.21';
    const target = await account(`throttle-address-${process.pid}`);
    for (let i = 1; i <= 20; i++) {
      const res = await loginRequest(live, `sprayed-${i}-${process.pid}`, 'password1', { from: spraying });
      assert.equal(res.body, '{"d":false}', `attempt ${i} from the spraying address`);
    }
    const blocked = await loginRequest(live, target.userName, target.password, { from: spraying, headers: { Accept: 'application/json' } });
    assert.equal(blocked.status, 429);
    assert.equal(blocked.headers['retry-after'], '30');
    assert.match(errorMessage(blocked), /Too many failed logins/);
    // The user name itself was never guessed: from another address it logs in.
    const elsewhere = await loginRequest(live, target.userName, target.password, { from: '127.0.0.22' });
    assert.equal(elsewhere.body, '{"d":true}');
    figures.addressLimit = 20;
    clock.advance(16 * MINUTE);
  });

  test('a burst of 20 simultaneous guesses at one user name from one address gets exactly 5 verified; the other 15 are 429', async () => {
    const victim = await account(`throttle-burst-${process.pid}`);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => loginRequest(live, victim.userName, `burst-${i}`, { from: '127.0.3.1' })),
    );
    const verified = answers.filter((r) => r.status === 200);
    const throttled = answers.filter((r) => r.status === 429);
    assert.equal(verified.length, 5, `verified: ${verified.length}`);
    for (const r of verified) assert.equal(r.body, '{"d":false}');
    assert.equal(throttled.length, 15);
    for (const r of throttled) assert.ok(Number(r.headers['retry-after']) >= 1 && Number(r.headers['retry-after']) <= 30);
    figures.burstVerified = verified.length;
    clock.advance(16 * MINUTE);
  });

  test("wrong passwords from other addresses leave the seller's own login working; guessing from one address is still slowed", async () => {
    const seller = await account(`throttle-outsider-${process.pid}`);
    const own = '127.0.4.1';
    const attackers = Array.from({ length: 6 }, (_, i) => `127.0.4.${10 + i}`);
    const verified: Record<string, number> = {};
    for (let round = 0; round < 3; round++) {
      for (const from of attackers) {
        for (let i = 0; i < 7; i++) {
          const res = await loginRequest(live, seller.userName, `guess-${round}-${i}`, { from });
          if (res.status === 200) {
            assert.equal(res.body, '{"d":false}');
            verified[from] = (verified[from] ?? 0) + 1;
          } else {
            assert.equal(res.status, 429, res.body);
            assert.equal(res.headers['set-cookie'], undefined);
          }
        }
        // Guessing from one address is slowed: never more than 5 verified per window and address.
        assert.ok((verified[from] ?? 0) <= 5 * (round + 1), `${from}: ${verified[from]} guesses verified by round ${round}`);
      }
      // The name is over its ceiling: a guessing address is refused it, even with the right password.
      const guesser = await loginRequest(live, seller.userName, seller.password, { from: attackers.at(-1) });
      assert.equal(guesser.status, 429, `round ${round}`);
      // The seller's connector, from its own address, logs in every round, with a new session.
      const mine = await loginRequest(live, seller.userName, seller.password, { from: own });
      assert.equal(mine.status, 200, mine.body);
      assert.equal(mine.body, '{"d":true}');
      assert.ok(cookieOf(mine));
      clock.advance(4 * MINUTE);
    }
    figures.outsiderAddresses = attackers.length;
    figures.outsiderGuessesVerified = Object.values(verified).reduce((a, b) => a + b, 0);
    clock.advance(16 * MINUTE);
  });

  test('an unknown user and a wrong password are byte-identical, before and during a block; timings reported', async (t) => {
    const known = await account(`identical-${process.pid}`);
    const rounds = byTier(8, 40);
    const unknownMs: number[] = [];
    const wrongMs: number[] = [];
    let compared = 0;
    for (let i = 0; i < rounds; i++) {
      // One address per round, and the clock moved on, so no throttle is in play.
      const from = `127.0.1.${10 + i}`;
      const order = i % 2 === 0 ? ['unknown', 'wrong'] : ['wrong', 'unknown'];
      const answers: Record<string, HttpResponse> = {};
      for (const which of order) {
        const started = performance.now();
        answers[which] =
          which === 'unknown'
            ? await loginRequest(live, `nobody-${i}-${process.pid}`, known.password, { from })
            : await loginRequest(live, known.userName, `wrong-${i}`, { from });
        (which === 'unknown' ? unknownMs : wrongMs).push(performance.now() - started);
      }
      assert.equal(answers.unknown!.status, answers.wrong!.status);
      assert.deepEqual(comparableHeaders(answers.unknown!), comparableHeaders(answers.wrong!));
      assert.equal(answers.unknown!.body, answers.wrong!.body);
      assert.equal(answers.wrong!.body, '{"d":false}');
      compared++;
      clock.advance(16 * MINUTE);
    }
    // During a block both are the same 429 as well.
    const from = '127.0.2.1';
    const unknownName = `nobody-blocked-${process.pid}`;
    for (let i = 0; i < 5; i++) {
      await loginRequest(live, known.userName, `wrong-${i}`, { from });
      await loginRequest(live, unknownName, `wrong-${i}`, { from: '127.0.2.2' });
    }
    const wrongBlocked = await loginRequest(live, known.userName, 'x', { from, headers: { Accept: 'application/json' } });
    const unknownBlocked = await loginRequest(live, unknownName, 'x', { from: '127.0.2.2', headers: { Accept: 'application/json' } });
    assert.equal(wrongBlocked.status, 429);
    assert.equal(unknownBlocked.status, 429);
    assert.deepEqual(comparableHeaders(unknownBlocked), comparableHeaders(wrongBlocked));
    assert.equal(unknownBlocked.body, wrongBlocked.body);
    compared++;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    figures.identicalPairs = compared;
    figures.unknownUserMedianMs = Math.round(median(unknownMs) * 10) / 10;
    figures.wrongPasswordMedianMs = Math.round(median(wrongMs) * 10) / 10;
    figures.timingRatio = Math.round((median(unknownMs) / median(wrongMs)) * 100) / 100;
    // The last test of the file: every describe above has run and left its figures.
    reportFigures('sessions', figures, t);
  });
});
