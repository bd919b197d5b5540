/**
 * Demonstration data for one account (`catalogue demo --user NAME`): a catalog tree, 54 products
 * with variations, images and specifics, listings started and ended, and 24 orders whose payment
 * and shipping events build their history. Catalogue data goes through the same writes and rules
 * as the OData API, platform data through the same documents as the platform API, so everything
 * a demo holds obeys every rule. The data is the same on every run (no randomness); its dates
 * run over the 30 days before now, on a clock of its own that the caller passes in.
 */
import type { ManualClock } from '../clock';
import type { CatalogueServices } from '../catalogue/services';
import type { EdmValue } from '../odata/edm';
import type { SqlExecutor } from '../store/store';
import type { Json } from './documents';
import type { PlatformIntake } from './intake';
import { entityId, type EntityPayload } from '../odata/entity';

export class DemoDataExistsError extends Error {
  override readonly name = 'DemoDataExistsError';
}

export interface DemoReport {
  readonly catalogs: number;
  readonly products: number;
  readonly variations: number;
  readonly listings: number;
  readonly orders: number;
  readonly historyLines: number;
}

/** How far back the demo's time starts. */
export const DEMO_SPAN_MS = 30 * 24 * 3600_000;

const CATALOG_TREE: readonly (readonly [string, readonly string[]])[] = [
  ['Clothing', ['Jackets', 'Shirts', 'Trousers']],
  ['Shoes', ['Running', 'Hiking']],
  ['Accessories', ['Bags', 'Hats', 'Gloves']],
];

/** One product line per leaf catalog: what its products are called and how they vary. */
const LINES: Readonly<Record<string, { readonly names: readonly string[]; readonly price: number; readonly material: string; readonly sizes: readonly string[] }>> = {
  Jackets: { names: ['Rain Jacket', 'Softshell Jacket', 'Down Jacket', 'Fleece Jacket', 'Windbreaker', 'Parka', 'Gilet'], price: 129, material: 'Polyamide', sizes: ['S', 'M', 'L', 'XL'] },
  Shirts: { names: ['Merino Shirt', 'Linen Shirt', 'Flannel Shirt', 'Polo Shirt', 'Tech Tee', 'Oxford Shirt', 'Henley'], price: 39, material: 'Cotton', sizes: ['S', 'M', 'L'] },
  Trousers: { names: ['Hiking Trousers', 'Chinos', 'Cargo Trousers', 'Rain Trousers', 'Joggers', 'Shorts'], price: 69, material: 'Cotton', sizes: ['30', '32', '34'] },
  Running: { names: ['Trail Runner', 'Road Runner', 'Racing Flat', 'Stability Runner', 'Cushion Runner', 'Spikes', 'Recovery Slide'], price: 119, material: 'Mesh', sizes: ['40', '41', '42', '43', '44'] },
  Hiking: { names: ['Hiking Boot', 'Approach Shoe', 'Mountain Boot', 'Trekking Sandal', 'Winter Boot', 'Gaiter'], price: 159, material: 'Leather', sizes: ['40', '42', '44'] },
  Bags: { names: ['Daypack 20', 'Backpack 35', 'Duffel 60', 'Hip Bag', 'Dry Bag', 'Messenger Bag', 'Tote'], price: 59, material: 'Nylon', sizes: [] },
  Hats: { names: ['Beanie', 'Sun Hat', 'Cap', 'Bucket Hat', 'Headband', 'Balaclava', 'Trapper Hat'], price: 24, material: 'Wool', sizes: [] },
  Gloves: { names: ['Liner Gloves', 'Ski Gloves', 'Mittens', 'Work Gloves', 'Cycling Gloves', 'Touch Gloves', 'Grip Gloves'], price: 29, material: 'Fleece', sizes: ['S', 'M', 'L'] },
};

