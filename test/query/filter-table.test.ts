/**
 * A table of $filter cases, each checked against an independent evaluation (./evaluator.ts,
 * which shares no code with src/) over the same rows the test seeded: the set of Ids the live
 * service answers must be exactly the set the evaluator selects, in JSON and in Atom.
 *
 * The table covers every comparison operator on Int32, Int64, Decimal, String, Boolean and
 * DateTime with null operands; and/or/not with precedence and parentheses; add/sub/mul/div/mod
 * on Int32, Int64 and Decimal with negative operands; unary minus; every
 * function; every literal form; and paths through single-valued navigations (also to missing
 * entities). Rows are seeded through the store API and read over HTTP only, so the table runs
 * unchanged on any engine the service is configured with.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { HttpResponse } from '../support/http-client';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { decimalOf, parse, select, type Data, type SeededRow } from './evaluator';
import { atomIds, filterUrl, jsonEntities, jsonIds, KeepAliveClient, sortIds, type SpaceEncoding } from './fixture';
import { PRODUCTS, SCHEMA, seedTableData } from './table-data';

interface Case {
  readonly group: string;
  readonly set: string;
  /** The $filter; {P3}, {V2}, {O1}, {B0} stand for the Id of that seeded product, variation, order, buyer. */
  readonly filter: string;
  /**
   * For some cases, the expected rows written out by hand as a predicate over the seeded row, so
   * that the evaluator itself is checked too (precedence, truncation, null logic).
   */
  readonly hand?: Hand;
}

/** A predicate over a seeded row; `all` holds every seeded row by set, for paths. */
type Hand = (row: SeededRow, all: Readonly<Record<string, SeededRow[]>>) => boolean;

const CASES: Case[] = [];
function group(name: string, set: string, ...cases: (string | [string, Hand])[]): void {
  for (const c of cases) {
    if (typeof c === 'string') CASES.push({ group: name, set, filter: c });
    else CASES.push({ group: name, set, filter: c[0], hand: c[1] });
  }
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown) => (v === null || v === undefined ? null : String(v));

// ---------------------------------------------------------------------------------------------
// The table

group('Int32 comparisons', 'Products',
  ['StockAmount eq 5', (r) => r.StockAmount === 5],
  'StockAmount ne 5',
  'StockAmount lt 3',
  'StockAmount le 3',
  'StockAmount gt 20',
  'StockAmount ge 20',
  'ProductType eq 2',
  'ConditionId eq null',
  'ConditionId ne null',
  ['ConditionId lt 0', (r) => r.ConditionId !== null && (r.ConditionId as number) < 0],
  'ConditionId ge -3',
  'ConditionId le 7',
  'null eq ConditionId',
  'ConditionId gt null',
  'ConditionId lt StockAmount',
  'ConditionId ne StockAmount',
);

group('Int64 comparisons', 'Products',
  ['ExternalProductId eq 9007199254740993L', (r) => r.ExternalProductId === 9007199254740993n],
  'ExternalProductId eq 9007199254740992L',
  'ExternalProductId gt 5',
  'ExternalProductId ge 5L',
  'ExternalProductId lt 0L',
  'ExternalProductId le -42',
  'ExternalProductId ne 5',
  'ExternalProductId eq null',
  'ExternalProductId ne null',
  'EbayCategoryId1 eq 9223372036854775807L',
  'EbayCategoryId1 eq -9223372036854775808L',
  'EbayCategoryId1 gt 2147483647',
  'EbayCategoryId1 eq 2147483648',
  'EbayCategoryId1 eq EbayCategoryId2',
  'EbayCategoryId1 ne EbayCategoryId2',
  'ExternalProductId lt ConditionId',
  'Id eq {P3}',
  'Id eq {P3}L or Id eq {P9}',
  'Id ge {P20}',
);

group('Decimal comparisons', 'Products',
  ['Price eq 12.5', (r) => r.Price === '12.5'],
  'Price eq 12.5M',
  'Price eq 12.50m',
  'Price ne 12.5',
  'Price lt 1',
  'Price le 0.5',
  'Price gt 100',
  'Price ge 1234.567891',
  'Price eq 7.000001M',
  ['Price gt 7', (r) => decimalOf(String(r.Price)) > decimalOf('7')],
  'Price eq 0.000001',
  'Price eq 0',
  'UnitQuantity eq null',
  'UnitQuantity lt 0',
  'UnitQuantity ge -0.5',
  'UnitQuantity eq -0.5M',
  'BestOfferAutoAcceptPrice lt Price',
  'not (BestOfferAutoAcceptPrice lt Price)',
  'BestOfferAutoAcceptPrice eq BestOfferMinimumPrice',
  'UnitQuantity gt StockAmount',
);

