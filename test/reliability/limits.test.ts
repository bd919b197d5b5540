/**
 * Every request limit of the README's configuration table (docs/protocol.md, "Limits"),
 * from one table: each limit is accepted at N and refused at N+1, with the documented status and
 * an OData error in the request's format (JSON and XML) whose message names the limit.
 * test/server/errors.test.ts checks one over-limit URL, header block and body; the rules of the
 * entity model (lengths, 120 variations…) are test/catalogue/limits.test.ts. Here:
 * - the table (LIMITS below) at the documented defaults, on an in-process service;
 * - the two limits that only apply with configuration (PAGE_SIZE, MAX_BATCH_RESPONSE_BYTES) on a
 *   second service configured with small values; a DOCTYPE is refused whatever its size;
 * - 1,000 over-limit requests in a row, a mix of the table's rows, against a `catalogue serve`
 *   child process configured with smaller body limits (the same code, cheaper requests): every
 *   one answers its refusal, and the process's RSS grows by less than 20 MB after a warm-up.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { createAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { loadConfig, type Limits, type QueryConfig } from '../../src/config';
import { openStore } from '../../src/store/open';
import { reportFigures } from '../support/figures';
import { request, type HttpResponse } from '../support/http-client';
import { byTier } from '../support/tier';
import { newSeller, SERVICE_PATH, startLive, type LiveService, type Seller } from '../support/live-service';
import { loginAt, serveProcess, type ServeProcess } from '../support/serve-process';
import { freshDatabase } from '../support/test-database';

const JSON_TYPE = 'application/json';
const ATOM_TYPE = 'application/atom+xml';
const ATOM_NS = 'http://www.w3.org/2005/Atom';
const D_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices';
const M_NS = D_NS + '/metadata';
const AXD_LOGIN = '/Authentication_JSON_AppService.axd/Login';

/** Where requests go and as whom. */
interface Target {
  readonly origin: string;
  readonly auth: Record<string, string>;
  /** A user name and password that log in (for the login body limit). */
  readonly userName: string;
  readonly password: string;
}

/** A request by node's HTTP client, or (for exact header bytes) raw bytes on a socket. */
type Outgoing = { readonly method: string; readonly url: string; readonly headers: Record<string, string>; readonly body?: string } | { readonly raw: string };

interface LimitCase {
  /** The setting (README name) and what the case sends. */
  readonly name: string;
  /** The largest accepted size. */
  readonly n: number;
  /** The answer at N (2xx). */
  readonly okStatus: number;
  /** The refusal at N+1. */
  readonly status: number;
  /** The refusal's message names the limit. */
  readonly message: RegExp;
  /** The request of `size`, asking for `accept`. */
  build(target: Target, size: number, accept: string): Outgoing;
  /** Judged on a part of a 202 $batch answer rather than on the answer itself. */
  readonly inner?: true;
}

const svc = (target: Target) => target.origin + SERVICE_PATH;
const get = (target: Target, path: string, accept: string): Outgoing => ({ method: 'GET', url: svc(target) + path, headers: { ...target.auth, Accept: accept } });
const q = encodeURIComponent;

/** `Id add 0L … eq 0L` with exactly `nodes` nodes (property, literal, operator and `not` count one each). */
function filterOfNodes(nodes: number): string {
  if (nodes % 2 === 1) return `Id${' add 0L'.repeat((nodes - 3) / 2)} eq 0L`;
  return `not (Id${' add 0L'.repeat((nodes - 4) / 2)} eq 0L)`;
}

/** `-Id add 0L …` as an $orderby item of exactly `nodes` nodes. */
function orderbyOfNodes(nodes: number): string {
  return nodes % 2 === 1 ? `Id${' add 0L'.repeat((nodes - 1) / 2)}` : `-Id${' add 0L'.repeat((nodes - 2) / 2)}`;
}

