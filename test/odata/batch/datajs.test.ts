/**
 * datajs (the reference JavaScript OData client) against the batch framing, both ways: the
 * request bytes come from datajs's own batch writer (OData.request through a fake HTTP client
 * that hands the body to parseBatchRequest), and the response that writeBatchResponse produces
 * goes back through datajs's batch reader.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  type BatchRequestPart,
  type BatchResponsePart,
  type InnerRequest,
  parseBatchRequest,
  resolveTarget,
  writeBatchResponse,
} from '../../../src/odata/batch';
import { loadDatajs, type ODataHttpClient, type ODataRequest } from '../../clients/datajs';
import { SERVICE_PATH } from './fixtures';

const BATCH_URI = `http://localhost${SERVICE_PATH}/$batch`;

/** A part answer as datajs's batch reader returns it (statuses stay strings). */
interface DatajsPartResponse {
  readonly statusCode: string;
  readonly statusText: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly data?: unknown;
}
/** datajs's object for a part answered with a status outside 2xx. */
interface DatajsFailedPart {
  readonly message: string;
  readonly response: DatajsPartResponse;
}
interface DatajsChangeset {
  readonly __changeResponses: readonly DatajsPartResponse[];
}

interface Exchange {
  /** What datajs sent. */
  readonly request: ODataRequest & { body?: string };
  readonly parts: BatchRequestPart[];
  /** What datajs made of our response. */
  readonly data: { __batchResponses: unknown[] };
}

/**
 * Sends `batchRequests` with datajs; the fake HTTP client parses datajs's bytes and answers with
 * the batch response `answer` builds from the parsed parts.
 */
function roundTrip(batchRequests: unknown[], answer: (parts: BatchRequestPart[]) => BatchResponsePart[]): Promise<Exchange> {
  const OData = loadDatajs();
  return new Promise((resolve, reject) => {
    let sent: (ODataRequest & { body?: string }) | undefined;
    let parts: BatchRequestPart[] = [];
    const httpClient: ODataHttpClient = {
      request(request, success, error) {
        sent = request as ODataRequest & { body?: string };
        try {
          parts = parseBatchRequest(request.headers?.['Content-Type'] ?? '', Buffer.from(sent.body ?? '', 'utf8'));
          const written = writeBatchResponse(answer(parts));
          success({ statusCode: 202, statusText: 'Accepted', headers: { 'Content-Type': written.contentType }, body: written.body.toString('utf8') });
        } catch (e) {
          error({ message: String(e) });
          reject(e);
        }
        return undefined;
      },
    };
    OData.request(
      { requestUri: BATCH_URI, method: 'POST', data: { __batchRequests: batchRequests } },
      (data) => resolve({ request: sent!, parts, data: data as Exchange['data'] }),
      (err) => reject(new Error(err.message)),
      OData.batchHandler,
      httpClient,
    );
  });
}

const json = (status: number, body: unknown, contentId?: string) => ({
  status,
  headers: [
    ['Content-Type', 'application/json;charset=utf-8'],
    ['DataServiceVersion', '1.0;'],
  ] as const,
  body: JSON.stringify(body),
  ...(contentId !== undefined ? { contentId } : {}),
});

function requestsOf(part: BatchRequestPart | undefined): InnerRequest[] {
  assert.ok(part);
  return part.kind === 'query' ? [part.request] : part.requests;
}