group('String comparisons', 'Products',
  ["Title eq 'Blue Shirt'", (r) => r.Title === 'Blue Shirt'],
  "Title eq 'blue shirt'",
  "Title eq 'O''Neil''s Hat'",
  "Title ne 'Zebra'",
  "Title lt 'B'",
  "Title le 'Blue Shirt'",
  "Title gt 'zz'",
  "Title ge 'zebra'",
  "Title eq ''",
  "Title gt 'Emoji \uE000'",
  "Title eq '  padded  '",
  'Title eq null',
  'Brand eq null',
  'Brand ne null',
  ["Brand ne 'Acme'", (r) => r.Brand !== 'Acme'],
  "Brand lt 'B'",
  "Brand eq ''",
  "Brand ge 'Z'",
  "ForeignId eq '0100'",
  "ForeignId gt '0'",
  'Brand eq Title',
  'ForeignId lt Ean',
  "'Acme' eq Brand",
  "UnitType eq 'm²'",
);

group('Boolean comparisons and Boolean values', 'Products',
  ['AutoMatched', (r) => r.AutoMatched === true],
  ['not AutoMatched', (r) => r.AutoMatched === false],
  'AutoMatched eq true',
  'AutoMatched eq false',
  'AutoMatched eq null',
  ['AutoMatched ne true', (r) => r.AutoMatched !== true],
  'AutoMatched lt true',
  'AutoMatched ge false',
  'AutoMatched gt DisableAutomatch',
  'AutoMatched eq DisableAutomatch',
  'DisableAutomatch',
  'DisableAutomatch ne false',
  ['AutoMatched or DisableAutomatch', (r) => r.AutoMatched === true || r.DisableAutomatch === true],
  ['AutoMatched and DisableAutomatch', (r) => r.AutoMatched === true && r.DisableAutomatch === true],
  ['not (AutoMatched and DisableAutomatch)', (r) => r.AutoMatched === false || r.DisableAutomatch === false],
  ['not (AutoMatched or DisableAutomatch)', (r) => r.AutoMatched === false && r.DisableAutomatch === false],
  'not not AutoMatched',
  'AutoMatched eq null or AutoMatched',
  'AutoMatched and true',
  'AutoMatched or false',
  'null or DisableAutomatch',
  'not (null and DisableAutomatch)',
);

group('DateTime comparisons', 'Products',
  ["CreationDate eq datetime'2013-09-16T07:21:12'", (r) => r.CreationDate === Date.UTC(2013, 8, 16, 7, 21, 12)],
  "CreationDate gt DateTime'2013-09-16T07:21:12'",
  "CreationDate ge datetime'2013-09-16T07:21:12'",
  "CreationDate lt datetime'1970-01-01T00:00'",
  "CreationDate le datetime'1970-01-01T00:00:00'",
  "CreationDate ne datetime'2013-09-16T07:21:12'",
  "CreationDate eq datetime'2013-09-16T07:21:12.001'",
  "CreationDate eq datetime'2013-09-16T07:21'",
  "CreationDate gt DATETIME'2020-02-29T23:59:59.4'",
  'ModificationDate gt CreationDate',
  'ModificationDate lt CreationDate',
  'ModificationDate eq CreationDate',
  "CreationDate gt null",
  "CreationDate eq datetime'2013-09-16T07:21:12.0010000'",
  "year(CreationDate) eq year(datetime'2013-01-01T00:00')",
  "CreationDate ge datetime'2013-09-16T07:21:12' and CreationDate lt datetime'2013-09-16T07:21:13'",
);

