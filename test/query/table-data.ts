/**
 * The data set of filter-table.test.ts: 25 products with a spread of values (a null in every
 * nullable property, Decimals with up to six places, negative numbers, Int64 values beyond 2^53,
 * Unicode, quotes, %, _, ;, --, padded strings, an astral character, dates before 1970 and on a
 * leap day), their specifics and variations, and orders with buyers, addresses and items
 * (some without a product or an address, so that paths through missing entities are null).
 *
 * Rows refer to each other by index (`product: 3`); the seeding replaces indexes by real Ids.
 */
import type { LiveService } from '../support/live-service';
import type { Schema, SeededRow } from './evaluator';
import { seedFull, type Values } from './fixture';

const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0) => Date.UTC(y, mo - 1, d, h, mi, s, ms);

/** One column of the 25 products. */
const col = <T>(values: readonly T[]): readonly T[] => {
  if (values.length !== 25) throw new Error(`a product column has ${values.length} values, not 25`);
  return values;
};

const TITLES = col([
  'Blue Shirt', 'blue shirt', 'Äpfel & Birnen', 'Café crème', "O'Neil's Hat",
  '100% Cotton', 'under_score', '_leading', 'semi;colon', 'dash--dash',
  '  padded  ', '\tTabbed\r\n', 'Zebra', 'zebra', 'Ørsted Ñandú',
  'Emoji 😀 mug', '', 'ABC', 'abc', 'Mixed 123 Numbers',
  'Zürich 2000', 'ÉCOLE', 'naïve café', 'back\\slash', 'x',
]);
const PRICES = col([
  '12.5', '0.5', '0', '19.99', '100', '1234.567891', '7', '7.000001', '2.5', '3.333333',
  '99.9', '0.01', '10', '15.75', '49.95', '5.5', '8.25', '1', '0.999999', '250',
  '33.33', '2', '64', '12.5', '0.000001',
]);
const STOCK = col([0, 1, 3, 5, 7, 10, 12, 25, 100, 2, 8, 15, 0, 4, 6, 9, 11, 13, 20, 30, 50, 3, 5, 7, 1]);
const EXTERNAL = col<bigint | null>([
  null, 5n, 9007199254740993n, -42n, 0n, 123456789012n, null, 7n, -9007199254740993n, 1234n,
  null, 100n, 5n, -1n, 8n, null, 21n, -8n, 3n, null,
  42n, -5n, 10n, null, 9007199254740992n,
]);
const CONDITION = col<number | null>([
  null, -3, 1000, 1500, 0, 7, -10, 3000, null, 1, 2, -7, null, 10, 4, 5, 6, -1, 8, 9, null, 11, 12, 13, 14,
]);
const UNIT_QUANTITY = col<string | null>([
  null, '-1.5', '2.25', '-0.5', '10', '0', '-7.125', '0.333333', null, '1.5',
  '2.5', '-2.5', '0.5', '-0.5', '3', null, '-0.333333', '7.999999', '100.000001', '-100',
  '0.1', null, '4.5', '-4.5', '1',
]);
const BRANDS = col<string | null>([
  null, 'Acme', 'acme', '', ' Acme ', 'ACME', 'Bosch', null, 'Bosch & Söhne', "D'Artagnan",
  'Zeiss', null, 'Acme', 'Miele', 'Ørsted', null, '%', '_', 'Sony', 'Acme',
  null, 'Braun', 'Café', 'Acme;', 'acme',
]);
const FOREIGN_IDS = col<string | null>([
  '100', '0100', null, '', 'F-1', 'F-2', '1', null, 'abc', '100000123',
  null, '99', '100', '  100', 'F-10', null, 'x', '', 'ÄÖÜ', 'f-1',
  '7', null, '42', '-', '1000',
]);
const DESCRIPTIONS = col<string | null>([
  null, 'A plain description', "It's 100% cotton", 'Contains a ; semicolon', null,
  'Has -- dashes', 'under_score here', null, 'Ünïcödé text', 'Tab\there',
  '', null, "Quote ' inside", 'percent % sign', 'Long '.repeat(40),
  null, 'x', "O'Reilly", 'back\\slash', 'ends with space ',
  null, 'Mixed CASE', 'zebra stripes', '😀 first', 'last',
]);
const AUTO_MATCHED = col<boolean | null>([
  null, true, false, null, true, false, null, true, false, null,
  true, false, null, true, false, null, true, false, null, true,
  false, null, true, false, null,
]);
const BEST_OFFER = col<string | null>([
  null, '0.4', null, '15', '90', null, '6.5', '8', null, '3.333333',
  null, '0.01', '9.99', null, '40', '5.5', null, '0.5', null, '200',
  '30', null, '70', '12.5', null,
]);
const CATEGORY = col<bigint | null>([
  11450n, null, 11450n, 99n, null, 1n, 2147483648n, null, 11450n, 5n,
  null, 7n, 8n, null, 9223372036854775807n, 11n, null, -9223372036854775808n, 14n, null, 16n, 17n, null, 19n, 20n,
]);
const EANS = col<string | null>([
  '4006381333931', null, '', '4006381333932', null, '0000000000000', null, '123', '4006381333931', null,
  'ean', null, '4006381333933', null, '1', '2', null, '3', null, '4', '5', null, '6', '7', null,
]);
const UNIT_TYPES = col<string | null>([
  'kg', null, 'g', 'l', 'ml', null, 'm', 'cm', null, 'Stück',
  'kg', 'KG', null, 'piece', 'pieces', null, 'kg ', ' kg', null, 'm²',
  'l', null, 'g', 'x', null,
]);
const CREATED = col([
  utc(2013, 9, 16, 7, 21, 12), utc(2013, 9, 16, 7, 21, 13), utc(2013, 9, 16, 7, 21, 11, 999), utc(2020, 2, 29, 23, 59, 59, 500), utc(1965, 3, 4, 5, 6, 7, 890),
  utc(1999, 12, 31, 23, 59, 59), utc(2000, 1, 1), utc(1970, 1, 1), utc(1969, 12, 31, 23, 59, 59, 999), utc(2013, 1, 1, 12, 0, 0),
  utc(2014, 6, 15, 18, 45, 30), utc(2010, 10, 10, 10, 10, 10), utc(2013, 9, 17), utc(2024, 12, 24, 20, 15), utc(2001, 9, 9, 1, 46, 40),
  utc(2013, 9, 16, 7, 21, 12, 1), utc(1980, 5, 5, 5, 5, 5), utc(2025, 1, 31, 12, 30, 45), utc(2013, 8, 16, 7, 21, 12), utc(2016, 2, 29, 0, 0, 1),
  utc(2012, 12, 12, 12, 12, 12), utc(1990, 7, 4, 16, 20, 0), utc(2005, 3, 31, 23, 0, 0), utc(2013, 9, 16, 7, 21), utc(2038, 1, 19, 3, 14, 8),
]);

