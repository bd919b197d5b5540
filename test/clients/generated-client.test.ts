/**
 * A typed client generated from the live service's own $metadata by SAP Cloud SDK's OData V2
 * generator (@sap-cloud-sdk/generator, from the npm registry), compiled with tsc as a user compiles
 * it, and used by a seller's code (./sap-cloud-sdk/seller-app.ts) against the live service: a
 * create, a collection read with $filter and $expand, a read by key, an update with If-Match, a
 * delete, service operations and a changeset in $batch. What the client reads back is checked
 * against what the service stored, read raw over HTTP.
 *
 * Before the tests: GET $metadata as the seller, run the generator's command line on it with the
 * service path as the client's base path, copy the seller's code and compiler settings next to the
 * generated client, and compile them together. Everything lands in dist/generated-client/<engine>.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { request } from '../support/http-client';
import { newSeller, SERVICE_PATH, startLive, storeRow, type LiveService, type Seller } from '../support/live-service';
import { testEngine } from '../support/test-database';
import type { Connection, ProductView, SellerApp } from './sap-cloud-sdk/seller-app-contract';

const run = promisify(execFile);

/** The repository (this file runs from dist/test/clients). */
const REPO = path.resolve(__dirname, '..', '..', '..');
const SELLER_CODE = path.join(REPO, 'test', 'clients', 'sap-cloud-sdk');
const WORK = path.join(REPO, 'dist', 'generated-client', testEngine);

let live: LiveService;
let seller: Seller;
let app: SellerApp;
let connection: Connection;

/** GET $metadata, generate the client, compile it with the seller's code; answers the compiled module. */
async function generateAndCompile(): Promise<SellerApp> {
  fs.rmSync(WORK, { recursive: true, force: true });
  fs.mkdirSync(path.join(WORK, 'metadata'), { recursive: true });
  const metadata = await request(live.root + '/$metadata', { headers: seller.auth });
  assert.equal(metadata.status, 200, metadata.body);
  fs.writeFileSync(path.join(WORK, 'metadata', 'catalogue.edmx'), metadata.body);
  // $metadata does not say where the service lives, so the generator would take "/" as the base
  // path: the options file gives it the service path (the key is the input file as given).
  fs.writeFileSync(
    path.join(WORK, 'options-per-service.json'),
    JSON.stringify({ 'metadata/catalogue.edmx': { packageName: 'catalogue', directoryName: 'catalogue', basePath: SERVICE_PATH } }),
  );
  const generator = path.join(path.dirname(require.resolve('@sap-cloud-sdk/generator/package.json')), 'dist', 'cli.js');
  // --skipValidation lets it rename what would clash in TypeScript instead of stopping.
  await run(process.execPath, [generator, '--input', 'metadata', '--outputDir', 'src', '--optionsPerService', 'options-per-service.json', '--skipValidation'], { cwd: WORK });
  for (const file of ['seller-app.ts', 'seller-app-contract.ts']) fs.copyFileSync(path.join(SELLER_CODE, file), path.join(WORK, 'src', file));
  fs.copyFileSync(path.join(SELLER_CODE, 'tsconfig.json'), path.join(WORK, 'tsconfig.json'));
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: WORK }).catch((e: { stdout?: string }) => {
    throw new Error(`tsc refused the generated client or the seller's code:\n${e.stdout ?? String(e)}`);
  });
  return (require(path.join(WORK, 'build', 'seller-app.js')) as { sellerApp: SellerApp }).sellerApp;
}

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'generated');
  connection = { origin: live.origin, subscriptionToken: seller.token, aspxauth: seller.cookie };
  app = await generateAndCompile();
});
after(() => live.close());

type Entity = Record<string, unknown>;

/** An entity as the service stores it, read raw in JSON (not through the generated client). */
async function stored(pathAndQuery: string): Promise<Entity> {
  const res = await request(live.root + pathAndQuery, { headers: { ...seller.auth, Accept: 'application/json' } });
  assert.equal(res.status, 200, res.body);
  return (JSON.parse(res.body) as { d: Entity }).d;
}

async function statusOf(pathAndQuery: string): Promise<number> {
  return (await request(live.root + pathAndQuery, { headers: { ...seller.auth, Accept: 'application/json' } })).status;
}

/** Milliseconds of a "/Date(ms)/" literal. */
function dateMs(value: unknown): number {
  const m = /^\/Date\((-?\d+)\)\/$/.exec(String(value));
  assert.ok(m, `a /Date(ms)/ literal, not ${String(value)}`);
  return Number(m[1]);
}