group('Logical operators, precedence and parentheses', 'Products',
  ['StockAmount gt 5 and StockAmount lt 20 or ProductType eq 2', (r) => ((r.StockAmount as number) > 5 && (r.StockAmount as number) < 20) || r.ProductType === 2],
  ['StockAmount gt 5 and (StockAmount lt 20 or ProductType eq 2)', (r) => (r.StockAmount as number) > 5 && ((r.StockAmount as number) < 20 || r.ProductType === 2)],
  ['ProductType eq 0 or ProductType eq 1 and StockAmount eq 0', (r) => r.ProductType === 0 || (r.ProductType === 1 && r.StockAmount === 0)],
  '(ProductType eq 0 or ProductType eq 1) and StockAmount eq 0',
  ['not (StockAmount gt 5) and ProductType eq 1', (r) => !((r.StockAmount as number) > 5) && r.ProductType === 1],
  'not (StockAmount gt 5 and ProductType eq 1)',
  'not startswith(Brand, \'A\') and ProductType eq 0',
  ['(((StockAmount eq 5)))', (r) => r.StockAmount === 5],
  ['Brand eq null eq true', (r) => r.Brand === null],
  ['StockAmount lt 5 eq ProductType gt 0', (r) => ((r.StockAmount as number) < 5) === ((r.ProductType as number) > 0)],
  'StockAmount lt 5 ne (ConditionId lt 5)',
  'true',
  'false',
  'not false',
  'null eq null',
  'null ne null',
  'true and not (false or null)',
  'ExternalProductId gt 0 and ConditionId gt 0 or Brand eq null and AutoMatched',
  'ExternalProductId gt 0 and (ConditionId gt 0 or Brand eq null) and AutoMatched',
);

group('Int32 arithmetic', 'Products',
  ['StockAmount add 2 mul 3 eq 11', (r) => r.StockAmount === 5],
  ['(StockAmount add 2) mul 3 eq 21', (r) => r.StockAmount === 5],
  'StockAmount mul 2 add 1 eq 11',
  ['StockAmount eq 10 sub 3 sub 2', (r) => r.StockAmount === 5],
  ['StockAmount eq 100 div 10 div 5', (r) => r.StockAmount === 2],
  ['StockAmount eq 2 mul 3 mod 4', (r) => r.StockAmount === 2],
  'StockAmount eq 2 add 3 mul 2 sub 1',
  ['StockAmount sub 10 div 3 eq -2', (r) => r.StockAmount === 1],
  ['(StockAmount sub 10) div 3 eq -2', (r) => [2, 3, 4].includes(r.StockAmount as number)],
  ['(StockAmount sub 10) mod 3 eq -1', (r) => (r.StockAmount as number) < 10 && (10 - (r.StockAmount as number)) % 3 === 1],
  'StockAmount div 3 eq 2',
  'StockAmount mod 3 eq 1',
  ['ConditionId mod 7 eq -3', (r) => r.ConditionId === -3 || r.ConditionId === -10],
  'ConditionId div -4 eq -2',
  'ConditionId div 4 eq -1',
  'ConditionId add 1 eq null',
  'ConditionId sub StockAmount lt 0',
  'ConditionId mul -1 gt 5',
  // Divisors that are never 0 (division by zero answers 400: filter-errors.test.ts).
  'StockAmount mod Id eq StockAmount',
  'Id div Id eq 1',
  ['StockAmount eq 7 div 2', (r) => r.StockAmount === 3],
  'length(Title) div 2 eq 5',
);

group('Int64 arithmetic', 'Products',
  'ExternalProductId add 1 eq 9007199254740994L',
  ['ExternalProductId sub 1 eq 9007199254740992', (r) => r.ExternalProductId === 9007199254740993n],
  'ExternalProductId mul 2 eq 18014398509481986L',
  ['ExternalProductId div 10 eq -4', (r) => r.ExternalProductId === -42n],
  'ExternalProductId mod 2 eq 1',
  ['ExternalProductId mod 2 eq -1', (r) => r.ExternalProductId !== null && (r.ExternalProductId as bigint) < 0n && (r.ExternalProductId as bigint) % 2n !== 0n],
  'ExternalProductId add StockAmount eq 10',
  'ExternalProductId mod 5 eq -2',
  'Id sub Id eq 0',
);

group('Decimal arithmetic', 'Products',
  ['Price add 0.5 eq 13', (r) => r.Price === '12.5'],
  'Price sub 12.5 eq 0',
  'Price mul 2 eq 25',
  'Price mul 1.5 gt 100',
  'Price div 3 eq 1.111111',
  ['Price div 3 eq 0.666666', (r) => r.Price === '2'],
  'Price mod 3 eq 1',
  'Price mod 0.5 eq 0',
  'UnitQuantity mod 2 eq -1.5',
  'UnitQuantity add Price gt 12',
  'UnitQuantity mul UnitQuantity eq 6.25',
  'UnitQuantity div -2 eq 0.25',
  'UnitQuantity div 4 eq -1.78125',
  ['UnitQuantity div 3 eq -0.166666', (r) => r.UnitQuantity === '-0.5'],
  'StockAmount div 2.0 eq 3.5',
  'StockAmount div 2 eq 3',
  'Price sub BestOfferAutoAcceptPrice ge 4',
  'UnitQuantity mod -0.75 eq -0.5',
);