function atomCatalog(extraAuthorContent = '', prolog = ''): string {
  return (
    '<?xml version="1.0" encoding="utf-8" standalone="yes"?>' +
    prolog +
    `<entry xmlns="${ATOM_NS}" xmlns:d="${D_NS}" xmlns:m="${M_NS}">` +
    `<category term="CatalogueService.Catalog" scheme="http://schemas.microsoft.com/ado/2007/08/dataservices/scheme" />` +
    `<title /><author><name />${extraAuthorContent}</author><updated>2015-06-29T00:00:00Z</updated><id />` +
    '<content type="application/xml"><m:properties><d:Name>limits</d:Name></m:properties></content></entry>'
  );
}

/** A $batch body of query parts and changesets; `epilogue` pads it after the close delimiter. */
function batchBody(parts: { get?: string; changeset?: { method: string; url: string; body: string }[] }[], accept: string, epilogue = ''): string {
  let out = '';
  parts.forEach((part, i) => {
    out += '--batch\r\n';
    if (part.get !== undefined) {
      out += `Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nGET ${part.get} HTTP/1.1\r\nAccept: ${accept}\r\n\r\n\r\n`;
    } else {
      out += `Content-Type: multipart/mixed; boundary=cs${i}\r\n\r\n`;
      part.changeset!.forEach((op, j) => {
        out +=
          `--cs${i}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: ${j + 1}\r\n\r\n` +
          `${op.method} ${op.url} HTTP/1.1\r\nAccept: ${accept}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(op.body)}\r\n\r\n${op.body}\r\n`;
      });
      out += `--cs${i}--\r\n`;
    }
  });
  return out + '--batch--\r\n' + epilogue;
}

function postBatch(target: Target, body: string, accept: string): Outgoing {
  return { method: 'POST', url: svc(target) + '/$batch', headers: { ...target.auth, Accept: accept, 'Content-Type': 'multipart/mixed; boundary=batch' }, body };
}

/** Pads `text` with trailing blanks (which every reader tolerates) to exactly `size` bytes. */
function padTo(text: string, size: number): string {
  const missing = size - Buffer.byteLength(text);
  assert.ok(missing >= 0, `the request is already ${Buffer.byteLength(text)} bytes, more than ${size}`);
  return text + ' '.repeat(missing);
}

/** The twelve navigations of Product: the connector's full expand needs nine of them. */
const PRODUCT_NAVIGATIONS = [
  'ProductImages', 'ProductSpecifics', 'ProductVariations', 'OptionalProductAttributes', 'DiscountOffers', 'CarParts',
  'ChildProducts', 'ParentProducts', 'Catalogs', 'SalesOrderItems', 'Listings', 'ListingItems',
];
const EXTRA_EXPAND_PATHS = ['ProductVariations/ProductVariationSpecifics', 'ProductVariations/ProductVariationImages', 'Catalogs/ChildCatalogs'];

/**
 * The request head as Node's parser counts it against MAX_HEADER_BYTES: the URL plus every field
 * name and value, without the method, the version, ': ' and line ends. A head whose count
 * reaches the limit is refused (so "N" here is the limit minus one).
 */
