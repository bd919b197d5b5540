/**
 * The request workloads of issue 8, each as the connector (or the Atom-only .NET client) sends it
 * on the wire (docs/protocol.md). Keys rotate over the seeded
 * catalogue so that no single row stays hot.
 */
import { atomHeaders, connectorHeaders, SERVICE_PATH, type Credentials, type Response } from './http';
import { BATCH_BOUNDARY, connectorBody } from '../../test/batch/support';
import type { RequestShape } from './load';

export interface Catalogue {
  /** Product keys in ascending order (decimal strings). */
  readonly productIds: readonly string[];
  /** Variation keys in ascending order, consecutive ones belonging to the same product. */
  readonly variationIds: readonly string[];
}

export interface WorkloadContext {
  /** Absolute service root, e.g. http://127.0.0.1:41234/publicapi/v1/api.svc */
  readonly root: string;
  readonly credentials: Credentials;
  readonly catalogue: Catalogue;
}

export interface Workload {
  readonly id: string;
  readonly title: string;
  readonly expectStatus: number;
  /** Entities serialised in each answer (a read) or created by each request (a deep insert), for entities/s. */
  readonly entitiesPerRequest?: number;
  /** Changes the catalogue (runs after the export, which on PostgreSQL shares the database). */
  readonly writes?: boolean;
  /** The floor answers it too, for `--floor`: floor-server.ts for reads, write-floor-server.ts for writes. */
  readonly floor?: boolean;
  /** A part of the service still being built elsewhere: a 501 makes the row "not available". */
  readonly mayBeUnavailable?: boolean;
  request(ctx: WorkloadContext, n: number): RequestShape;
  /**
   * More clients than the service has pooled connections (PostgreSQL's default pool is 10): the
   * run must not stall, and answers with `shedStatus` (503, busy) count apart, not as failures.
   */
  readonly crowd?: { readonly connections: number; readonly shedStatus: number };
  /** Checks each body during the load (autocannon passes no status). */
  verifyBody?(body: string): boolean;
  /** Checks the first answer thoroughly before any load; throws with what is wrong. */
  check?(res: Response, ctx: WorkloadContext, first: RequestShape): void;
}

export const FILTER_PAGE = 50;
export const BATCH_OPERATIONS = 10;

const at = (list: readonly string[], n: number) => list[n % list.length]!;

/** The JSON verbose entities of a V1 (`d` array) or V2 (`d.results`) feed. */
export function feedEntities(body: string): Record<string, unknown>[] {
  const d = (JSON.parse(body) as { d: unknown }).d;
  if (Array.isArray(d)) return d as Record<string, unknown>[];
  const results = (d as { results?: unknown }).results;
  if (Array.isArray(results)) return results as Record<string, unknown>[];
  throw new Error(`not a feed: ${body.slice(0, 200)}`);
}

function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

const keyOf = (path: string) => /\((\d+)L\)/.exec(path)?.[1];

function productByKey(format: 'json' | 'atom'): Workload {
  return {
    id: `get-${format}`,
    title: `GET Products(id) ${format === 'json' ? 'JSON' : 'Atom'}`,
    expectStatus: 200,
    floor: format === 'json',
    request: (ctx, n) => ({
      method: 'GET',
      path: `${SERVICE_PATH}/Products(${at(ctx.catalogue.productIds, n)}L)`,
      headers: format === 'json' ? connectorHeaders(ctx.credentials) : atomHeaders(ctx.credentials),
    }),
    check(res, _ctx, first) {
      const id = keyOf(first.path);
      if (format === 'json') {
        const d = (JSON.parse(res.body) as { d: Record<string, unknown> }).d;
        expect(d.Id === id, `expected product ${id}, got ${String(d.Id)}`);
      } else {
        expect(/^<\?xml/.test(res.body) && res.body.includes(`Products(${id}L)</id>`), `expected an Atom entry of product ${id}: ${res.body.slice(0, 300)}`);
      }
    },
  };
}