// dialect.ts: Decimal mul truncates toward zero at six decimal places, as div does, so
// 0.000001 mul 0.5 is 0 (the scale every Decimal property holds).
group('Decimal multiplication truncates at six decimal places', 'Products',
  ['Price mul 0.5 eq 0', (r) => r.Price === '0' || r.Price === '0.000001'],
  ['Price mul 0.5 gt 0 and Price lt 0.01', () => false],
  ['Price mul 0.5 eq 0.000005', () => false],
  ['Price mul 0.5 eq 0.005', (r) => r.Price === '0.01'],
);

group('Unary minus', 'Products',
  '-StockAmount lt -10',
  '- StockAmount sub 1 eq -6',
  '-(StockAmount) le -25',
  'StockAmount eq -(-5)',
  '-UnitQuantity gt 1',
  '-ExternalProductId eq 42',
  '-Price lt -100',
  '-ConditionId eq 3',
);

group('Functions on strings', 'Products',
  ["substringof('Shirt', Title)", (r) => String(r.Title).includes('Shirt')],
  "substringof('shirt', tolower(Title))",
  "substringof('é', Title)",
  "substringof('😀', Title)",
  ["substringof('', Title)", () => true],
  ["substringof(Title, 'Blue Shirt and more')", (r) => 'Blue Shirt and more'.includes(String(r.Title))],
  "substringof('cme', Brand)",
  "not substringof('cme', Brand)",
  "substringof('cme', Brand) eq false",
  "startswith(Title, 'Z')",
  "startswith(Title, 'z')",
  "startswith(Title, '')",
  ["startswith(Brand, 'A') ne true", (r) => !(typeof r.Brand === 'string' && r.Brand.startsWith('A'))],
  "endswith(Title, 'ra')",
  "endswith(Title, ' ')",
  "endswith(Title, 'mug')",
  "endswith(Title, 'a much longer suffix than any title has')",
  // .NET's String.Length: UTF-16 code units, so a character beyond U+FFFF counts 2.
  ['length(Title) eq 11', (r) => String(r.Title).length === 11],
  'length(Title) gt 15',
  'length(Title) eq 0',
  'length(Brand) ne 4',
  'not (length(Brand) gt 3)',
  "indexof(Title, 'e') eq 1",
  "indexof(Title, 'mug') eq 8",
  "indexof(Title, 'q') eq -1",
  "indexof(Title, '') eq 0",
  "indexof(Brand, 'c') ge 0",
  "replace(Title, ' ', '') eq 'BlueShirt'",
  "replace(Title, 'a', '4') eq 'Zebr4'",
  "replace(Brand, 'cme', 'CME') eq 'ACME'",
  "length(replace(Title, '😀', 'xx')) eq 12",
  "replace(Brand, 'x', 'y') eq null",
  "substring(Title, 1) eq 'ebra'",
  "substring(Title, 0, 4) eq 'Blue'",
  "substring(Title, -3, 4) eq 'Blue'",
  "substring(Title, 2, -1) eq '' and length(Title) gt 10",
  "substring(Title, 100) eq ''",
  "substring(Title, 6, 1) eq '😀'",
  "substring(Title, 1, 3) eq 'ebr'",
  "substring(Brand, 0) eq Brand",
  "tolower(Title) eq 'blue shirt'",
  "toupper(Title) eq 'ÄPFEL & BIRNEN'",
  "toupper(Title) eq 'CAFÉ CRÈME'",
  "tolower(Title) eq 'école'",
  "tolower(Title) eq 'ørsted ñandú'",
  "toupper(Title) eq 'NAÏVE CAFÉ'",
  "toupper(Title) eq 'ZÜRICH 2000'",
  "tolower(Brand) eq 'acme'",
  'tolower(Title) eq toupper(Title)',
  ["trim(Title) eq 'padded'", (r) => r.Title === '  padded  '],
  "trim(Title) eq 'Tabbed'",
  'length(trim(Title)) lt length(Title)',
  "trim(Brand) eq 'Acme'",
  "trim(UnitType) eq 'kg'",
  "concat(Title, Brand) eq 'ZebraAcme'",
  ["concat(Brand, 'X') eq 'X'", (r) => r.Brand === null || r.Brand === ''],
  "concat(concat(Title, ' by '), Brand) eq 'Blue Shirt by '",
  'length(concat(Brand, Ean)) eq 0',
  "concat(null, Title) eq 'Zebra'",
  "concat(Brand, null) eq ''",
);

