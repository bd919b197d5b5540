/**
 * A seller's integration as a user writes it against the typed client that SAP Cloud SDK's OData V2
 * generator makes from the service's $metadata. It is not part of the project's build: the test
 * copies it next to the client it generated (./catalogue) and compiles both with tsc under the
 * tsconfig.json beside this file, as a user would; then it calls `sellerApp` against the live
 * service and checks what it answers.
 *
 * Every function answers plain values (./seller-app-contract.ts: Int64 and Decimal as strings,
 * DateTime as milliseconds), read through the client's own typed entities, so that the test can
 * compare them with what the service stored.
 */
import { asc } from '@sap-cloud-sdk/odata-v2';
import { BigNumber } from 'bignumber.js';
import { batch, catalogue, changeset, productIsListed, reviseInventoryStatus, type Products } from './catalogue';
import type { ChangesetWrites, Connection, ImageView, NewProduct, ProductView, ProductWithImages, SellerApp, WriteOutcome } from './seller-app-contract';

/**
 * The SDK's "destination": the origin, and the headers every request carries. The service wants the
 * SubscriptionToken and the session cookie on each request; MinDataServiceVersion 2.0 makes it
 * answer collections as {"d":{"results":[…]}}, the only shape this client reads. The SDK itself
 * sends no version header, and without one the service answers 2.0 as well.
 */
function destinationOf(c: Connection) {
  const version = c.minDataServiceVersionHeader === false ? {} : { MinDataServiceVersion: '2.0' };
  return {
    url: c.origin,
    headers: { SubscriptionToken: c.subscriptionToken, Cookie: `.ASPXAUTH=${c.aspxauth}`, ...version },
  };
}

const { productsApi, productImagesApi } = catalogue();

function viewOf(p: Products): ProductView {
  return {
    id: p.id.toString(),
    title: p.title,
    price: p.price.toString(),
    stockAmount: p.stockAmount,
    externalProductId: p.externalProductId == null ? null : p.externalProductId.toString(),
    creationDateMs: p.creationDate.valueOf(),
    etag: p.versionIdentifier,
  };
}

export async function createProduct(c: Connection, values: NewProduct): Promise<ProductView> {
  const product = productsApi
    .entityBuilder()
    .title(values.title)
    .price(new BigNumber(values.price))
    .stockAmount(values.stockAmount)
    .productType(1)
    .externalProductId(new BigNumber(values.externalProductId))
    .build();
  // The service has no CSRF tokens: without skipCsrfTokenFetching every write is preceded by two HEADs.
  return viewOf(await productsApi.requestBuilder().create(product).skipCsrfTokenFetching().execute(destinationOf(c)));
}

export async function createImage(c: Connection, productId: string, type: number, imageUrl: string): Promise<ImageView> {
  const image = productImagesApi.entityBuilder().productId(new BigNumber(productId)).type(type).imageUrl(imageUrl).build();
  const made = await productImagesApi.requestBuilder().create(image).skipCsrfTokenFetching().execute(destinationOf(c));
  return { id: made.id.toString(), productId: made.productId.toString(), imageUrl: made.imageUrl };
}

/** $filter on an Int64 (an `L` literal) and $expand of the images: in OData V2 the SDK expands what is selected. */
export async function productsWithImages(c: Connection, externalProductId: string): Promise<ProductWithImages[]> {
  const found = await productsApi
    .requestBuilder()
    .getAll()
    .filter(productsApi.schema.EXTERNAL_PRODUCT_ID.equals(new BigNumber(externalProductId)))
    .select(productsApi.schema.ID, productsApi.schema.TITLE, productsApi.schema.PRODUCT_IMAGES.select(productImagesApi.schema.ALL_FIELDS))
    .orderBy(asc(productsApi.schema.ID))
    .execute(destinationOf(c));
  return found.map((p) => ({ id: p.id.toString(), title: p.title, imageUrls: p.productImages.map((i) => i.imageUrl).sort() }));
}

/** The plainest collection read: $filter alone, no $select (a version 1.0 request unless the client asks for 2.0). */
export async function productsFiltered(c: Connection, externalProductId: string): Promise<ProductView[]> {
  const found = await productsApi
    .requestBuilder()
    .getAll()
    .filter(productsApi.schema.EXTERNAL_PRODUCT_ID.equals(new BigNumber(externalProductId)))
    .execute(destinationOf(c));
  return found.map(viewOf);
}

export async function productByKey(c: Connection, id: string): Promise<ProductView> {
  return viewOf(await productsApi.requestBuilder().getByKey(new BigNumber(id)).execute(destinationOf(c)));
}

/** Read, change, write back: the SDK sends the changed properties with If-Match from the entity's ETag. */
export async function changeStock(c: Connection, id: string, stockAmount: number): Promise<void> {
  const product = await productsApi.requestBuilder().getByKey(new BigNumber(id)).execute(destinationOf(c));
  product.stockAmount = stockAmount;
  await productsApi.requestBuilder().update(product).skipCsrfTokenFetching().execute(destinationOf(c));
}

