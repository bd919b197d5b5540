/**
 * Malformed $batch requests over real HTTP never get a 5xx: not for the batch, and not for any
 * part inside a 202. Over 1,000 seeded bodies: mutations of valid bodies (the connector's
 * deletion, a datajs-style mix, Atom changesets, query parts) by byte flips, insertions of
 * framing fragments, cuts, truncations, fuzzed boundaries, lying Content-Length headers and line
 * endings; and a list of hand-written cases (nested changesets, a GET inside a changeset, an
 * undefined `$n`, bad request lines, targets, headers and bodies). Also a lying HTTP
 * Content-Length on the batch itself, over a raw socket. The live service fails the run on any
 * 5xx in its log; the fault log (level error) is checked too.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { mulberry32 } from '../support/random';
import type { HttpResponse } from '../support/http-client';
import {
  BATCH_BOUNDARY,
  CHANGESET_BOUNDARY,
  batchBody,
  changesetPart,
  connectorBody,
  connectorDeletion,
  createProductWithParts,
  httpPart,
  jsonOperation,
  multipart,
  postBatch,
  type ProductWithParts,
} from './support';

let live: LiveService;
let seller: Seller;
let product: ProductWithParts;

before(async () => {
  // A short request timeout: the raw-socket case below waits for it.
  live = await startLive({ env: { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1500' } });
  seller = await newSeller(live, 'fuzz');
  product = await createProductWithParts(live, seller, 'fuzz');
});
after(() => live.close());

const CONTENT_TYPE = `multipart/mixed; boundary=${BATCH_BOUNDARY}`;

interface Case {
  readonly name: string;
  readonly body: Buffer;
  readonly contentType?: string;
}

/** Valid bodies the mutations start from. */
function seeds(): Case[] {
  const p = product;
  const atom = (title: string) =>
    `<entry xmlns="http://www.w3.org/2005/Atom" xmlns:d="http://schemas.microsoft.com/ado/2007/08/dataservices" xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">` +
    `<content type="application/xml"><m:properties><d:Title>${title}</d:Title><d:Price m:type="Edm.Decimal">5</d:Price><d:StockAmount m:type="Edm.Int32">1</d:StockAmount></m:properties></content></entry>`;
  return [
    { name: 'connector', body: connectorBody(live.origin, connectorDeletion(p)) },
    {
      name: 'datajs mix',
      body: Buffer.from(
        batchBody([
          httpPart({ method: 'GET', target: 'Products?$top=2&$expand=ProductSpecifics', headers: ['Accept: application/json', 'MaxDataServiceVersion: 2.0'] }),
          changesetPart([
            jsonOperation('POST', 'Products', 1, { Title: 'Fuzz', Price: '1.5', StockAmount: 2 }),
            jsonOperation('POST', '$1/ProductSpecifics', 2, { Name: 'N', Value: 'V' }),
            jsonOperation('MERGE', `Products(${p.product}L)`, 3, { Brand: 'B' }),
            jsonOperation('POST', `$1/$links/Catalogs`, 4, { uri: `${live.root}/Catalogs(${p.catalogs[0]}L)` }),
            jsonOperation('DELETE', `ProductImages(${p.images[1]}L)`, 5),
          ]),
          httpPart({ method: 'GET', target: `ProductIsListed?productId=${p.product}L`, headers: ['Accept: application/json'] }),
        ]),
      ),
    },
    {
      name: 'atom changeset',
      body: Buffer.from(
        batchBody([
          changesetPart([
            httpPart({ method: 'POST', target: '/publicapi/v1/api.svc/Products', headers: ['Content-Type: application/atom+xml', 'Content-ID: 7'], body: atom('Atom') }),
            httpPart({ method: 'PUT', target: '$7', headers: ['Content-Type: application/atom+xml'], body: atom('Atom 2') }),
          ]),
        ]),
      ),
    },
    {
      name: 'queries',
      body: Buffer.from(
        batchBody([
          httpPart({ method: 'GET', target: '$metadata' }),
          httpPart({ method: 'GET', target: '/publicapi/v1/api.svc' }),
          httpPart({ method: 'GET', target: `Products(${p.product}L)/ProductVariations/$count`, headers: ['MaxDataServiceVersion: 2.0'] }, ['Content-ID: q1']),
          httpPart({ method: 'GET', target: `Catalogs?$filter=Name%20eq%20'x'&$format=json` }),
        ]),
      ),
    },
  ];
}

