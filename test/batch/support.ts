/**
 * What the live $batch tests share: sending a batch over real HTTP, reading the answer by the
 * connector's rules (../support/connector-batch-reader.ts: boundary by the regex `boundary=(.*)`,
 * split on the delimiters, every non-empty piece a part, no MIME library), building request bodies in the connector's exact layout, and creating a product with
 * all its parts through the real API.
 */
import assert from 'node:assert/strict';
import { asSeller, type LiveService, type Seller, SERVICE_PATH } from '../support/live-service';
import type { HttpResponse } from '../support/http-client';
import { readLikeTheConnector } from '../support/connector-batch-reader';
import { readODataError } from '../support/odata-error';

export { SERVICE_PATH };

// ---------------------------------------------------------------------------------------------
// Sending

export const BATCH_BOUNDARY = 'batch_36522ad7-fc75-4b56-8c71-56071383e77b';
export const CHANGESET_BOUNDARY = 'changeset_77162fcd-b8da-41ac-a9f8-9357efbbd621';

export function postBatch(live: LiveService, seller: Seller, body: string | Buffer, contentType = `multipart/mixed; boundary=${BATCH_BOUNDARY}`, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/$batch`, {
    method: 'POST',
    headers: { 'Content-Type': contentType, 'Content-Transfer-Encoding': 'binary', DataServiceVersion: '2.0', MaxDataServiceVersion: '3.0', ...headers },
    body,
  });
}

// ---------------------------------------------------------------------------------------------
// Reading the answer as the connector does

export interface PartAnswer {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
}

export type TopAnswer = { readonly kind: 'response'; readonly response: PartAnswer } | { readonly kind: 'changeset'; readonly responses: readonly PartAnswer[] };

/**
 * A part's content without the line break that belongs to the next delimiter: an application/http
 * part ends with its body and that CRLF, whatever the body (a bodiless 204 included).
 */
function beforeNextDelimiter(content: string): string {
  assert.ok(content.endsWith('\r\n'), `a part ends with the CRLF before the next delimiter: ${JSON.stringify(content.slice(-80))}`);
  return content.slice(0, -2);
}

function headerBlock(text: string): { headers: Map<string, string>; rest: string } {
  const end = text.indexOf('\r\n\r\n');
  assert.ok(end >= 0, `a header block ends with an empty line: ${JSON.stringify(text.slice(0, 120))}`);
  const headers = new Map<string, string>();
  for (const line of text.slice(0, end).split('\r\n')) {
    const colon = line.indexOf(':');
    assert.ok(colon > 0, `a header line: ${line}`);
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, rest: text.slice(end + 4) };
}

function httpAnswer(mimeHeaders: ReadonlyMap<string, string>, content: string): PartAnswer {
  assert.equal(mimeHeaders.get('content-type'), 'application/http');
  assert.equal(mimeHeaders.get('content-transfer-encoding'), 'binary');
  const lineEnd = content.indexOf('\r\n');
  const statusLine = /^HTTP\/1\.1 (\d{3}) [A-Za-z -]+$/.exec(content.slice(0, lineEnd));
  assert.ok(statusLine, `a status line: ${content.slice(0, 60)}`);
  const { headers, rest } = headerBlock(content.slice(lineEnd + 2));
  const status = Number(statusLine[1]);
  if (headers.has('content-length')) assert.equal(Buffer.byteLength(rest), Number(headers.get('content-length')), 'Content-Length counts the body');
  else assert.equal(rest, '', 'no body without Content-Length');
  return { status, headers, body: rest };
}

/** The 202 answer of a batch, part by part; fails the test when it does not parse by the connector's rules. */
export function readBatchAnswer(res: HttpResponse): TopAnswer[] {
  assert.equal(res.status, 202, res.body.slice(0, 500));
  const contentType = String(res.headers['content-type']);
  assert.match(contentType, /^multipart\/mixed; boundary=batchresponse_[0-9a-f-]+$/, 'boundary= is the last parameter');
  assert.equal(res.headers['dataserviceversion'], '1.0;');
  return readLikeTheConnector(contentType, res.body).map((part): TopAnswer => {
    const { headers, rest } = headerBlock(part.piece);
    if (part.operations === undefined) return { kind: 'response', response: httpAnswer(headers, beforeNextDelimiter(rest)) };
    return {
      kind: 'changeset',
      responses: part.operations.map((operation) => {
        const inner = headerBlock(operation);
        return httpAnswer(inner.headers, beforeNextDelimiter(inner.rest));
      }),
    };
  });
}

/** The answers of a changeset that succeeded. */
export function changesetAnswers(answer: TopAnswer | undefined): readonly PartAnswer[] {
  assert.ok(answer, 'an answer part');
  assert.equal(answer.kind, 'changeset', answer.kind === 'response' ? `a changeset answer, not ${answer.response.status} ${answer.response.body.slice(0, 300)}` : '');
  return answer.kind === 'changeset' ? answer.responses : [];
}

/** The single answer of a query part or of a failed changeset. */
export function singleAnswer(answer: TopAnswer | undefined): PartAnswer {
  assert.ok(answer, 'an answer part');
  assert.equal(answer.kind, 'response', 'a single application/http answer');
  return answer.kind === 'response' ? answer.response : (undefined as never);
}

/** The message of an OData error body, JSON or XML. */
export function errorMessageOf(answer: PartAnswer): string {
  return readODataError(answer.headers.get('content-type') ?? '', answer.body).message;
}

// ---------------------------------------------------------------------------------------------
// Building requests

export interface Operation {
  readonly method: string;
  /** Request-line target as written: `Products(1L)`, `/publicapi/…`, an absolute URI or `$1/…`. */
  readonly target: string;
  readonly headers?: readonly string[];
  readonly body?: string;
}

/** An application/http part (without its delimiter) with CRLF lines. */
export function httpPart(operation: Operation, partHeaders: readonly string[] = []): string {
  return [
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    ...partHeaders,
    '',
    `${operation.method} ${operation.target} HTTP/1.1`,
    ...(operation.headers ?? []),
    '',
    operation.body ?? '',
  ].join('\r\n');
}

export function multipart(boundary: string, parts: readonly string[]): string {
  return parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('') + `--${boundary}--\r\n`;
}

export function changesetPart(operations: readonly string[], boundary = CHANGESET_BOUNDARY): string {
  return `Content-Type: multipart/mixed; boundary=${boundary}\r\n\r\n${multipart(boundary, operations)}`;
}

/** A batch body of parts (query parts from httpPart, changesets from changesetPart). */
export function batchBody(parts: readonly string[]): string {
  return multipart(BATCH_BOUNDARY, parts);
}

/** A JSON operation as the connector and datajs write it: Content-ID and Content-Type inside the request. */
export function jsonOperation(method: string, target: string, contentId: number | string | undefined, body?: unknown): string {
  return httpPart({
    method,
    target,
    headers: ['Accept: application/json', ...(contentId !== undefined ? [`Content-ID: ${contentId}`] : []), 'Content-Type: application/json', 'DataServiceVersion: 1.0'],
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

// ---------------------------------------------------------------------------------------------
// The connector's bytes (docs/protocol.md, "$batch")

export interface ConnectorOperation {
  readonly method: 'DELETE' | 'MERGE';
  /** Below the service root: `/ProductVariations(7L)`. */
  readonly path: string;
  /** MERGE only: the JSON it sends; "\n\r" is appended as the connector does. */
  readonly json?: string;
}

/**
 * One operation in the connector's layout, from its delimiter on: absolute URI, Content-ID among
 * the inner headers, a MERGE body ending in "\n\r" before the delimiter's CRLF and counted in
 * Content-Length, a DELETE's empty line followed directly by the next delimiter.
 */
function connectorOperation(origin: string, operation: ConnectorOperation, contentId: number): string {
  let text =
    `--${CHANGESET_BOUNDARY}\r\n` +
    'Content-Type: application/http\r\n' +
    'Content-Transfer-Encoding: binary\r\n' +
    '\r\n' +
    `${operation.method} ${origin}${SERVICE_PATH}${operation.path} HTTP/1.1\r\n` +
    'Accept: application/json\r\n' +
    `Content-ID: ${contentId}\r\n` +
    'Content-Type: application/json\r\n';
  if (operation.method === 'MERGE') {
    const body = `${operation.json ?? '{"StockAmount":"0"}'}\n\r`;
    text += `Content-Length: ${Buffer.byteLength(body) + 2}\r\n\r\n${body}\r\n`;
  } else {
    text += '\r\n';
  }
  return text;
}

/** The connector's whole request: one changeset with Content-Length, the extra empty line between the closings. */
export function connectorBody(origin: string, operations: readonly ConnectorOperation[]): Buffer {
  const changeset = operations.map((operation, index) => connectorOperation(origin, operation, index + 1)).join('') + `--${CHANGESET_BOUNDARY}--\r\n`;
  return Buffer.from(
    `--${BATCH_BOUNDARY}\r\n` +
      `Content-Type: multipart/mixed; boundary=${CHANGESET_BOUNDARY}\r\n` +
      `Content-Length: ${Buffer.byteLength(changeset)}\r\n` +
      '\r\n' +
      changeset +
      '\r\n' +
      `--${BATCH_BOUNDARY}--\r\n`,
    'latin1',
  );
}

// ---------------------------------------------------------------------------------------------
// Data through the real API

export type Entity = Record<string, unknown>;

export function client(live: LiveService, seller: Seller) {
  const json = { Accept: 'application/json', 'Content-Type': 'application/json', DataServiceVersion: '1.0' };
  return {
    async create(set: string, values: Entity): Promise<bigint> {
      const res = await asSeller(seller, `${live.root}/${set}`, { method: 'POST', headers: json, body: JSON.stringify(values) });
      assert.equal(res.status, 201, `POST ${set}: ${res.body}`);
      return BigInt((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
    },
    async link(path: string, targetPath: string): Promise<void> {
      const res = await asSeller(seller, `${live.root}/${path}`, { method: 'POST', headers: json, body: JSON.stringify({ uri: `${live.root}/${targetPath}` }) });
      assert.equal(res.status, 204, `POST ${path}: ${res.body}`);
    },
    /** The entity, or undefined when the service answers 404. */
    async get(path: string): Promise<Entity | undefined> {
      const res = await asSeller(seller, `${live.root}/${path}`, { headers: json });
      if (res.status === 404) return undefined;
      assert.equal(res.status, 200, `GET ${path}: ${res.body}`);
      return (JSON.parse(res.body) as { d: Entity }).d;
    },
    async feed(path: string): Promise<Entity[]> {
      const res = await asSeller(seller, `${live.root}/${path}`, { headers: json });
      assert.equal(res.status, 200, `GET ${path}: ${res.body}`);
      const d = (JSON.parse(res.body) as { d: Entity[] | { results: Entity[] } }).d;
      return Array.isArray(d) ? d : d.results;
    },
  };
}

/** A product as the connector deletes it: every kind of part, two variations, two catalogs. */
export interface ProductWithParts {
  readonly product: bigint;
  readonly specifics: readonly bigint[];
  readonly optionalAttributes: readonly bigint[];
  readonly discountOffers: readonly bigint[];
  readonly images: readonly bigint[];
  readonly variations: readonly bigint[];
  readonly variationSpecifics: readonly bigint[];
  readonly variationPictures: readonly bigint[];
  readonly carParts: readonly bigint[];
  readonly catalogs: readonly bigint[];
}

export async function createProductWithParts(live: LiveService, seller: Seller, label: string, catalogs?: readonly bigint[]): Promise<ProductWithParts> {
  const api = client(live, seller);
  const product = await api.create('Products', { Title: `Produkt ${label}`, Price: '19.90', StockAmount: 5, ForeignId: `F-${label}` });
  const ofProduct = { ProductId: String(product) };
  const specifics = [
    await api.create('ProductSpecifics', { ...ofProduct, Name: 'Marke', Value: 'Acme' }),
    await api.create('ProductSpecifics', { ...ofProduct, Name: 'Farbe', Value: 'Rot|Blau' }),
  ];
  const optionalAttributes = [await api.create('OptionalProductAttributes', { ...ofProduct, Name: 'Hinweis', Value: 'Neu' })];
  const images = [
    await api.create('ProductImages', { ...ofProduct, Type: 1, ImageUrl: `https://img.example.com/${label}/1.jpg` }),
    await api.create('ProductImages', { ...ofProduct, Type: 2, ImageUrl: `https://img.example.com/${label}/2.jpg` }),
  ];
  const variations: bigint[] = [];
  const variationSpecifics: bigint[] = [];
  const variationPictures: bigint[] = [];
  for (const size of ['S', 'M']) {
    const variation = await api.create('ProductVariations', { ...ofProduct, Sku: `${label}-${size}`, Price: '19.90', StockAmount: 3 });
    variations.push(variation);
    variationSpecifics.push(await api.create('ProductVariationSpecifics', { ProductVariationId: String(variation), Name: 'Größe', Value: size }));
    variationPictures.push(await api.create('ProductVariationPictures', { ProductVariationId: String(variation), ImageUrl: `https://img.example.com/${label}/${size}.jpg`, ImagePosition: 0 }));
  }
  const discountOffers = [
    await api.create('DiscountOffers', { ...ofProduct, Price: '17.50', Type: 1 }),
    await api.create('DiscountOffers', { ...ofProduct, ProductVariationId: String(variations[0]), Price: '16.50', Type: 1 }),
  ];
  const carParts = [await api.create('CarParts', { ...ofProduct, KType: 1234, HSN: '0603', TSN: 'AAA' })];
  const catalogIds = catalogs ?? [await api.create('Catalogs', { Name: `Katalog A ${label}` }), await api.create('Catalogs', { Name: `Katalog B ${label}` })];
  for (const catalog of catalogIds) await api.link(`Products(${product}L)/$links/Catalogs`, `Catalogs(${catalog}L)`);
  return { product, specifics, optionalAttributes, discountOffers, images, variations, variationSpecifics, variationPictures, carParts, catalogs: catalogIds };
}