export async function concurrentStockChanges(c: Connection, id: string): Promise<number> {
  const key = new BigNumber(id);
  const first = await productsApi.requestBuilder().getByKey(key).execute(destinationOf(c));
  const second = await productsApi.requestBuilder().getByKey(key).execute(destinationOf(c));
  first.stockAmount = first.stockAmount + 1;
  await productsApi.requestBuilder().update(first).skipCsrfTokenFetching().execute(destinationOf(c));
  second.stockAmount = second.stockAmount + 2;
  return productsApi
    .requestBuilder()
    .update(second)
    .skipCsrfTokenFetching()
    .execute(destinationOf(c))
    .then(
      () => 0,
      (error: unknown) => statusOf(error),
    );
}

/** ReviseInventoryStatus (POST): Int64, Int32 and Decimal parameters in the query string. */
export async function reviseInventory(c: Connection, productId: string, stockAmount: number, price: string): Promise<boolean> {
  return reviseInventoryStatus({ productId: new BigNumber(productId), stockAmount, price: new BigNumber(price) })
    .skipCsrfTokenFetching()
    .execute(destinationOf(c));
}

export async function isListed(c: Connection, productId: string): Promise<boolean> {
  return productIsListed({ productId: new BigNumber(productId) }).execute(destinationOf(c));
}

/** One changeset: create a product, change another's stock (read first, for its ETag), delete a third. */
export async function changesetOfWrites(c: Connection, writes: ChangesetWrites): Promise<WriteOutcome[]> {
  const toUpdate = await productsApi.requestBuilder().getByKey(new BigNumber(writes.updateId)).execute(destinationOf(c));
  toUpdate.stockAmount = writes.stockAmount;
  const toDelete = await productsApi.requestBuilder().getByKey(new BigNumber(writes.deleteId)).execute(destinationOf(c));
  const created = productsApi.entityBuilder().title(writes.createTitle).price(new BigNumber('1.5')).stockAmount(1).productType(1).build();
  const [answer, ...more] = await batch(
    changeset(productsApi.requestBuilder().create(created), productsApi.requestBuilder().update(toUpdate), productsApi.requestBuilder().delete(toDelete)),
  )
    .skipCsrfTokenFetching()
    .execute(destinationOf(c));
  if (!answer || more.length) throw new Error(`one answer for one changeset, not ${more.length + (answer ? 1 : 0)}`);
  if (!answer.isWriteResponses()) throw new Error(`the changeset failed: ${answer.isError() ? `${answer.httpCode} ${JSON.stringify(answer.body)}` : 'a read answer'}`);
  return answer.responses.map((r) => ({ httpCode: r.httpCode, title: r.as ? r.as(productsApi).title : undefined }));
}

/** A query part in $batch: a collection read with $filter alone. */
export async function batchedRead(c: Connection, externalProductId: string): Promise<string[]> {
  const [answer, ...more] = await batch(productsApi.requestBuilder().getAll().filter(productsApi.schema.EXTERNAL_PRODUCT_ID.equals(new BigNumber(externalProductId))))
    .skipCsrfTokenFetching()
    .execute(destinationOf(c));
  if (!answer || more.length) throw new Error('one answer for one query part');
  if (!answer.isReadResponse()) throw new Error(`the query part failed: ${answer.isError() ? `${answer.httpCode} ${JSON.stringify(answer.body)}` : 'a write answer'}`);
  // String(): a list misread as one entity has no id, which must show as a wrong answer, not a crash.
  return answer.as(productsApi).map((p) => String(p.id));
}

export async function deleteProduct(c: Connection, id: string): Promise<void> {
  const product = await productsApi.requestBuilder().getByKey(new BigNumber(id)).execute(destinationOf(c));
  await productsApi.requestBuilder().delete(product).skipCsrfTokenFetching().execute(destinationOf(c));
}

export async function statusOfReadByKey(c: Connection, id: string): Promise<number> {
  return productsApi
    .requestBuilder()
    .getByKey(new BigNumber(id))
    .execute(destinationOf(c))
    .then(
      () => 0,
      (error: unknown) => statusOf(error),
    );
}

/** The SDK wraps the HTTP error in causes: the first that carries an HTTP response has the status. */
function statusOf(error: unknown): number {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    const status = (e as { response?: { status?: unknown } }).response?.status;
    if (typeof status === 'number') return status;
  }
  throw error;
}

/** What the test calls (typed here, so that a function that strays from the contract fails to compile). */
export const sellerApp: SellerApp = {
  createProduct,
  createImage,
  productsWithImages,
  productsFiltered,
  productByKey,
  changeStock,
  concurrentStockChanges,
  reviseInventory,
  isListed,
  changesetOfWrites,
  batchedRead,
  deleteProduct,
  statusOfReadByKey,
};