/** Fragments a mutation inserts: framing, syntax and bytes that parsers trip over. */
const FRAGMENTS = [
  '\r\n',
  '\n',
  '\r',
  '\r\n\r\n',
  `--${BATCH_BOUNDARY}\r\n`,
  `--${BATCH_BOUNDARY}--`,
  `--${CHANGESET_BOUNDARY}\r\n`,
  `--${CHANGESET_BOUNDARY}--\r\n`,
  'Content-Type: multipart/mixed; boundary=changeset_x\r\n\r\n--changeset_x\r\n',
  'Content-Type: application/http\r\n',
  'Content-Length: 99999\r\n',
  'Content-ID: 1\r\n',
  'Content-ID: \x01\r\n',
  'X-HTTP-Method: DELETE\r\n',
  'GET Products HTTP/1.1\r\n',
  'DELETE $1 HTTP/1.1\r\n',
  'MERGE $99 HTTP/1.1\r\n',
  ' HTTP/1.1',
  '$1',
  '%',
  '%zz',
  '#',
  '/../',
  '(',
  ')',
  "'",
  '"',
  '{',
  '}',
  '[',
  '<',
  '<!DOCTYPE x [<!ENTITY a "b">]>',
  '\u0000',
  '\xff\xfe',
  ':',
  ' ',
  '\t',
];

function mutate(rand: () => number, source: Buffer): { body: Buffer; how: string } {
  const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)]!;
  const at = () => Math.floor(rand() * (source.length + 1));
  const kind = Math.floor(rand() * 9);
  switch (kind) {
    case 0: {
      const body = Buffer.from(source);
      const flips = 1 + Math.floor(rand() * 4);
      for (let i = 0; i < flips; i++) body[Math.floor(rand() * body.length)] = Math.floor(rand() * 256);
      return { body, how: `flip ${flips}` };
    }
    case 1: {
      const i = at();
      const fragment = pick(FRAGMENTS);
      return { body: Buffer.concat([source.subarray(0, i), Buffer.from(fragment, 'latin1'), source.subarray(i)]), how: `insert ${JSON.stringify(fragment)} at ${i}` };
    }
    case 2: {
      const i = at();
      const length = Math.floor(rand() * 200);
      return { body: Buffer.concat([source.subarray(0, i), source.subarray(i + length)]), how: `cut ${length} at ${i}` };
    }
    case 3: {
      const i = at();
      return { body: source.subarray(0, i), how: `truncate at ${i}` };
    }
    case 4: {
      // A lying Content-Length on the changeset part or an inner request.
      const text = source.toString('latin1');
      const lie = pick(['0', '1', '-5', '99999999999999999999', 'abc', '', String(source.length * 2)]);
      return { body: Buffer.from(text.replace(/Content-Length: \d+/g, () => (rand() < 0.6 ? `Content-Length: ${lie}` : `Content-Length: ${Math.floor(rand() * 400)}`)), 'latin1'), how: `Content-Length ${lie}` };
    }
    case 5: {
      // A fuzzed boundary inside the body.
      const text = source.toString('latin1');
      const from = pick([BATCH_BOUNDARY, CHANGESET_BOUNDARY]);
      const to = pick(['', 'x', `${from}x`, from.slice(0, -1), from.toUpperCase(), `"${from}"`, 'a'.repeat(71), `${from} `, 'b\x00c']);
      let seen = 0;
      const nth = Math.floor(rand() * 6);
      return { body: Buffer.from(text.replace(new RegExp(from, 'g'), (m) => (seen++ === nth || rand() < 0.2 ? to : m)), 'latin1'), how: `boundary ${from} -> ${JSON.stringify(to)}` };
    }
    case 6: {
      // Line endings: all bare LF, some CR only, or mixed.
      const text = source.toString('latin1');
      const mode = pick(['lf', 'cr', 'mixed']);
      const body = mode === 'lf' ? text.replace(/\r\n/g, '\n') : mode === 'cr' ? text.replace(/\r\n/g, () => (rand() < 0.3 ? '\r' : '\r\n')) : text.replace(/\r\n/g, () => (rand() < 0.5 ? '\n' : '\r\n'));
      return { body: Buffer.from(body, 'latin1'), how: `line endings ${mode}` };
    }
    case 7: {
      // A slice of the body repeated somewhere else (duplicated parts, headers, delimiters).
      const from = at();
      const slice = source.subarray(from, from + Math.floor(rand() * 300));
      const i = at();
      return { body: Buffer.concat([source.subarray(0, i), slice, source.subarray(i)]), how: `duplicate ${slice.length} bytes at ${i}` };
    }
    default: {
      // Two mutations at once.
      const first = mutate(rand, source);
      const second = mutate(rand, first.body);
      return { body: second.body, how: `${first.how}; ${second.how}` };
    }
  }
}