test("datajs's batch writer: a GET query part, then changesets with relative URIs and Content-ID inside", async () => {
  const { request, parts } = await roundTrip(
    [
      { requestUri: 'Products?$top=2', method: 'GET' },
      {
        __changeRequests: [
          { requestUri: 'Products', method: 'POST', headers: { 'Content-ID': '1' }, data: { Title: 'B' } },
          { requestUri: '$1/ProductImages', method: 'POST', headers: { 'Content-ID': '2' }, data: { Url: 'http://img/1.jpg' } },
          { requestUri: 'Products(9L)', method: 'DELETE', headers: { 'Content-ID': '3' } },
        ],
      },
      { __changeRequests: [{ requestUri: 'Products(2L)', method: 'MERGE', data: { Title: 'Grüße €' } }] },
    ],
    (parsed) => parsed.map((part) => (part.kind === 'query' ? { kind: 'response', response: json(200, { d: [] }) } : { kind: 'changeset', responses: part.requests.map(() => ({ status: 204, headers: [] })) })),
  );
  // datajs's framing: unquoted boundary with no space after ';', a CRLF preamble.
  assert.match(request.headers?.['Content-Type'] ?? '', /^multipart\/mixed;boundary=batch_[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}$/);
  assert.ok(request.body?.startsWith('\r\n--batch_'));

  assert.deepEqual(parts.map((p) => p.kind), ['query', 'changeset', 'changeset']);
  const [query] = requestsOf(parts[0]);
  assert.ok(query);
  assert.equal(query.method, 'GET');
  assert.equal(query.target, 'Products?$top=2');
  assert.equal(query.contentId, undefined);
  assert.equal(query.headers.get('maxdataserviceversion'), '2.0');
  assert.match(query.headers.get('accept') ?? '', /application\/json;odata=verbose/);
  assert.equal(query.body.length, 0);
  assert.deepEqual(resolveTarget(query.target, SERVICE_PATH), { path: '/Products', query: '$top=2' });

  const [create, image, remove] = requestsOf(parts[1]);
  assert.ok(create && image && remove);
  assert.deepEqual([create.method, create.target, create.contentId], ['POST', 'Products', '1']);
  assert.equal(create.headers.get('content-type'), 'application/json;odata=verbose');
  assert.equal(create.headers.get('dataserviceversion'), '1.0');
  assert.deepEqual(JSON.parse(create.body.toString('utf8')), { Title: 'B' });
  assert.deepEqual([image.method, image.target, image.contentId], ['POST', '$1/ProductImages', '2']);
  assert.deepEqual(resolveTarget(image.target, SERVICE_PATH), { reference: '1', path: '/ProductImages', query: '' });
  assert.deepEqual(JSON.parse(image.body.toString('utf8')), { Url: 'http://img/1.jpg' });
  assert.deepEqual([remove.method, remove.target, remove.contentId, remove.body.length], ['DELETE', 'Products(9L)', '3', 0]);

  const [merge] = requestsOf(parts[2]);
  assert.ok(merge);
  assert.deepEqual([merge.method, merge.target, merge.contentId], ['MERGE', 'Products(2L)', undefined]);
  // Non-ASCII bytes pass through untouched.
  assert.deepEqual(JSON.parse(merge.body.toString('utf8')), { Title: 'Grüße €' });
});

test("datajs's batch reader reads our response: one answer per request part, statuses, bodies, nested changesets", async () => {
  const { data } = await roundTrip(
    [
      { requestUri: 'Products(1L)', method: 'GET' },
      {
        __changeRequests: [
          { requestUri: 'Products', method: 'POST', headers: { 'Content-ID': '1' }, data: { Title: 'B' } },
          { requestUri: 'Products(9L)', method: 'DELETE', headers: { 'Content-ID': '2' } },
        ],
      },
      { requestUri: 'Products(404L)', method: 'GET' },
      { __changeRequests: [{ requestUri: 'Products(3L)', method: 'DELETE' }] },
    ],
    (parsed) => {
      assert.equal(parsed.length, 4);
      const changeset = parsed[1];
      assert.equal(changeset?.kind, 'changeset');
      return [
        { kind: 'response', response: json(200, { d: { Id: '1', Title: 'Grüße' } }) },
        {
          kind: 'changeset',
          responses: [
            { ...json(201, { d: { Id: '10', Title: 'B' } }, '1'), headers: [...json(201, {}).headers, ['Location', `http://localhost${SERVICE_PATH}/Products(10L)`]] },
            { status: 204, headers: [['DataServiceVersion', '1.0;']], contentId: '2' },
          ],
        },
        { kind: 'response', response: json(404, { error: { code: '', message: { lang: 'en-US', value: 'Resource not found.' } } }) },
        // A changeset that failed and was rolled back: one error response instead of a nested multipart.
        { kind: 'response', response: json(400, { error: { code: '', message: { lang: 'en-US', value: 'Rolled back.' } } }) },
      ];
    },
  );

  assert.equal(data.__batchResponses.length, 4);
  const [read, changeset, missing, failed] = data.__batchResponses as [DatajsPartResponse, DatajsChangeset, DatajsFailedPart, DatajsFailedPart];
  assert.equal(read.statusCode, '200');
  assert.equal(read.statusText, 'OK');
  assert.deepEqual(read.data, { Id: '1', Title: 'Grüße' });

  const changeResponses = changeset.__changeResponses;
  assert.equal(changeResponses.length, 2);
  assert.equal(changeResponses[0]?.statusCode, '201');
  assert.equal(changeResponses[0]?.headers['Content-ID'], '1');
  assert.equal(changeResponses[0]?.headers['Location'], `http://localhost${SERVICE_PATH}/Products(10L)`);
  assert.deepEqual(changeResponses[0]?.data, { Id: '10', Title: 'B' });
  assert.equal(changeResponses[1]?.statusCode, '204');
  assert.equal(changeResponses[1]?.headers['Content-ID'], '2');
  assert.equal(changeResponses[1]?.body, '');

  // datajs keeps going after failed parts and hands them over as error objects.
  assert.equal(missing.message, 'HTTP request failed');
  assert.equal(missing.response.statusCode, '404');
  assert.deepEqual(JSON.parse(missing.response.body) as unknown, { error: { code: '', message: { lang: 'en-US', value: 'Resource not found.' } } });
  assert.equal(failed.message, 'HTTP request failed');
  assert.equal(failed.response.statusCode, '400');
});
