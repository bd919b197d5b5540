/**
 * The audit trail of the live service: logins (success, failure, throttled), logouts and
 * DeleteAccountData (on its own and inside a $batch changeset) are info-level structured events
 * with the account id (the user name where a failed login names no account) and the client
 * address; no log line at all holds the password, the token or the session cookie.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../support/http-client';
import { asSeller, login, newSeller, startLive, type LiveService } from '../support/live-service';

let live: LiveService;
before(async () => {
  live = await startLive();
});
after(() => live.close());

const LOGIN = '/Authentication_JSON_AppService.axd/Login';
const audits = (event: string) => live.logLines.filter((l) => l.audit === event);

test('logins, failed and throttled logins, logouts and DeleteAccountData are audit events; no secret is logged', async () => {
  const s = await newSeller(live, 'audited');
  const address = '127.0.0.7';
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    request(live.origin + path, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body), localAddress: address });

  const ok = await post(LOGIN, { userName: s.userName, password: s.password, createPersistentCookie: false });
  const cookie = /\.ASPXAUTH=([^;]+)/.exec(ok.headers['set-cookie']![0]!)![1]!;
  const wrong = 'not-the-right-password';
  for (let i = 0; i < 5; i++) assert.equal((await post(LOGIN, { userName: s.userName, password: wrong })).body, '{"d":false}');
  assert.equal((await post(LOGIN, { userName: s.userName, password: wrong })).status, 429);
  await post('/Authentication_JSON_AppService.axd/Logout', {}, { Cookie: `.ASPXAUTH=${cookie}` });

  const deleted = await asSeller(s, `${live.root}/DeleteAccountData?type=2`, { method: 'POST', body: '' });
  assert.equal(deleted.status, 200, deleted.body);
  const batch = ['--b', 'Content-Type: multipart/mixed; boundary=cs', '', '--cs', 'Content-Type: application/http', 'Content-Transfer-Encoding: binary', '', 'POST DeleteAccountData?type=4 HTTP/1.1', '', '', '--cs--', '--b--', ''].join('\r\n');
  const batched = await asSeller(s, `${live.root}/$batch`, { method: 'POST', headers: { 'Content-Type': 'multipart/mixed; boundary=b' }, body: batch, localAddress: address });
  assert.equal(batched.status, 202, batched.body);
  assert.match(batched.body, /HTTP\/1\.1 200/);

  const pick = (l: Record<string, unknown>) => [l.level, l.accountId ?? l.userName, l.clientAddress];
  assert.deepEqual(audits('login').filter((l) => l.clientAddress === address).map(pick), [[30, s.accountId, address]]);
  assert.deepEqual(audits('login failed').map(pick), Array(5).fill([30, s.userName, address]));
  assert.deepEqual(audits('login throttled').map(pick), [[30, s.userName, address]]);
  assert.deepEqual(audits('logout').map(pick), [[30, s.accountId, address]]);
  assert.deepEqual(audits('account data deleted').map((l) => [...pick(l), l.type]), [
    [30, s.accountId, '127.0.0.1', '2'],
    [30, s.accountId, address, '4'],
  ]);

  const everything = live.logLines.map((l) => JSON.stringify(l)).join('\n');
  for (const secret of [s.password, wrong, s.token, cookie, s.cookie]) assert.ok(!everything.includes(secret), 'no log line holds a secret');
  // The throttled address is still refused, as the audit says (throttling is per user name and
  // address: the seller's own login from another address is not refused by these failures).
  assert.equal((await post(LOGIN, { userName: s.userName, password: s.password })).status, 429, 'still throttled');
  assert.ok(await login(live, s.userName, s.password), 'another address logs in');
});
