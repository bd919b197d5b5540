/**
 * Atom bodies in the encoding they name, over real HTTP: windows-1252 and ISO-8859-1 bytes (by
 * the XML declaration or the Content-Type charset) created with POST and changed with MERGE, also
 * inside a $batch changeset, and read back in JSON; an encoding the service does not know answers
 * 415 with an OData error naming it, in the request's format, and changes nothing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { asSeller, newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import type { HttpResponse } from '../support/http-client';
import { ATOM, D, M } from '../support/spec';
import { BATCH_BOUNDARY, CHANGESET_BOUNDARY, postBatch, readBatchAnswer, changesetAnswers } from '../batch/support';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'encodings');
});
after(() => live.close());

/**
 * `text` in windows-1252, byte by byte: Latin-1 letters are their own code, and the few
 * characters this test uses from 0x80–0x9F are listed. Anything else is the test's mistake.
 */
const CP1252_EXTRA: Record<string, number> = { '€': 0x80, '„': 0x84, '“': 0x93, '–': 0x96 };
function windows1252(text: string): Buffer {
  return Buffer.from(
    [...text].map((c) => {
      const code = CP1252_EXTRA[c] ?? c.charCodeAt(0);
      assert.ok(code <= 0xff && !(code >= 0x80 && code <= 0x9f && CP1252_EXTRA[c] === undefined), `'${c}' is not in this test's windows-1252 table`);
      return code;
    }),
  );
}
/** `text` in ISO-8859-1 (every character must be Latin-1). */
function latin1(text: string): Buffer {
  for (const c of text) assert.ok(c.charCodeAt(0) <= 0xff && !(c.charCodeAt(0) >= 0x80 && c.charCodeAt(0) <= 0x9f), `'${c}' is not printable ISO-8859-1`);
  return Buffer.from(text, 'latin1');
}

/** An Atom entry of a Catalog, encoded by `encode`, with or without an XML declaration. */
function catalogEntry(name: string, encode: (text: string) => Buffer, declaration?: string): Buffer {
  return Buffer.concat([
    Buffer.from(declaration === undefined ? '' : `<?xml version="1.0" encoding="${declaration}" standalone="yes"?>\n`, 'ascii'),
    encode(
      `<entry xmlns="${ATOM}" xmlns:d="${D}" xmlns:m="${M}">` +
        '<category term="CatalogueService.Catalog" scheme="http://schemas.microsoft.com/ado/2007/08/dataservices/scheme" />' +
        `<title /><author><name /></author><updated>2026-11-24T10:00:00Z</updated><id /><content type="application/xml"><m:properties><d:Name>${name}</d:Name></m:properties></content></entry>`,
    ),
  ]);
}

