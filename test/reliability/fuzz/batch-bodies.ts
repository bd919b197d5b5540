/**
 * $batch bodies: random valid mixes of query parts and changesets (built with the batch suites'
 * own helpers), then broken the ways a multipart body breaks: boundaries that do not match, are
 * missing, doubled or cut; parts without headers or request lines; changesets inside changesets;
 * truncated parts; bare-LF line endings; part counts far beyond MAX_BATCH_PARTS; outer and inner
 * Content-Types of the wrong kind. (test/batch/fuzz.test.ts mutates the connector's bodies byte
 * by byte; this one composes bodies structurally.)
 */
import { BATCH_BOUNDARY, CHANGESET_BOUNDARY, batchBody, changesetPart, httpPart, jsonOperation, multipart } from '../../batch/support';
import type { FuzzContext, HttpCase } from './cases';
import { Gen, mutate } from './gen';

function queryPart(g: Gen, ctx: FuzzContext): string {
  const target = g.pick(['Products?$top=2', `Products(${g.pick(ctx.productIds)}L)`, 'Catalogs?$orderby=Name', `Products(${ctx.foreignProductId}L)`, 'Products?$filter=Id%20gt%200L', '$metadata', `ProductIsListed?productId=${g.pick(ctx.productIds)}L`, 'Nope', 'Products(x)']);
  return httpPart({ method: 'GET', target, headers: g.chance(0.5) ? ['Accept: application/json'] : [] });
}

function operation(g: Gen, ctx: FuzzContext, id: number): string {
  switch (g.int(0, 4)) {
    case 0:
      return jsonOperation('POST', 'Products', id, { Title: `batch ${g.int(0, 999)}`, Price: '1', StockAmount: g.int(0, 9) });
    case 1:
      return jsonOperation('MERGE', `Products(${g.pick(ctx.productIds)}L)`, id, { StockAmount: g.int(-1, 9) });
    case 2:
      return jsonOperation('POST', `$${g.int(1, id)}/ProductSpecifics`, id, { Name: `N${g.int(0, 9999)}`, Value: 'V' });
    case 3:
      return jsonOperation('DELETE', `Products(${ctx.foreignProductId}L)`, id);
    default:
      return jsonOperation('POST', 'Catalogs', id, { Name: `C${g.int(0, 99)}` });
  }
}

function validBody(g: Gen, ctx: FuzzContext): string[] {
  return Array.from({ length: g.int(1, 5) }, () => (g.chance(0.5) ? queryPart(g, ctx) : changesetPart(Array.from({ length: g.int(1, 4) }, (_, k) => operation(g, ctx, k + 1)))));
}

interface Body {
  readonly text: string;
  readonly contentType: string;
}

