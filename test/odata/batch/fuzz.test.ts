/**
 * Robustness of parseBatchRequest: seeded fuzzing of malformed bodies (truncations at every
 * position, byte flips, garbled boundaries, lying Content-Lengths, nested changesets, GET inside
 * changesets, header junk, splices, random bytes), where every case must either parse into a
 * well-formed result or be a 400 ODataError, each within 100 ms; and 4 MiB bodies, valid and
 * pathological, each parsed in well under 100 ms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';

import { BATCH_METHODS, type BatchRequestPart, parseBatchRequest, resolveTarget } from '../../../src/odata/batch';
import { ODataError } from '../../../src/odata/errors';
import { mulberry32 } from '../../support/random';
import { batch, changesetPart, CONNECTOR_CONTENT_TYPE, connectorBody, httpPart, multipart, SERVICE_PATH } from './fixtures';

/**
 * The issue's own bound for any answer (1 s): far above the normal parse time (a few ms), so it
 * fails only for a pathological algorithm (backtracking, quadratic splitting), not because CI
 * runs other tests on the same two cores.
 */
const CASE_BUDGET_MS = 1000;

/** datajs's bytes for a GET and two changesets, as its batch writer produced them. */
const DATAJS_CONTENT_TYPE = 'multipart/mixed;boundary=batch_c329-108e-374d';
const DATAJS_BODY = Buffer.from(
  '\r\n--batch_c329-108e-374d\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n' +
    'GET Products HTTP/1.1\r\nAccept: application/atomsvc+xml;q=0.8, application/json;odata=verbose;q=0.5, */*;q=0.1\r\nMaxDataServiceVersion: 2.0\r\n\r\n' +
    '\r\n--batch_c329-108e-374d\r\nContent-Type: multipart/mixed; boundary=changeset_68c9-b730-a8fb\r\n\r\n' +
    '--changeset_68c9-b730-a8fb\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n' +
    'POST Products HTTP/1.1\r\nContent-ID: 1\r\nAccept: application/atomsvc+xml;q=0.8, application/json;odata=verbose;q=0.5, */*;q=0.1\r\n' +
    'DataServiceVersion: 1.0\r\nContent-Type: application/json;odata=verbose\r\nMaxDataServiceVersion: 2.0\r\n\r\n{"Name":"B"}' +
    '\r\n--changeset_68c9-b730-a8fb\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n' +
    'DELETE Products(1L) HTTP/1.1\r\nContent-ID: 2\r\nAccept: application/atomsvc+xml;q=0.8, application/json;odata=verbose;q=0.5, */*;q=0.1\r\nMaxDataServiceVersion: 2.0\r\n\r\n' +
    '\r\n--changeset_68c9-b730-a8fb--\r\n\r\n--batch_c329-108e-374d\r\nContent-Type: multipart/mixed; boundary=changeset_8c04-2b2c-2a8e\r\n\r\n' +
    '--changeset_8c04-2b2c-2a8e\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n' +
    'MERGE Products(2L) HTTP/1.1\r\nDataServiceVersion: 1.0\r\nContent-Type: application/json;odata=verbose\r\n\r\n{"Name":"é"}' +
    '\r\n--changeset_8c04-2b2c-2a8e--\r\n\r\n--batch_c329-108e-374d--\r\n',
  'utf8',
);

/** Queries, changesets with $n references and part-header Content-IDs, a PATCH and a PUT. */
const MIXED = batch([
  httpPart('GET Products?$top=1 HTTP/1.1', ['Accept: application/json']),
  changesetPart('cs_1', [
    httpPart('POST Products HTTP/1.1', ['Content-Type: application/json', 'Content-Length: 2'], '{}', ['Content-ID: 1']),
    httpPart('POST $1/ProductImages HTTP/1.1', ['Content-ID: 2', 'Content-Type: application/json'], '{"Url":"u"}'),
    httpPart('PATCH /publicapi/v1/api.svc/Products(3L) HTTP/1.1', ['Content-ID: 3'], '{"Title":"t"}'),
    httpPart('DELETE https://h/publicapi/v1/api.svc/Products(4L) HTTP/1.1', ['Content-ID: 4']),
  ]),
  httpPart('GET $metadata HTTP/1.1'),
  changesetPart('cs_2', [httpPart('PUT Products(5L) HTTP/1.1', [], '{"Title":"p"}')]),
]);