/** Hand-written malformed requests, each naming its problem. */
function handWritten(): Case[] {
  const p = product;
  const text = (name: string, body: string, contentType?: string): Case => ({ name, body: Buffer.from(body, 'latin1'), ...(contentType ? { contentType } : {}) });
  const one = (op: string) => batchBody([changesetPart([op])]);
  const query = (requestLine: string, headers: string[] = [], body = '') => batchBody([`Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n${requestLine}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${body}`]);
  const op = (requestLine: string, headers: string[] = [], body = '') => one(`Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n${requestLine}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${body}`);
  const json = ['Content-Type: application/json', 'Accept: application/json'];
  const cases: Case[] = [
    text('nested changeset', batchBody([changesetPart([changesetPart([jsonOperation('DELETE', `Products(${p.product}L)`, 1)], 'changeset_inner')])])),
    text('GET inside a changeset', one(jsonOperation('GET', 'Products', 1))),
    text('POST outside a changeset', batchBody([jsonOperation('POST', 'Products', 1, { Title: 'x', Price: '1', StockAmount: 1 })])),
    text('undefined $n', one(jsonOperation('MERGE', '$1', 1, { Title: 'x' }))),
    text('$n of a later operation', batchBody([changesetPart([jsonOperation('MERGE', '$2', 1, { Title: 'x' }), jsonOperation('POST', 'Products', 2, { Title: 'x', Price: '1', StockAmount: 1 })])])),
    text('$n of a link operation', batchBody([changesetPart([jsonOperation('POST', `Products(${p.product}L)/$links/Catalogs`, 1, { uri: `${live.root}/Catalogs(${p.catalogs[0]}L)` }), jsonOperation('MERGE', '$1', 2, { Title: 'x' })])])),
    text('$n in a query part', query('GET $1 HTTP/1.1')),
    text('a bare $', one(jsonOperation('DELETE', '$', 1))),
    text('duplicate Content-IDs', batchBody([changesetPart([jsonOperation('POST', 'Catalogs', 1, { Name: 'a' }), jsonOperation('POST', 'Catalogs', 1, { Name: 'b' })])])),
    text('Content-ID with a CR', one(jsonOperation('POST', 'Catalogs', '1\r2', { Name: 'a' }))),
    text('Content-ID with a control character', one(jsonOperation('POST', 'Catalogs', '\x07', { Name: 'a' }))),
    text('different Content-IDs in part and request', batchBody([changesetPart([httpPart({ method: 'POST', target: 'Catalogs', headers: ['Content-ID: 1', ...json], body: '{"Name":"a"}' }, ['Content-ID: 2'])])])),
    text('no request line', query('')),
    text('request line without version', query('GET Products')),
    text('request line with HTTP/2.0', query('GET Products HTTP/2.0')),
    text('request line with four words', query('GET Products HTTP/1.1 extra')),
    text('unknown method', op('FOO Products HTTP/1.1')),
    text('lower-case method', op('delete Products(1L) HTTP/1.1')),
    text('HEAD in a query part', query('HEAD Products HTTP/1.1')),
    text('a target with a fragment', query('GET Products#x HTTP/1.1')),
    text('a target with ..', query('GET /publicapi/v1/api.svc/../other HTTP/1.1')),
    text('a target outside the service', query('GET http://127.0.0.1/other/path HTTP/1.1')),
    text('an ftp target', query('GET ftp://host/publicapi/v1/api.svc/Products HTTP/1.1')),
    text('bad percent-encoding', query('GET Products?$filter=%zz HTTP/1.1')),
    text('bad percent-encoding in the path', query('GET Pro%zzducts HTTP/1.1')),
    text('a malformed key', op('DELETE Products(abc) HTTP/1.1', json)),
    text('a key beyond Int64', op('DELETE Products(99999999999999999999999L) HTTP/1.1', json)),
    text('an unknown set', op('DELETE Prodcts(1L) HTTP/1.1', json)),
    text('an unknown system option', query('GET Products?$foo=1 HTTP/1.1')),
    text('an invalid $filter', query("GET Products?$filter=Title eq 'x HTTP/1.1", ['Accept: application/json'])),
    text('a target longer than the URL limit', query(`GET Products?$filter=${'a'.repeat(5000)} HTTP/1.1`)),
    text('a request line longer than the header limit', query(`GET Products?x=${'a'.repeat(20000)} HTTP/1.1`)),
    text('POST to $metadata', op('POST $metadata HTTP/1.1', json)),
    text('POST to the service document', op('POST / HTTP/1.1', json)),
    text('$batch inside a batch', query('GET $batch HTTP/1.1')),
    text('$batch inside a changeset', op('POST $batch HTTP/1.1', json)),
    text('DELETE of a collection', op('DELETE Products HTTP/1.1', json)),
    text('POST to an entity', op(`POST Products(${p.product}L) HTTP/1.1`, json, '{}')),
    text('PUT of a property', op(`PUT Products(${p.product}L)/Title HTTP/1.1`, json, '{"Title":"x"}')),
    text('a GET-only operation in a changeset', op(`POST ProductIsListed?productId=${p.product}L HTTP/1.1`, json)),
    text('a POST operation with a bad parameter', op('POST ReviseInventoryStatus?productId=abc HTTP/1.1', json)),
    text('X-HTTP-Method inside', op(`POST Products(${p.product}L) HTTP/1.1`, [...json, 'X-HTTP-Method: MERGE'], '{}')),
    text('a header line without a colon', op(`DELETE Products(${p.product}L) HTTP/1.1`, ['Accept application/json'])),
    text('a continuation line first', op(`DELETE Products(${p.product}L) HTTP/1.1`, [' folded'])),
    text('DataServiceVersion 3.0', op(`MERGE Products(${p.product}L) HTTP/1.1`, [...json, 'DataServiceVersion: 3.0'], '{}')),
    text('DataServiceVersion garbage', query('GET Products HTTP/1.1', ['DataServiceVersion: x.y'])),
    text('MaxDataServiceVersion 0.5', query('GET Products HTTP/1.1', ['MaxDataServiceVersion: 0.5'])),
    text('a V2 feature with MaxDataServiceVersion 1.0', query('GET Products?$inlinecount=allpages HTTP/1.1', ['MaxDataServiceVersion: 1.0'])),
    text('an Accept nothing matches', query('GET Products HTTP/1.1', ['Accept: image/png'])),
    text('an Accept of garbage', query('GET Products HTTP/1.1', ['Accept: ;;;,,,q=x'])),
    text('$format garbage', query('GET Products?$format=%3C%3E HTTP/1.1')),
    text('invalid JSON', op('POST Products HTTP/1.1', json, '{"Title":')),
    text('JSON of the wrong shape', op('POST Products HTTP/1.1', json, '[1,2,3]')),
    text('JSON nested too deep', op('POST Products HTTP/1.1', json, '['.repeat(5000) + ']'.repeat(5000))),
    text('JSON with wrong types', op('POST Products HTTP/1.1', json, '{"Title":{"a":1},"Price":true,"StockAmount":"x"}')),
    text('JSON with an unknown property', op('POST Products HTTP/1.1', json, '{"Nope":1}')),
    text('JSON with invalid UTF-8', op('POST Products HTTP/1.1', json, '{"Title":"\xff\xfe\xc3"}')),
    text('an empty body for a POST', op('POST Products HTTP/1.1', json)),
    text('a body with Content-Type text/plain', op('POST Products HTTP/1.1', ['Content-Type: text/plain'], 'Title=x')),
    text('a body without Content-Type', op('POST Products HTTP/1.1', [], '{"Title":"x"}')),
    text('Atom with a DOCTYPE', op('POST Products HTTP/1.1', ['Content-Type: application/atom+xml'], '<!DOCTYPE entry [<!ENTITY x "y">]><entry xmlns="http://www.w3.org/2005/Atom"/>')),
    text('Atom that is not XML', op('POST Products HTTP/1.1', ['Content-Type: application/atom+xml'], '<entry><unclosed>')),
    text('a link body that is no URI', op(`POST Products(${p.product}L)/$links/Catalogs HTTP/1.1`, json, '{"uri":"not a uri"}')),
    text('a link to another set', op(`POST Products(${p.product}L)/$links/Catalogs HTTP/1.1`, json, `{"uri":"${live.root}/Products(${p.product}L)"}`)),
    text('Content-Transfer-Encoding base64', batchBody([changesetPart([`Content-Type: application/http\r\nContent-Transfer-Encoding: base64\r\n\r\nREVMRVRF`])])),
    text('a part without Content-Type', batchBody(['\r\nGET Products HTTP/1.1\r\n\r\n'])),
    text('a part of another type', batchBody(['Content-Type: text/plain\r\n\r\nhello'])),
    text('a changeset without boundary', batchBody(['Content-Type: multipart/mixed\r\n\r\n--x\r\n--x--'])),
    text('a changeset with a boundary that does not match', batchBody(['Content-Type: multipart/mixed; boundary=other\r\n\r\n--x\r\n--x--'])),
    text('a changeset without its closing', `--${BATCH_BOUNDARY}\r\nContent-Type: multipart/mixed; boundary=${CHANGESET_BOUNDARY}\r\n\r\n--${CHANGESET_BOUNDARY}\r\n${jsonOperation('DELETE', 'Products(1L)', 1)}\r\n--${BATCH_BOUNDARY}--\r\n`),
    text('an empty changeset', batchBody([`Content-Type: multipart/mixed; boundary=${CHANGESET_BOUNDARY}\r\n\r\n--${CHANGESET_BOUNDARY}--\r\n`])),
    text('no closing delimiter', `--${BATCH_BOUNDARY}\r\n${jsonOperation('GET', 'Products', undefined)}\r\n`),
    text('no delimiter at all', 'GET Products HTTP/1.1\r\n\r\n'),
    text('an empty body', ''),
    text('only the closing delimiter', `--${BATCH_BOUNDARY}--\r\n`),
    text('a header block without end', `--${BATCH_BOUNDARY}\r\nContent-Type: application/http\r\n--${BATCH_BOUNDARY}--`),
    text('a huge header block', batchBody([`Content-Type: application/http\r\n${'X-A: b\r\n'.repeat(3000)}\r\nGET Products HTTP/1.1\r\n\r\n`])),
    text('a boundary in quotes in the body', batchBody([jsonOperation('GET', 'Products', undefined)]), `multipart/mixed; boundary="${BATCH_BOUNDARY}"`),
    text('a boundary of 71 characters', multipart('b'.repeat(71), [jsonOperation('GET', 'Products', undefined)]), `multipart/mixed; boundary=${'b'.repeat(71)}`),
    text('a boundary with a space at the end', multipart('b ', [jsonOperation('GET', 'Products', undefined)]), 'multipart/mixed; boundary="b "'),
    text('an empty boundary', batchBody([jsonOperation('GET', 'Products', undefined)]), 'multipart/mixed; boundary='),
    text('a boundary with a character boundaries cannot hold', batchBody([jsonOperation('GET', 'Products', undefined)]), 'multipart/mixed; boundary=a@b'),
    text('an unclosed quoted boundary', batchBody([jsonOperation('GET', 'Products', undefined)]), `multipart/mixed; boundary="${BATCH_BOUNDARY}`),
    text('a boundary the body does not use', batchBody([jsonOperation('GET', 'Products', undefined)]), 'multipart/mixed; boundary=batch_other'),
    text('no boundary parameter', batchBody([jsonOperation('GET', 'Products', undefined)]), 'multipart/mixed'),
    text('a Content-Type that is no media type', batchBody([]), 'multipart'),
    text('a Content-Type of another type', batchBody([]), 'application/json'),
    text('changesets with the same boundary as the batch', batchBody([changesetPart([jsonOperation('DELETE', 'Products(1L)', 1)], BATCH_BOUNDARY)])),
  ];
  return cases;
}