/** `Id ge a and Id le b` over 50 consecutive products: exactly 50 rows, a different page each time. */
function filteredPage(format: 'json' | 'atom'): Workload {
  return {
    id: `filter-${format}`,
    title: `GET Products?$filter (${FILTER_PAGE} rows) ${format === 'json' ? 'JSON' : 'Atom'}`,
    expectStatus: 200,
    floor: format === 'json',
    entitiesPerRequest: FILTER_PAGE,
    request(ctx, n) {
      const ids = ctx.catalogue.productIds;
      const pages = Math.floor(ids.length / FILTER_PAGE);
      const start = (n % pages) * FILTER_PAGE;
      const filter = `Id ge ${ids[start]}L and Id le ${ids[start + FILTER_PAGE - 1]}L`;
      return {
        method: 'GET',
        path: `${SERVICE_PATH}/Products?$filter=${encodeURIComponent(filter)}`,
        headers: format === 'json' ? connectorHeaders(ctx.credentials) : atomHeaders(ctx.credentials),
      };
    },
    check(res) {
      const rows = format === 'json' ? feedEntities(res.body).length : (res.body.match(/<entry[\s>]/g) ?? []).length;
      expect(rows === FILTER_PAGE, `expected ${FILTER_PAGE} entities, got ${rows}`);
    },
  };
}