interface Seed {
  readonly name: string;
  readonly contentType: string;
  readonly body: Buffer;
  readonly boundary: string;
}

const SEEDS: readonly Seed[] = [
  { name: 'connector', contentType: CONNECTOR_CONTENT_TYPE, body: connectorBody(), boundary: 'batch_36522ad7-fc75-4b56-8c71-56071383e77b' },
  { name: 'datajs', contentType: DATAJS_CONTENT_TYPE, body: DATAJS_BODY, boundary: 'batch_c329-108e-374d' },
  { name: 'mixed', contentType: MIXED.contentType, body: MIXED.body, boundary: 'batch_b' },
  { name: 'mixed-lf', contentType: MIXED.contentType, body: Buffer.from(MIXED.body.toString('latin1').replace(/\r\n/g, '\n'), 'latin1'), boundary: 'batch_b' },
];

/** What a successful parse must look like, whatever the input was. */
function assertWellFormed(parts: BatchRequestPart[]): void {
  for (const part of parts) {
    const requests = part.kind === 'query' ? [part.request] : part.requests;
    const contentIds = new Set<string>();
    for (const request of requests) {
      assert.ok(BATCH_METHODS.has(request.method));
      assert.equal(request.method === 'GET', part.kind === 'query');
      assert.ok(Buffer.isBuffer(request.body));
      assert.ok(request.target.length > 0 && !/[ \t\r\n]/.test(request.target));
      for (const name of request.headers.keys()) assert.equal(name, name.toLowerCase());
      if (part.kind === 'changeset' && request.contentId !== undefined) {
        assert.ok(!contentIds.has(request.contentId));
        contentIds.add(request.contentId);
      }
      try {
        resolveTarget(request.target, SERVICE_PATH);
      } catch (e) {
        assert.ok(e instanceof ODataError && e.status === 400, `resolveTarget threw ${String(e)}`);
      }
    }
  }
}

interface Tally {
  parsed: number;
  rejected: number;
}

/** Parses one case: a well-formed result or a 400 ODataError with a short, clean message, in budget. */
function runCase(label: string, contentType: string, body: Buffer, tally: Tally): BatchRequestPart[] | ODataError {
  const started = performance.now();
  let outcome: BatchRequestPart[] | ODataError;
  try {
    outcome = parseBatchRequest(contentType, body);
  } catch (e) {
    if (!(e instanceof ODataError)) assert.fail(`${label}: threw ${String(e)} instead of an ODataError`);
    outcome = e;
  }
  const elapsed = performance.now() - started;
  assert.ok(elapsed < CASE_BUDGET_MS, `${label}: took ${elapsed.toFixed(1)} ms`);
  if (outcome instanceof ODataError) {
    assert.equal(outcome.status, 400, label);
    assert.doesNotMatch(outcome.message, /[\u0000-\u001f\u007f-\u009f]/, label);
    assert.ok(outcome.message.length < 400, `${label}: message of ${outcome.message.length} characters`);
    tally.rejected++;
  } else {
    assertWellFormed(outcome);
    tally.parsed++;
  }
  return outcome;
}

const INTERESTING = [0x0d, 0x0a, 0x2d, 0x3a, 0x20, 0x09, 0x3b, 0x22, 0x24, 0x00, 0xff, 0x7f];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}
const int = (random: () => number, below: number) => Math.floor(random() * below);

function randomBytes(random: () => number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => (random() < 0.3 ? pick(random, INTERESTING) : int(random, 256))));
}

function randomText(random: () => number, length: number, alphabet: string): string {
  return Array.from({ length }, () => alphabet[int(random, alphabet.length)]).join('');
}

/** Offsets of every line start in `body`. */
function lineStarts(body: Buffer): number[] {
  const starts = [0];
  for (let i = 0; i < body.length; i++) if (body[i] === 0x0a) starts.push(i + 1);
  return starts;
}

test('truncated at every position, a valid body either still parses or is a 400', () => {
  const tally: Tally = { parsed: 0, rejected: 0 };
  for (const seed of SEEDS) {
    for (let length = 0; length < seed.body.length; length++) {
      runCase(`${seed.name} cut at ${length}`, seed.contentType, seed.body.subarray(0, length), tally);
    }
    // The whole body parses.
    assert.ok(!(runCase(`${seed.name} whole`, seed.contentType, seed.body, tally) instanceof ODataError));
  }
  assert.ok(tally.rejected > 1000, `${tally.rejected} truncations refused`);
});