function broken(g: Gen, ctx: FuzzContext): Body {
  const parts = validBody(g, ctx);
  const normal = `multipart/mixed; boundary=${BATCH_BOUNDARY}`;
  const body = batchBody(parts);
  switch (g.int(0, 15)) {
    case 0: // the body uses another boundary than the header names
      return { text: multipart('batch_other', parts), contentType: normal };
    case 1:
      return { text: body, contentType: g.pick(['multipart/mixed', 'multipart/mixed; boundary=', 'multipart/mixed; boundary="unclosed', `multipart/mixed; boundary=${'b'.repeat(200)}`, 'multipart/mixed; boundary=a b', `multipart/mixed; boundary=${BATCH_BOUNDARY}; boundary=other`]) };
    case 2: // no closing delimiter, or a cut one
      return { text: body.slice(0, body.lastIndexOf(`--${BATCH_BOUNDARY}--`) + g.int(0, BATCH_BOUNDARY.length + 3)), contentType: normal };
    case 3: // a part truncated anywhere
      return { text: body.slice(0, g.int(0, body.length)), contentType: normal };
    case 4: // a part without its MIME headers, or without a request line
      return { text: batchBody([...parts, g.pick(['\r\nGET Products HTTP/1.1\r\n\r\n', 'Content-Type: application/http\r\n\r\n', 'Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1\r\n\r\n', ''])]), contentType: normal };
    case 5: // a changeset inside a changeset, or a batch inside a changeset
      return { text: batchBody([changesetPart([changesetPart([operation(g, ctx, 1)], 'changeset_inner')])]), contentType: normal };
    case 6:
      return { text: batchBody([changesetPart([httpPart({ method: 'POST', target: '$batch', headers: [`Content-Type: ${normal}`], body })])]), contentType: normal };
    case 7: { // far more parts than MAX_BATCH_PARTS, or a changeset with too many operations
      const n = g.pick([101, 150, 400, 1000]);
      return g.chance(0.5)
        ? { text: batchBody(Array.from({ length: n }, () => httpPart({ method: 'GET', target: 'Products?$top=1' }))), contentType: normal }
        : { text: batchBody([changesetPart(Array.from({ length: Math.min(n, 400) }, (_, k) => jsonOperation('DELETE', `Products(${ctx.foreignProductId}L)`, k + 1)))]), contentType: normal };
    }
    case 8: // bare LF line endings
      return { text: body.replace(/\r\n/g, '\n'), contentType: normal };
    case 9:
      return { text: body, contentType: g.pick(['application/json', 'text/plain', 'multipart/alternative; boundary=' + BATCH_BOUNDARY, 'application/http', 'multipart/form-data; boundary=' + BATCH_BOUNDARY, '', 'multipart/mixed;boundary=' + BATCH_BOUNDARY + ';charset=x']) };
    case 10: // an inner part of the wrong type
      return { text: batchBody([...parts, g.pick(['Content-Type: text/plain\r\n\r\nhello', 'Content-Type: application/json\r\n\r\n{}', `Content-Type: multipart/mixed\r\n\r\n--${CHANGESET_BOUNDARY}--`, 'Content-Type: application/http\r\nContent-Transfer-Encoding: base64\r\n\r\nR0VU'])]), contentType: normal };
    case 11: // the changeset's boundary equal to the batch's, or a prefix of it
      return { text: batchBody([changesetPart([operation(g, ctx, 1)], g.pick([BATCH_BOUNDARY, BATCH_BOUNDARY.slice(0, 10), 'batch']))]), contentType: normal };
    case 12: // a GET inside a changeset, a write outside one
      return { text: batchBody(g.chance(0.5) ? [changesetPart([queryPart(g, ctx)])] : [operation(g, ctx, 1)]), contentType: normal };
    case 13: // inner headers broken
      return { text: batchBody([httpPart({ method: g.pick(['GET', 'get', 'FOO', '']), target: g.pick(['Products', '', ' ', 'Products HTTP/1.1 x', '/../../etc/passwd', 'http://[::1', '%zz']), headers: [g.pick(['Accept application/json', ': x', 'X:\u0000', ' folded', 'Content-Length: -1', 'Content-Length: 99999', `X: ${'y'.repeat(20_000)}`])] })]), contentType: normal };
    case 14:
      return { text: g.pick(['', '--', `--${BATCH_BOUNDARY}`, `--${BATCH_BOUNDARY}--`, `--${BATCH_BOUNDARY}\r\n`, '\r\n\r\n', 'x'.repeat(10_000)]), contentType: normal };
    default:
      return { text: mutate(g, body, ['\r\n', '\n', '--', `--${BATCH_BOUNDARY}`, `--${CHANGESET_BOUNDARY}`, `--${BATCH_BOUNDARY}--`, 'Content-Type: multipart/mixed; boundary=x\r\n', ':', '\u0000']), contentType: normal };
  }
}

export function batchBodyCases(seed: number, count: number, ctx: FuzzContext): HttpCase[] {
  const g = new Gen(seed);
  const cases: HttpCase[] = [];
  for (let i = 0; i < count; i++) {
    const { text, contentType } = g.chance(0.2) ? { text: batchBody(validBody(g, ctx)), contentType: `multipart/mixed; boundary=${BATCH_BOUNDARY}` } : broken(g, ctx);
    const json = g.chance(0.5);
    cases.push({
      area: 'batch',
      method: 'POST',
      target: `${ctx.servicePath}/$batch`,
      headers: { 'Content-Type': contentType, ...(json ? { Accept: 'application/json' } : {}), DataServiceVersion: '2.0', MaxDataServiceVersion: '3.0' },
      body: text,
      errorFormat: json ? 'json' : 'xml',
      batch: true,
    });
  }
  return cases;
}