group('Functions on dates', 'Products',
  ['year(CreationDate) lt 1970', (r) => (r.CreationDate as number) < Date.UTC(1970, 0, 1)],
  'year(CreationDate) eq 2013',
  ['month(CreationDate) eq 2 and day(CreationDate) eq 29', (r) => [3, 19].includes(PRODUCTS.findIndex((p) => p.Title === r.Title))],
  'month(CreationDate) eq 12',
  'day(CreationDate) eq 31',
  'hour(CreationDate) ge 20',
  'hour(CreationDate) eq 23',
  'minute(CreationDate) eq 21',
  'minute(CreationDate) eq 59',
  ['second(CreationDate) eq 7', (r) => r.Title === "O'Neil's Hat"],
  'second(CreationDate) eq 59',
  'second(CreationDate) eq 11',
  'year(ModificationDate) ne year(CreationDate)',
  'hour(CreationDate) add minute(CreationDate) gt 60',
);

group('Functions on numbers', 'Products',
  ['round(UnitQuantity) eq 3', (r) => r.UnitQuantity === '2.5' || r.UnitQuantity === '3'],
  ['round(UnitQuantity) eq -3', (r) => r.UnitQuantity === '-2.5'],
  'round(UnitQuantity) eq -1',
  'round(UnitQuantity) eq 0',
  'round(UnitQuantity) eq null',
  ['floor(UnitQuantity) eq -1', (r) => r.UnitQuantity === '-0.5' || r.UnitQuantity === '-0.333333'],
  'ceiling(UnitQuantity) eq 0',
  'ceiling(UnitQuantity) eq -7',
  'floor(UnitQuantity) eq -8',
  'ceiling(Price) eq 8',
  'floor(Price) eq 7',
  'round(Price) eq 1',
  'round(StockAmount) eq 5',
  'floor(Price div 3) eq 1',
  'ceiling(Price) sub Price gt 0.5',
  'round(Price) ne Price',
  'floor(ExternalProductId) lt 0',
  'round(1234.5) eq ceiling(Price)',
);

group('Literal forms', 'Products',
  'StockAmount eq 5L',
  'StockAmount eq 5l',
  'StockAmount eq 5.0',
  'StockAmount eq 5m',
  'StockAmount lt 1E+1',
  'StockAmount le 2.0f',
  'StockAmount ge 1.5d',
  'StockAmount gt 1.5D',
  'StockAmount eq 05',
  'ExternalProductId eq -5L',
  'ExternalProductId eq 5.0',
  'ExternalProductId eq 1234M',
  'UnitQuantity eq -0.5m',
  'Price lt 999999999999.999999M',
  'Price gt 1e-6',
  'Price eq 125E-1',
  "guid'12345678-aaaa-bbbb-cccc-ddddeeeeffff' eq guid'12345678-AAAA-BBBB-cccc-ddddeeeeffff' and StockAmount eq 5",
  "guid'12345678-aaaa-bbbb-cccc-ddddeeeeffff' ne null and StockAmount lt 2",
  "Title eq 'Zebra' or Title eq 'x'",
  "Description eq 'It''s 100% cotton'",
  "substringof('''', Description)",
  "substringof('%', Description)",
  "Description eq ''",
  "Description eq 'Tab\there'",
  "Title eq '\tTabbed\r\n'",
  "Title eq 'back\\slash'",
  'StockAmount eq 2147483647 sub 2147483647',
);

group('Navigation from specifics', 'ProductSpecifics',
  ["Product/Title eq 'Zebra'", (r, all) => all.Products!.find((p) => p.Id === r.ProductId)?.Title === 'Zebra'],
  'Product/Price gt 10',
  'Product/Brand eq null',
  "startswith(Product/Title, 'Z')",
  'Product/StockAmount add Type gt 10',
  'Product/ExternalProductId eq 5',
  "Name eq 'Color' and Product/AutoMatched",
  "Product/CreationDate lt datetime'2000-01-01T00:00'",
  "tolower(Value) eq tolower(Product/Brand)",
  "Value eq '100%'",
  'Type eq null or Product/StockAmount lt 5',
);

