/**
 * A write of the entity sets whose session this process has met goes on its claim, as a GET
 * does (read-guard.test.ts): the credential check is the first statement of the write's own
 * transaction (WriteOptions.guard). Seen from the client nothing may differ from checking first:
 * wrong or revoked credentials answer 401 whatever the body holds, and nothing is written; a
 * logout or a revocation from anywhere takes effect on the next write; a refused write that
 * shares its COMMIT with another one of the same account takes nothing of that one with it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { request } from '../support/http-client';
import { createEntity, JSON_HEADERS } from '../support/live-client';
import { odataError } from '../support/odata-error';
import { createToken, revokeToken } from '../../src/auth/accounts';

let live: LiveService;
let seller: Seller;
let other: Seller;
let productId: string;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'wguard');
  other = await newSeller(live, 'wguard-other');
  productId = await createEntity(live, seller, 'Products', { ForeignId: 'WG-1', Title: 'Guarded', Price: '1.00', StockAmount: 1 });
});

after(() => live.close());

const send = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  request(`${live.root}/${path}`, { method, headers: { ...JSON_HEADERS, ...headers }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });

/** Writes that, with good credentials, answer 201, 204, 400 and 404. */
const writes = (n: number) =>
  [
    ['POST', 'Products', { ForeignId: `WG-NEW-${n}`, Title: 'new', Price: '1.00', StockAmount: 1 }],
    ['MERGE', `Products(${productId}L)`, { StockAmount: 100 + n }],
    ['POST', 'Products', { Title: 'no price', Price: 'not a number' }],
    ['MERGE', 'Products(999999999L)', { StockAmount: 1 }],
  ] as const;

async function sellerRows(): Promise<string> {
  return JSON.stringify(await tenantRows(live, seller.accountId));
}

test("a session met before with a wrong token, or another account's token, is a 401 on every write, and nothing is written", async () => {
  const wrongToken = { ...seller.auth, SubscriptionToken: '00000000-0000-0000-0000-000000000000' };
  const othersToken = { ...seller.auth, SubscriptionToken: other.token };
  const before = await sellerRows();
  let n = 0;
  for (const headers of [wrongToken, othersToken]) {
    for (const [method, path, body] of writes(++n)) {
      const res = await send(method, path, headers, body);
      assert.equal(res.status, 401, `${method} ${path}: ${res.body}`);
      assert.match(odataError(res).message, /Authentication required/);
    }
    const del = await send('DELETE', `Products(${productId}L)`, headers);
    assert.equal(del.status, 401, del.body);
  }
  assert.equal(await sellerRows(), before, 'no row of the account changed');
  // The right credentials write, with the answers the paths deserve.
  assert.deepEqual(await Promise.all(writes(++n).map(async ([method, path, body]) => (await send(method, path, seller.auth, body)).status)), [201, 204, 400, 404]);
});

test('a token revoked and a session ended elsewhere are refused on the very next write', async () => {
  const { app } = live.service;
  const token = await createToken(app.store, app.clock, seller.userName);
  const withToken = { ...seller.auth, SubscriptionToken: token };
  assert.equal((await send('MERGE', `Products(${productId}L)`, withToken, { StockAmount: 7 })).status, 204);
  // Revoked straight in the database, as `catalogue token revoke` does from another process.
  assert.ok(await revokeToken(app.store, app.clock, token));
  const before = await sellerRows();
  assert.equal((await send('MERGE', `Products(${productId}L)`, withToken, { StockAmount: 8 })).status, 401);
  assert.equal((await send('POST', 'Products', withToken, { ForeignId: 'WG-REVOKED', Title: 'x', Price: '1.00', StockAmount: 1 })).status, 401);
  assert.equal(await sellerRows(), before);

  assert.equal((await send('MERGE', `Products(${productId}L)`, seller.auth, { StockAmount: 9 })).status, 204);
  // The session row is deleted behind this process's back (another process's logout).
  await app.store.writeDirectory((tx) => tx.run('DELETE FROM sessions WHERE account_id = ?', [seller.accountId]));
  const afterLogout = await sellerRows();
  assert.equal((await send('DELETE', `Products(${productId}L)`, seller.auth)).status, 401);
  assert.equal((await send('POST', 'Products', seller.auth, { ForeignId: 'WG-LOGGED-OUT', Title: 'x', Price: '1.00', StockAmount: 1 })).status, 401);
  assert.equal(await sellerRows(), afterLogout);
});

test('a refused write and an accepted one of the same account, arriving together: the accepted one is kept alone', async () => {
  const writer = await newSeller(live, 'wguard-batch');
  const good = writer.auth;
  // Met before by this process, so the wrong token's write goes on its claim too.
  assert.equal((await send('POST', 'Products', good, { ForeignId: 'WB-0', Title: 'first', Price: '1.00', StockAmount: 1 })).status, 201);
  const bad = { ...good, SubscriptionToken: '00000000-0000-0000-0000-000000000000' };
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) => send('POST', 'Products', i % 2 === 0 ? good : bad, { ForeignId: `WB-${i + 1}`, Title: `t${i}`, Price: '1.00', StockAmount: 1 })),
  );
  assert.deepEqual(answers.map((a) => a.status), [201, 401, 201, 401, 201, 401, 201, 401]);
  const products = (await tenantRows(live, writer.accountId)).products ?? [];
  const foreignIds = products.map((row) => String((JSON.parse(row) as { foreign_id: unknown }).foreign_id)).sort();
  assert.deepEqual(foreignIds, ['WB-0', 'WB-1', 'WB-3', 'WB-5', 'WB-7']);
});
