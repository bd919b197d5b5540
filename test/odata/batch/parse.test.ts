/**
 * parseBatchRequest: the framing rules (preamble, epilogue, padding, Content-ID in either place,
 * bodies byte for byte, Content-Length never used for framing but checked) and every 400 it
 * answers, limits at N and N+1.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { type BatchLimits, type BatchRequestPart, DEFAULT_BATCH_LIMITS, parseBatchRequest } from '../../../src/odata/batch';
import { QUOTE_LIMIT } from '../../../src/odata/quote';
import { MAX_HEADER_BYTES } from '../../../src/odata/batch/headers';
import { ODataError } from '../../../src/odata/errors';
import { changesetPart, httpPart, multipart } from './fixtures';

const CT = 'multipart/mixed; boundary=batch_b';
const parse = (body: string | Buffer, limits?: BatchLimits, contentType = CT) =>
  parseBatchRequest(contentType, typeof body === 'string' ? Buffer.from(body, 'utf8') : body, limits);

/** Asserts a 400 ODataError whose message matches `pattern`; returns the message. */
function rejects(run: () => unknown, pattern: RegExp): string {
  let message = '';
  assert.throws(run, (e: unknown) => {
    assert.ok(e instanceof ODataError, `an ODataError, not ${String(e)}`);
    assert.equal(e.status, 400);
    assert.match(e.message, pattern);
    message = e.message;
    return true;
  });
  return message;
}

function changeset(part: BatchRequestPart | undefined) {
  assert.equal(part?.kind, 'changeset');
  if (part?.kind !== 'changeset') throw new Error('unreachable');
  return part.requests;
}
function query(part: BatchRequestPart | undefined) {
  assert.equal(part?.kind, 'query');
  if (part?.kind !== 'query') throw new Error('unreachable');
  return part.request;
}

const get = (target = 'Products') => httpPart(`GET ${target} HTTP/1.1`, ['Accept: application/json']);
const del = (target: string, contentId?: string) => httpPart(`DELETE ${target} HTTP/1.1`, contentId ? [`Content-ID: ${contentId}`] : []);

// ---------------------------------------------------------------------------------------------
// Framing rules

test('an empty batch (only the close delimiter) has zero parts; preamble and epilogue are ignored', () => {
  assert.deepEqual(parse('--batch_b--\r\n'), []);
  assert.deepEqual(parse('--batch_b--'), []);
  assert.deepEqual(parse('This is a preamble.\r\n--batch_b--\r\nAnd an epilogue\r\n--batch_b\r\nignored'), []);
  const parts = parse(`preamble --batch_b not a delimiter\r\n\r\n${multipart('batch_b', [get()])}epilogue\r\n`);
  assert.equal(query(parts[0]).target, 'Products');
  assert.equal(parts.length, 1);
});

test('transport padding after a delimiter, and --boundary inside a line or followed by more characters, are not delimiters', () => {
  const body =
    '--batch_b \t\r\n' +
    'Content-Type: multipart/mixed; boundary=cs\r\n\r\n' +
    '--cs\t\r\n' +
    httpPart('POST Products HTTP/1.1', ['Content-ID: 1'], 'x --cs\r\n--csc\r\n---cs\r\n--batch_b2\r\ny') +
    '\r\n--cs--\r\n' +
    '--batch_b--\r\n';
  const [request] = changeset(parse(body)[0]);
  assert.equal(request?.body.toString(), 'x --cs\r\n--csc\r\n---cs\r\n--batch_b2\r\ny');
});

test('bodies are exactly the bytes up to the delimiter line break, binary bytes included', () => {
  const binary = Buffer.from([0x00, 0xff, 0x0d, 0x0a, 0x0d, 0x0d, 0x0a, 0x2d, 0x2d, 0x80]);
  const head = Buffer.from(`--batch_b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n--cs\r\n${httpPart('POST Products HTTP/1.1', ['Content-Type: application/octet-stream'], '')}`, 'latin1');
  const tail = Buffer.from('\r\n--cs--\r\n\r\n--batch_b--\r\n', 'latin1');
  const [request] = changeset(parse(Buffer.concat([head, binary, tail]))[0]);
  assert.deepEqual(request?.body, binary);
  // A body that ends in a bare LF keeps everything but the delimiter's own line break.
  const [lf] = changeset(parse(Buffer.concat([head, Buffer.from('{}\n\n--cs--\n--batch_b--')]))[0]);
  assert.equal(lf?.body.toString(), '{}\n');
});