group('Navigation from variations', 'ProductVariations',
  'Price gt Product/Price',
  "Product/Title eq 'Zebra' or Sku eq null",
  'ProductId eq {P3}',
  'ProductId eq {P12}L',
  'Product/Id eq ProductId',
  'StockAmount lt Product/StockAmount',
  "Sku eq ''",
  'ExternalProductId eq Product/ExternalProductId',
  'Price mul StockAmount gt Product/Price',
);

group('Orders', 'SalesOrders',
  "(ForeignOrderId eq null) or (ForeignOrderId eq '')",
  "ForeignOrderId eq '100000123'",
  "(EbayModificationDate gt DateTime'2013-09-16T07:21:12' and EbayModificationDate ne null)",
  "EbayModificationDate eq datetime'2013-09-16T07:21:12.5'",
  "Buyer/BuyerName eq 'Müller'",
  'Buyer/BuyerName eq null',
  'Address/Town eq null',
  'Address/Town ne null',
  "Address/Buyer/BuyerName eq 'anna'",
  'PaidAmount gt TotalPrice',
  'PaidAmount ne TotalPrice',
  'PaidDate lt CheckoutCompletionDate',
  'year(PaidDate) eq 2014',
  'month(EbayModificationDate) eq 9',
  'MarkedAsPayed eq true',
  'not MarkedAsPayed',
  'Id eq {O2}',
  "(Id eq {O0}) or (Id eq {O4})",
  "CurrencyCode ne 'EUR'",
  "startswith(ForeignOrderId, '1000001')",
);

group('Order items', 'SalesOrderItems',
  [
    "SalesOrder/Buyer/BuyerName eq 'Müller'",
    (r, all) => {
      const order = all.SalesOrders!.find((o) => o.Id === r.SalesOrderId);
      return all.Buyers!.find((b) => b.Id === order?.BuyerId)?.BuyerName === 'Müller';
    },
  ],
  'SalesOrder/Buyer/BuyerName eq null',
  'Product/Title eq null',
  'Product/Title ne null',
  "ProductVariation/Sku eq 'SKU-1'",
  'ProductVariation/Sku eq null',
  'SalesOrder/ForeignOrderId eq null',
  'Price mul Amount gt 50',
  'ShippingDate ge SalesOrder/CheckoutCompletionDate',
  'hour(ShippingDate) eq 23',
  "SalesOrder/EbayModificationDate gt datetime'2013-09-16T07:21:12'",
  "startswith(SalesOrder/Buyer/Email, 'a')",
  "concat(SalesOrder/Buyer/BuyerName, Name) eq 'MüllerCafé'",
  'Product/Price eq Price',
  'ProductVariation/Price eq Price',
  "substringof(Product/Title, Name)",
  'Amount div 2 eq 0 and Product/Price gt 1',
  'SalesOrder/Address/Town eq null',
);

// ---------------------------------------------------------------------------------------------
// Seeding

let live: LiveService;
let seller: Seller;
let client: KeepAliveClient;
const rows: Record<string, SeededRow[]> = {};
let data: Data;
const ids: Record<string, bigint[]> = {};

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'filtertable');
  client = new KeepAliveClient(8);
  const seeded = await seedTableData(live, seller.accountId);
  Object.assign(rows, seeded.rows);
  Object.assign(ids, seeded.ids);
  data = { schema: SCHEMA, rows };
});

after(async () => {
  client?.close();
  await live?.close();
});

/** The filter with {P3}-style placeholders replaced by the seeded Ids. */
function resolve(filter: string): string {
  return filter.replace(/\{([PVOB])(\d+)\}/g, (_m, kind: string, i: string) => {
    const id = ids[kind]![Number(i)];
    if (id === undefined) throw new Error(`no seeded ${kind}${i}`);
    return String(id);
  });
}

const expected = (c: Case) => sortIds(select(data, c.set, resolve(c.filter)));

// ---------------------------------------------------------------------------------------------

