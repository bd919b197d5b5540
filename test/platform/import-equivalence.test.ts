/**
 * A file's import writes its order documents as a set (src/platform/buffered-rows.ts): lookups
 * loaded at once, rows in multi-row INSERTs. Whatever the file holds, the outcome must be what
 * applying its documents one by one, each in its own transaction, gives: the same answers, the
 * same failure at the same document, and the same rows, versions included.
 *
 * Seeded files aim at every rule the order handler has: new orders, orders delivered again with
 * changes, buyers shared by name, items that name products by Id or ForeignId and variations by
 * Id or Sku, references that name nothing, items of another order, repeated items, payments and
 * shipments between orders. Each file goes to two accounts with the same catalogue: one by
 * importDocuments (sets of DOCUMENTS_PER_TRANSACTION), one document at a time. Ids differ between
 * the two, so rows are compared with every id replaced by its rank among the account's ids.
 * The set import sends its rows ahead every few rows (writeAheadRows: SMALL_WRITE_AHEAD), so that
 * these files of a few dozen documents interleave sent rows, held rows, updates of both, lookups
 * and other documents as a file of thousands does at the default.
 *
 * Also reported: the import's rows per second for 10,000 new orders (issue 16: ≥ 20,000).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startLive, newSeller, storeRow, type LiveService } from '../support/live-service';
import { mulberry32 } from '../support/random';
import { reportFigures } from '../support/figures';
import { ManualClock } from '../../src/clock';
import { PlatformIntake } from '../../src/platform/intake';
import { importDocuments, type FileEntry } from '../../src/platform/document-file';
import { model } from '../../src/model/catalogue-model';
import { compareIds } from '../../src/odata/entity';

const SEEDS = 40;
const ORDER_TABLES = ['buyers', 'addresses', 'sales_orders', 'sales_order_items', 'sales_order_history'];

/** Rows held before they are sent ahead by the set import of the seeded files (an order is 3–7). */
const SMALL_WRITE_AHEAD = 5;

let live: LiveService;
/** Imports as the service does. */
let intake: PlatformIntake;
/** Imports the seeded files, sending rows ahead after nearly every order. */
let writingAhead: PlatformIntake;
const clock = new ManualClock(Date.UTC(2026, 10, 26, 12, 0, 0));
const figures: Record<string, number> = {};

interface Catalogue {
  readonly products: { id: bigint; foreignId: string; variations: { id: bigint; sku: string }[] }[];
}

/** The same catalogue in an account, in the same order of ids. */
async function seedCatalogue(accountId: number): Promise<Catalogue> {
  const type = (name: string) => model.typeByName.get(name)!;
  const products: Catalogue['products'] = [];
  for (let i = 0; i < 5; i++) {
    // The last two share a ForeignId: a reference by it names more than one.
    const foreignId = i >= 3 ? 'F-dup' : `F-${i}`;
    const id = await storeRow(live, accountId, type('Product'), { Title: `P${i}`, Price: '10.00', StockAmount: 5, ForeignId: foreignId });
    const variations: { id: bigint; sku: string }[] = [];
    for (let v = 0; v < 2; v++) {
      const sku = `S-${i}-${v}`;
      variations.push({ id: await storeRow(live, accountId, type('ProductVariation'), { ProductId: id, Sku: sku, Price: '10.00', StockAmount: 1 }), sku });
    }
    products.push({ id, foreignId, variations });
  }
  return { products };
}