/**
 * The connector's product deletion for `p` (docs/protocol.md, "$batch"): each specific deleted
 * twice, the optional attributes, discount offers and images deleted, each variation's stock
 * zeroed twice, the variation specifics and pictures deleted, and the product last, while its
 * variations and catalog links still exist.
 */
export function connectorDeletion(p: ProductWithParts): ConnectorOperation[] {
  const del = (set: string, ids: readonly bigint[]) => ids.map((id): ConnectorOperation => ({ method: 'DELETE', path: `/${set}(${id}L)` }));
  return [
    ...p.specifics.flatMap((id) => [...del('ProductSpecifics', [id]), ...del('ProductSpecifics', [id])]),
    ...del('OptionalProductAttributes', p.optionalAttributes),
    // The product-level offer; the variation-level one goes with its variation.
    ...del('DiscountOffers', p.discountOffers.slice(0, 1)),
    ...del('ProductImages', p.images),
    ...p.variations.flatMap((id): ConnectorOperation[] => [
      { method: 'MERGE', path: `/ProductVariations(${id}L)` },
      { method: 'MERGE', path: `/ProductVariations(${id}L)` },
    ]),
    ...del('ProductVariationSpecifics', p.variationSpecifics),
    ...del('ProductVariationPictures', p.variationPictures),
    ...del('Products', [p.product]),
  ];
}