describe('the table itself', () => {
  test('has at least 150 distinct cases, each parsed and typed by the evaluator', () => {
    assert.ok(CASES.length >= 150, `${CASES.length} cases`);
    const keys = new Set(CASES.map((c) => `${c.set}?${c.filter}`));
    assert.equal(keys.size, CASES.length, 'every case is distinct');
    for (const c of CASES) assert.doesNotThrow(() => parse(SCHEMA, c.set, resolve(c.filter)), c.filter);
  });

  test('can fail: most cases select some rows, and most exclude some', () => {
    let selecting = 0;
    let excluding = 0;
    for (const c of CASES) {
      const n = expected(c).length;
      if (n > 0) selecting++;
      if (n < (rows[c.set] ?? []).length) excluding++;
    }
    assert.ok(selecting >= 0.6 * CASES.length, `only ${selecting} of ${CASES.length} cases select a row`);
    assert.ok(excluding >= 0.6 * CASES.length, `only ${excluding} of ${CASES.length} cases exclude a row`);
  });

  test('the evaluator agrees with every hand-written expectation', () => {
    const withHand = CASES.filter((c) => c.hand);
    assert.ok(withHand.length >= 40, `${withHand.length} hand-written expectations`);
    for (const c of withHand) {
      const byHand = sortIds((rows[c.set] ?? []).filter((r) => c.hand!(r, rows)).map((r) => r.Id as bigint));
      assert.deepEqual(expected(c), byHand, c.filter);
    }
  });

  test('the service holds the seeded values (JSON read-back of every product)', async () => {
    const res = await client.get(`${live.root}/Products?$format=json`, { ...seller.auth });
    const entities = jsonEntities(res);
    assert.equal(entities.length, PRODUCTS.length);
    for (const e of entities) {
      const seeded = rows.Products!.find((r) => String(r.Id) === e.Id)!;
      assert.ok(seeded, `product ${String(e.Id)}`);
      assert.equal(e.Title, seeded.Title);
      assert.equal(decimalOf(String(e.Price)), decimalOf(String(seeded.Price)));
      assert.equal(e.StockAmount, seeded.StockAmount);
      assert.equal(str(e.ExternalProductId), str(seeded.ExternalProductId));
      assert.equal(e.ConditionId, seeded.ConditionId);
      assert.equal(e.UnitQuantity === null ? null : decimalOf(String(e.UnitQuantity)), seeded.UnitQuantity === null ? null : decimalOf(String(seeded.UnitQuantity)));
      assert.equal(e.Brand, seeded.Brand);
      assert.equal(e.AutoMatched, seeded.AutoMatched);
      assert.equal(e.CreationDate, `/Date(${num(seeded.CreationDate)})/`);
    }
  });
});

/** Alternates the ways clients ask for each format and encode spaces, so each is exercised. */
function requests(c: Case, i: number): { json: [string, Record<string, string>]; atom: [string, Record<string, string>] } {
  const filter = resolve(c.filter);
  const spaces: SpaceEncoding = i % 2 === 0 ? '%20' : '+';
  const other: SpaceEncoding = spaces === '+' ? '%20' : '+';
  const json: [string, Record<string, string>] =
    i % 4 < 2
      ? [filterUrl(live.root, c.set, filter, spaces, '$format=json'), { ...seller.auth }]
      : [filterUrl(live.root, c.set, filter, spaces), { ...seller.auth, Accept: 'application/json' }];
  const atom: [string, Record<string, string>] =
    i % 3 === 0
      ? [filterUrl(live.root, c.set, filter, other), { ...seller.auth }]
      : [filterUrl(live.root, c.set, filter, other, i % 3 === 1 ? '$format=atom' : ''), { ...seller.auth, Accept: 'application/atom+xml' }];
  return { json, atom };
}

function answerIds(res: HttpResponse, read: (r: HttpResponse) => string[], filter: string): string[] {
  assert.equal(res.status, 200, `${filter}: ${res.status} ${res.body.slice(0, 300)}`);
  return sortIds(read(res));
}

const groups = [...new Set(CASES.map((c) => c.group))];
for (const name of groups) {
  describe(`${name}: the service selects exactly the evaluator's rows, in JSON and Atom`, () => {
    for (const [i, c] of CASES.entries()) {
      if (c.group !== name) continue;
      test(`${c.set}?$filter=${c.filter}`, async () => {
        const want = expected(c);
        const { json, atom } = requests(c, i);
        const [jsonRes, atomRes] = await Promise.all([client.get(...json), client.get(...atom)]);
        assert.deepEqual(answerIds(jsonRes, jsonIds, c.filter), want, `JSON: ${json[0]}`);
        assert.deepEqual(answerIds(atomRes, atomIds, c.filter), want, `Atom: ${atom[0]}`);
      });
    }
  });
}