function send(method: string, path: string, body: Buffer, contentType = 'application/atom+xml', headers: Record<string, string> = {}): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${path}`, { method, headers: { 'Content-Type': contentType, DataServiceVersion: '1.0', ...headers }, body });
}

async function nameOf(id: string): Promise<string> {
  const res = await asSeller(seller, `${live.root}/Catalogs(${id}L)`, { headers: { Accept: 'application/json' } });
  assert.equal(res.status, 200, res.body);
  return (JSON.parse(res.body) as { d: { Name: string } }).d.Name;
}

/** The Id in the Atom answer of a POST. */
function createdId(res: HttpResponse): string {
  assert.equal(res.status, 201, res.body);
  const m = /<d:Id m:type="Edm.Int64">(\d+)<\/d:Id>/.exec(res.body);
  assert.ok(m, res.body.slice(0, 300));
  return m[1]!;
}

describe('Atom bodies in the encoding they name', () => {
  test('POST in windows-1252 by the XML declaration: "Größe" and "€" arrive as sent', async () => {
    const name = 'Größe 42 – 9,90 € „Zoll“';
    const body = catalogEntry(name, windows1252, 'windows-1252');
    assert.deepEqual([...body.subarray(body.indexOf('Gr'), body.indexOf('Gr') + 5)], [0x47, 0x72, 0xf6, 0xdf, 0x65], 'real windows-1252 bytes');
    const id = createdId(await send('POST', 'Catalogs', body));
    assert.equal(await nameOf(id), name);
  });

  test('MERGE in ISO-8859-1 by the XML declaration, and in windows-1252 by the Content-Type charset without a declaration', async () => {
    const id = createdId(await send('POST', 'Catalogs', catalogEntry('vorher', latin1, 'utf-8')));
    const latin = 'Maße: Größe XL, Bügel & Ösen';
    assert.equal((await send('MERGE', `Catalogs(${id}L)`, catalogEntry(latin.replace('&', '&amp;'), latin1, 'iso-8859-1'))).status, 204);
    assert.equal(await nameOf(id), latin);
    const euro = 'Preis – 19,99 €';
    assert.equal((await send('MERGE', `Catalogs(${id}L)`, catalogEntry(euro, windows1252), 'application/atom+xml;charset=windows-1252')).status, 204);
    assert.equal(await nameOf(id), euro);
    // The charset comes before the declaration: UTF-8 bytes under a windows-1252 declaration.
    const res = await send('MERGE', `Catalogs(${id}L)`, catalogEntry('Größe €', (t) => Buffer.from(t, 'utf8'), 'windows-1252'), 'application/atom+xml; charset="UTF-8"');
    assert.equal(res.status, 204, res.body);
    assert.equal(await nameOf(id), 'Größe €');
  });

  test('inside a $batch changeset, an Atom POST in windows-1252', async () => {
    const entry = catalogEntry('Größe € im Batch', windows1252, 'windows-1252');
    const body = Buffer.concat([
      Buffer.from(
        `--${BATCH_BOUNDARY}\r\nContent-Type: multipart/mixed; boundary=${CHANGESET_BOUNDARY}\r\n\r\n` +
          `--${CHANGESET_BOUNDARY}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n` +
          `POST Catalogs HTTP/1.1\r\nContent-Type: application/atom+xml\r\nAccept: application/json\r\nContent-ID: 1\r\nContent-Length: ${entry.length}\r\n\r\n`,
        'ascii',
      ),
      entry,
      Buffer.from(`\r\n--${CHANGESET_BOUNDARY}--\r\n--${BATCH_BOUNDARY}--\r\n`, 'ascii'),
    ]);
    const [created] = changesetAnswers(readBatchAnswer(await postBatch(live, seller, body))[0]);
    assert.equal(created!.status, 201, created!.body);
    const id = (JSON.parse(created!.body) as { d: { Id: string } }).d.Id;
    assert.equal(await nameOf(id), 'Größe € im Batch');
  });

  test('an encoding the service does not know answers 415 naming it, in Atom and JSON, and changes nothing', async () => {
    const id = createdId(await send('POST', 'Catalogs', catalogEntry('bleibt', latin1)));
    const rowsBefore = await tenantRows(live, seller.accountId);
    const cases: [string, Buffer, string][] = [
      ['x-klingon-8', catalogEntry('Größe', latin1, 'x-klingon-8'), 'application/atom+xml'],
      ['ebcdic-at-de', catalogEntry('Größe', latin1), 'application/atom+xml; charset=ebcdic-at-de'],
      ['utf-7', catalogEntry('Größe', latin1, 'iso-8859-1'), 'application/atom+xml;charset=utf-7'],
    ];
    for (const [encoding, body, contentType] of cases) {
      const atom = await send('POST', 'Catalogs', body, contentType);
      assert.equal(atom.status, 415, atom.body);
      assert.match(atom.headers['content-type'] ?? '', /^application\/xml;charset=utf-8/);
      assert.match(atom.body, new RegExp(`<error xmlns="${M}"><code></code><message xml:lang="en-US">The request body&apos;s encoding &apos;${encoding}&apos; is not supported`));
      const json = await send('MERGE', `Catalogs(${id}L)`, body, contentType, { Accept: 'application/json' });
      assert.equal(json.status, 415, json.body);
      assert.match((JSON.parse(json.body) as { error: { message: { value: string } } }).error.message.value, new RegExp(`encoding '${encoding}' is not supported`));
    }
    // Bytes that mean nothing in the encoding named are a 400 naming it.
    const template = catalogEntry('@', latin1, 'windows-1252');
    const at = template.indexOf('@');
    const withUndefinedByte = Buffer.concat([template.subarray(0, at), Buffer.from([0x81]), template.subarray(at + 1)]);
    const broken = await send('POST', 'Catalogs', withUndefinedByte, undefined, { Accept: 'application/json' });
    assert.equal(broken.status, 400, broken.body);
    assert.match(broken.body, /not valid windows-1252/);
    assert.deepEqual(await tenantRows(live, seller.accountId), rowsBefore);
  });
});