const BRANDS = ['Nordkamm', 'Alpenglow', 'Fjordline', 'Talwind'];
const COLOURS = ['Black', 'Navy', 'Olive', 'Red'];
const BUYERS: readonly (readonly [string, string, string, string, string, string])[] = [
  ['anna.k', 'Anna', 'Keller', 'Lindenstraße 4', '10115', 'Berlin'],
  ['jonas_w', 'Jonas', 'Weber', 'Marktplatz 12', '80331', 'München'],
  ['lea-m', 'Lea', 'Meyer', 'Hafenweg 7', '20457', 'Hamburg'],
  ['felix1988', 'Felix', 'Schulz', 'Domstraße 21', '50667', 'Köln'],
  ['mia.hoff', 'Mia', 'Hoffmann', 'Bahnhofstraße 3', '60329', 'Frankfurt am Main'],
  ['paul.b', 'Paul', 'Becker', 'Königstraße 45', '70173', 'Stuttgart'],
  ['sophie_r', 'Sophie', 'Richter', 'Prager Straße 9', '01069', 'Dresden'],
  ['lukas.wolf', 'Lukas', 'Wolf', 'Mariahilfer Straße 88', '1070', 'Wien'],
];
const CARRIERS = ['DHL', 'Hermes', 'DPD', 'UPS'];

const money = (n: number) => n.toFixed(2);
const pad = (n: number, width = 4) => String(n).padStart(width, '0');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A valid EAN-13 (check digit computed) from a running number. */
function ean(n: number): string {
  const body = `400${pad(n, 9)}`;
  const sum = [...body].reduce((s, d, i) => s + Number(d) * (i % 2 === 0 ? 1 : 3), 0);
  return body + ((10 - (sum % 10)) % 10);
}

interface DemoProduct {
  readonly id: bigint;
  readonly foreignId: string;
  readonly title: string;
  readonly price: number;
  readonly skus: readonly string[];
}

export class DemoFiller {
  private readonly products: DemoProduct[] = [];
  private variations = 0;

  constructor(
    private readonly services: CatalogueServices,
    private readonly intake: PlatformIntake,
    private readonly clock: ManualClock,
    private readonly accountId: number,
  ) {}

  private type(name: string) {
    return this.services.model.typeByName.get(name)!;
  }

  private async create(tx: SqlExecutor, typeName: string, values: Record<string, EdmValue>): Promise<bigint> {
    const payload = { values: new Map(Object.entries(values)), bindings: new Map<string, readonly string[]>() };
    const { record } = await this.services.writes.create(tx, this.accountId, this.type(typeName), payload);
    return entityId(record.values);
  }

  private async link(tx: SqlExecutor, typeName: string, id: bigint, navigation: string, uri: string): Promise<void> {
    const type = this.type(typeName);
    await this.services.writes.addLink(tx, this.accountId, type, id, type.navigations.find((n) => n.name === navigation)!, uri);
  }

  async fill(): Promise<DemoReport> {
    const { store, entities } = this.services;
    const existing = await store.read(this.accountId, (tx) => entities.countWhere(tx, this.accountId, this.type('Product'), { ForeignId: 'DEMO-0001' }));
    if (existing > 0) throw new DemoDataExistsError('the account holds demonstration data already; empty it first (DeleteAccountData type=0) or use another account.');
    const leaves = await this.catalogs();
    for (const [leaf, catalogId] of leaves) await this.productLine(leaf, catalogId);
    const listings = await this.listings();
    const orders = await this.orders();
    const historyLines = await store.read(this.accountId, async (tx) => {
      const row = await tx.get<{ n: unknown }>('SELECT count(*) AS n FROM "sales_order_history" WHERE account_id = ?', [this.accountId]);
      return Number(row?.n ?? 0);
    });
    const catalogs = CATALOG_TREE.length + CATALOG_TREE.reduce((n, [, children]) => n + children.length, 0);
    return { catalogs, products: this.products.length, variations: this.variations, listings, orders, historyLines };
  }

  /** The catalog tree; the leaf catalogs by name. */
  private async catalogs(): Promise<Map<string, bigint>> {
    const leaves = new Map<string, bigint>();
    await this.services.store.write(this.accountId, async (tx) => {
      for (const [i, [root, children]] of CATALOG_TREE.entries()) {
        const rootId = await this.create(tx, 'Catalog', { Name: root, ForeignId: `DEMO-CAT-${i + 1}`, IsRootLevel: true });
        for (const [j, child] of children.entries()) {
          const childId = await this.create(tx, 'Catalog', { Name: child, ForeignId: `DEMO-CAT-${i + 1}-${j + 1}` });
          await this.link(tx, 'Catalog', rootId, 'ChildCatalogs', `Catalogs(${childId}L)`);
          leaves.set(child, childId);
        }
      }
    });
    return leaves;
  }

