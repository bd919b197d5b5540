/**
 * What the seller's code (./seller-app.ts) exports, in plain values: the test that generates the
 * client compiles seller-app.ts next to it and loads it as a SellerApp. This file is compiled both
 * with the project (for the test) and with the seller's code (copied beside it).
 */

export interface Connection {
  /** Scheme, host and port only: the service path is the client's base path, set at generation. */
  readonly origin: string;
  readonly subscriptionToken: string;
  /** The value of the .ASPXAUTH cookie that the login answered. */
  readonly aspxauth: string;
  /**
   * False: the destination carries no version header at all, as the SDK sends by itself and as
   * most users leave it. Otherwise it adds MinDataServiceVersion 2.0.
   */
  readonly minDataServiceVersionHeader?: boolean;
}

/** A product as the generated client read it: Int64 and Decimal as strings, DateTime in milliseconds. */
export interface ProductView {
  readonly id: string;
  readonly title: string;
  readonly price: string;
  readonly stockAmount: number;
  readonly externalProductId: string | null;
  readonly creationDateMs: number;
  readonly etag: string | undefined;
}

export interface NewProduct {
  readonly title: string;
  readonly price: string;
  readonly stockAmount: number;
  readonly externalProductId: string;
}

export interface ImageView {
  readonly id: string;
  readonly productId: string;
  readonly imageUrl: string;
}

export interface ProductWithImages {
  readonly id: string;
  readonly title: string;
  /** Sorted. */
  readonly imageUrls: string[];
}

export interface ChangesetWrites {
  readonly createTitle: string;
  readonly updateId: string;
  readonly stockAmount: number;
  readonly deleteId: string;
}

export interface WriteOutcome {
  readonly httpCode: number;
  /** The title of the entity the operation answered (a create), else undefined. */
  readonly title: string | undefined;
}

export interface SellerApp {
  createProduct(c: Connection, values: NewProduct): Promise<ProductView>;
  /** Type is the image's slot: 1 the list image, 2 the offer image, 3 to 12 further images. */
  createImage(c: Connection, productId: string, type: number, imageUrl: string): Promise<ImageView>;
  /** $filter on ExternalProductId (an Int64) with the images expanded. */
  productsWithImages(c: Connection, externalProductId: string): Promise<ProductWithImages[]>;
  /** $filter on ExternalProductId alone. */
  productsFiltered(c: Connection, externalProductId: string): Promise<ProductView[]>;
  productByKey(c: Connection, id: string): Promise<ProductView>;
  changeStock(c: Connection, id: string, stockAmount: number): Promise<void>;
  /** Two copies read at one version, both changed and written back: the second write's HTTP status, 0 if accepted. */
  concurrentStockChanges(c: Connection, id: string): Promise<number>;
  reviseInventory(c: Connection, productId: string, stockAmount: number, price: string): Promise<boolean>;
  isListed(c: Connection, productId: string): Promise<boolean>;
  changesetOfWrites(c: Connection, writes: ChangesetWrites): Promise<WriteOutcome[]>;
  /** A $filter read as a query part of $batch: the ids it read. */
  batchedRead(c: Connection, externalProductId: string): Promise<string[]>;
  deleteProduct(c: Connection, id: string): Promise<void>;
  /** The HTTP status with which a read by key failed, 0 if it succeeded. */
  statusOfReadByKey(c: Connection, id: string): Promise<number>;
}