/** The products, in index order (the seeding gives each an Id). */
export const PRODUCTS: readonly Record<string, unknown>[] = TITLES.map((title, i) => ({
  Title: title,
  Price: PRICES[i],
  StockAmount: STOCK[i],
  ProductType: i % 3,
  ExternalProductId: EXTERNAL[i],
  ConditionId: CONDITION[i],
  UnitQuantity: UNIT_QUANTITY[i],
  UnitType: UNIT_TYPES[i],
  Brand: BRANDS[i],
  ForeignId: FOREIGN_IDS[i],
  Description: DESCRIPTIONS[i],
  ShortDescription: i % 5 === 0 ? null : `Short ${i}`,
  Ean: EANS[i],
  Isbn: i % 2 === 0 ? null : `978-${i}`,
  Upc: i % 7 === 0 ? null : `upc${i}`,
  Mpn: i % 6 === 0 ? null : `MPN-${i % 4}`,
  DisableAutomatch: i % 4 === 0,
  AutoMatched: AUTO_MATCHED[i],
  BestOfferAutoAcceptPrice: BEST_OFFER[i],
  BestOfferMinimumPrice: BEST_OFFER[i] === null ? (i % 2 === 0 ? '1' : null) : null,
  EbayCategoryId1: CATEGORY[i],
  EbayCategoryId2: i % 3 === 0 ? BigInt(i * 1000) : null,
  CreationDate: CREATED[i],
  ModificationDate: CREATED[i]! + (i % 4) * 3_600_000 - (i === 7 ? 7_200_000 : 0),
}));

/** Specifics of products, by product index. */
export const SPECIFICS: readonly Record<string, unknown>[] = [
  { product: 0, Name: 'Color', Value: 'Blue', Type: 1 },
  { product: 0, Name: 'Size', Value: 'M', Type: null },
  { product: 3, Name: 'Color', Value: 'Crème', Type: 2 },
  { product: 4, Name: 'Material', Value: "O'Neil", Type: null },
  { product: 5, Name: 'Material', Value: '100%', Type: 3 },
  { product: 12, Name: 'Color', Value: 'Black/White', Type: 1 },
  { product: 13, Name: 'Color', Value: 'black/white', Type: -1 },
  { product: 15, Name: 'Motif', Value: '😀', Type: null },
  { product: 16, Name: 'Empty', Value: '', Type: 0 },
  { product: 20, Name: 'City', Value: 'Zürich', Type: 7 },
  { product: 22, Name: 'Color', Value: 'Red', Type: 10 },
  { product: 7, Name: 'Prefix', Value: '_', Type: 5 },
];