  /** The products of one leaf catalog, each in its own transaction as a connector would send it. */
  private async productLine(leaf: string, catalogId: bigint): Promise<void> {
    const line = LINES[leaf]!;
    for (const [k, name] of line.names.entries()) {
      this.clock.advance(7 * 60_000);
      const n = this.products.length + 1;
      const foreignId = `DEMO-${pad(n)}`;
      const brand = BRANDS[n % BRANDS.length]!;
      const title = `${brand} ${name}`;
      const price = line.price + (k % 3) * 10 - 0.05;
      const sizes = line.sizes;
      const skus: string[] = [];
      const variations = sizes.map((size, s): EntityPayload => {
        const sku = `${foreignId}-${size}`;
        skus.push(sku);
        return entity({ Sku: sku, ForeignId: sku, Price: money(price), StockAmount: (n + s) % 6, Ean: ean(1000 + n * 10 + s) }, {
          ProductVariationSpecifics: [entity({ Name: 'Size', Value: size })],
          ProductVariationImages: [entity({ ImagePosition: 0, ImageUrl: `https://images.example.com/demo/${sku.toLowerCase()}.jpg` })],
        });
      });
      this.variations += variations.length;
      // The product with its parts in one deep insert, as a connector may send it.
      const product = entity(
        {
          ForeignId: foreignId,
          ExternalProductId: BigInt(100000 + n),
          ProductType: sizes.length > 0 ? 1 : 0,
          Title: title,
          Description: `<p>The ${title} from ${brand}: made of ${line.material.toLowerCase()}, built for every season.</p><ul><li>Material: ${line.material}</li><li>Colour: ${COLOURS[n % COLOURS.length]}</li></ul>`,
          ShortDescription: `${title} in ${line.material.toLowerCase()}.`,
          Price: money(price),
          StockAmount: sizes.length > 0 ? 0 : 5 + (n % 20),
          Ean: ean(n),
          Brand: brand,
          Mpn: `${brand.slice(0, 3).toUpperCase()}-${pad(n * 7, 5)}`,
          ConditionId: 1000,
          DisableAutomatch: n % 9 === 0,
        },
        {
          ProductImages: [1, 2, 3].map((type) => entity({ Type: type, ImageUrl: `https://images.example.com/demo/${foreignId.toLowerCase()}-${type}.jpg` })),
          ProductSpecifics: [
            entity({ Name: 'Brand', Value: brand }),
            entity({ Name: 'Material', Value: line.material }),
            entity({ Name: 'Colour', Value: `${COLOURS[n % COLOURS.length]}|${COLOURS[(n + 1) % COLOURS.length]}` }),
          ],
          ProductVariations: variations,
          DiscountOffers: n % 4 === 0 ? [entity({ Price: money(price + 20), Type: 1 })] : [],
        },
        { Catalogs: [`Catalogs(${catalogId}L)`] },
      );
      const id = await this.services.store.write(this.accountId, async (tx) => {
        const { record } = await this.services.writes.create(tx, this.accountId, this.type('Product'), product);
        return entityId(record.values);
      });
      this.products.push({ id, foreignId, title, price, skus });
    }
  }

  private async deliver(doc: Json): Promise<void> {
    await this.intake.deliver(this.accountId, doc);
  }

  /** A listing for most products: every seventh ended, the rest active. */
  private async listings(): Promise<number> {
    let count = 0;
    for (const [i, p] of this.products.entries()) {
      if (i % 5 === 4) continue;
      this.clock.advance(5 * 60_000);
      const ended = i % 7 === 3;
      const started = this.clock.now();
      await this.deliver({
        kind: 'listing',
        PlatformItemId: String(110000000000 + i),
        Title: p.title,
        Status: ended ? 0 : 1,
        StartDate: iso(started),
        EndDate: ended ? iso(started + 3 * 24 * 3600_000) : null,
        Price: money(p.price),
        Quantity: 10,
        QuantitySold: ended ? 2 : 0,
        CategoryId: String(11450 + (i % 12)),
        Product: { ForeignId: p.foreignId },
        ListingItems: p.skus.map((sku) => ({ Sku: sku, ProductVariation: { Sku: sku }, Price: money(p.price), Quantity: 3, QuantitySold: 0 })),
      });
      count++;
    }
    return count;
  }