function rawHead(target: Target, counted: number, accept: string): string {
  const url = SERVICE_PATH + '/';
  const fields: [string, string][] = [['Host', new URL(target.origin).host], ...Object.entries(target.auth), ['Accept', accept], ['Connection', 'close'], ['X-Padding', '']];
  const used = url.length + fields.reduce((sum, [k, v]) => sum + k.length + v.length, 0);
  fields[fields.length - 1]![1] = 'p'.repeat(counted - used);
  return `GET ${url} HTTP/1.1\r\n${fields.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
}

/** The table: one row per limit, sized from the service's configuration. */
function limitCases(limits: Limits, query: QueryConfig): LimitCase[] {
  const { expr, expand } = query;
  return [
    {
      name: 'MAX_TOP ($top)', n: query.maxTop, okStatus: 200, status: 400, message: new RegExp(`\\$top is ${query.maxTop + 1}, more than the limit of ${query.maxTop}`),
      build: (t, size, accept) => get(t, `/Products?$top=${size}`, accept),
    },
    {
      name: 'MAX_FILTER_NODES ($filter)', n: expr.maxNodes, okStatus: 200, status: 400, message: new RegExp(`\\$filter expression has more than ${expr.maxNodes} nodes`),
      build: (t, size, accept) => get(t, `/Products?$filter=${q(filterOfNodes(size))}`, accept),
    },
    {
      name: 'MAX_FILTER_NODES ($orderby)', n: expr.maxNodes, okStatus: 200, status: 400, message: new RegExp(`\\$orderby expression has more than ${expr.maxNodes} nodes`),
      build: (t, size, accept) => get(t, `/Products?$orderby=${q(orderbyOfNodes(size))}`, accept),
    },
    {
      name: 'MAX_FILTER_DEPTH', n: expr.maxDepth, okStatus: 200, status: 400, message: new RegExp(`nested more than ${expr.maxDepth} levels deep`),
      build: (t, size, accept) => get(t, `/Products?$filter=${q('('.repeat(size) + 'Id eq 0L' + ')'.repeat(size))}`, accept),
    },
    {
      name: 'MAX_FILTER_LENGTH', n: expr.maxLength, okStatus: 200, status: 400, message: new RegExp(`\\$filter option is ${expr.maxLength + 1} characters long, more than the ${expr.maxLength} allowed`),
      build: (t, size, accept) => get(t, `/Products?$filter=${q(`Title eq '${'x'.repeat(size - 11)}'`)}`, accept),
    },
    {
      name: 'MAX_EXPAND_PATHS', n: expand.maxPaths, okStatus: 200, status: 400, message: new RegExp(`\\$expand option has ${expand.maxPaths + 1} paths, more than the ${expand.maxPaths} allowed`),
      build: (t, size, accept) => get(t, `/Products?$expand=${[...PRODUCT_NAVIGATIONS, ...EXTRA_EXPAND_PATHS].slice(0, size).join(',')}`, accept),
    },
    {
      name: 'MAX_EXPAND_DEPTH', n: expand.maxDepth, okStatus: 200, status: 400, message: new RegExp(`has ${expand.maxDepth + 1} segments, more than the ${expand.maxDepth} navigations allowed`),
      build: (t, size, accept) => get(t, `/Products?$expand=${Array<string>(size).fill('ChildProducts').join('/')}`, accept),
    },
    {
      name: 'MAX_URL_BYTES', n: limits.maxUrlBytes, okStatus: 200, status: 414, message: new RegExp(`URL is longer than the limit of ${limits.maxUrlBytes} bytes`),
      build: (t, size, accept) => get(t, '/?pad=' + 'u'.repeat(size - (SERVICE_PATH + '/?pad=').length), accept),
    },
    {
      name: 'MAX_HEADER_BYTES', n: limits.maxHeaderBytes - 1, okStatus: 200, status: 431, message: /headers are larger than the limit/,
      build: (t, size, accept) => ({ raw: rawHead(t, size, accept) }),
    },
    {
      name: 'MAX_BODY_BYTES', n: limits.maxBodyBytes, okStatus: 201, status: 413, message: new RegExp(`body is larger than the limit of ${limits.maxBodyBytes} bytes`),
      build: (t, size, accept) => ({
        method: 'POST', url: svc(t) + '/Catalogs', headers: { ...t.auth, Accept: accept, 'Content-Type': JSON_TYPE }, body: padTo('{"Name":"limits"}', size),
      }),
    },
    {
      name: 'MAX_BATCH_BODY_BYTES', n: limits.maxBatchBodyBytes, okStatus: 202, status: 413, message: new RegExp(`body is larger than the limit of ${limits.maxBatchBodyBytes} bytes`),
      build: (t, size, accept) => {
        const body = batchBody([{ get: 'Catalogs?$top=0' }], accept);
        return postBatch(t, padTo(body, size), accept);
      },
    },
    {
      name: 'MAX_BATCH_PARTS', n: limits.maxBatchParts, okStatus: 202, status: 400, message: new RegExp(`more than ${limits.maxBatchParts} parts; the limit is ${limits.maxBatchParts}`),
      build: (t, size, accept) => postBatch(t, batchBody(Array.from({ length: size }, () => ({ get: 'Catalogs?$top=0' })), accept), accept),
    },
    {
      name: 'MAX_CHANGESET_OPERATIONS', n: limits.maxChangesetOperations, okStatus: 202, status: 400,
      message: new RegExp(`changeset has more than ${limits.maxChangesetOperations} operations; the limit is ${limits.maxChangesetOperations}`),
      build: (t, size, accept) =>
        postBatch(t, batchBody([{ changeset: Array.from({ length: size }, (_, i) => ({ method: 'POST', url: 'Catalogs', body: `{"Name":"op ${i}"}` })) }], accept), accept),
    },
    {
      name: 'MAX_URL_BYTES (inside $batch)', n: limits.maxUrlBytes, okStatus: 200, status: 414, inner: true, message: new RegExp(`URL is longer than the limit of ${limits.maxUrlBytes} bytes`),
      build: (t, size, accept) => postBatch(t, batchBody([{ get: 'Catalogs?$top=0&pad=' + 'u'.repeat(size - 'Catalogs?$top=0&pad='.length) }], accept), accept),
    },
    {
      name: 'MAX_BODY_BYTES (inside $batch)', n: limits.maxBodyBytes, okStatus: 201, status: 413, inner: true, message: new RegExp(`body is larger than the limit of ${limits.maxBodyBytes} bytes`),
      build: (t, size, accept) => postBatch(t, batchBody([{ changeset: [{ method: 'POST', url: 'Catalogs', body: padTo('{"Name":"inner"}', size) }] }], accept), accept),
    },
    {
      name: 'JSON nesting', n: 100, okStatus: 201, status: 400, message: /JSON nesting deeper than 100 levels/,
      build: (t, size, accept) => ({
        method: 'POST', url: svc(t) + '/Catalogs', headers: { ...t.auth, Accept: accept, 'Content-Type': JSON_TYPE },
        // The object is level 1, __metadata level 2, then arrays.
        body: `{"Name":"limits","__metadata":{"x":${'['.repeat(size - 2)}${']'.repeat(size - 2)}}}`,
      }),
    },
    {
      name: 'XML nesting', n: 64, okStatus: 201, status: 400, message: /XML is nested deeper than 64 levels/,
      build: (t, size, accept) => ({
        method: 'POST', url: svc(t) + '/Catalogs', headers: { ...t.auth, Accept: accept, 'Content-Type': ATOM_TYPE },
        // entry is level 1, author level 2, then <x> elements (which the reader skips).
        body: atomCatalog('<x>'.repeat(size - 2) + '</x>'.repeat(size - 2)),
      }),
    },
    {
      name: 'login body (16 KiB)', n: 16 * 1024, okStatus: 200, status: 413, message: /body is larger than the limit of 16384 bytes/,
      build: (t, size, accept) => ({
        method: 'POST', url: t.origin + AXD_LOGIN, headers: { Accept: accept, 'Content-Type': JSON_TYPE },
        body: padTo(JSON.stringify({ userName: t.userName, password: t.password, createPersistentCookie: false }), size),
      }),
    },
  ];
}

/** Sends one outgoing request; raw ones over a socket, read to the end (the server closes). */
function send(out: Outgoing, origin: string): Promise<HttpResponse> {
  if (!('raw' in out)) return request(out.url, { method: out.method, headers: out.headers, ...(out.body !== undefined ? { body: out.body } : {}) });
  return new Promise((resolve, reject) => {
    const url = new URL(origin);
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(out.raw));
    let data = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => (data = Buffer.concat([data, c])));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = data.toString('utf8');
      const headEnd = text.indexOf('\r\n\r\n');
      const lines = text.slice(0, headEnd).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0), headers, body: text.slice(headEnd + 4) });
    });
  });
}

interface InnerAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** The application/http answers inside a $batch answer, in order (changesets flattened). */
function innerAnswers(body: string): InnerAnswer[] {
  const out: InnerAnswer[] = [];
  const re = /HTTP\/1\.1 (\d{3})[^\r\n]*\r\n((?:[^\r\n]+\r\n)*)\r\n([\s\S]*?)\r\n--(?:batch|changeset)response_/g;
  for (let m = re.exec(body); m; m = re.exec(body)) {
    out.push({ status: Number(m[1]), contentType: /content-type: ([^\r\n]*)/i.exec(m[2]!)?.[1] ?? '', body: m[3]! });
  }
  return out;
}

function xmlUnescape(text: string): string {
  return text.replace(/&apos;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The message of an OData error in `format`; fails unless the body is exactly that document. */
function odataErrorMessage(contentType: string, body: string, format: 'json' | 'xml'): string {
  if (format === 'json') {
    assert.equal(contentType, 'application/json;charset=utf-8');
    const parsed = JSON.parse(body) as { error: { code: string; message: { lang: string; value: string } } };
    assert.deepEqual(Object.keys(parsed), ['error']);
    assert.equal(parsed.error.message.lang, 'en-US');
    return parsed.error.message.value;
  }
  assert.equal(contentType, 'application/xml;charset=utf-8');
  assert.match(body, /^<\?xml version="1.0" encoding="utf-8" standalone="yes"\?><error xmlns="http:\/\/schemas.microsoft.com\/ado\/2007\/08\/dataservices\/metadata"><code>[^<]*<\/code><message xml:lang="en-US">[^<]*<\/message><\/error>$/);
  return xmlUnescape(/<message xml:lang="en-US">([^<]*)<\/message>/.exec(body)![1]!);
}

/** Asserts the answer to `row` at `size` is its acceptance (below/at N) or its refusal (above). */
function judge(row: LimitCase, res: HttpResponse, accepted: boolean, format: 'json' | 'xml'): void {
  const label = `${row.name} ${accepted ? 'at N' : 'at N+1'} (${format})`;
  if (row.inner) {
    assert.equal(res.status, 202, `${label}: the batch itself: ${res.body.slice(0, 300)}`);
    const answers = innerAnswers(res.body);
    assert.ok(answers.length > 0, `${label}: no inner answer in ${res.body.slice(0, 300)}`);
    if (accepted) {
      for (const a of answers) assert.equal(a.status, row.okStatus, `${label}: ${a.body.slice(0, 200)}`);
      return;
    }
    const refused = answers.find((a) => a.status === row.status);
    assert.ok(refused, `${label}: no ${row.status} among ${answers.map((a) => a.status).join(',')}`);
    assert.match(odataErrorMessage(refused.contentType, refused.body, format), row.message, label);
    return;
  }
  if (accepted) {
    assert.equal(res.status, row.okStatus, `${label}: ${res.body.slice(0, 300)}`);
    if (res.status === 202) for (const a of innerAnswers(res.body)) assert.ok(a.status < 300, `${label}: an inner ${a.status}: ${a.body.slice(0, 200)}`);
    return;
  }
  assert.equal(res.status, row.status, `${label}: ${res.body.slice(0, 300)}`);
  assert.equal(res.headers.location, undefined, label);
  assert.match(odataErrorMessage(String(res.headers['content-type']), res.body, format), row.message, label);
}

const figures = { limits: 0, cases: 0, overLimitRequests: 0, rssGrowthMb: 0 };

describe('every limit at its documented default: accepted at N, refused at N+1', () => {
  let live: LiveService;
  let seller: Seller;
  let target: Target;
  const config = loadConfig({});
  before(async () => {
    live = await startLive();
    seller = await newSeller(live, 'limits');
    target = { origin: live.origin, auth: seller.auth, userName: seller.userName, password: seller.password };
  });
  after(() => live.close());

  const rows = limitCases(config.limits, config.query);
  test('the table covers every documented limit', () => {
    const names = rows.map((r) => r.name.split(' ')[0]);
    for (const setting of ['MAX_TOP', 'MAX_FILTER_NODES', 'MAX_FILTER_DEPTH', 'MAX_FILTER_LENGTH', 'MAX_EXPAND_PATHS', 'MAX_EXPAND_DEPTH', 'MAX_URL_BYTES', 'MAX_HEADER_BYTES', 'MAX_BODY_BYTES', 'MAX_BATCH_BODY_BYTES', 'MAX_BATCH_PARTS', 'MAX_CHANGESET_OPERATIONS', 'JSON']) {
      assert.ok(names.includes(setting), `no row for ${setting}`);
    }
    // The documented defaults are the ones in force.
    assert.deepEqual(
      [config.query.maxTop, config.query.expr.maxNodes, config.query.expr.maxDepth, config.query.expr.maxLength, config.query.expand.maxDepth, config.query.expand.maxPaths],
      [10_000, 100, 32, 2048, 3, 12],
    );
    assert.deepEqual(
      [config.limits.maxUrlBytes, config.limits.maxHeaderBytes, config.limits.maxBodyBytes, config.limits.maxBatchBodyBytes, config.limits.maxBatchParts, config.limits.maxChangesetOperations],
      [4096, 16 * 1024, 1024 * 1024, 4 * 1024 * 1024, 100, 100],
    );
  });

  for (const row of rows) {
    test(`${row.name}: ${row.n} accepted, ${row.n + 1} refused with ${row.status}`, async () => {
      judge(row, await send(row.build(target, row.n, JSON_TYPE), target.origin), true, 'json');
      for (const [accept, format] of [[JSON_TYPE, 'json'], [ATOM_TYPE, 'xml']] as const) {
        judge(row, await send(row.build(target, row.n + 1, accept), target.origin), false, format);
        figures.cases++;
      }
      figures.cases++;
      figures.limits++;
      // The refused request is not held against the caller: the session still works.
      assert.equal((await request(svc(target) + '/', { headers: target.auth })).status, 200);
    });
  }

  test('XML with a DOCTYPE is refused before parsing, however small; the same entry without one is created', async () => {
    const plain = await send({ method: 'POST', url: svc(target) + '/Catalogs', headers: { ...target.auth, Accept: JSON_TYPE, 'Content-Type': ATOM_TYPE }, body: atomCatalog() }, target.origin);
    assert.equal(plain.status, 201, plain.body);
    const doctypes = ['<!DOCTYPE entry>', '<!DOCTYPE entry [<!ENTITY x "y">]>', '<!doctype entry SYSTEM "file:///etc/passwd">'];
    for (const doctype of doctypes) {
      for (const [accept, format] of [[JSON_TYPE, 'json'], [ATOM_TYPE, 'xml']] as const) {
        const res = await send({ method: 'POST', url: svc(target) + '/Catalogs', headers: { ...target.auth, Accept: accept, 'Content-Type': ATOM_TYPE }, body: atomCatalog('', doctype) }, target.origin);
        assert.equal(res.status, 400);
        assert.match(odataErrorMessage(String(res.headers['content-type']), res.body, format), /DOCTYPE is not accepted/);
        figures.cases++;
      }
    }
    figures.limits++;
  });
});

/**
 * A request whose head is sent at once and whose body (`body`, `Content-Length` bytes in all) is
 * sent `partial` first and the rest after `delayMs`, or never (`rest` undefined); the whole answer.
 */
function slowRequest(origin: string, head: string, partial: string, rest: string | undefined, delayMs: number): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(origin);
    const socket = net.connect(Number(url.port), url.hostname, () => {
      socket.write(head + partial);
      if (rest !== undefined) setTimeout(() => socket.write(rest), delayMs);
    });
    let data = '';
    socket.on('data', (c: Buffer) => {
      data += c.toString('utf8');
      // A complete answer (its Content-Length is there): done, the connection may stay open.
      const headEnd = data.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(data)?.[1] ?? NaN);
      if (headEnd >= 0 && Buffer.byteLength(data.slice(headEnd + 4)) >= length) socket.destroy();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const headEnd = data.indexOf('\r\n\r\n');
      const lines = data.slice(0, headEnd).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0), headers, body: data.slice(headEnd + 4) });
    });
  });
}

describe('limits that apply when configured: PAGE_SIZE, MAX_BATCH_RESPONSE_BYTES, REQUEST_TIMEOUT_MS', () => {
  const PAGE = 5;
  const BUDGET = 1024;
  const TIMEOUT_MS = 1000;
  let live: LiveService;
  let seller: Seller;
  before(async () => {
    live = await startLive({
      env: { PAGE_SIZE: String(PAGE), MAX_BATCH_RESPONSE_BYTES: String(BUDGET), REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), HEADERS_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
    seller = await newSeller(live, 'configured');
  });
  after(() => live.close());

  async function createCatalog(name: string): Promise<string> {
    const res = await request(live.root + '/Catalogs', {
      method: 'POST', headers: { ...seller.auth, Accept: JSON_TYPE, 'Content-Type': JSON_TYPE }, body: JSON.stringify({ Name: name }),
    });
    assert.equal(res.status, 201, res.body);
    return String((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
  }

  test(`PAGE_SIZE ${PAGE}: ${PAGE} entities are one page without a next link; ${PAGE + 1} are ${PAGE} and a next link`, async () => {
    for (let i = 0; i < PAGE; i++) await createCatalog(`page ${i}`);
    const full = await request(live.root + '/Catalogs', { headers: { ...seller.auth, Accept: JSON_TYPE } });
    assert.equal(full.status, 200);
    const one = JSON.parse(full.body) as { d: { results: unknown[]; __next?: string } | unknown[] };
    const results = Array.isArray(one.d) ? one.d : one.d.results;
    assert.equal(results.length, PAGE);
    assert.equal(Array.isArray(one.d) ? undefined : one.d.__next, undefined);
    await createCatalog('page over');
    const paged = await request(live.root + '/Catalogs', { headers: { ...seller.auth, Accept: JSON_TYPE } });
    const two = JSON.parse(paged.body) as { d: { results: unknown[]; __next?: string } };
    assert.equal(two.d.results.length, PAGE);
    assert.match(String(two.d.__next), /\$skiptoken=/);
    const atom = await request(live.root + '/Catalogs', { headers: seller.auth });
    assert.match(atom.body, /<link rel="next" href="[^"]*\$skiptoken=/);
    figures.limits++;
    figures.cases += 3;
  });

  test(`MAX_BATCH_RESPONSE_BYTES ${BUDGET}: query-part bodies of ${BUDGET} bytes in all are answered, ${BUDGET + 1} refuse the part that passes it`, async () => {
    // Name/$value answers are exactly the name's bytes: 4 × 255 + 4 = 1024.
    const long = await createCatalog('L'.repeat(255));
    const four = await createCatalog('abcd');
    const five = await createCatalog('abcde');
    const value = (id: string) => `Catalogs(${id}L)/Name/$value`;
    for (const [last, accepted] of [[four, true], [five, false]] as const) {
      for (const [accept, format] of [[JSON_TYPE, 'json'], [ATOM_TYPE, 'xml']] as const) {
        const parts = [...Array<{ get: string }>(4).fill({ get: value(long) }), { get: value(last) }];
        const res = await request(live.root + '/$batch', {
          method: 'POST', headers: { ...seller.auth, 'Content-Type': 'multipart/mixed; boundary=batch' }, body: batchBody(parts, accept),
        });
        assert.equal(res.status, 202, res.body.slice(0, 300));
        const answers = innerAnswers(res.body);
        assert.equal(answers.length, 5);
        assert.deepEqual(answers.slice(0, 4).map((a) => a.status), [200, 200, 200, 200]);
        if (accepted) {
          assert.equal(answers[4]!.status, 200);
          assert.equal(answers[4]!.body, 'abcd');
        } else {
          assert.equal(answers[4]!.status, 400);
          assert.match(odataErrorMessage(answers[4]!.contentType, answers[4]!.body, format), new RegExp(`larger than ${BUDGET} bytes`));
        }
        figures.cases++;
      }
    }
    figures.limits++;
  });

  test(`REQUEST_TIMEOUT_MS ${TIMEOUT_MS}: a body that arrives well within it is taken; one that stalls is a 408 in the request's format`, async () => {
    const body = '{"Name":"slow but in time"}';
    const head = (accept: string) =>
      `POST ${SERVICE_PATH}/Catalogs HTTP/1.1\r\nHost: ${new URL(live.origin).host}\r\nSubscriptionToken: ${seller.token}\r\nCookie: .ASPXAUTH=${seller.cookie}\r\n` +
      `Accept: ${accept}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
    // A fifth of the limit between the two halves: a slow client, not a stalled one.
    const inTime = await slowRequest(live.origin, head(JSON_TYPE), body.slice(0, 10), body.slice(10), TIMEOUT_MS / 5);
    assert.equal(inTime.status, 201, inTime.body);
    for (const [accept, format] of [[JSON_TYPE, 'json'], [ATOM_TYPE, 'xml']] as const) {
      const stalled = await slowRequest(live.origin, head(accept), body.slice(0, 10), undefined, 0);
      assert.equal(stalled.status, 408, stalled.body);
      assert.match(odataErrorMessage(String(stalled.headers['content-type']), stalled.body, format), /did not arrive within the time limit/);
      figures.cases++;
    }
    // Nothing of the stalled requests was written, and the client's abort is no fault (live.close checks for 5xx lines).
    const count = await request(live.root + '/Catalogs/$count?$filter=' + q("Name eq 'slow but in time'"), { headers: seller.auth });
    assert.equal(count.body, '1');
    figures.cases++;
    figures.limits++;
    const faults = live.logLines.filter((l) => l.level === 50 || JSON.stringify(l).includes('"stack"'));
    assert.deepEqual(faults, [], 'a stalled client was logged as a fault');
  });
});

/** Resident set of a process now, in bytes (Linux VmRSS). */
function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

describe('1,000 over-limit requests in a row against `catalogue serve`', { timeout: 300_000 }, () => {
  const env = { MAX_BODY_BYTES: '16384', MAX_BATCH_BODY_BYTES: '65536' };
  let server: ServeProcess;
  let target: Target;
  before(async () => {
    const database = await freshDatabase();
    // V8 grows its heap lazily: usually about 2 MB per 1,000 requests until its first major
    // collections, then flat, but a CI run once measured 20.9 MB when V8 took a larger step
    // before collecting. The old space is capped in both tiers, so that what is measured is what
    // the process retains (a leak would exhaust the cap and fail requests), not when V8 collects.
    server = await serveProcess({ ...database.env, ...env }, [], ['--max-old-space-size=64']);
    const store = openStore(database.url, { ownerUrl: database.ownerUrl });
    try {
      const userName = `rss-${process.pid}`;
      const password = `${userName}-password`;
      const account = await createAccount(store, systemClock, { userName, password });
      const cookie = await loginAt(server.origin, userName, password);
      assert.ok(cookie);
      target = { origin: server.origin, auth: { SubscriptionToken: account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}` }, userName, password };
    } finally {
      await store.close();
    }
  });
  after(async () => {
    assert.equal(await server?.stop(), 0);
    assert.doesNotMatch(server?.output() ?? '', /"level":50|"status":5\d\d/, 'the child logged an error or a 5xx');
  });

  test('each is refused as its row says, and RSS grows less than 20 MB after a warm-up', async (t) => {
    const config = loadConfig(env);
    const rows = limitCases(config.limits, config.query);
    const total = byTier(1000, 5000);
    // The heap reaches its working size first: with the console's token activity and the
    // compressing responder both in the process, it grew once by about 19 MB between the 1,000th
    // and 2,000th request on PostgreSQL when run alone (5,000 after a warm-up of 1,000: 24.4 MB;
    // after one of 2,000: 5.3 MB), a step, not a slope; beside three other test files the step
    // came later (17.9 MB after a warm-up of 2,000). What is measured is what comes after it.
    const warmUp = 3000;
    let sent = 0;
    const runMix = async (count: number) => {
      // Four clients at once, each walking the table from its own offset.
      await Promise.all(
        [0, 1, 2, 3].map(async (lane) => {
          for (let i = lane; i < count; i += 4) {
            const row = rows[(i * 7) % rows.length]!;
            const [accept, format] = i % 2 === 0 ? [JSON_TYPE, 'json' as const] : [ATOM_TYPE, 'xml' as const];
            judge(row, await send(row.build(target, row.n + 1, accept), target.origin), false, format);
            sent++;
          }
        }),
      );
    };
    await runMix(warmUp);
    const before = rssOf(server.child.pid!);
    await runMix(total);
    const afterRss = rssOf(server.child.pid!);
    const growthMb = Math.round(((afterRss - before) / 1024 / 1024) * 10) / 10;
    figures.overLimitRequests = sent - warmUp;
    figures.rssGrowthMb = growthMb;
    // The session is still good: nothing in the mix broke the process.
    assert.equal((await request(svc(target) + '/', { headers: target.auth })).status, 200);
    reportFigures('limits', figures, t);
    assert.ok(afterRss - before < 20 * 1024 * 1024, `RSS grew by ${growthMb} MB over ${total} over-limit requests`);
  });
});