/** Variations of products, by product index. */
export const VARIATIONS: readonly Record<string, unknown>[] = [
  { product: 0, Price: '13', StockAmount: 1, Sku: 'SKU-1', ExternalProductId: 1n },
  { product: 0, Price: '12', StockAmount: 0, Sku: 'SKU-2', ExternalProductId: null },
  { product: 3, Price: '19.99', StockAmount: 5, Sku: null, ExternalProductId: 9007199254740993n },
  { product: 5, Price: '1300', StockAmount: 12, Sku: 'sku-5', ExternalProductId: -3n },
  { product: 12, Price: '9.5', StockAmount: 2, Sku: 'Z-1', ExternalProductId: null },
  { product: 12, Price: '10.5', StockAmount: 3, Sku: 'Z-2', ExternalProductId: 2n },
  { product: 13, Price: '4', StockAmount: 9, Sku: null, ExternalProductId: null },
  { product: 22, Price: '64', StockAmount: 5, Sku: 'SKU;1', ExternalProductId: 64n },
  { product: 16, Price: '0.01', StockAmount: 100, Sku: '', ExternalProductId: 0n },
];

export const BUYERS: readonly Record<string, unknown>[] = [
  { BuyerName: 'Müller', Email: 'mueller@example.com' },
  { BuyerName: "O'Brien", Email: 'ob@example.com' },
  { BuyerName: null, Email: null },
  { BuyerName: 'anna', Email: 'anna@example.com' },
];

/** Addresses, by buyer index. */
export const ADDRESSES: readonly Record<string, unknown>[] = [
  { buyer: 0, Type: 0, Name: 'Max', Surname: 'Müller', Town: 'München', Country: 'DE', PostalCode: '80331' },
  { buyer: 1, Type: 0, Name: 'Pat', Surname: "O'Brien", Town: null, Country: 'IE', PostalCode: null },
  { buyer: 3, Type: 1, Name: 'Anna', Surname: 'Svensson', Town: 'Malmö', Country: 'SE', PostalCode: '211 20' },
];

/** Orders, by buyer and address index (address null: none). */
export const ORDERS: readonly Record<string, unknown>[] = [
  {
    buyer: 0, address: 0, PlatformOrderId: 'PO-1', ForeignOrderId: null, EbayModificationDate: utc(2013, 9, 16, 7, 21, 12),
    CheckoutCompletionDate: utc(2013, 9, 15, 10), PaidAmount: '59.9', PaidDate: utc(2013, 9, 15, 11), TotalPrice: '59.9', ShippingStatus: 0, MarkedAsPayed: true, CurrencyCode: 'EUR',
  },
  {
    buyer: 0, address: null, PlatformOrderId: 'PO-2', ForeignOrderId: '', EbayModificationDate: utc(2013, 9, 16, 7, 21, 13),
    CheckoutCompletionDate: utc(2014, 1, 2, 3, 4, 5), PaidAmount: null, PaidDate: null, TotalPrice: '10', ShippingStatus: 1, MarkedAsPayed: false, CurrencyCode: null,
  },
  {
    buyer: 1, address: 1, PlatformOrderId: 'PO-3', ForeignOrderId: '100000123', EbayModificationDate: null,
    CheckoutCompletionDate: null, PaidAmount: '120.5', PaidDate: utc(2014, 2, 28, 23, 59, 59), TotalPrice: '100', ShippingStatus: 2, MarkedAsPayed: true, CurrencyCode: 'EUR',
  },
  {
    buyer: 2, address: null, PlatformOrderId: 'PO-4', ForeignOrderId: '_ORDER_IMPORT_FAILED_', EbayModificationDate: utc(2020, 2, 29, 12),
    CheckoutCompletionDate: utc(2020, 2, 28), PaidAmount: '0', PaidDate: utc(2020, 3, 1), TotalPrice: '0', ShippingStatus: 0, MarkedAsPayed: false, CurrencyCode: 'USD',
  },
  {
    buyer: 3, address: 2, PlatformOrderId: 'PO-5', ForeignOrderId: null, EbayModificationDate: utc(2013, 9, 16, 7, 21, 12, 500),
    CheckoutCompletionDate: utc(2013, 9, 16), PaidAmount: '5.55', PaidDate: utc(2013, 9, 16, 0, 0, 1), TotalPrice: '5.55', ShippingStatus: 1, MarkedAsPayed: true, CurrencyCode: 'GBP',
  },
  {
    buyer: 3, address: 2, PlatformOrderId: 'PO-6', ForeignOrderId: '100000124', EbayModificationDate: utc(2012, 1, 1),
    CheckoutCompletionDate: utc(2011, 12, 31, 23, 59, 59), PaidAmount: null, PaidDate: null, TotalPrice: '1000.01', ShippingStatus: 2, MarkedAsPayed: false, CurrencyCode: 'EUR',
  },
];