  /** 24 orders of one to three items; most are paid, many shipped, one payment is withdrawn. */
  private async orders(): Promise<number> {
    const ORDERS = 24;
    for (let o = 0; o < ORDERS; o++) {
      this.clock.advance(9 * 3600_000);
      const [userName, name, surname, street, postalCode, town] = BUYERS[o % BUYERS.length]!;
      const country = town === 'Wien' ? 'AT' : 'DE';
      const platformOrderId = `27-${pad(10000 + o, 5)}-${pad(o * 37 % 100000, 5)}`;
      const items = Array.from({ length: 1 + (o % 3) }, (_, k) => {
        const p = this.products[(o * 5 + k * 11) % this.products.length]!;
        const sku = p.skus[(o + k) % Math.max(p.skus.length, 1)];
        return {
          PlatformItemId: String(110000000000 + ((o * 5 + k * 11) % this.products.length)),
          TransactionId: String(2000000000 + o * 10 + k),
          Name: p.title,
          Amount: 1 + ((o + k) % 2),
          Price: money(p.price),
          CurrencyCode: 'EUR',
          Sku: sku ?? p.foreignId,
          CreationDate: iso(this.clock.now()),
          Product: { ForeignId: p.foreignId },
          ...(sku ? { ProductVariation: { Sku: sku } } : {}),
        };
      });
      const address = { Name: name, Surname: surname, Street: street, PostalCode: postalCode, Town: town, Country: country };
      await this.deliver({
        kind: 'order',
        PlatformOrderId: platformOrderId,
        CreationDate: iso(this.clock.now()),
        CheckoutCompletionDate: iso(this.clock.now() + 90_000),
        CurrencyCode: 'EUR',
        ShippingService: o % 2 === 0 ? 'DHL Paket' : 'Hermes Päckchen',
        ShippingServiceCost: o % 2 === 0 ? '4.90' : '3.90',
        CheckoutStatus: 2,
        PaymentOption: ['PayPal', 'Überweisung', 'Kreditkarte'][o % 3]!,
        BuyerCheckoutMessage: o % 6 === 0 ? 'Bitte beim Nachbarn abgeben.' : null,
        Buyer: { BuyerName: userName, Email: `${userName.replace(/[^a-z0-9]/gi, '')}@buyers.example.com` },
        Address: address,
        ...(o % 4 === 1 ? { ShippingAddress: { ...address, Company: `${surname} GmbH`, Street: 'Industriestraße 1' } } : {}),
        SalesOrderItems: items,
      });
      if (o % 6 === 5) continue; // awaiting payment
      this.clock.advance(2 * 3600_000);
      await this.deliver({ kind: 'payment', PlatformOrderId: platformOrderId, Paid: true, PaymentTransactionId: `PAY-${pad(o, 6)}` });
      if (o === 7) {
        this.clock.advance(24 * 3600_000);
        await this.deliver({ kind: 'payment', PlatformOrderId: platformOrderId, Paid: false, PaymentTransactionId: `PAY-${pad(o, 6)}` });
        continue;
      }
      if (o % 3 === 2) continue; // paid, not yet shipped
      this.clock.advance(20 * 3600_000);
      const carrier = CARRIERS[o % CARRIERS.length]!;
      await this.deliver({ kind: 'shipment', PlatformOrderId: platformOrderId, ShippingStatus: 1, CarrierUsed: carrier, TrackingNumbers: `${carrier.toUpperCase()}${pad(o * 7919, 10)}` });
    }
    return ORDERS;
  }
}

/** A payload as a request body would give it: values, entities inline by navigation, bindings. */
function entity(values: Record<string, EdmValue>, inline: Record<string, EntityPayload[]> = {}, bindings: Record<string, string[]> = {}): EntityPayload {
  const children = Object.entries(inline).filter(([, list]) => list.length > 0);
  return { values: new Map(Object.entries(values)), bindings: new Map(Object.entries(bindings)), ...(children.length > 0 ? { inline: new Map(children) } : {}) };
}