/** A seeded file of documents for a catalogue. */
function documentsFor(seed: number, catalogue: Catalogue): unknown[] {
  const random = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const docs: unknown[] = [];
  const orderIds: string[] = [];
  const count = 5 + Math.floor(random() * 40);
  for (let n = 0; n < count; n++) {
    const r = random();
    if (r < 0.08 && orderIds.length > 0) {
      docs.push({ kind: 'payment', PlatformOrderId: pick(orderIds), Paid: random() < 0.7 });
      continue;
    }
    if (r < 0.12 && orderIds.length > 0) {
      docs.push({ kind: 'shipment', PlatformOrderId: pick(orderIds), ShippingStatus: pick([0, 1]) });
      continue;
    }
    // A new order, or one delivered before (changed or not).
    const again = orderIds.length > 0 && random() < 0.25;
    const orderId = again ? pick(orderIds) : `O-${seed}-${n}`;
    if (!again) orderIds.push(orderId);
    const items: unknown[] = [];
    const itemCount = 1 + Math.floor(random() * 4);
    for (let i = 0; i < itemCount; i++) {
      // Item ids collide now and then across orders (another order's item) and within one.
      const itemId = random() < 0.01 ? `I-${seed}-0-0` : random() < 0.01 && i > 0 ? `I-${orderId}-0` : `I-${orderId}-${i}`;
      const item: Record<string, unknown> = { PlatformItemId: itemId, TransactionId: `T-${i}`, Name: `Item ${i}`, Amount: 1 + Math.floor(random() * 3), Price: pick(['1.50', '19.99', '7.00']), CurrencyCode: 'EUR' };
      const product = pick(catalogue.products.slice(0, 3));
      const ref = random();
      if (ref < 0.2) item.Product = { Id: String(product.id) };
      else if (ref < 0.4) item.Product = { ForeignId: product.foreignId };
      else if (ref < 0.5) item.ProductVariation = { Id: String(pick(product.variations).id) };
      else if (ref < 0.6) {
        item.Product = { Id: String(product.id) };
        item.ProductVariation = { Sku: pick(product.variations).sku };
      } else if (ref < 0.605) item.Product = { ForeignId: 'F-nowhere' };
      else if (ref < 0.61) item.Product = { ForeignId: 'F-dup' };
      items.push(item);
    }
    const buyer = `buyer-${Math.floor(random() * 6)}`;
    const doc: Record<string, unknown> = {
      kind: 'order',
      PlatformOrderId: orderId,
      CreationDate: '2026-11-20T09:00:00Z',
      CurrencyCode: 'EUR',
      ShippingServiceCost: pick(['4.90', '0.00']),
      CheckoutStatus: pick([1, 2]),
      Buyer: { BuyerName: buyer, Email: `${buyer}-${Math.floor(random() * 2)}@example.com` },
      Address: { Name: 'Erika', Surname: 'M', Street: pick(['H 17', 'A 3']), PostalCode: '51147', Town: 'Köln', Country: 'DE' },
      SalesOrderItems: items,
    };
    if (random() < 0.5) doc.ShippingAddress = { Name: 'Erika', Surname: 'M', Street: 'A 3', PostalCode: '20457', Town: 'Hamburg', Country: 'DE' };
    docs.push(doc);
  }
  return docs;
}

/** What an import ends with: each document's outcome, or the failure, with ids as ranks. */
interface Result {
  readonly outcomes: string[];
  readonly failure: string | undefined;
  readonly rows: Record<string, string[]>;
}

/** The account's order rows, every id replaced by its rank among the account's ids. */
async function orderRows(accountId: number): Promise<Record<string, string[]>> {
  const app = live.service.app;
  const raw: Record<string, Record<string, unknown>[]> = {};
  await app.store.read(accountId, async (tx) => {
    for (const table of ['products', 'product_variations', ...ORDER_TABLES]) raw[table] = await tx.all(`SELECT * FROM "${table}" WHERE account_id = ?`, [accountId]);
  });
  const ids = new Set<bigint>();
  for (const table of ['products', 'product_variations', 'buyers', 'addresses', 'sales_orders', 'sales_order_items']) for (const row of raw[table]!) ids.add(BigInt(row.id as bigint));
  const rank = new Map([...ids].sort(compareIds).map((id, i) => [id, i] as const));
  // History lines number themselves (a sequence of their own): ranked among themselves.
  const lineIds = raw.sales_order_history!.map((row) => BigInt(row.id as bigint)).sort(compareIds);
  for (const row of raw.sales_order_history!) row.id = `line ${lineIds.indexOf(BigInt(row.id as bigint))}`;
  const idColumns = /^(id|.*_id)$/;
  const out: Record<string, string[]> = {};
  for (const table of ORDER_TABLES) {
    out[table] = raw[table]!.map((row) =>
      JSON.stringify(
        Object.entries(row)
          .filter(([column]) => column !== 'account_id')
          .map(([column, value]) => {
            const isId = (typeof value === 'bigint' || typeof value === 'number') && idColumns.test(column) && rank.has(BigInt(value));
            if (isId) return [column, `#${rank.get(BigInt(value))}`];
            return [column, typeof value === 'bigint' ? String(value) : value];
          }),
      ),
    ).sort();
  }
  return out;
}

const outcomeText = (o: { kind: string; key: string; outcome: string }) => `${o.kind} ${o.key} ${o.outcome}`;

async function importedAsSet(accountId: number, entries: readonly FileEntry[]): Promise<Result> {
  let outcomes: string[] = [];
  let failure: string | undefined;
  try {
    outcomes = (await importDocuments(writingAhead, accountId, entries)).map(outcomeText);
  } catch (error) {
    failure = (error as Error).message;
  }
  return { outcomes, failure, rows: await orderRows(accountId) };
}

/** One document per transaction, stopping at the first failure as the import does. */
async function importedOneByOne(accountId: number, entries: readonly FileEntry[]): Promise<Result> {
  const outcomes: string[] = [];
  let failure: string | undefined;
  for (const [i, entry] of entries.entries()) {
    try {
      outcomes.push(outcomeText(await intake.apply(accountId, intake.validate(entry.value))));
    } catch (error) {
      failure = `${entry.where}: ${(error as Error).message} The ${i} documents before it were imported; importing them again changes nothing.`;
      break;
    }
  }
  return { outcomes: failure === undefined ? outcomes : [], failure, rows: await orderRows(accountId) };
}

