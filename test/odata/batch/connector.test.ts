/**
 * The shop connector's $batch (docs/protocol.md, "$batch"), replayed byte for byte: one
 * changeset of 17 operations with absolute URIs, Content-ID among the inner HTTP headers, MERGE
 * bodies ending in "\n\r", DELETEs followed directly by the next delimiter, a Content-Length on
 * the changeset part and an extra empty line between the two closings. And the connector's rule
 * for reading the response: boundary by `boundary=(.*)`, split on the delimiters, every non-empty
 * piece a part.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { type BatchRequestPart, parseBatchRequest, resolveTarget, writeBatchResponse } from '../../../src/odata/batch';
import {
  CONNECTOR_BATCH_BOUNDARY,
  CONNECTOR_CHANGESET_BOUNDARY,
  CONNECTOR_CONTENT_TYPE,
  CONNECTOR_DELETE_PRODUCT,
  CONNECTOR_ORIGIN,
  connectorBody,
  SERVICE_PATH,
  splitLikeTheConnector,
  ZERO_STOCK_BODY,
} from './fixtures';
import { readLikeTheConnector } from '../../support/connector-batch-reader';

function onlyChangeset(parts: BatchRequestPart[]) {
  assert.equal(parts.length, 1);
  const part = parts[0]!;
  assert.equal(part.kind, 'changeset');
  if (part.kind !== 'changeset') throw new Error('unreachable');
  return part.requests;
}

test('the fixture has the connector\'s layout (docs/protocol.md, "$batch")', () => {
  const text = connectorBody().toString('latin1');
  const cs = CONNECTOR_CHANGESET_BOUNDARY;
  // A DELETE's empty line is followed directly by the next delimiter.
  assert.ok(text.includes(`Products(1L) HTTP/1.1\r\nAccept: application/json\r\nContent-ID: 17\r\nContent-Type: application/json\r\n\r\n--${cs}--`));
  assert.ok(text.includes(`ProductSpecifics(101L) HTTP/1.1\r\nAccept: application/json\r\nContent-ID: 1\r\nContent-Type: application/json\r\n\r\n--${cs}\r\n`));
  // MERGE bodies end in \n\r before the CRLF of the delimiter, counted in Content-Length.
  assert.ok(text.includes(`Content-Length: 23\r\n\r\n{"StockAmount":"0"}\n\r\r\n--${cs}\r\n`));
  // The closing with the extra empty line, and Content-Length on the changeset part.
  assert.ok(text.endsWith(`--${cs}--\r\n\r\n--${CONNECTOR_BATCH_BOUNDARY}--\r\n`));
  assert.match(text, new RegExp(`^--${CONNECTOR_BATCH_BOUNDARY}\\r\\nContent-Type: multipart/mixed; boundary=${cs}\\r\\nContent-Length: \\d+\\r\\n\\r\\n--${cs}\\r\\n`));
  assert.equal((text.match(/ HTTP\/1\.1\r\n/g) ?? []).length, 17);
});

test('the connector batch parses into one changeset of 17 operations, every field as sent', () => {
  const requests = onlyChangeset(parseBatchRequest(CONNECTOR_CONTENT_TYPE, connectorBody()));
  assert.equal(requests.length, CONNECTOR_DELETE_PRODUCT.length);
  requests.forEach((request, index) => {
    const sent = CONNECTOR_DELETE_PRODUCT[index]!;
    const contentId = String(index + 1);
    assert.equal(request.method, sent.method, `operation ${index + 1}`);
    assert.equal(request.target, `${CONNECTOR_ORIGIN}${SERVICE_PATH}${sent.path}`);
    assert.equal(request.contentId, contentId);
    const expectedHeaders: [string, string][] = [
      ['accept', 'application/json'],
      ['content-id', contentId],
      ['content-type', 'application/json'],
    ];
    if (sent.method === 'MERGE') {
      expectedHeaders.push(['content-length', '23']);
      assert.deepEqual(request.body, Buffer.from(ZERO_STOCK_BODY, 'latin1'));
      assert.equal(request.body.toString('latin1'), '{"StockAmount":"0"}\n\r');
    } else {
      assert.equal(request.body.length, 0);
    }
    assert.deepEqual([...request.headers], expectedHeaders);
    assert.deepEqual(resolveTarget(request.target, SERVICE_PATH), { path: sent.path, query: '' });
  });
  assert.equal(requests.at(-1)!.target, `${CONNECTOR_ORIGIN}${SERVICE_PATH}/Products(1L)`);
});

test('the connector batch also parses with bare LF line endings', () => {
  const requests = onlyChangeset(parseBatchRequest(CONNECTOR_CONTENT_TYPE, connectorBody(CONNECTOR_DELETE_PRODUCT, '\n')));
  assert.equal(requests.length, 17);
  assert.deepEqual(
    requests.map((r) => [r.method, r.contentId]),
    CONNECTOR_DELETE_PRODUCT.map((o, i) => [o.method, String(i + 1)]),
  );
  // "…}\n\r" + "\n" + delimiter: the "\r\n" before the delimiter is taken as its CRLF (CRLF
  // framing wins when both readings are possible), so one byte less of the stray tail remains.
  const merge = requests[8]!;
  assert.equal(merge.body.toString('latin1'), '{"StockAmount":"0"}\n');
  assert.equal(requests[0]!.body.length, 0);
});

test('a quoted or upper-case boundary parameter frames the same body', () => {
  const expected = parseBatchRequest(CONNECTOR_CONTENT_TYPE, connectorBody());
  for (const contentType of [
    `multipart/mixed; boundary="${CONNECTOR_BATCH_BOUNDARY}"`,
    `Multipart/Mixed;BOUNDARY=${CONNECTOR_BATCH_BOUNDARY}`,
    `multipart/mixed; charset=utf-8; Boundary="${CONNECTOR_BATCH_BOUNDARY}" ; x=y`,
  ]) {
    assert.deepEqual(parseBatchRequest(contentType, connectorBody()), expected, contentType);
  }
});

test('the response to the connector: boundary by boundary=(.*), exactly one part per request part', () => {
  const requests = onlyChangeset(parseBatchRequest(CONNECTOR_CONTENT_TYPE, connectorBody()));
  const written = writeBatchResponse([
    {
      kind: 'changeset',
      responses: requests.map((r) => ({ status: 204, headers: [['DataServiceVersion', '1.0;']] as const, ...(r.contentId ? { contentId: r.contentId } : {}) })),
    },
  ]);
  const parts = readLikeTheConnector(written.contentType, written.body.toString('utf8'));
  assert.equal(parts.length, 1, 'one piece for the one request part');
  assert.equal(parts[0]!.operations?.length, 17, 'one piece per operation, none for the line after the close delimiter');
  for (const operation of parts[0]!.operations!) assert.match(operation, /^Content-Type: application\/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP\/1\.1 204 No Content\r\n/);

  // A failed changeset is one application/http part: still one part for the one request part.
  const failed = writeBatchResponse([
    { kind: 'response', response: { status: 404, headers: [['Content-Type', 'application/json;charset=utf-8']], body: '{"error":{}}' } },
  ]);
  const failedParts = splitLikeTheConnector(failed.contentType, failed.body);
  assert.equal(failedParts.length, 1);
  assert.match(failedParts[0]!, /HTTP\/1\.1 404 Not Found\r\n/);
});
