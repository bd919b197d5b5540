/**
 * What one seller's shop connector sends in an hour of its day (the connector mix, mix-load.ts):
 * each request kind with its rate per seller and hour, the request exactly as the connector puts
 * it on the wire (its headers, MERGE, absolute URIs inside $batch, bodiless POSTs with
 * Content-Type) and the latency it should stay under at half the closed-loop capacity.
 *
 * The rates are a model, not a measurement: the connector polls orders every minute; the rest is
 * what a busy seller's shop does in an hour. The full export runs once a day in reality; here once
 * an hour, so that a run of some seconds holds several (see exportRate in the README's bench section).
 */
import { connectorHeaders, SERVICE_PATH, type Credentials } from './http';
import { BATCH_BOUNDARY } from '../../test/batch/support';
import { batchBody } from './workloads';
import { EXPORT_PATH } from './export';
import type { RequestShape } from './load';

/** One seller as the load generator sees it: logged in, with the keys of its catalogue and orders. */
export interface MixSeller {
  readonly index: number;
  readonly credentials: Credentials;
  readonly productIds: readonly string[];
  /** Variation keys of each product, in the order of productIds. */
  readonly variationsByProduct: readonly (readonly string[])[];
  /** Orders the connector acknowledges (its write-back MERGEs these). */
  readonly acknowledgedOrderIds: readonly string[];
  /** Orders no one acknowledges: what every poll returns. */
  readonly pendingOrders: number;
}

export interface MixKind {
  readonly id: string;
  readonly title: string;
  /** Requests per seller and hour of the connector's day. */
  readonly perHour: number;
  /** The goal for its p99 at 50% of capacity on SQLite (issue 39), in ms: reported, not asserted. */
  readonly goalMs?: number;
  readonly expectStatus: number;
  request(seller: MixSeller, n: number, origin: string): RequestShape;
  /** A cheap check of every answer's body; false counts as an error. */
  verify?(body: string, seller: MixSeller): boolean;
}

const at = <T>(list: readonly T[], n: number): T => list[n % list.length]!;

/** The connector's headers, with the Vendor and Version it names itself by. */
function headers(seller: MixSeller): Record<string, string> {
  return { ...connectorHeaders(seller.credentials), Vendor: 'shop-connector', Version: '4.2.0' };
}

/** The order poll's query, spaces as %20 and parentheses as they are, as the connector sends it. */
export const ORDER_POLL_PATH =
  `${SERVICE_PATH}/SalesOrders?$expand=Address,Buyer,SalesOrderItems/Product,SalesOrderItems/ProductVariation&$filter=` +
  encodeURIComponent("(ForeignOrderId eq null) or (ForeignOrderId eq '')").replace(/%28/g, '(').replace(/%29/g, ')');

const count = (body: string, needle: string) => body.split(needle).length - 1;

export const MIX_KINDS: readonly MixKind[] = [
  {
    id: 'order-poll',
    title: 'order poll (SalesOrders, $expand + $filter)',
    perHour: 60,
    goalMs: 10,
    expectStatus: 200,
    request: (seller) => ({ method: 'GET', path: ORDER_POLL_PATH, headers: headers(seller) }),
    // Every pending order, each with its items' products inline.
    verify: (body, seller) => count(body, '"PlatformOrderId"') === seller.pendingOrders,
  },
  {
    id: 'order-ack',
    title: 'order write-back (MERGE SalesOrders ForeignOrderId)',
    perHour: 12,
    goalMs: 50,
    expectStatus: 204,
    request: (seller, n) => ({
      method: 'MERGE',
      path: `${SERVICE_PATH}/SalesOrders(${at(seller.acknowledgedOrderIds, n)}L)`,
      headers: headers(seller),
      body: JSON.stringify({ ForeignOrderId: String(100_000_000 + n) }),
    }),
  },
  {
    id: 'stock-push',
    title: 'stock push (POST ReviseInventoryStatus)',
    perHour: 30,
    goalMs: 50,
    expectStatus: 200,
    request: (seller, n) => {
      const p = n % seller.productIds.length;
      return {
        method: 'POST',
        path: `${SERVICE_PATH}/ReviseInventoryStatus?productId=${seller.productIds[p]}L&productVariationId=${at(seller.variationsByProduct[p]!, n)}L&stockAmount=${n % 100}`,
        headers: headers(seller),
      };
    },
    verify: (body) => body.includes('"ReviseInventoryStatus":true'),
  },
  {
    id: 'product-sync',
    title: 'product sync ($batch: 1 changeset, a product\'s variations MERGEd)',
    perHour: 6,
    goalMs: 50,
    expectStatus: 202,
    request: (seller, n, origin) => ({
      method: 'POST',
      path: `${SERVICE_PATH}/$batch`,
      headers: { ...headers(seller), 'Content-Type': `multipart/mixed; boundary=${BATCH_BOUNDARY}`, 'Content-Transfer-Encoding': 'binary' },
      body: batchBody(origin, at(seller.variationsByProduct, n), n % 100),
    }),
    verify: (body, seller) => count(body, 'HTTP/1.1 204') === seller.variationsByProduct[0]!.length,
  },
  {
    id: 'read-key',
    title: 'read by key (GET Products(id))',
    perHour: 20,
    goalMs: 10,
    expectStatus: 200,
    request: (seller, n) => ({ method: 'GET', path: `${SERVICE_PATH}/Products(${at(seller.productIds, n)}L)`, headers: headers(seller) }),
  },
  {
    id: 'page',
    title: "page (GET ProductVariations?$filter=ProductId eq …)",
    perHour: 20,
    goalMs: 50,
    expectStatus: 200,
    request: (seller, n) => ({
      method: 'GET',
      path: `${SERVICE_PATH}/ProductVariations?$filter=ProductId%20eq%20${at(seller.productIds, n)}`,
      headers: headers(seller),
    }),
    verify: (body, seller) => count(body, '"Sku"') === seller.variationsByProduct[0]!.length,
  },
  {
    id: 'export',
    title: "full export (the seller's Products, 9 expansions)",
    perHour: 1,
    expectStatus: 200,
    request: (seller) => ({ method: 'GET', path: EXPORT_PATH, headers: headers(seller) }),
  },
];

/** Requests per seller and hour of all kinds together. */
export const MIX_PER_HOUR = MIX_KINDS.reduce((sum, k) => sum + k.perHour, 0);