/** Items, by order, product and variation index (null: none). */
export const ITEMS: readonly Record<string, unknown>[] = [
  { order: 0, product: 0, variation: 0, PlatformItemId: 'I-1', TransactionId: 'T-1', Name: 'Blue Shirt M', Amount: 2, Price: '29.95', ShippingDate: utc(2013, 9, 17, 23, 5, 9), ShippingStatus: 1 },
  { order: 0, product: 3, variation: null, PlatformItemId: 'I-2', TransactionId: 'T-2', Name: 'Café', Amount: 1, Price: '0', ShippingDate: null, ShippingStatus: 0 },
  { order: 1, product: null, variation: null, PlatformItemId: 'I-3', TransactionId: null, Name: 'Deleted product', Amount: 3, Price: '3.33', ShippingDate: utc(2014, 1, 3), ShippingStatus: 1 },
  { order: 2, product: 12, variation: 5, PlatformItemId: 'I-4', TransactionId: 'T-4', Name: null, Amount: 10, Price: '10.5', ShippingDate: utc(2014, 3, 1, 8), ShippingStatus: 0 },
  { order: 2, product: 12, variation: 4, PlatformItemId: 'I-5', TransactionId: 'T-5', Name: 'Zebra small', Amount: 0, Price: '9.5', ShippingDate: null, ShippingStatus: 0 },
  { order: 3, product: 5, variation: 3, PlatformItemId: 'I-6', TransactionId: 'T-6', Name: '100% Cotton', Amount: 1, Price: '1300', ShippingDate: utc(2020, 3, 2, 12, 30), ShippingStatus: 1 },
  { order: 4, product: null, variation: null, PlatformItemId: 'I-7', TransactionId: 'T-7', Name: 'Gift card', Amount: 1, Price: '5.55', ShippingDate: utc(2013, 9, 16, 23, 59, 59), ShippingStatus: 1 },
  { order: 4, product: 22, variation: 7, PlatformItemId: 'I-8', TransactionId: 'T-8', Name: 'naïve', Amount: 4, Price: '64', ShippingDate: null, ShippingStatus: 0 },
  { order: 5, product: 15, variation: null, PlatformItemId: 'I-9', TransactionId: 'T-9', Name: 'Emoji', Amount: 7, Price: '0.01', ShippingDate: utc(2012, 1, 2), ShippingStatus: 1 },
  { order: 5, product: 0, variation: 1, PlatformItemId: 'I-10', TransactionId: 'T-10', Name: 'Blue Shirt', Amount: 1, Price: '12', ShippingDate: utc(2011, 12, 31, 23, 59, 58), ShippingStatus: 0 },
];