before(async () => {
  live = await startLive({ clock });
  intake = new PlatformIntake(live.service.app);
  writingAhead = new PlatformIntake(live.service.app, { writeAheadRows: SMALL_WRITE_AHEAD });
});

after(async () => {
  reportFigures('platform import', figures);
  await live.close();
});

test('an import writes its orders as a set with exactly the outcome of one document at a time', async (t) => {
  const outcomes = { imported: 0, failed: 0 };
  for (let seed = 1; seed <= SEEDS; seed++) {
    const asSet = await newSeller(live, `set-${seed}`);
    const oneByOne = await newSeller(live, `one-${seed}`);
    const catalogues = [await seedCatalogue(asSet.accountId), await seedCatalogue(oneByOne.accountId)];
    const entries = (catalogue: Catalogue) => documentsFor(seed, catalogue).map((value, i) => ({ where: `document ${i + 1}`, value }));
    const expected = await importedOneByOne(oneByOne.accountId, entries(catalogues[1]!));
    const actual = await importedAsSet(asSet.accountId, entries(catalogues[0]!));
    assert.deepEqual(actual, expected, `seed ${seed}`);
    if (expected.failure === undefined) outcomes.imported++;
    else {
      outcomes.failed++;
      t.diagnostic(`seed ${seed}: ${expected.failure.slice(0, 160)}`);
    }
  }
  t.diagnostic(`${outcomes.imported} files imported whole, ${outcomes.failed} stopped at a failing document`);
  // Both kinds of file occurred, or the comparison proved less than it claims.
  assert.ok(outcomes.imported > 0 && outcomes.failed > 0, JSON.stringify(outcomes));
});

/** A file of new orders, each with a buyer, two addresses and three items: 7 rows. */
function newOrders(from: number, count: number): FileEntry[] {
  const entries: FileEntry[] = [];
  for (let n = from; n < from + count; n++) {
    entries.push({
      where: `line ${n - from + 1}`,
      value: {
        kind: 'order',
        PlatformOrderId: `BULK-${n}`,
        CreationDate: '2026-11-20T09:00:00Z',
        CurrencyCode: 'EUR',
        Buyer: { BuyerName: `bulk-buyer-${n}`, Email: `b${n}@example.com` },
        Address: { Name: 'Erika', Surname: 'M', Street: 'H 17', PostalCode: '51147', Town: 'Köln', Country: 'DE' },
        ShippingAddress: { Name: 'Erika', Surname: 'M', Street: 'A 3', PostalCode: '20457', Town: 'Hamburg', Country: 'DE' },
        SalesOrderItems: [1, 2, 3].map((i) => ({ PlatformItemId: `BULK-${n}-${i}`, TransactionId: `T-${i}`, Name: 'Item', Amount: 1, Price: '19.99', CurrencyCode: 'EUR' })),
      },
    });
  }
  return entries;
}

/** Rows of the order tables an account has. */
async function orderRowCount(accountId: number): Promise<number> {
  let rows = 0;
  await live.service.app.store.read(accountId, async (tx) => {
    for (const table of ORDER_TABLES) rows += Number((await tx.get<{ n: bigint | number }>(`SELECT count(*) AS n FROM "${table}" WHERE account_id = ?`, [accountId]))!.n);
  });
  return rows;
}

/**
 * 10,000 new orders in two files, rows per second reported for each: the first 2,000 include the
 * warm-up of the import's code at this size (V8 optimising it, on the cores the database shares),
 * the next 8,000 are the import's steady rate.
 */
test('10,000 new orders: rows per second reported', async (t) => {
  const seller = await newSeller(live, 'bulk');
  let rowsBefore = 0;
  let secondsInAll = 0;
  for (const [name, from, count] of [['first', 0, 2000], ['next', 2000, 8000]] as const) {
    const started = performance.now();
    const outcomes = await importDocuments(intake, seller.accountId, newOrders(from, count));
    const seconds = (performance.now() - started) / 1000;
    assert.equal(outcomes.filter((o) => o.outcome === 'created').length, count);
    const rows = (await orderRowCount(seller.accountId)) - rowsBefore;
    assert.equal(rows, count * 7, 'a buyer, two addresses, the order and three items each');
    rowsBefore += rows;
    secondsInAll += seconds;
    figures[`${name}Orders`] = count;
    figures[`${name}Seconds`] = Math.round(seconds * 100) / 100;
    figures[`${name}RowsPerSecond`] = Math.round(rows / seconds);
    t.diagnostic(`${name} ${count} orders: ${rows} rows in ${seconds.toFixed(2)} s: ${Math.round(rows / seconds)} rows/s`);
  }
  figures.rowsPerSecond = Math.round(rowsBefore / secondsInAll);
  t.diagnostic(`all 10000 orders: ${rowsBefore} rows in ${secondsInAll.toFixed(2)} s: ${figures.rowsPerSecond} rows/s`);
});
