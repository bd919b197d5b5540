/**
 * ConcurrencyMode="Fixed", from a generated client's side. Code generators (the .NET WCF Data
 * Services client's among them) read $metadata and send If-Match on updates and deletes only for
 * entity types that have a property declared ConcurrencyMode="Fixed"; a type without one is
 * written blindly and a concurrent change is overwritten. The service's ETag is the row version,
 * which every change of the row moves (a seller's write, a service operation, the platform), so
 * every property but the key must be declared Fixed, and a change of any of them must move it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { childElements, parseXml, type XmlElement } from './datajs';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { EDM } from '../support/spec';

let live: LiveService;
let seller: Seller;
/** Entity type name -> the names of its properties declared ConcurrencyMode="Fixed", as a generator reads them. */
let fixedByType: Map<string, string[]>;
let keyByType: Map<string, string>;

const json = { Accept: 'application/json', 'Content-Type': 'application/json' };

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${path}`, { method, headers: { ...json, ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'concurrency-mode');
  const res = await asSeller(seller, `${live.root}/$metadata`);
  assert.equal(res.status, 200);
  const doc = parseXml(res.body);
  fixedByType = new Map();
  keyByType = new Map();
  for (const t of Array.from(doc.getElementsByTagNameNS(EDM, 'EntityType'))) {
    const props = childElements(t, EDM, 'Property');
    fixedByType.set(t.getAttribute('Name')!, props.filter((p) => p.getAttribute('ConcurrencyMode') === 'Fixed').map((p) => p.getAttribute('Name')!));
    const key = childElements(childElements(t, EDM, 'Key')[0] as XmlElement, EDM, 'PropertyRef')[0]!;
    keyByType.set(t.getAttribute('Name')!, key.getAttribute('Name')!);
    for (const p of props) {
      const mode = p.getAttribute('ConcurrencyMode');
      assert.ok(mode === null || mode === 'Fixed' || mode === 'None', `${t.getAttribute('Name')}.${p.getAttribute('Name')} ConcurrencyMode ${mode}`);
    }
  }
});
after(() => live.close());

test('every entity type has ConcurrencyMode="Fixed" properties (so generated clients send If-Match): all but the key', async () => {
  const doc = parseXml((await asSeller(seller, `${live.root}/$metadata`)).body);
  assert.equal(fixedByType.size, 17);
  for (const t of Array.from(doc.getElementsByTagNameNS(EDM, 'EntityType'))) {
    const name = t.getAttribute('Name')!;
    const all = childElements(t, EDM, 'Property').map((p) => p.getAttribute('Name')!);
    assert.deepEqual(fixedByType.get(name), all.filter((p) => p !== keyByType.get(name)), `${name}: every property but the key`);
  }
});

test("a change of a Fixed property by a service operation moves the ETag, and the client's If-Match then answers 412", async () => {
  assert.ok(fixedByType.get('Product')!.includes('PaymentProfileId'));
  const created = await call('POST', 'Products', { Title: 'Etag', Price: '1', StockAmount: 1 });
  assert.equal(created.status, 201, created.body);
  const d = (JSON.parse(created.body) as { d: { Id: string; __metadata: { etag: string } } }).d;
  // The generated client keeps the ETag it read and sends it on its next update.
  const held = d.__metadata.etag;
  const op = await call('POST', `SetProductProfile?productId=${d.Id}L&type=1&profileId=77L`);
  assert.equal(op.status, 200, op.body);
  const after = await call('GET', `Products(${d.Id}L)`);
  const now = (JSON.parse(after.body) as { d: { PaymentProfileId: string; __metadata: { etag: string } } }).d;
  assert.equal(now.PaymentProfileId, '77');
  assert.notEqual(now.__metadata.etag, held, 'the operation moved the ETag');
  const stale = await call('MERGE', `Products(${d.Id}L)`, { Title: 'Lost update' }, { 'If-Match': held });
  assert.equal(stale.status, 412, stale.body);
  const fresh = await call('MERGE', `Products(${d.Id}L)`, { Title: 'Kept update' }, { 'If-Match': now.__metadata.etag });
  assert.equal(fresh.status, 204, fresh.body);
});
