/**
 * writeBatchResponse: the exact bytes, boundary= last in the Content-Type, Content-Length in
 * bytes, Content-ID echoed, bodiless statuses, and faults for invalid input from our own code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { type InnerResponse, writeBatchResponse } from '../../../src/odata/batch';
import { ODataError } from '../../../src/odata/errors';
import { splitLikeTheConnector } from './fixtures';
import { readLikeTheConnector } from '../../support/connector-batch-reader';

/** Boundary ids 1, 2, 3, … so the output can be compared byte for byte. */
function counter(): () => string {
  let next = 0;
  return () => `id${++next}`;
}

test('the exact bytes: a query answer, a changeset answer and a failed changeset answer', () => {
  const written = writeBatchResponse(
    [
      { kind: 'response', response: { status: 200, headers: [['Content-Type', 'application/json;charset=utf-8'], ['DataServiceVersion', '1.0;']], body: '{"d":["ä"]}' } },
      {
        kind: 'changeset',
        responses: [
          { status: 201, headers: [['Location', 'http://h/publicapi/v1/api.svc/Products(5L)']], body: Buffer.from('{}'), contentId: '1' },
          { status: 204, headers: [['DataServiceVersion', '1.0;']], contentId: '2' },
        ],
      },
      { kind: 'response', response: { status: 404, headers: [], body: 'gone' } },
    ],
    { newBoundaryId: counter() },
  );
  assert.equal(written.contentType, 'multipart/mixed; boundary=batchresponse_id1');
  assert.equal(
    written.body.toString('utf8'),
    [
      '--batchresponse_id1',
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      '',
      'HTTP/1.1 200 OK',
      'Content-Type: application/json;charset=utf-8',
      'DataServiceVersion: 1.0;',
      'Content-Length: 12',
      '',
      '{"d":["ä"]}',
      '--batchresponse_id1',
      'Content-Type: multipart/mixed; boundary=changesetresponse_id2',
      '',
      '--changesetresponse_id2',
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      '',
      'HTTP/1.1 201 Created',
      'Content-ID: 1',
      'Location: http://h/publicapi/v1/api.svc/Products(5L)',
      'Content-Length: 2',
      '',
      '{}',
      '--changesetresponse_id2',
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      '',
      'HTTP/1.1 204 No Content',
      'Content-ID: 2',
      'DataServiceVersion: 1.0;',
      '',
      '',
      '--changesetresponse_id2--',
      '--batchresponse_id1',
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      '',
      'HTTP/1.1 404 Not Found',
      'Content-Length: 4',
      '',
      'gone',
      '--batchresponse_id1--',
      '',
    ].join('\r\n'),
  );
});

test('an empty batch is answered by the close delimiter alone; an empty changeset by an empty nested multipart', () => {
  const empty = writeBatchResponse([], { newBoundaryId: counter() });
  assert.equal(empty.body.toString(), '--batchresponse_id1--\r\n');
  const emptyChangeset = writeBatchResponse([{ kind: 'changeset', responses: [] }], { newBoundaryId: counter() });
  assert.equal(
    emptyChangeset.body.toString(),
    '--batchresponse_id1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_id2\r\n\r\n--changesetresponse_id2--\r\n--batchresponse_id1--\r\n',
  );
});

test('boundaries are batchresponse_/changesetresponse_ + a fresh UUID, and boundary= is the last parameter', () => {
  const parts = [{ kind: 'changeset', responses: [{ status: 204, headers: [] }] }] as const;
  const first = writeBatchResponse(parts);
  const second = writeBatchResponse(parts);
  const uuid = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
  assert.match(first.contentType, new RegExp(`^multipart/mixed; boundary=batchresponse_${uuid}$`));
  assert.match(first.body.toString(), new RegExp(`Content-Type: multipart/mixed; boundary=changesetresponse_${uuid}\\r\\n`));
  assert.notEqual(first.contentType, second.contentType);
  // What the connector's regex takes is exactly the boundary that frames the body.
  const taken = /boundary=(.*)/.exec(first.contentType)?.[1];
  assert.ok(first.body.toString().startsWith(`--${taken}\r\n`));
  assert.ok(first.body.toString().endsWith(`--${taken}--\r\n`));
});

test('the connector reads one part per request part and one per operation, for any mix of answers', () => {
  const answer: InnerResponse = { status: 200, headers: [], body: '--batchresponse_ is just text here' };
  for (let count = 0; count <= 5; count++) {
    const parts = Array.from({ length: count }, (_, i) =>
      i % 2 === 0 ? ({ kind: 'response', response: answer } as const) : ({ kind: 'changeset', responses: [answer, answer] } as const),
    );
    const written = writeBatchResponse(parts);
    assert.equal(splitLikeTheConnector(written.contentType, written.body).length, count);
    const read = readLikeTheConnector(written.contentType, written.body.toString('utf8'));
    assert.deepEqual(read.map((part) => part.operations?.length), parts.map((part) => (part.kind === 'changeset' ? 2 : undefined)), 'one piece per operation');
  }
});

test('Content-Length counts bytes; the writer owns Content-Length and Content-ID', () => {
  const written = writeBatchResponse(
    [
      {
        kind: 'response',
        response: { status: 200, headers: [['content-length', '999'], ['Content-ID', 'old'], ['ETag', 'W/"1"']], body: '€€', contentId: 'new' },
      },
      { kind: 'response', response: { status: 200, headers: [['Content-ID', 'kept']], body: Buffer.from([0, 1, 2]) } },
    ],
    { newBoundaryId: counter() },
  );
  const text = written.body.toString('latin1');
  assert.ok(text.includes('HTTP/1.1 200 OK\r\nContent-ID: new\r\nETag: W/"1"\r\nContent-Length: 6\r\n\r\n'));
  assert.ok(!text.includes('999') && !text.includes('old'));
  assert.ok(text.includes('HTTP/1.1 200 OK\r\nContent-ID: kept\r\nContent-Length: 3\r\n\r\n\u0000\u0001\u0002\r\n'));
});

test('1xx, 204 and 304 carry no Content-Length; unknown statuses get a generic reason phrase', () => {
  const written = writeBatchResponse(
    [
      { kind: 'response', response: { status: 304, headers: [['ETag', 'W/"2"']] } },
      { kind: 'response', response: { status: 204, headers: [], body: '' } },
      { kind: 'response', response: { status: 299, headers: [] } },
    ],
    { newBoundaryId: counter() },
  );
  const text = written.body.toString();
  assert.ok(text.includes('HTTP/1.1 304 Not Modified\r\nETag: W/"2"\r\n\r\n\r\n'));
  assert.ok(text.includes('HTTP/1.1 204 No Content\r\n\r\n\r\n'));
  assert.ok(text.includes('HTTP/1.1 299 Unknown\r\nContent-Length: 0\r\n\r\n\r\n'));
});

test('invalid input from the executor is a fault (a plain Error), never a client error', () => {
  const fault = (response: InnerResponse) =>
    assert.throws(
      () => writeBatchResponse([{ kind: 'response', response }]),
      (e: unknown) => e instanceof Error && !(e instanceof ODataError),
    );
  fault({ status: 204, headers: [], body: 'x' });
  fault({ status: 99, headers: [] });
  fault({ status: 200.5, headers: [] });
  fault({ status: 200, headers: [['X-Injected', 'a\r\nContent-Length: 0']] });
  fault({ status: 200, headers: [['Bad Name', 'a']] });
  fault({ status: 200, headers: [], contentId: '1\r\n' });
  fault({ status: 200, headers: [['X-Wide', '\u20ac']] });
});
