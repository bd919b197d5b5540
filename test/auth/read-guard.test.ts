/**
 * A GET whose session this process has met goes on its claim: the credential check is the first
 * statement of the read itself (src/auth/sessions.ts, CredentialGuard). Seen from the client,
 * nothing may differ from checking first: wrong or revoked credentials answer 401 whatever the
 * path and query hold (never a 404 or 400 that tells a stranger about the service), a logout or a
 * revocation from anywhere takes effect on the next request, and the right credentials read.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { request } from '../support/http-client';
import { createEntity } from '../support/live-client';
import { odataError } from '../support/odata-error';
import { createToken, revokeToken } from '../../src/auth/accounts';

let live: LiveService;
let seller: Seller;
let other: Seller;
let productId: string;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'guard');
  other = await newSeller(live, 'guard-other');
  productId = await createEntity(live, seller, 'Products', { ForeignId: 'G-1', Title: 'Guarded', Price: '1.00', StockAmount: 1 });
});

after(() => live.close());

const get = (path: string, headers: Record<string, string>) => request(`${live.root}/${path}`, { headers: { Accept: 'application/json', ...headers } });

/** Paths that, with good credentials, answer 200, 404, 400 and 200 (a collection). */
const paths = () => [`Products(${productId}L)`, 'NoSuchSet', "Products?$filter=NoSuchProperty eq 1", 'Products?$top=1'];

test('the right credentials read; a session met before with a wrong token, or another account\'s token, is a 401 on every path', async () => {
  assert.deepEqual(
    await Promise.all(paths().map(async (p) => (await get(p, seller.auth)).status)),
    [200, 404, 400, 200],
  );
  const wrongToken = { ...seller.auth, SubscriptionToken: '00000000-0000-0000-0000-000000000000' };
  const othersToken = { ...seller.auth, SubscriptionToken: other.token };
  for (const headers of [wrongToken, othersToken]) {
    for (const path of paths()) {
      const res = await get(path, headers);
      assert.equal(res.status, 401, `${path}: ${res.body}`);
      assert.match(odataError(res).message, /Authentication required/);
      assert.ok(!res.body.includes('Guarded') && !res.body.includes('NoSuch'), res.body);
    }
  }
  // The other seller's own credentials do not reach this seller's product.
  assert.equal((await get(`Products(${productId}L)`, other.auth)).status, 404);
});

test('a token revoked and a session ended elsewhere are refused on the very next GET', async () => {
  const { app } = live.service;
  const token = await createToken(app.store, app.clock, seller.userName);
  const withToken = { ...seller.auth, SubscriptionToken: token };
  assert.equal((await get(`Products(${productId}L)`, withToken)).status, 200);
  // Revoked straight in the database, as `catalogue token revoke` does from another process.
  assert.ok(await revokeToken(app.store, app.clock, token));
  assert.equal((await get(`Products(${productId}L)`, withToken)).status, 401);
  assert.equal((await get('NoSuchSet', withToken)).status, 401);

  assert.equal((await get(`Products(${productId}L)`, seller.auth)).status, 200);
  // The session row is deleted behind this process's back (another process's logout).
  await app.store.writeDirectory((tx) => tx.run('DELETE FROM sessions WHERE account_id = ?', [seller.accountId]));
  assert.equal((await get(`Products(${productId}L)`, seller.auth)).status, 401);
  assert.equal((await get('Products?$filter=NoSuchProperty eq 1', seller.auth)).status, 401);
});