/** A decimal's digits without trailing zeros, so "20.500000" and "20.5" compare equal. */
function decimal(value: unknown): string {
  const text = String(value);
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

let externalCounter = 0;
/** A fresh Int64 above 2^53 for ExternalProductId, so that a rounded value cannot pass. */
function freshExternalId(): string {
  return (9007199254740993n + BigInt(++externalCounter) * 2n).toString();
}

/** The generated client's view of a product equals what the service stored. */
function assertSameAsStored(view: ProductView, row: Entity): void {
  assert.equal(view.id, row.Id);
  assert.equal(view.title, row.Title);
  assert.equal(decimal(view.price), decimal(row.Price));
  assert.equal(view.stockAmount, row.StockAmount);
  assert.equal(view.externalProductId, row.ExternalProductId);
  assert.equal(view.creationDateMs, dateMs(row.CreationDate));
  assert.equal(view.etag, (row.__metadata as { etag?: string }).etag);
}

test('create: POST Products through the generated client answers the new product, Int64 above 2^53 and Decimal exact', async () => {
  const externalProductId = freshExternalId();
  const made = await app.createProduct(connection, { title: 'generated shirt', price: '20.5', stockAmount: 7, externalProductId });
  assert.match(made.id, /^[1-9]\d*$/);
  assert.equal(made.title, 'generated shirt');
  assert.equal(decimal(made.price), '20.5');
  assert.equal(made.stockAmount, 7);
  assert.equal(made.externalProductId, externalProductId);
  assertSameAsStored(made, await stored(`/Products(${made.id}L)`));
});

test('read of a collection with $filter on an Int64 (an L literal) and $expand of the images', async () => {
  const externalProductId = freshExternalId();
  const wanted = await app.createProduct(connection, { title: 'with images', price: '3', stockAmount: 1, externalProductId });
  const other = await app.createProduct(connection, { title: 'not wanted', price: '3', stockAmount: 1, externalProductId: freshExternalId() });
  const images = [await app.createImage(connection, wanted.id, 1, 'https://img.example/b.jpg'), await app.createImage(connection, wanted.id, 3, 'https://img.example/a.jpg')];
  await app.createImage(connection, other.id, 1, 'https://img.example/other.jpg');
  assert.deepEqual(
    images.map((i) => i.productId),
    [wanted.id, wanted.id],
  );

  const found = await app.productsWithImages(connection, externalProductId);
  assert.deepEqual(found, [{ id: wanted.id, title: 'with images', imageUrls: ['https://img.example/a.jpg', 'https://img.example/b.jpg'] }]);
});

test('read of a collection with $filter alone: the client asks for version 2.0 and reads d.results', async () => {
  const externalProductId = freshExternalId();
  const wanted = await app.createProduct(connection, { title: 'filtered', price: '4.25', stockAmount: 2, externalProductId });
  await app.createProduct(connection, { title: 'filtered out', price: '4.25', stockAmount: 2, externalProductId: freshExternalId() });

  const found = await app.productsFiltered(connection, externalProductId);
  assert.equal(found.length, 1, 'one product read (an empty list means the answer was not {"d":{"results":[…]}})');
  assertSameAsStored(found[0]!, await stored(`/Products(${wanted.id}L)`));
});

test('read by key: Products(Id=…L) answers the product as stored', async () => {
  const made = await app.createProduct(connection, { title: 'by key', price: '0.1', stockAmount: 3, externalProductId: freshExternalId() });
  const read = await app.productByKey(connection, made.id);
  assertSameAsStored(read, await stored(`/Products(${made.id}L)`));
});

test('update: a read product changed and written back is stored, and its ETag moves', async () => {
  const made = await app.createProduct(connection, { title: 'to update', price: '9', stockAmount: 3, externalProductId: freshExternalId() });
  await app.changeStock(connection, made.id, 42);
  const row = await stored(`/Products(${made.id}L)`);
  assert.equal(row.StockAmount, 42);
  assert.equal(row.Title, 'to update', 'the rest of the product is unchanged');
  const read = await app.productByKey(connection, made.id);
  assert.equal(read.stockAmount, 42);
  assert.notEqual(read.etag, made.etag);
});

test('update: the client sends If-Match from the ETag it read, so a stale copy is refused with 412 and nothing is lost', async () => {
  const made = await app.createProduct(connection, { title: 'two writers', price: '9', stockAmount: 10, externalProductId: freshExternalId() });
  assert.equal(await app.concurrentStockChanges(connection, made.id), 412);
  assert.equal((await stored(`/Products(${made.id}L)`)).StockAmount, 11, 'the first write stands');
});

test('service operations: ReviseInventoryStatus (POST, Int64, Int32 and Decimal parameters) and ProductIsListed (GET)', async () => {
  const made = await app.createProduct(connection, { title: 'revised', price: '10', stockAmount: 5, externalProductId: freshExternalId() });
  assert.equal(await app.reviseInventory(connection, made.id, 17, '12.75'), true);
  const row = await stored(`/Products(${made.id}L)`);
  assert.equal(row.StockAmount, 17);
  assert.equal(decimal(row.Price), '12.75');

  assert.equal(await app.isListed(connection, made.id), false);
  const listing = live.service.app.model.typeByName.get('Listing')!;
  await storeRow(live, seller.accountId, listing, { ProductId: BigInt(made.id), PlatformItemId: `item-${made.id}`, Status: 1, Price: '10', Quantity: 1, QuantitySold: 0 });
  assert.equal(await app.isListed(connection, made.id), true);
});

test('changeset in $batch: a create, an update and a delete commit together, each answered in order', async () => {
  const toUpdate = await app.createProduct(connection, { title: 'changeset update', price: '2', stockAmount: 1, externalProductId: freshExternalId() });
  const toDelete = await app.createProduct(connection, { title: 'changeset delete', price: '2', stockAmount: 1, externalProductId: freshExternalId() });
  const outcomes = await app.changesetOfWrites(connection, { createTitle: 'changeset create', updateId: toUpdate.id, stockAmount: 33, deleteId: toDelete.id });

  assert.deepEqual(
    outcomes.map((o) => o.httpCode),
    [201, 204, 204],
  );
  assert.equal(outcomes[0]!.title, 'changeset create');
  assert.equal((await stored(`/Products(${toUpdate.id}L)`)).StockAmount, 33);
  assert.equal(await statusOf(`/Products(${toDelete.id}L)`), 404);
  const created = await stored(`/Products?$filter=${encodeURIComponent("Title eq 'changeset create'")}`);
  const rows = Array.isArray(created) ? created : (created.results as Entity[]);
  assert.equal(rows.length, 1, 'the changeset created one product');
});

test('a query part in $batch: a collection read with $filter alone is read as a list', async () => {
  const externalProductId = freshExternalId();
  const wanted = await app.createProduct(connection, { title: 'batched read', price: '1', stockAmount: 1, externalProductId });
  assert.deepEqual(await app.batchedRead(connection, externalProductId), [wanted.id]);
});

test('delete: the product is gone for the client and for the service', async () => {
  const made = await app.createProduct(connection, { title: 'to delete', price: '1', stockAmount: 1, externalProductId: freshExternalId() });
  await app.deleteProduct(connection, made.id);
  assert.equal(await app.statusOfReadByKey(connection, made.id), 404);
  assert.equal(await statusOf(`/Products(${made.id}L)`), 404);
});

// The SDK by itself sends no DataServiceVersion, MaxDataServiceVersion or MinDataServiceVersion
// header, and reads every collection only as {"d":{"results":[…]}}: a request that declares no
// version gets version 2.0 answers, at the top level, expanded, and in a $batch query part.
test('without any version header: getAll() with $filter, with $filter and $expand, and a $batch query part read every row', async () => {
  const bare: Connection = { ...connection, minDataServiceVersionHeader: false };
  const externalProductId = freshExternalId();
  const wanted = await app.createProduct(bare, { title: 'no version header', price: '2.5', stockAmount: 1, externalProductId });
  await app.createProduct(bare, { title: 'not this one', price: '2.5', stockAmount: 1, externalProductId: freshExternalId() });
  await app.createImage(bare, wanted.id, 1, 'https://img.example/bare.jpg');

  const found = await app.productsFiltered(bare, externalProductId);
  assert.equal(found.length, 1, 'one product read (an empty list means the answer was {"d":[…]})');
  assertSameAsStored(found[0]!, await stored(`/Products(${wanted.id}L)`));
  assert.deepEqual(await app.productsWithImages(bare, externalProductId), [{ id: wanted.id, title: 'no version header', imageUrls: ['https://img.example/bare.jpg'] }]);
  assert.deepEqual(await app.batchedRead(bare, externalProductId), [wanted.id]);
});