interface Outcome {
  readonly status: number;
  readonly innerStatuses: number[];
}

/** The statuses inside a 202 answer, found the connector's way; fails the test when it does not parse. */
function innerStatuses(res: HttpResponse): number[] {
  const boundary = /boundary=(.*)/.exec(String(res.headers['content-type']))?.[1];
  assert.ok(boundary, 'a 202 names its boundary');
  assert.ok(res.body.endsWith(`--${boundary}--\r\n`), 'the answer is complete');
  return [...res.body.matchAll(/\r\nHTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

async function send(c: Case): Promise<Outcome> {
  const res = await postBatch(live, seller, c.body, c.contentType ?? CONTENT_TYPE);
  assert.ok(res.status < 500, `${c.name}: ${res.status} ${res.body.slice(0, 300)}`);
  if (res.status === 202) {
    const statuses = innerStatuses(res);
    assert.ok(statuses.every((s) => s < 500), `${c.name}: an inner ${statuses.find((s) => s >= 500)}: ${res.body.slice(0, 600)}`);
    return { status: 202, innerStatuses: statuses };
  }
  assert.ok(res.status >= 400, `${c.name}: ${res.status}`);
  assert.ok(/"error"|<error/.test(res.body), `${c.name}: an OData error body: ${res.body.slice(0, 200)}`);
  return { status: res.status, innerStatuses: [] };
}

function faultsLogged(): unknown[] {
  return live.logLines.filter((line) => typeof line.level === 'number' && line.level >= 50);
}

describe('malformed batches over HTTP', () => {
  test('hand-written malformed requests: each a 4xx, or a 202 whose parts are all below 500', async () => {
    const outcomes = new Map<string, Outcome>();
    for (const c of handWritten()) outcomes.set(c.name, await send(c));
    assert.ok(outcomes.size >= 80, `${outcomes.size} cases`);
    // Spot checks that the cases reach what they name.
    assert.equal(outcomes.get('nested changeset')!.status, 400);
    assert.equal(outcomes.get('GET inside a changeset')!.status, 400);
    assert.deepEqual(outcomes.get('undefined $n')!.innerStatuses, [400]);
    assert.deepEqual(outcomes.get('$n of a link operation')!.innerStatuses, [400]);
    assert.deepEqual(outcomes.get('Content-ID with a CR')!.innerStatuses, [400]);
    assert.deepEqual(outcomes.get('a target longer than the URL limit')!.innerStatuses, [414]);
    assert.deepEqual(outcomes.get('POST to $metadata')!.innerStatuses, [405]);
    assert.deepEqual(outcomes.get('a body with Content-Type text/plain')!.innerStatuses, [415]);
    assert.deepEqual(outcomes.get('Atom with a DOCTYPE')!.innerStatuses, [400]);
    assert.deepEqual(outcomes.get('an empty changeset')!, { status: 202, innerStatuses: [] });
    assert.equal(outcomes.get('a Content-Type of another type')!.status, 415);
    assert.equal(outcomes.get('no boundary parameter')!.status, 400);
    assert.deepEqual(faultsLogged(), []);
  });

  test('1,200 seeded mutations of valid bodies: never a 5xx, outside or inside', async () => {
    const rand = mulberry32(0x6a7c4);
    const sources = seeds();
    // The seeds themselves are valid: each is answered 202 (and the connector's deletion runs).
    for (const source of sources) assert.equal((await send(source)).status, 202, source.name);
    const tally = new Map<number, number>();
    const count = (status: number) => tally.set(status, (tally.get(status) ?? 0) + 1);
    for (let i = 0; i < 1200; i++) {
      const source = sources[i % sources.length]!;
      const { body, how } = mutate(rand, source.body);
      const outcome = await send({ name: `#${i} ${source.name}: ${how}`, body });
      count(outcome.status);
      outcome.innerStatuses.forEach(count);
    }
    // The mutations reach both the framing (400s) and the operations (202s with failed parts).
    assert.ok((tally.get(400) ?? 0) > 100, JSON.stringify([...tally]));
    assert.ok((tally.get(202) ?? 0) > 100, JSON.stringify([...tally]));
    assert.deepEqual(faultsLogged(), []);
  });

  test('a lying HTTP Content-Length on the batch itself: shorter than the body, and longer (the request times out)', async () => {
    const body = Buffer.from(batchBody([httpPart({ method: 'GET', target: 'Products' })]));
    const head = (length: number) =>
      `POST /publicapi/v1/api.svc/$batch HTTP/1.1\r\nHost: 127.0.0.1\r\nSubscriptionToken: ${seller.token}\r\nCookie: .ASPXAUTH=${seller.cookie}\r\n` +
      `Content-Type: ${CONTENT_TYPE}\r\nContent-Length: ${length}\r\n\r\n`;
    for (const [length, expected] of [
      [body.length - 20, /^HTTP\/1\.1 400 /],
      [body.length + 50, /^HTTP\/1\.1 408 /],
    ] as const) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(new URL(live.origin).port), '127.0.0.1');
        let received = '';
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
        socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
        socket.write(head(length));
        socket.write(body);
      });
      assert.match(answer, expected, answer.slice(0, 300));
      assert.ok(![...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].some((m) => Number(m[1]) >= 500), answer.slice(0, 500));
    }
    assert.deepEqual(faultsLogged(), []);
  });
});