/** The connector's create: every property it knows, many of them null, non-ASCII escaped. */
function productBody(n: number): string {
  return JSON.stringify({
    ForeignId: `BENCH-${n}`,
    ExternalProductId: null,
    ProductType: 0,
    Title: `Bench Produkt ${n} Gr\u00f6\u00dfe M`,
    Price: '19.99',
    StockAmount: n % 100,
    Description: '<p>Ein Produkt f\u00fcr den Benchmark, mit <b>Auszeichnung</b>.</p>',
    ShortDescription: null,
    Ean: '4006381333931',
    Isbn: null,
    Upc: null,
    Mpn: `MPN-${n}`,
    Brand: 'Bench',
    UnitQuantity: null,
    UnitType: null,
    BestOfferAutoAcceptPrice: null,
    BestOfferMinimumPrice: null,
  })
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const postProduct: Workload = {
  id: 'post-json',
  writes: true,
  floor: true,
  title: 'POST Products JSON (durable)',
  expectStatus: 201,
  request: (ctx, n) => ({ method: 'POST', path: `${SERVICE_PATH}/Products`, headers: connectorHeaders(ctx.credentials), body: productBody(n) }),
  check(res) {
    const d = (JSON.parse(res.body) as { d: Record<string, unknown> }).d;
    expect(typeof d.Id === 'string' && d.ForeignId === 'BENCH-0', `expected the created product, got ${res.body.slice(0, 300)}`);
  },
};

const mergeVariation: Workload = {
  id: 'merge-variation',
  writes: true,
  floor: true,
  title: 'MERGE ProductVariations(id) StockAmount',
  expectStatus: 204,
  request: (ctx, n) => ({
    method: 'MERGE',
    path: `${SERVICE_PATH}/ProductVariations(${at(ctx.catalogue.variationIds, n)}L)`,
    headers: connectorHeaders(ctx.credentials),
    body: `{"StockAmount":${n % 100}}`,
  }),
};

const reviseInventory: Workload = {
  id: 'revise-inventory',
  writes: true,
  title: 'POST ReviseInventoryStatus',
  expectStatus: 200,
  request: (ctx, n) => ({
    method: 'POST',
    path: `${SERVICE_PATH}/ReviseInventoryStatus?productId=${at(ctx.catalogue.productIds, n)}L&stockAmount=${n % 100}`,
    headers: connectorHeaders(ctx.credentials),
  }),
  check(res) {
    expect(/"ReviseInventoryStatus"\s*:\s*true/.test(res.body), `expected {"d":{"ReviseInventoryStatus":true}}, got ${res.body.slice(0, 300)}`);
  },
};

/**
 * The connector's $batch (docs/protocol.md, "$batch"), built by the same code as the
 * tests' byte-exact replay: one changeset of MERGEs of the variations' StockAmount.
 */
export function batchBody(origin: string, variationIds: readonly string[], stock: number): Buffer {
  return connectorBody(origin, variationIds.map((id) => ({ method: 'MERGE', path: `/ProductVariations(${id}L)`, json: `{"StockAmount":"${stock}"}` })));
}

/** Inner responses of a batch answer that say 204 No Content. */
const countNoContent = (body: string) => (body.match(/HTTP\/1\.1 204/g) ?? []).length;

const batchChangeset: Workload = {
  id: 'batch-changeset',
  writes: true,
  title: `$batch: 1 changeset of ${BATCH_OPERATIONS} MERGEs`,
  expectStatus: 202,
  mayBeUnavailable: true,
  request(ctx, n) {
    const ids = ctx.catalogue.variationIds;
    const groups = Math.floor(ids.length / BATCH_OPERATIONS);
    const start = (n % groups) * BATCH_OPERATIONS;
    return {
      method: 'POST',
      path: `${SERVICE_PATH}/$batch`,
      headers: {
        ...connectorHeaders(ctx.credentials),
        'Content-Type': `multipart/mixed; boundary=${BATCH_BOUNDARY}`,
        'Content-Transfer-Encoding': 'binary',
      },
      body: batchBody(ctx.root.slice(0, -SERVICE_PATH.length), ids.slice(start, start + BATCH_OPERATIONS), n % 100),
    };
  },
  verifyBody: (body) => countNoContent(body) === BATCH_OPERATIONS,
  check(res) {
    expect(/^multipart\/mixed;.*boundary=/i.test(String(res.headers['content-type'])), `expected a multipart/mixed answer, got ${String(res.headers['content-type'])}`);
    const ok = countNoContent(res.body);
    expect(ok === BATCH_OPERATIONS, `expected ${BATCH_OPERATIONS} inner 204 answers, got ${ok}: ${res.body.slice(0, 600)}`);
  },
};

/** What a deep insert creates: a product with 5 specifics, 3 images and 10 variations, each with 2 specifics and a picture. */
const DEEP_SPECIFICS = 5;
const DEEP_IMAGES = 3;
const DEEP_VARIATIONS = 10;
/** Rows (entities) one deep insert writes. */
export const DEEP_INSERT_ROWS = 1 + DEEP_SPECIFICS + DEEP_IMAGES + DEEP_VARIATIONS * (1 + 2 + 1);

/** The connector's POST of a new product with its whole tree inline (JSON verbose, docs/protocol.md). */
function deepProductBody(n: number): string {
  return JSON.stringify({
    __metadata: { type: 'CatalogueService.Product' },
    Title: `Bench deep ${n}`,
    Price: '19.99',
    StockAmount: 7,
    ForeignId: `DEEP-${n}`,
    ProductSpecifics: { results: Array.from({ length: DEEP_SPECIFICS }, (_, i) => ({ Name: `Spec ${i}`, Value: `value ${i}|other ${i}` })) },
    ProductImages: Array.from({ length: DEEP_IMAGES }, (_, i) => ({ ImageUrl: `https://img.example.com/deep/${n}/${i + 1}.jpg`, Type: i + 1 })),
    ProductVariations: Array.from({ length: DEEP_VARIATIONS }, (_, i) => ({
      Price: `${10 + i}.50`,
      StockAmount: i,
      Sku: `DEEP-${n}-${i}`,
      ProductVariationSpecifics: [
        { Name: 'Colour', Value: `colour ${i}` },
        { Name: 'Size', Value: `size ${i}` },
      ],
      ProductVariationPictures: { results: [{ ImageUrl: `https://img.example.com/deep/${n}/v${i}.jpg`, ImagePosition: 0 }] },
    })),
  });
}

const deepInsert: Workload = {
  id: 'deep-insert',
  writes: true,
  title: `POST Products JSON, deep insert (${DEEP_INSERT_ROWS} rows)`,
  expectStatus: 201,
  entitiesPerRequest: DEEP_INSERT_ROWS,
  request: (ctx, n) => ({ method: 'POST', path: `${SERVICE_PATH}/Products`, headers: connectorHeaders(ctx.credentials), body: deepProductBody(n) }),
  check(res, _ctx, first) {
    const d = (JSON.parse(res.body) as { d: Record<string, unknown> }).d;
    const sent = JSON.parse(String(first.body)) as { ForeignId: string };
    expect(typeof d.Id === 'string' && d.ForeignId === sent.ForeignId, `expected the created product, got ${res.body.slice(0, 300)}`);
  },
};

/** Reads first, then (after the export) the writes. */
export const WORKLOADS: readonly Workload[] = [
  productByKey('json'),
  productByKey('atom'),
  filteredPage('json'),
  filteredPage('atom'),
  postProduct,
  mergeVariation,
  reviseInventory,
  batchChangeset,
  deepInsert,
  { ...filteredPage('json'), floor: false, id: 'crowd-filter-json', title: `GET Products?$filter (${FILTER_PAGE} rows) JSON, 128 clients`, crowd: { connections: 128, shedStatus: 503 } },
];

/** The baseline's load: the connector's headers on a GET, answered with the fixed 300 bytes. */
export function baselineRequest(credentials: Credentials): RequestShape {
  return { method: 'GET', path: `${SERVICE_PATH}/Products(1L)`, headers: connectorHeaders(credentials) };
}
