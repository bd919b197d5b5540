/**
 * The mix's sellers coming online against a running service, as each connector starts: it logs in,
 * learns its product, variation and order keys over the API, acknowledges the orders that will be
 * its write-back targets (so that every later poll returns only the pending ones), and the first
 * request of every kind is checked thoroughly before any load.
 */
import { login, request, SERVICE_PATH, connectorHeaders, type Credentials } from './http';
import { feedEntities } from './workloads';
import { MIX_KINDS, type MixSeller } from './mix-kinds';
import { ACKNOWLEDGED_ORDERS, inParallel, PENDING_ORDERS, type MixSellerAccount } from './mix-seed';

const byKey = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);

async function rows(origin: string, credentials: Credentials, query: string): Promise<Record<string, unknown>[]> {
  const res = await request(`${origin}${SERVICE_PATH}/${query}`, { headers: connectorHeaders(credentials) });
  if (res.status !== 200) throw new Error(`GET ${query} answered ${res.status}: ${res.body.slice(0, 300)}`);
  return feedEntities(res.body);
}

async function connect(origin: string, account: MixSellerAccount, index: number, productsPerSeller: number): Promise<MixSeller> {
  const cookie = await login(origin, account.userName, account.password);
  const credentials = { subscriptionToken: account.subscriptionToken, cookie };
  const productIds = (await rows(origin, credentials, 'Products?$select=Id')).map((p) => String(p.Id)).sort(byKey);
  if (productIds.length !== productsPerSeller) throw new Error(`seller ${index}: expected ${productsPerSeller} products, the service lists ${productIds.length}`);
  const variations = new Map<string, string[]>(productIds.map((id) => [id, []]));
  for (const v of await rows(origin, credentials, 'ProductVariations?$select=Id,ProductId')) variations.get(String(v.ProductId))?.push(String(v.Id));
  const variationsByProduct = productIds.map((id) => variations.get(id)!.sort(byKey));
  const orders = (await rows(origin, credentials, 'SalesOrders?$select=Id,PlatformOrderId')).map((o) => ({ id: String(o.Id), platformId: String(o.PlatformOrderId) }));
  // mix-seed.ts numbers each seller's orders MIX-<seller>-<n>: the first PENDING_ORDERS stay pending.
  const acknowledgedOrderIds = orders.filter((o) => Number(o.platformId.split('-').at(-1)) >= PENDING_ORDERS).map((o) => o.id);
  if (orders.length !== PENDING_ORDERS + ACKNOWLEDGED_ORDERS || acknowledgedOrderIds.length !== ACKNOWLEDGED_ORDERS) {
    throw new Error(`seller ${index}: expected ${PENDING_ORDERS + ACKNOWLEDGED_ORDERS} orders, the service lists ${orders.length}`);
  }
  for (const id of acknowledgedOrderIds) {
    const res = await request(`${origin}${SERVICE_PATH}/SalesOrders(${id}L)`, { method: 'MERGE', headers: connectorHeaders(credentials), body: '{"ForeignOrderId":"100000000"}' });
    if (res.status !== 204) throw new Error(`seller ${index}: acknowledging order ${id} answered ${res.status}: ${res.body.slice(0, 300)}`);
  }
  return { index, credentials, productIds, variationsByProduct, acknowledgedOrderIds, pendingOrders: PENDING_ORDERS };
}

/** Every seller logged in and ready; four at a time (each login is one scrypt on the server). */
export function connectSellers(origin: string, accounts: readonly MixSellerAccount[], productsPerSeller: number): Promise<MixSeller[]> {
  return inParallel(accounts, 4, (account, i) => connect(origin, account, i, productsPerSeller));
}

/** The first request of every kind, for the first seller: its status and its check, or an error saying what came. */
export async function checkMixKinds(origin: string, seller: MixSeller): Promise<void> {
  for (const kind of MIX_KINDS) {
    const shape = kind.request(seller, 0, origin);
    const res = await request(origin + shape.path, { method: shape.method, headers: { ...shape.headers }, ...(shape.body !== undefined ? { body: shape.body } : {}) });
    if (res.status !== kind.expectStatus || (kind.verify && !kind.verify(res.body, seller))) {
      throw new Error(`${kind.id}: the first request answered ${res.status} (expected ${kind.expectStatus}${kind.verify ? ' and a body that passes its check' : ''}): ${res.body.slice(0, 400)}`);
    }
  }
}