test('seeded fuzz: at least 1,000 malformed bodies, each parsed or refused with a 400, none slow', () => {
  const random = mulberry32(0x8a7c4e11);
  const tally: Tally = { parsed: 0, rejected: 0 };
  let cases = 0;
  const run = (label: string, contentType: string, body: Buffer) => {
    cases++;
    return runCase(label, contentType, body, tally);
  };

  for (let i = 0; i < 400; i++) {
    // Random byte flips, weighted towards the bytes that carry the framing.
    const seed = pick(random, SEEDS);
    const body = Buffer.from(seed.body);
    const flips = 1 + int(random, 8);
    for (let f = 0; f < flips; f++) body[int(random, body.length)] = random() < 0.7 ? pick(random, INTERESTING) : int(random, 256);
    run(`flip ${i} of ${seed.name}`, seed.contentType, body);
  }

  const boundaryAlphabet = 'abAB09_-.:=?+()\'", ;\t\r\n\u0000\\/@';
  for (let i = 0; i < 150; i++) {
    // Garbled boundaries in the Content-Type.
    const seed = pick(random, SEEDS);
    const variants = [
      `multipart/mixed; boundary=${randomText(random, int(random, 80), boundaryAlphabet)}`,
      `multipart/mixed; boundary="${seed.boundary}${random() < 0.5 ? '' : '"'}`,
      `multipart/mixed; boundary=${seed.boundary.slice(0, int(random, seed.boundary.length))}`,
      `multipart/mixed; boundary=${seed.boundary.toUpperCase()}`,
      `multipart/mixed; boundary=${seed.boundary}${randomText(random, 1 + int(random, 3), boundaryAlphabet)}`,
      randomText(random, int(random, 120), `${boundaryAlphabet}multipart/mixedboundary`),
      `multipart/mixed; ${randomText(random, int(random, 40), boundaryAlphabet)}boundary=${seed.boundary}`,
    ];
    run(`content type ${i}`, pick(random, variants), seed.body);
  }

  for (let i = 0; i < 150; i++) {
    // Garbled boundaries in the body: one delimiter (of either level) mutated.
    const seed = pick(random, SEEDS);
    const text = seed.body.toString('latin1');
    const delimiters = [...text.matchAll(/--[A-Za-z0-9_-]+/g)];
    const chosen = pick(random, delimiters);
    const at = chosen.index + int(random, chosen[0].length);
    const mutated = text.slice(0, at) + randomText(random, int(random, 3), 'xX-_\r\n ') + text.slice(at + int(random, 3));
    run(`body boundary ${i} of ${seed.name}`, seed.contentType, Buffer.from(mutated, 'latin1'));
  }

  for (let i = 0; i < 100; i++) {
    // Lying Content-Lengths (inner and changeset-level) never change the framing: the batch is
    // refused with a 400 naming a Content-Length, or (when no value changed) parsed as before.
    const seed = pick(random, SEEDS);
    const original = parseBatchRequest(seed.contentType, seed.body);
    const text = seed.body.toString('latin1');
    const lying = text.replace(/Content-Length: \d+/g, () => `Content-Length: ${pick(random, ['0', '-1', '1', '99999999999999999999999', 'abc', '', '1e9', String(int(random, 1 << 30))])}`);
    const outcome = run(`lying length ${i} of ${seed.name}`, seed.contentType, Buffer.from(lying, 'latin1'));
    if (outcome instanceof ODataError) {
      assert.match(outcome.message, /^Batch part \d+(, changeset operation \d+)?: the (part|request)'s Content-Length .*(does not match|is not a number of bytes)/);
    } else {
      assert.equal(lying, text, `a changed Content-Length was accepted: ${lying}`);
      assert.deepEqual(
        outcome.map((p) => (p.kind === 'query' ? [p.request] : p.requests).map((r) => r.body)),
        original.map((p) => (p.kind === 'query' ? [p.request] : p.requests).map((r) => r.body)),
      );
    }
  }

  for (let i = 0; i < 60; i++) {
    // A changeset nested inside a changeset, at a random position.
    const operations = Array.from({ length: 1 + int(random, 4) }, (_, k) => httpPart(`DELETE Products(${k}L) HTTP/1.1`));
    operations.splice(int(random, operations.length + 1), 0, changesetPart(`inner_${i}`, [httpPart('DELETE Products(9L) HTTP/1.1')]));
    const { contentType, body } = batch([changesetPart(`outer_${i}`, operations)]);
    const outcome = run(`nested changeset ${i}`, contentType, body);
    assert.ok(outcome instanceof ODataError && /may not contain another changeset/.test(outcome.message));
  }

  for (let i = 0; i < 60; i++) {
    // A GET inside the connector's changeset, in place of a random operation.
    const text = connectorBody().toString('latin1');
    const requestLines = [...text.matchAll(/^(DELETE|MERGE) /gm)];
    const chosen = pick(random, requestLines);
    const edited = text.slice(0, chosen.index) + 'GET ' + text.slice(chosen.index + chosen[0].length);
    // The changeset part's Content-Length (the first in the body) follows the edit, as the connector's would.
    const withGet = edited.replace(/Content-Length: (\d+)/, (_, n: string) => `Content-Length: ${Number(n) - (chosen[0].length - 4)}`);
    const outcome = run(`GET in changeset ${i}`, CONNECTOR_CONTENT_TYPE, Buffer.from(withGet, 'latin1'));
    assert.ok(outcome instanceof ODataError && /GET request may not be inside a changeset/.test(outcome.message));
  }

  for (let i = 0; i < 200; i++) {
    // Junk lines inserted at a random line start (header blocks, request lines, bodies).
    const seed = pick(random, SEEDS);
    const at = pick(random, lineStarts(seed.body));
    const junk = random() < 0.5 ? randomBytes(random, int(random, 40)) : Buffer.from(`${randomText(random, 1 + int(random, 12), 'Xx-:; \t')}: ${randomText(random, int(random, 20), 'ab;=" \t')}`);
    const body = Buffer.concat([seed.body.subarray(0, at), junk, Buffer.from(random() < 0.8 ? '\r\n' : '\n'), seed.body.subarray(at)]);
    run(`header junk ${i} of ${seed.name}`, seed.contentType, body);
  }

  for (let i = 0; i < 150; i++) {
    // Splices: a random range deleted, or copied to a random position.
    const seed = pick(random, SEEDS);
    const from = int(random, seed.body.length);
    const to = Math.min(seed.body.length, from + 1 + int(random, 200));
    const at = int(random, seed.body.length);
    const body =
      random() < 0.5
        ? Buffer.concat([seed.body.subarray(0, from), seed.body.subarray(to)])
        : Buffer.concat([seed.body.subarray(0, at), seed.body.subarray(from, to), seed.body.subarray(at)]);
    run(`splice ${i} of ${seed.name}`, seed.contentType, body);
  }

  for (let i = 0; i < 100; i++) {
    // Random bytes with real delimiters sprinkled in.
    const pieces: Buffer[] = [];
    for (let k = int(random, 12); k > 0; k--) {
      pieces.push(randomBytes(random, int(random, 60)));
      pieces.push(Buffer.from(pick(random, ['\r\n--batch_b\r\n', '\r\n--batch_b--\r\n', 'Content-Type: application/http\r\n\r\n', 'Content-Type: multipart/mixed; boundary=cs\r\n\r\n', '\r\n--cs\r\n', '\r\n--cs--\r\n', 'GET x HTTP/1.1\r\n', 'POST x HTTP/1.1\r\n'])));
    }
    run(`random ${i}`, 'multipart/mixed; boundary=batch_b', Buffer.concat(pieces));
  }

  assert.ok(cases >= 1000, `${cases} cases`);
  assert.ok(tally.parsed > 0 && tally.rejected > 0, `parsed ${tally.parsed}, refused ${tally.rejected}`);
});

/**
 * The fastest of five runs, after a warm-up: the budget is about the algorithm, not the JIT or
 * another test process on the same core.
 */
function fastestMs(run: () => unknown): number {
  run();
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    run();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

const FOUR_MIB = 4 * 1024 * 1024;

/** Parses `body` (or expects a 400), returning the fastest time. */
function timed(contentType: string, body: Buffer): number {
  return fastestMs(() => {
    try {
      parseBatchRequest(contentType, body);
    } catch (e) {
      assert.ok(e instanceof ODataError && e.status === 400, String(e));
    }
  });
}

test('4 MiB bodies, valid and pathological, parse in well under 100 ms', () => {
  const CT = 'multipart/mixed; boundary=batch_b';
  const oneOperation = (operation: string) =>
    Buffer.from(`--batch_b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n--cs\r\n${operation}\r\n--cs--\r\n--batch_b--\r\n`, 'latin1');
  const fill = (unit: string) => unit.repeat(Math.ceil(FOUR_MIB / unit.length));

  // 100 bodies and their headers within 4 MiB.
  const OPERATION_BODY = Math.floor((FOUR_MIB - 64 * 1024) / 100);
  const bigBodies = Array.from({ length: 100 }, (_, i) => httpPart(`POST Products HTTP/1.1`, [`Content-ID: ${i}`], fill('a\r\n-\n').slice(0, OPERATION_BODY)));
  const cases: [string, string, Buffer][] = [
    ['100 operations of 40 KiB', CT, Buffer.from(multipart('batch_b', [changesetPart('cs', bigBodies)]), 'latin1')],
    ['near-miss delimiters at every line start', CT, oneOperation(httpPart('POST Products HTTP/1.1', [], fill('\n--csX')))],
    ['--boundary everywhere but never at a line start', CT, Buffer.from(`--batch_b\r\n${fill('x--batch_b')}`, 'latin1')],
    ['dashes only', CT, Buffer.from(fill('-'), 'latin1')],
    ['a header block of 4 MiB', CT, oneOperation(httpPart('POST Products HTTP/1.1', fill('a: b\r\n').split('\r\n').slice(0, -1), '{}'))],
    ['4 MiB of continuation lines', CT, oneOperation(httpPart('POST Products HTTP/1.1', ['X-Long: a', ...fill(' b\r\n').split('\r\n').slice(0, -1)], '{}'))],
    ['4 MiB of repeated headers', CT, oneOperation(httpPart('POST Products HTTP/1.1', fill('X-A: b\r\n').split('\r\n').slice(0, -1), '{}'))],
    ['a part Content-Type of 4 MiB of semicolons', CT, Buffer.from(`--batch_b\r\nContent-Type: application/http${fill(';')}\r\n\r\nGET x HTTP/1.1\r\n\r\n--batch_b--`, 'latin1')],
    ['a quoted parameter of 4 MiB of escapes', CT, Buffer.from(`--batch_b\r\nContent-Type: multipart/mixed; x="${fill('\\"')}"; boundary=cs\r\n\r\n--cs--\r\n--batch_b--`, 'latin1')],
    ['a request line of 4 MiB', CT, oneOperation(httpPart(`POST ${fill('x ')}HTTP/1.1`))],
    ['a target of 4 MiB', CT, oneOperation(httpPart(`POST ${fill('x')} HTTP/1.1`))],
    ['4 MiB of empty lines before the request line', CT, oneOperation(`Content-Type: application/http\r\n\r\n${fill('\r\n')}POST x HTTP/1.1\r\n`)],
    ['a million empty parts', CT, Buffer.from(fill('--batch_b\r\n'), 'latin1')],
    ['10,000 operations in 100 changesets', CT, Buffer.from(multipart('batch_b', Array.from({ length: 100 }, (_, c) => changesetPart(`cs${c}`, Array.from({ length: 100 }, (_, k) => httpPart(`DELETE Products(${k}L) HTTP/1.1`, [`Content-ID: ${k}`]))))), 'latin1')],
  ];
  for (const [name, contentType, body] of cases) {
    assert.ok(body.length <= FOUR_MIB + 1024 || name === '10,000 operations in 100 changesets', `${name}: ${body.length} bytes`);
    const ms = timed(contentType, body);
    if (process.env.BATCH_TIMINGS) console.log(`${name}: ${ms.toFixed(1)} ms`);
    assert.ok(ms < CASE_BUDGET_MS, `${name}: ${ms.toFixed(1)} ms`);
  }
  // The valid 4 MiB batch really parses, every body whole.
  const parts = parseBatchRequest(CT, cases[0]![2]);
  const first = parts[0];
  assert.ok(first?.kind === 'changeset' && first.requests.length === 100 && first.requests.every((r) => r.body.length === OPERATION_BODY));
});
