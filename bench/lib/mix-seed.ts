/**
 * The sellers of the connector mix (mix.ts): S accounts, each with a small catalogue of its own
 * (test/support/catalogue-seed.ts, the same shape as the bench's big one) and a few orders
 * delivered through the platform intake, exactly as the platform API would apply them. Written
 * straight through the store while the bench seeds its database, before any service runs.
 *
 * Each seller's orders are of two kinds: PENDING_ORDERS that no one acknowledges, so that every
 * order poll of the run finds rows to expand, and ACKNOWLEDGED_ORDERS that the connector's
 * write-back MERGEs over and over (the first write-back of an order costs what a later one does).
 */
import { createAccount } from '../../src/auth/accounts';
import { createCatalogueServices } from '../../src/catalogue/services';
import { systemClock } from '../../src/clock';
import { model } from '../../src/model/catalogue-model';
import { PlatformIntake } from '../../src/platform/intake';
import { EntityStore } from '../../src/store/entities';
import type { Store } from '../../src/store/store';
import { expectedProduct, seedCatalogue } from '../../test/support/catalogue-seed';
import { orderDocument, orderItem } from '../../test/platform/platform-client';

export const PENDING_ORDERS = 3;
export const ACKNOWLEDGED_ORDERS = 2;
/** Items per order, each a product of the seller (and one of its variations). */
const ITEMS_PER_ORDER = 2;

export interface MixSellerAccount {
  readonly userName: string;
  readonly password: string;
  readonly subscriptionToken: string;
  readonly accountId: number;
}

const PASSWORD = 'bench-mix-password-0123456789';

/** Runs fn over items with at most `width` at a time (scrypt runs on the thread pool: some overlap pays). */
export async function inParallel<T, R>(items: readonly T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}

/**
 * The platform's order document as the tests deliver it (test/platform/platform-client.ts), its
 * items the seller's products and variations, so that the poll's expansions find them.
 */
function sellerOrder(seller: number, order: number, products: number) {
  const platformOrderId = `MIX-${seller}-${order}`;
  const items = Array.from({ length: ITEMS_PER_ORDER }, (_, k) => {
    const product = expectedProduct((order * ITEMS_PER_ORDER + k) % products);
    return orderItem(`${platformOrderId}-${k}`, {
      Name: product.title,
      Price: product.price,
      Product: { ForeignId: product.foreignId },
      ProductVariation: { Sku: product.variations[k % product.variations.length]!.sku },
    });
  });
  return orderDocument(platformOrderId, items);
}

/** S sellers, each with `products` products and PENDING_ORDERS + ACKNOWLEDGED_ORDERS orders. */
export async function seedSellers(store: Store, count: number, products: number, log: (line: string) => void): Promise<MixSellerAccount[]> {
  const started = performance.now();
  const entities = new EntityStore(model, store);
  const intake = new PlatformIntake(createCatalogueServices(store, systemClock));
  const stamp = `${process.pid}-${Date.now()}`;
  const sellers = await inParallel(
    Array.from({ length: count }, (_, i) => i),
    4,
    async (i) => {
      const created = await createAccount(store, systemClock, { userName: `mix-${stamp}-${i}`, password: PASSWORD });
      await seedCatalogue(model, store, entities, created.accountId, products);
      const orders = Array.from({ length: PENDING_ORDERS + ACKNOWLEDGED_ORDERS }, (_, o) => intake.validate(sellerOrder(i, o, products)));
      await intake.applyAll(created.accountId, orders);
      return { userName: `mix-${stamp}-${i}`, password: PASSWORD, subscriptionToken: created.subscriptionToken, accountId: created.accountId };
    },
  );
  log(`seeded ${count} sellers for the connector mix (${products} products and ${PENDING_ORDERS + ACKNOWLEDGED_ORDERS} orders each) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return sellers;
}