/** The evaluator's view of the sets: property types and single-valued navigations, written out. */
export const SCHEMA: Schema = {
  Products: {
    properties: {
      Id: 'Int64', ForeignId: 'String', ExternalProductId: 'Int64', ProductType: 'Int32', Title: 'String', Description: 'String',
      ShortDescription: 'String', Price: 'Decimal', StockAmount: 'Int32', UnitQuantity: 'Decimal', UnitType: 'String', Ean: 'String',
      Isbn: 'String', Upc: 'String', Mpn: 'String', Brand: 'String', ConditionId: 'Int32', DisableAutomatch: 'Boolean',
      BestOfferAutoAcceptPrice: 'Decimal', BestOfferMinimumPrice: 'Decimal', EbayCategoryId1: 'Int64', EbayCategoryId2: 'Int64',
      AutoMatched: 'Boolean', CreationDate: 'DateTime', ModificationDate: 'DateTime',
    },
  },
  ProductSpecifics: {
    properties: { Id: 'Int64', ProductId: 'Int64', Name: 'String', Value: 'String', Type: 'Int32' },
    navigations: { Product: { set: 'Products', foreignKey: 'ProductId' } },
  },
  ProductVariations: {
    properties: { Id: 'Int64', ProductId: 'Int64', Price: 'Decimal', StockAmount: 'Int32', Sku: 'String', ExternalProductId: 'Int64' },
    navigations: { Product: { set: 'Products', foreignKey: 'ProductId' } },
  },
  Buyers: { properties: { Id: 'Int64', BuyerName: 'String', Email: 'String' } },
  Addresses: {
    properties: { Id: 'Int64', BuyerId: 'Int64', Type: 'Int32', Name: 'String', Surname: 'String', Town: 'String', Country: 'String', PostalCode: 'String' },
    navigations: { Buyer: { set: 'Buyers', foreignKey: 'BuyerId' } },
  },
  SalesOrders: {
    properties: {
      Id: 'Int64', BuyerId: 'Int64', AddressId: 'Int64', PlatformOrderId: 'String', ForeignOrderId: 'String', EbayModificationDate: 'DateTime',
      CheckoutCompletionDate: 'DateTime', PaidAmount: 'Decimal', PaidDate: 'DateTime', TotalPrice: 'Decimal', ShippingStatus: 'Int32',
      MarkedAsPayed: 'Boolean', CurrencyCode: 'String',
    },
    navigations: { Buyer: { set: 'Buyers', foreignKey: 'BuyerId' }, Address: { set: 'Addresses', foreignKey: 'AddressId' } },
  },
  SalesOrderItems: {
    properties: {
      Id: 'Int64', SalesOrderId: 'Int64', ProductId: 'Int64', ProductVariationId: 'Int64', PlatformItemId: 'String', TransactionId: 'String',
      Name: 'String', Amount: 'Int32', Price: 'Decimal', ShippingDate: 'DateTime', ShippingStatus: 'Int32',
    },
    navigations: {
      SalesOrder: { set: 'SalesOrders', foreignKey: 'SalesOrderId' },
      Product: { set: 'Products', foreignKey: 'ProductId' },
      ProductVariation: { set: 'ProductVariations', foreignKey: 'ProductVariationId' },
    },
  },
};

export interface SeededTable {
  /** Every seeded row by set, as stored (defaults filled in). */
  readonly rows: Record<string, SeededRow[]>;
  /** Ids by kind, in index order: P products, V variations, O orders, B buyers. */
  readonly ids: Record<'P' | 'V' | 'O' | 'B', bigint[]>;
}

const without = (values: Record<string, unknown>, ...drop: string[]): Values => {
  const out: Values = {};
  for (const [k, v] of Object.entries(values)) if (!drop.includes(k)) out[k] = v as Values[string];
  return out;
};

/** Seeds the whole data set for an account through the store API, references resolved to Ids. */
export async function seedTableData(live: LiveService, accountId: number): Promise<SeededTable> {
  const rows: Record<string, SeededRow[]> = {};
  const seed = async (set: string, values: Values): Promise<bigint> => {
    const row = await seedFull(live, accountId, set, values);
    (rows[set] ??= []).push(row);
    return row.Id as bigint;
  };
  const ids: SeededTable['ids'] = { P: [], V: [], O: [], B: [] };
  for (const p of PRODUCTS) ids.P.push(await seed('Products', p as Values));
  for (const s of SPECIFICS) await seed('ProductSpecifics', { ...without(s, 'product'), ProductId: ids.P[s.product as number]! });
  for (const v of VARIATIONS) ids.V.push(await seed('ProductVariations', { ...without(v, 'product'), ProductId: ids.P[v.product as number]! }));
  for (const b of BUYERS) ids.B.push(await seed('Buyers', b as Values));
  const addressIds: bigint[] = [];
  for (const a of ADDRESSES) addressIds.push(await seed('Addresses', { ...without(a, 'buyer'), BuyerId: ids.B[a.buyer as number]! }));
  for (const o of ORDERS) {
    const address = o.address === null ? null : addressIds[o.address as number]!;
    ids.O.push(await seed('SalesOrders', { ...without(o, 'buyer', 'address'), BuyerId: ids.B[o.buyer as number]!, AddressId: address }));
  }
  for (const it of ITEMS) {
    await seed('SalesOrderItems', {
      ...without(it, 'order', 'product', 'variation'),
      SalesOrderId: ids.O[it.order as number]!,
      ProductId: it.product === null ? null : ids.P[it.product as number]!,
      ProductVariationId: it.variation === null ? null : ids.V[it.variation as number]!,
    });
  }
  return { rows, ids };
}
