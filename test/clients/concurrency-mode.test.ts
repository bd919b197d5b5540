/**
 * ConcurrencyMode="Fixed", from a generated client's side. Code generators (the .NET WCF Data
 * Services client's among them) read $metadata and send If-Match on updates and deletes only for
 * entity types that have a property declared ConcurrencyMode="Fixed"; a type without one is
 * written blindly and a concurrent change is overwritten. The service's ETag is a row version that
 * moves when a writable property is written (by a seller's write or an operation such as
 * ReviseInventoryStatus), as WCF Data Services computes the ETag from the Fixed properties: so the
 * writable properties are declared Fixed, and a value the service sets on its own (a profile id
 * set by an operation) leaves the ETag, and a .NET client's whole-entity update with it, valid.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { childElements, parseXml, type XmlElement } from './datajs';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { EDM } from '../support/spec';
import { model } from '../../src/model/catalogue-model';

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

test('the writable properties are ConcurrencyMode="Fixed" (so generated clients send If-Match); the key and read-only ones are not', async () => {
  const doc = parseXml((await asSeller(seller, `${live.root}/$metadata`)).body);
  assert.equal(fixedByType.size, 17);
  for (const t of Array.from(doc.getElementsByTagNameNS(EDM, 'EntityType'))) {
    const name = t.getAttribute('Name')!;
    const type = model.typeByName.get(name)!;
    const writable = type.properties.filter((p) => p.access === 'writable').map((p) => p.name);
    assert.deepEqual(fixedByType.get(name), writable, `${name}: the writable properties`);
    assert.ok(!fixedByType.get(name)!.includes(keyByType.get(name)!), `${name}: not the key`);
  }
  // Spelled out for the type every connector writes.
  const product = fixedByType.get('Product')!;
  for (const p of ['Title', 'Price', 'StockAmount']) assert.ok(product.includes(p), p);
  for (const p of ['Id', 'CreationDate', 'ModificationDate', 'PaymentProfileId']) assert.ok(!product.includes(p), p);
});

async function createProduct(title: string): Promise<{ id: string; etag: string }> {
  const created = await call('POST', 'Products', { Title: title, Price: '1', StockAmount: 1 });
  assert.equal(created.status, 201, created.body);
  const d = (JSON.parse(created.body) as { d: { Id: string; __metadata: { etag: string } } }).d;
  return { id: d.Id, etag: d.__metadata.etag };
}

async function readProduct(id: string): Promise<Record<string, unknown> & { __metadata: { etag: string } }> {
  const res = await call('GET', `Products(${id}L)`);
  assert.equal(res.status, 200, res.body);
  return (JSON.parse(res.body) as { d: Record<string, unknown> & { __metadata: { etag: string } } }).d;
}

test("a change of a Fixed property by a service operation moves the ETag, and the client's If-Match then answers 412", async () => {
  // The generated client keeps the ETag it read and sends it on its next update.
  const { id, etag: held } = await createProduct('Etag');
  const op = await call('POST', `ReviseInventoryStatus?productId=${id}L&stockAmount=5`);
  assert.equal(op.status, 200, op.body);
  const now = await readProduct(id);
  assert.equal(now.StockAmount, 5);
  assert.notEqual(now.__metadata.etag, held, 'the operation moved the ETag');
  const stale = await call('MERGE', `Products(${id}L)`, { Title: 'Lost update' }, { 'If-Match': held });
  assert.equal(stale.status, 412, stale.body);
  const fresh = await call('MERGE', `Products(${id}L)`, { Title: 'Kept update' }, { 'If-Match': now.__metadata.etag });
  assert.equal(fresh.status, 204, fresh.body);
});

test("a read-only value set by an operation leaves the ETag: the .NET client's whole-entity MERGE with the ETag it held answers 204", async () => {
  const { id } = await createProduct('Profile');
  // The client reads the whole entity and holds it, with its ETag.
  const held = await readProduct(id);
  const op = await call('POST', `SetProductProfile?productId=${id}L&type=1&profileId=77L`);
  assert.equal(op.status, 200, op.body);
  const now = await readProduct(id);
  assert.equal(now.PaymentProfileId, '77');
  assert.equal(now.__metadata.etag, held.__metadata.etag, 'a read-only change does not move the ETag');
  // It re-sends everything it holds, the stale PaymentProfileId (null) included, with If-Match.
  const { __metadata, ...whole } = held;
  const merge = await call('MERGE', `Products(${id}L)`, { ...whole, Title: 'Renamed' }, { 'If-Match': __metadata.etag });
  assert.equal(merge.status, 204, merge.body);
  const after = await readProduct(id);
  assert.equal(after.Title, 'Renamed');
  assert.equal(after.PaymentProfileId, '77', 'the read-only value the operation set is kept');
  assert.notEqual(after.__metadata.etag, held.__metadata.etag, 'the write of writable properties moved the ETag');
});