test('a bodiless request may end with its empty line, without it, or at the end of the part', () => {
  const cs = (operation: string) => `--batch_b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n--cs\r\n${operation}--cs--\r\n\r\n--batch_b--\r\n`;
  const part = 'Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nDELETE Products(1L) HTTP/1.1\r\nContent-ID: 1\r\n';
  for (const operation of [part + '\r\n\r\n', part + '\r\n', part.slice(0, -2) + '\r\n', 'Content-Type: application/http\r\n\r\nDELETE Products(1L) HTTP/1.1\r\n']) {
    const [request] = changeset(parse(cs(operation))[0]);
    assert.equal(request?.method, 'DELETE');
    assert.equal(request?.body.length, 0);
  }
});

test('a Content-Length in a part is never used for framing, and must match the bytes the framing gives', () => {
  const merge = (length: string, body = '{"Title":"x"}') =>
    multipart('batch_b', [changesetPart('cs', [httpPart('MERGE Products(1L) HTTP/1.1', [`Content-Length: ${length}`], body)])]);
  // The body's bytes, or those plus the line break before the delimiter (the connector counts it).
  for (const length of ['13', '15', '0013']) {
    const [request] = changeset(parse(merge(length))[0]);
    assert.equal(request?.body.toString(), '{"Title":"x"}');
    assert.equal(request?.headers.get('content-length'), length);
  }
  // Counted in bytes, not characters.
  assert.equal(changeset(parse(merge('8', '"€€"'))[0])[0]?.body.toString(), '"€€"');
  rejects(() => parse(merge('4', '"€€"')), /^Batch part 1, changeset operation 1: the request's Content-Length 4 does not match the 8 bytes/);
  for (const length of ['0', '1', '12', '14', '16', '99999999999999999999', '-3', 'abc', '', '1e3', '13, 13']) {
    rejects(() => parse(merge(length)), /^Batch part 1, changeset operation 1: the request's Content-Length .*(does not match the 13 bytes|is not a number of bytes)/);
  }
});

test("a query part's and a changeset part's own Content-Length must match too, and each names its part", () => {
  const getPart = 'Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nGET Products HTTP/1.1\r\nAccept: application/json\r\n';
  const getBytes = Buffer.byteLength(getPart.slice(getPart.indexOf('\r\n\r\n') + 4));
  const withLength = (part: string, length: number | string) => part.replace('\r\n\r\n', `\r\nContent-Length: ${length}\r\n\r\n`);
  const ops = multipart('cs', [del('Products(1L)', '1'), del('Products(2L)', '2')]);
  const csPart = `Content-Type: multipart/mixed; boundary=cs\r\n\r\n${ops}`;
  const csBytes = Buffer.byteLength(ops);
  // Right: as framed, or with the line break before the next delimiter.
  for (const [g, c] of [[getBytes, csBytes], [getBytes + 2, csBytes + 2]]) {
    const parts = parse(multipart('batch_b', [withLength(getPart, g!), withLength(csPart, c!)]));
    assert.equal(query(parts[0]).target, 'Products');
    assert.equal(changeset(parts[1]).length, 2);
  }
  rejects(() => parse(multipart('batch_b', [get(), withLength(getPart, getBytes + 1)])), /^Batch part 2: the part's Content-Length \d+ does not match/);
  rejects(() => parse(multipart('batch_b', [get(), get(), withLength(csPart, csBytes - 1)])), /^Batch part 3: the part's Content-Length \d+ does not match/);
  // A changeset operation's own MIME Content-Length (the application/http message it holds).
  const operation = httpPart('DELETE Products(1L) HTTP/1.1', ['Content-ID: 1']);
  const message = Buffer.byteLength(operation.slice(operation.indexOf('\r\n\r\n') + 4));
  assert.equal(changeset(parse(multipart('batch_b', [changesetPart('cs', [withLength(operation, message)])]))[0]).length, 1);
  rejects(
    () => parse(multipart('batch_b', [changesetPart('cs', [del('Products(2L)', '2'), withLength(operation, message + 5)])])),
    /^Batch part 1, changeset operation 2: the part's Content-Length \d+ does not match/,
  );
  // A query part's inner request may not carry a lying one either.
  rejects(() => parse(multipart('batch_b', [httpPart('GET Products HTTP/1.1', ['Content-Length: 10'])])), /^Batch part 1: the request's Content-Length 10 does not match the 0 bytes/);
});

test('Content-ID from the MIME part headers (spec, .NET client) or from the inner headers (datajs, connector)', () => {
  const [outer, inner, both] = changeset(
    parse(
      multipart('batch_b', [
        changesetPart('cs', [
          httpPart('POST Products HTTP/1.1', [], '{}', ['Content-ID: 1']),
          httpPart('POST $1/ProductImages HTTP/1.1', ['Content-ID: 2'], '{}'),
          httpPart('DELETE Products(3L) HTTP/1.1', ['Content-ID: 3'], '', ['Content-ID: 3']),
        ]),
      ]),
    )[0],
  );
  assert.equal(outer?.contentId, '1');
  assert.equal(outer?.headers.has('content-id'), false);
  assert.equal(inner?.contentId, '2');
  assert.equal(both?.contentId, '3');
  // A query part may carry one too; the same Content-ID in two changesets is no conflict.
  const parts = parse(multipart('batch_b', [httpPart('GET Products HTTP/1.1', ['Content-ID: 7']), changesetPart('c1', [del('Products(1L)', '1')]), changesetPart('c2', [del('Products(2L)', '1')])]));
  assert.equal(query(parts[0]).contentId, '7');
  assert.equal(changeset(parts[1])[0]?.contentId, '1');
  assert.equal(changeset(parts[2])[0]?.contentId, '1');
});

test('methods are upper-cased; PUT, MERGE, PATCH, POST, DELETE in changesets; HTTP/1.0 accepted; headers lower-cased, repeats joined, folds unfolded', () => {
  const requests = changeset(
    parse(
      multipart('batch_b', [
        changesetPart('cs', [
          httpPart('merge Products(1L) HTTP/1.1', ['X-Custom: a', 'x-custom: b', 'X-Folded: one', '\t two'], '{}'),
          httpPart('PATCH Products(1L) HTTP/1.0', [], '{}'),
          httpPart('PUT Products(1L) HTTP/1.1', [], '{}'),
          httpPart('Post Products HTTP/1.1', [], '{}'),
          httpPart('DELETE Products(1L) HTTP/1.1'),
        ]),
      ]),
    )[0],
  );
  assert.deepEqual(requests.map((r) => r.method), ['MERGE', 'PATCH', 'PUT', 'POST', 'DELETE']);
  assert.deepEqual([...requests[0]!.headers], [['x-custom', 'a, b'], ['x-folded', 'one two']]);
});

test('Content-Transfer-Encoding may be missing, binary, 8bit or 7bit; an empty changeset is allowed', () => {
  for (const encoding of [[], ['Content-Transfer-Encoding: BINARY'], ['Content-Transfer-Encoding: 8bit'], ['Content-Transfer-Encoding: 7bit']]) {
    const body = `--batch_b\r\nContent-Type: application/http\r\n${encoding.map((h) => h + '\r\n').join('')}\r\nGET Products HTTP/1.1\r\n\r\n\r\n--batch_b--\r\n`;
    assert.equal(query(parse(body)[0]).method, 'GET');
  }
  assert.deepEqual(parse(multipart('batch_b', [changesetPart('cs', [])])), [{ kind: 'changeset', requests: [] }]);
  // Empty lines before the request line are skipped (RFC 7230 3.5).
  assert.equal(query(parse(multipart('batch_b', [httpPart('\r\nGET Products HTTP/1.1')]))[0]).target, 'Products');
});

// ---------------------------------------------------------------------------------------------
// Errors

test('a missing, empty or invalid boundary, or a Content-Type that is not multipart/mixed, is a 400', () => {
  const body = Buffer.from('--batch_b--\r\n');
  rejects(() => parseBatchRequest('multipart/mixed', body), /has no boundary parameter/);
  rejects(() => parseBatchRequest('multipart/mixed; boundary=', body), /has no boundary parameter/);
  rejects(() => parseBatchRequest('multipart/mixed; boundary=""', body), /has no boundary parameter/);
  rejects(() => parseBatchRequest('multipart/mixed; charset=utf-8', body), /has no boundary parameter/);
  rejects(() => parseBatchRequest('multipart/mixed; boundary="batch_b', body), /is not a valid media type/);
  rejects(() => parseBatchRequest('multipart/mixed; boundary', body), /is not a valid media type/);
  rejects(() => parseBatchRequest('', body), /is not a valid media type/);
  rejects(() => parseBatchRequest('multipart/mixed; boundary=a@b', body), /boundary 'a@b' of the batch request is not valid/);
  rejects(() => parseBatchRequest(`multipart/mixed; boundary=${'b'.repeat(71)}`, body), /is not valid/);
  rejects(() => parseBatchRequest('multipart/mixed; boundary="ends with space "', body), /is not valid/);
  rejects(() => parseBatchRequest('application/json; boundary=batch_b', body), /must be multipart\/mixed, not 'application\/json'/);
  // 70 characters and a quoted boundary with a space inside are fine.
  const long = 'b'.repeat(70);
  assert.deepEqual(parseBatchRequest(`multipart/mixed; boundary=${long}`, Buffer.from(`--${long}--`)), []);
  assert.deepEqual(parseBatchRequest('multipart/mixed; boundary="a b"', Buffer.from('--a b--')), []);
});

test('a body without the boundary, or without its closing delimiter (truncated), is a 400', () => {
  rejects(() => parse(''), /contains no delimiter line '--batch_b'/);
  rejects(() => parse(multipart('other', [get()])), /contains no delimiter line/);
  const whole = multipart('batch_b', [get(), changesetPart('cs', [del('Products(1L)')])]);
  rejects(() => parse(whole.slice(0, whole.lastIndexOf('--batch_b--'))), /has no closing delimiter '--batch_b--': the body is truncated/);
  rejects(() => parse(whole.replace('--cs--', '')), /changeset in batch part 2 has no closing delimiter '--cs--'/);
  rejects(() => parse('--batch_b\r\n'), /truncated/);
  rejects(() => parse('--batch_b'), /truncated|no delimiter/);
});

test('a part that is neither application/http nor multipart/mixed is a 400', () => {
  rejects(() => parse(multipart('batch_b', ['Content-Type: text/plain\r\n\r\nGET Products HTTP/1.1\r\n'])), /Batch part 1: the part's Content-Type 'text\/plain' is neither application\/http nor multipart\/mixed/);
  rejects(() => parse(multipart('batch_b', ['Content-Transfer-Encoding: binary\r\n\r\nGET Products HTTP/1.1\r\n'])), /the part has no Content-Type/);
  rejects(() => parse(multipart('batch_b', [changesetPart('cs', ['Content-Type: application/json\r\n\r\n{}'])])), /Batch part 1, changeset operation 1: .*neither/);
  rejects(() => parse(multipart('batch_b', ['Content-Type: application/http\r\nContent-Transfer-Encoding: base64\r\n\r\nR0VUIA=='])), /Content-Transfer-Encoding 'base64' is not supported/);
});

test('a malformed request line is a 400', () => {
  for (const line of ['GET Products', 'GET', 'GET  HTTP/1.1', 'GET Products HTTP/2.0', 'GET Products http/1.1', 'GET a b HTTP/1.1', 'Products HTTP/1.1']) {
    rejects(() => parse(multipart('batch_b', [httpPart(line)])), /Batch part 1: the request line '.*' is not 'METHOD target HTTP\/1\.1'|does not end with HTTP\/1\.1/);
  }
  rejects(() => parse(multipart('batch_b', ['Content-Type: application/http\r\n\r\n'])), /holds no HTTP request line/);
  rejects(() => parse(multipart('batch_b', ['Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n'])), /headers are not followed by an empty line/);
});

test('an unknown method is a 400 naming it', () => {
  for (const method of ['HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'FOO', 'GET1']) {
    rejects(() => parse(multipart('batch_b', [httpPart(`${method} Products HTTP/1.1`)])), new RegExp(`the method '${method}' is not one of GET, POST, PUT, MERGE, PATCH, DELETE`));
  }
});

test('a GET inside a changeset, a write outside one, a changeset inside a changeset: 400', () => {
  rejects(() => parse(multipart('batch_b', [changesetPart('cs', [del('Products(1L)'), get()])])), /Batch part 1, changeset operation 2: a GET request may not be inside a changeset/);
  for (const method of ['POST', 'PUT', 'MERGE', 'PATCH', 'DELETE']) {
    rejects(() => parse(multipart('batch_b', [get(), httpPart(`${method} Products(1L) HTTP/1.1`, [], '{}')])), new RegExp(`Batch part 2: a ${method} request must be inside a changeset`));
  }
  rejects(() => parse(multipart('batch_b', [changesetPart('outer', [changesetPart('inner', [del('Products(1L)')])])])), /changeset operation 1: a changeset may not contain another changeset/);
});

test('a duplicate Content-ID within one changeset is a 400, also across the two places it may be written', () => {
  rejects(() => parse(multipart('batch_b', [changesetPart('cs', [del('Products(1L)', '1'), del('Products(2L)', '2'), del('Products(3L)', '1')])])), /changeset operation 3: the Content-ID '1' is used twice/);
  rejects(() => parse(multipart('batch_b', [changesetPart('cs', [httpPart('DELETE Products(1L) HTTP/1.1', [], '', ['Content-ID: 1']), del('Products(2L)', '1')])])), /used twice/);
  rejects(() => parse(multipart('batch_b', [changesetPart('cs', [httpPart('DELETE Products(1L) HTTP/1.1', ['Content-ID: 2'], '', ['Content-ID: 1'])])])), /Content-ID '1' differs from the request's Content-ID '2'/);
});

test('malformed header lines and X-HTTP-Method tunnelling inside a batch are 400s', () => {
  rejects(() => parse(multipart('batch_b', ['Content-Type: application/http\r\nno colon here\r\n\r\nGET Products HTTP/1.1\r\n'])), /the header line 'no colon here' is not 'Name: value'/);
  rejects(() => parse(multipart('batch_b', [httpPart('GET Products HTTP/1.1', ['Bad Name: x'])])), /'Bad Name: x' is not 'Name: value'/);
  rejects(() => parse(multipart('batch_b', [httpPart('GET Products HTTP/1.1', [': x'])])), /not 'Name: value'/);
  rejects(() => parse(multipart('batch_b', [' folded\r\nContent-Type: application/http\r\n\r\nGET Products HTTP/1.1\r\n'])), /starts with a continuation line/);
  rejects(() => parse(multipart('batch_b', [changesetPart('cs', [httpPart('POST Products(1L) HTTP/1.1', ['X-HTTP-Method: MERGE'], '{}')])])), /X-HTTP-Method is not allowed/);
});

test('limits: N parts and N operations are accepted, N+1 refused naming the limit', () => {
  const small: BatchLimits = { maxParts: 3, maxOperationsPerChangeset: 4 };
  const ops = (n: number) => Array.from({ length: n }, (_, i) => del(`Products(${i + 1}L)`, String(i + 1)));
  assert.equal(parse(multipart('batch_b', [get(), get(), get()]), small).length, 3);
  rejects(() => parse(multipart('batch_b', [get(), get(), get(), get()]), small), /more than 3 parts; the limit is 3/);
  assert.equal(changeset(parse(multipart('batch_b', [changesetPart('cs', ops(4))]), small)[0]).length, 4);
  rejects(() => parse(multipart('batch_b', [changesetPart('cs', ops(5))]), small), /Batch part 1: the changeset has more than 4 operations; the limit is 4/);

  assert.deepEqual(DEFAULT_BATCH_LIMITS, { maxParts: 100, maxOperationsPerChangeset: 100 });
  assert.equal(parse(multipart('batch_b', Array.from({ length: 100 }, () => get()))).length, 100);
  rejects(() => parse(multipart('batch_b', Array.from({ length: 101 }, () => get()))), /more than 100 parts; the limit is 100/);
  assert.equal(changeset(parse(multipart('batch_b', [changesetPart('cs', ops(100))]))[0]).length, 100);
  rejects(() => parse(multipart('batch_b', [changesetPart('cs', ops(101))])), /more than 100 operations; the limit is 100/);
  // The part limit stops the split early: a million empty parts are refused without being parsed.
  const many = '--batch_b\r\n'.repeat(1_000_000) + '--batch_b--';
  rejects(() => parse(many), /more than 100 parts/);
});

test('header blocks and request lines are limited to 16 KiB each, as Node limits a request of its own', () => {
  assert.equal(MAX_HEADER_BYTES, 16 * 1024);
  const header = (bytes: number) => `X-Pad: ${'p'.repeat(bytes - 'X-Pad: '.length)}`;
  // Request line, headers and their line breaks within the limit: accepted.
  const fits = httpPart('GET Products HTTP/1.1', [header(MAX_HEADER_BYTES - 'GET Products HTTP/1.1\r\n'.length - 2)]);
  assert.equal(query(parse(multipart('batch_b', [fits]))[0]).headers.get('x-pad')?.length, MAX_HEADER_BYTES - 'GET Products HTTP/1.1\r\n'.length - 2 - 'X-Pad: '.length);
  rejects(() => parse(multipart('batch_b', [httpPart('GET Products HTTP/1.1', [header(MAX_HEADER_BYTES)])])), /Batch part 1: a header block is longer than 16384 bytes/);
  rejects(() => parse(multipart('batch_b', [`Content-Type: application/http\r\n${header(MAX_HEADER_BYTES)}\r\n\r\nGET Products HTTP/1.1\r\n`])), /a header block is longer than 16384 bytes/);
  // Unterminated blocks too.
  rejects(() => parse(multipart('batch_b', [changesetPart('cs', [`Content-Type: application/http\r\n\r\nDELETE Products(1L) HTTP/1.1\r\n${header(MAX_HEADER_BYTES + 1)}`])])), /longer than 16384 bytes/);
  // A long target (a $filter of 8 KiB) is fine; a request line beyond the limit is not.
  const target = `Products?$filter=${'Id%20eq%201%20or%20'.repeat(400)}Id%20eq%202`;
  assert.equal(query(parse(multipart('batch_b', [httpPart(`GET ${target} HTTP/1.1`)]))[0]).target, target);
  rejects(() => parse(multipart('batch_b', [httpPart(`GET Products?${'x'.repeat(MAX_HEADER_BYTES)} HTTP/1.1`)])), /the request line is longer than 16384 bytes/);
});

test('errors quote at most QUOTE_LIMIT characters of input, control characters replaced', () => {
  const junk = `\u001b[31m${'x'.repeat(500)}\u0000`;
  const message = rejects(() => parse(multipart('batch_b', [httpPart(`GET ${junk}`)])), /request line/);
  assert.doesNotMatch(message, /[\u0000-\u001f\u007f]/);
  assert.ok(message.includes('\uFFFD[31m'));
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  assert.equal(quoted.length, QUOTE_LIMIT + 1, 'the cut is marked with an ellipsis');
  assert.ok(quoted.endsWith('…'));
  assert.ok(message.length < 200);
});
