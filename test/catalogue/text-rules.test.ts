/**
 * How the rules read and compare text, against the live service on the engine under test:
 * - every uniqueness rule and counting limit on text compares as the original service's SQL Server
 *   did under its default collation (case-insensitive, trailing spaces ignored, leading ones
 *   counted), with the same answers on SQLite and PostgreSQL, Unicode case included;
 * - empty or blank text is no value (required text refuses it, an empty Sku is no Sku), and an
 *   empty piece of a '|'-separated value is refused;
 * - text the two formats cannot both carry is refused, in JSON, Atom and $batch; image URLs are
 *   absolute http(s) URLs as written; lengths count UTF-16 code units, in limits and in $filter;
 * - every uniqueness conflict answers 409;
 * - service operation parameters: repeated ones, ids below 1, and SetEbayCategory's second
 *   category equal to the first are refused with 400;
 * - a database from before the comparison keys is migrated: keys are filled in for its rows.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { HttpResponse } from '../support/http-client';
import { asSeller as asSellerDeclaring, CONNECTOR_VERSIONS, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import type { HttpRequest } from '../support/http-client';
import { atomEntry } from '../support/entries';
import { errorMessage } from '../support/odata-error';
import { batchBody, changesetPart, errorMessageOf, jsonOperation, postBatch, readBatchAnswer, singleAnswer } from '../batch/support';
import { testEngine } from '../support/test-database';
import { CAPTURE_CHANGES_SETTING, indexName } from '../../src/store/postgres/ddl';

/** Every request declares its versions as the connector does, and so gets the 1.0 shapes it reads. */
const asSeller = (who: Seller, url: string, init: HttpRequest = {}) => asSellerDeclaring(who, url, { ...init, headers: { ...CONNECTOR_VERSIONS, ...(init.headers ?? {}) } });

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'text');
});
after(() => live?.close());

type Json = Record<string, unknown>;
const JSON_HEADERS = { Accept: 'application/json', 'Content-Type': 'application/json' };

function send(method: string, path: string, body?: Json): Promise<HttpResponse> {
  return asSeller(seller, live.root + path, { method, headers: JSON_HEADERS, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}
const post = (set: string, body: Json) => send('POST', `/${set}`, body);
const get = (path: string) => send('GET', path);

function postAtom(set: string, typeName: string, props: Record<string, string | null>): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${set}`, { method: 'POST', headers: { 'Content-Type': 'application/atom+xml' }, body: atomEntry(typeName, props) });
}

function created(res: HttpResponse): Json {
  assert.equal(res.status, 201, res.body);
  return (JSON.parse(res.body) as { d: Json }).d;
}
const idOf = (res: HttpResponse) => String(created(res).Id);
async function read(path: string): Promise<Json> {
  const res = await get(path);
  assert.equal(res.status, 200, res.body);
  return (JSON.parse(res.body) as { d: Json }).d;
}

function refused(res: HttpResponse, status: 400 | 409, rule: RegExp): void {
  assert.equal(res.status, status, res.body);
  assert.match(errorMessage(res), rule);
}

const newProduct = async () => idOf(await post('Products', { Title: 'Text rules', Price: '1', StockAmount: 1 }));
const newVariation = async (productId: string, extra: Json = {}) => idOf(await post('ProductVariations', { ProductId: productId, Price: '1', StockAmount: 1, ...extra }));

// ---------------------------------------------------------------------------------------------
// 1. Comparison

/** Each uniqueness rule on text: a fresh owner, and a create of a row with the given text. */
interface UniqueRule {
  readonly name: string;
  readonly owner: () => Promise<string>;
  readonly create: (owner: string, text: string) => Promise<HttpResponse>;
  readonly message: RegExp;
}

const uniqueRules: readonly UniqueRule[] = [
  {
    name: "a ProductSpecific's Name once per product",
    owner: newProduct,
    create: (owner, text) => post('ProductSpecifics', { ProductId: owner, Name: text, Value: 'x' }),
    message: /already has a ProductSpecific named/,
  },
  {
    name: "a ProductVariation's Sku once per product",
    owner: newProduct,
    create: (owner, text) => post('ProductVariations', { ProductId: owner, Price: '1', StockAmount: 1, Sku: text }),
    message: /already has a variation with Sku/,
  },
  {
    name: "a ProductVariationSpecific's Name once per variation",
    owner: async () => newVariation(await newProduct()),
    create: (owner, text) => post('ProductVariationSpecifics', { ProductVariationId: owner, Name: text, Value: 'x' }),
    message: /already has a characteristic named/,
  },
  {
    name: "an OptionalProductAttribute's Name once per product",
    owner: newProduct,
    create: (owner, text) => post('OptionalProductAttributes', { ProductId: owner, Name: text, Value: 'x' }),
    message: /already has an OptionalProductAttribute named/,
  },
];

/** [first, second, whether they are the same text to the rules]. */
const PAIRS: readonly (readonly [string, string, boolean])[] = [
  ['Brand', 'brand', true],
  ['Brand', 'Brand ', true],
  ['Brand  ', 'BRAND', true],
  ['SKU-1', 'sku-1', true],
  ['Äpfel', 'äPFEL', true],
  ['Straße', 'STRASSE', true],
  ['ΟΔΟΣ', 'οδοσ', true],
  ['Brand', 'Brands', false],
  ['Brand', ' Brand', false],
  ['Brand', 'Brand\t', false],
  ['SKU-1', 'SKU-2', false],
  ['Apfel', 'Äpfel', false],
];

describe('uniqueness rules compare text ignoring case and trailing spaces', () => {
  for (const rule of uniqueRules) {
    test(rule.name, async () => {
      for (const [first, second, same] of PAIRS) {
        const owner = await rule.owner();
        created(await rule.create(owner, first));
        const res = await rule.create(owner, second);
        if (same) refused(res, 409, rule.message);
        else assert.equal(res.status, 201, `'${first}' and '${second}' are different: ${res.body}`);
      }
    });
  }

  test('an update onto another row\'s text conflicts; onto its own in another case does not', async () => {
    const product = await newProduct();
    created(await post('ProductSpecifics', { ProductId: product, Name: 'Colour', Value: 'red' }));
    const other = idOf(await post('ProductSpecifics', { ProductId: product, Name: 'Size', Value: 'L' }));
    refused(await send('MERGE', `/ProductSpecifics(${other}L)`, { Name: 'COLOUR ' }), 409, /already has a ProductSpecific named/);
    assert.equal((await send('MERGE', `/ProductSpecifics(${other}L)`, { Name: 'SIZE' })).status, 204);
    assert.equal((await read(`/ProductSpecifics(${other}L)`)).Name, 'SIZE', 'the text is stored as sent');
  });
});

describe('counting limits on characteristics compare text the same way', () => {
  /** A product whose variations hold five characteristic names, the first with 30 values. */
  async function fullProduct(): Promise<string> {
    const product = await newProduct();
    for (let i = 0; i < 30; i++) {
      const variation = await newVariation(product);
      created(await post('ProductVariationSpecifics', { ProductVariationId: variation, Name: 'Colour', Value: `Value ${i}` }));
      if (i < 4) created(await post('ProductVariationSpecifics', { ProductVariationId: variation, Name: `Name ${i}`, Value: 'x' }));
    }
    return product;
  }

  test('a sixth name that equals a present one is no new name; a distinct one is refused', async () => {
    const product = await fullProduct();
    for (const [name, same] of [['colour', true], ['COLOUR ', true], ['name 0', true], [' Colour', false], ['Weight', false]] as const) {
      const variation = await newVariation(product);
      const res = await post('ProductVariationSpecifics', { ProductVariationId: variation, Name: name, Value: 'value 0' });
      if (same) assert.equal(res.status, 201, `'${name}': ${res.body}`);
      else refused(res, 400, /at most 5 characteristic names/);
    }
  });

  test('a 31st value that equals a present one is no new value; a distinct one is refused', async () => {
    const product = await fullProduct();
    for (const [value, same] of [['value 7', true], ['VALUE 7  ', true], ['Value 30', false], [' Value 7', false]] as const) {
      const variation = await newVariation(product);
      const res = await post('ProductVariationSpecifics', { ProductVariationId: variation, Name: 'COLOUR', Value: value });
      if (same) assert.equal(res.status, 201, `'${value}': ${res.body}`);
      else refused(res, 400, /at most 30 values for the characteristic 'Colour'/);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 2. Empty is not a value

describe('empty or blank text is no value', () => {
  test('a required text property refuses "" and blank text, in JSON and Atom', async () => {
    const product = await newProduct();
    for (const blank of ['', ' ', '\t\r\n', '\u00a0']) {
      refused(await post('ProductSpecifics', { ProductId: product, Name: blank, Value: 'x' }), 400, /'Name' .* cannot be empty or blank/);
      refused(await post('ProductSpecifics', { ProductId: product, Name: 'n', Value: blank }), 400, /'Value' .* cannot be empty or blank/);
      refused(await post('Catalogs', { Name: blank }), 400, /'Name' .* cannot be empty or blank/);
      refused(await post('Products', { Title: blank, Price: '1', StockAmount: 1 }), 400, /'Title' .* cannot be empty or blank/);
      refused(await postAtom('ProductSpecifics', 'ProductSpecific', { ProductId: product, Name: blank, Value: 'x' }), 400, /'Name' .* cannot be empty or blank/);
    }
    const specific = idOf(await post('ProductSpecifics', { ProductId: product, Name: 'Colour', Value: 'red' }));
    refused(await send('MERGE', `/ProductSpecifics(${specific}L)`, { Name: '  ' }), 400, /'Name' .* cannot be empty or blank/);
  });

  test('an empty or blank Sku is no Sku: stored as null, and two such variations never conflict', async () => {
    const product = await newProduct();
    const ids: string[] = [];
    for (const sku of ['', '', '   ', null]) ids.push(await newVariation(product, { Sku: sku }));
    for (const id of ids) assert.equal((await read(`/ProductVariations(${id}L)`)).Sku, null);
    const atom = await postAtom('ProductVariations', 'ProductVariation', { ProductId: product, Price: '1', StockAmount: '1', Sku: '' });
    assert.equal(atom.status, 201, atom.body);
    const count = await asSeller(seller, `${live.root}/Products(${product}L)/ProductVariations/$count?$filter=Sku eq null`);
    assert.equal(count.body, '5');
  });

  test("a '|'-separated value with an empty or blank piece is refused", async () => {
    const product = await newProduct();
    for (const value of ['a||b', 'a|', '|a', 'a| |b', '|']) {
      refused(await post('ProductSpecifics', { ProductId: product, Name: `n ${value}`, Value: value }), 400, /'\|'-separated value .* not blank/);
    }
    created(await post('ProductSpecifics', { ProductId: product, Name: 'parts', Value: 'a|b|c' }));
  });
});

// ---------------------------------------------------------------------------------------------
// 5. One status for one kind of conflict

test('a duplicate ProductRelations pair is a conflict: 409', async () => {
  const [a, b] = [await newProduct(), await newProduct()];
  created(await post('ProductRelations', { ParentProductId: a, ChildProductId: b }));
  refused(await post('ProductRelations', { ParentProductId: a, ChildProductId: b }), 409, new RegExp(`Product ${a} is already the parent of product ${b}`));
});

// ---------------------------------------------------------------------------------------------
// 6. Text the formats can carry

describe('text the formats can carry', () => {
  const refusedCharacters = ['\u0001', '\u0008', '\u000b', '\u001f', '\u007f', '\u0085', '\ufffe', '\uffff', '\ud800'];

  test('control characters but tab, CR and LF are refused in JSON, naming the property', async () => {
    const product = await newProduct();
    for (const c of refusedCharacters) {
      const hex = c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
      refused(await post('Products', { Title: `a${c}b`, Price: '1', StockAmount: 1 }), 400, new RegExp(`'Title' must not contain the character U\\+${hex}`));
      refused(await send('MERGE', `/Products(${product}L)`, { Description: `x${c}` }), 400, new RegExp(`'Description' must not contain the character U\\+${hex}`));
    }
    const fine = 'tab\there\r\nline 2 \u00a0 😀';
    assert.equal(created(await post('Products', { Title: fine, Price: '1', StockAmount: 1 })).Title, fine);
  });

  test('in Atom: a C1 control character (which XML carries) is refused naming the property, U+0001 is a 400', async () => {
    refused(await postAtom('Catalogs', 'Catalog', { Name: 'a\u0085b' }), 400, /'Name' must not contain the character U\+0085/);
    refused(await postAtom('Catalogs', 'Catalog', { Name: 'a\u0080b' }), 400, /'Name' must not contain the character U\+0080/);
    const raw = await postAtom('Catalogs', 'Catalog', { Name: 'a\u0001b' });
    assert.equal(raw.status, 400, raw.body);
  });

  test('inside $batch, a changeset with a control character is refused whole', async () => {
    const body = batchBody([
      changesetPart([
        jsonOperation('POST', 'Catalogs', 1, { Name: 'fine' }),
        jsonOperation('POST', 'Catalogs', 2, { Name: 'bad\u0002' }),
      ]),
    ]);
    const before = await asSeller(seller, `${live.root}/Catalogs/$count`);
    const res = await postBatch(live, seller, body);
    assert.equal(res.status, 202, res.body);
    const answer = singleAnswer(readBatchAnswer(res)[0]);
    assert.equal(answer.status, 400);
    assert.match(errorMessageOf(answer), /'Name' must not contain the character U\+0002/);
    assert.equal((await asSeller(seller, `${live.root}/Catalogs/$count`)).body, before.body);
  });

  test('image URLs are absolute http(s) URLs as written, without blanks', async () => {
    const product = await newProduct();
    const variation = await newVariation(product);
    const bad = ['http:/x.jpg', 'http:x.jpg', ' http://example.com/x.jpg', 'http://example.com/a b.jpg', 'http://example.com/x.jpg ', 'ftp://example.com/x.jpg', '//example.com/x.jpg', 'http://', 'http:///x.jpg'];
    for (const [i, url] of bad.entries()) {
      refused(await post('ProductImages', { ProductId: product, ImageUrl: url, Type: 1 + (i % 12) }), 400, /'ImageUrl' must be an absolute http or https URL without blanks/);
      refused(await post('ProductVariationImages', { ProductVariationId: variation, ImageUrl: url }), 400, /'ImageUrl' must be an absolute http or https URL without blanks/);
    }
    created(await post('ProductImages', { ProductId: product, ImageUrl: 'https://cdn.example.com/img/1.jpg?size=large#x', Type: 1 }));
    created(await post('ProductImages', { ProductId: product, ImageUrl: 'HTTP://example.com:8080/a%20b.jpg', Type: 2 }));
  });

  test('lengths count UTF-16 code units, as .NET does: in limits', async () => {
    // Title holds 80: 40 astral characters are 80 units; one BMP character more is 81.
    const astral = '😀'.repeat(40);
    created(await post('Products', { Title: astral, Price: '1', StockAmount: 1 }));
    refused(await post('Products', { Title: `${astral}a`, Price: '1', StockAmount: 1 }), 400, /'Title' is longer than its maximum length of 80/);
    // A '|'-separated piece holds 50.
    const product = await newProduct();
    created(await post('ProductSpecifics', { ProductId: product, Name: 'fits', Value: `a|${'𝔘'.repeat(25)}` }));
    refused(await post('ProductSpecifics', { ProductId: product, Name: 'long', Value: `a|${'𝔘'.repeat(25)}b` }), 400, /must be 1 to 50 characters; .* has 51/);
  });

  test("lengths count UTF-16 code units, as .NET does: in $filter's length()", async () => {
    const title = `len-${process.pid}-😀é`;
    const id = idOf(await post('Products', { Title: title, Price: '1', StockAmount: 1 }));
    const found = (n: number) => get(`/Products?$filter=${encodeURIComponent(`length(Title) eq ${n} and startswith(Title, 'len-${process.pid}')`)}`);
    const ids = (res: HttpResponse) => (JSON.parse(res.body) as { d: Json[] }).d.map((e) => String(e.Id));
    assert.deepEqual(ids(await found(title.length)), [id]);
    assert.deepEqual(ids(await found([...title].length)), []);
  });
});

// ---------------------------------------------------------------------------------------------
// 7. Operation parameters

describe('operation parameters', () => {
  const call = (query: string) => asSeller(seller, `${live.root}/${query}`, { method: 'POST', headers: { Accept: 'application/json' } });

  test('a parameter given twice is refused with 400', async () => {
    const product = await newProduct();
    refused(await call(`SetEbayCategory?productId=${product}L&categoryId1=5L&categoryId1=6L`), 400, /'categoryId1' of SetEbayCategory is given more than once/);
    refused(await call(`ReviseInventoryStatus?productId=${product}L&stockAmount=1&stockAmount=2`), 400, /'stockAmount' .* more than once/);
    refused(await get(`/ProductIsListed?productId=${product}L&productId=${product}L`), 400, /'productId' .* more than once/);
    // A parameter the operation does not declare may repeat: it is ignored, as unknown ones are.
    assert.equal((await call(`ReviseInventoryStatus?productId=${product}L&stockAmount=1&x=1&x=2`)).status, 200);
  });

  test('ids must be positive', async () => {
    const product = await newProduct();
    refused(await call(`SetEbayCategory?productId=${product}L&categoryId1=0`), 400, /'categoryId1' of SetEbayCategory must be at least 1; 0/);
    refused(await call(`SetEbayCategory?productId=${product}L&categoryId1=5L&categoryId2=-1L`), 400, /'categoryId2' .* at least 1/);
    refused(await call(`SetProductProfile?productId=${product}L&type=1&profileId=-5L`), 400, /'profileId' of SetProductProfile must be at least 1; -5/);
    refused(await call(`SetProductProfile?productId=0L&type=1`), 400, /'productId' .* at least 1/);
    refused(await get('/GetSalesOrderHistory?salesOrderId=-1'), 400, /'salesOrderId' .* at least 1/);
  });

  test('SetEbayCategory refuses categoryId2 equal to categoryId1', async () => {
    const product = idOf(await post('Products', { Title: 'manual', Price: '1', StockAmount: 1, DisableAutomatch: true }));
    refused(await call(`SetEbayCategory?productId=${product}L&categoryId1=77L&categoryId2=77`), 400, /'categoryId2' of SetEbayCategory must differ from categoryId1/);
    const ok = await call(`SetEbayCategory?productId=${product}L&categoryId1=77L&categoryId2=78`);
    assert.equal(ok.status, 200, ok.body);
  });
});

// ---------------------------------------------------------------------------------------------
// Migration of a database from before the comparison keys

/** Runs SQL on the test's database as its owner (DDL included), on the engine under test. */
async function ownerSql(statements: readonly string[]): Promise<void> {
  if (testEngine === 'sqlite') {
    const db = new Database(live.database.file!);
    try {
      for (const s of statements) db.exec(s);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: live.database.ownerUrl ?? live.database.url });
  await client.connect();
  try {
    for (const s of statements) await client.query(s);
  } finally {
    await client.end();
  }
}

/** The schema as it was before comparison keys: no key columns, unique indexes over the text itself. */
function schemaBeforeKeys(): string[] {
  const keyed: readonly [string, string, string][] = [
    ['product_specifics', 'name', 'product_id'],
    ['product_variations', 'sku', 'product_id'],
    ['product_variation_specifics', 'name', 'product_variation_id'],
    ['optional_product_attributes', 'name', 'product_id'],
  ];
  // PostgreSQL keeps a long index name shortened.
  const drop = (index: string) => `DROP INDEX "${testEngine === 'sqlite' ? index : indexName(index)}"`;
  return [
    ...keyed.map(([table, column, owner]) => drop(`${table}_unique_${owner}_${column}_key`)),
    ...keyed.map(([table, column]) => `ALTER TABLE "${table}" DROP COLUMN "${column}_key"`),
    `ALTER TABLE "product_variation_specifics" DROP COLUMN "value_key"`,
    ...keyed.map(([table, column, owner]) => `CREATE UNIQUE INDEX "${table}_unique_${owner}_${column}" ON "${table}" ("account_id", "${owner}", "${column}")`),
  ];
}

test('a database from before the comparison keys migrates: its rows get keys, and the rules see them', async () => {
  const product = await newProduct();
  created(await post('ProductSpecifics', { ProductId: product, Name: 'Brand', Value: 'x' }));
  const variation = await newVariation(product, { Sku: 'SKU-1 ' });
  created(await post('ProductVariationSpecifics', { ProductVariationId: variation, Name: 'Colour', Value: 'Red' }));
  const database = live.database;
  await live.close();
  await ownerSql(schemaBeforeKeys());
  // Sessions and tokens live in the database: the seller's credentials still hold.
  live = await startLive({ database });
  refused(await post('ProductSpecifics', { ProductId: product, Name: 'BRAND', Value: 'y' }), 409, /already has a ProductSpecific named/);
  refused(await post('ProductVariations', { ProductId: product, Price: '1', StockAmount: 1, Sku: 'sku-1' }), 409, /already has a variation with Sku/);
  refused(await post('ProductVariationSpecifics', { ProductVariationId: variation, Name: 'colour', Value: 'x' }), 409, /already has a characteristic named/);
  // The old exact index is gone: only the comparison decides.
  created(await post('OptionalProductAttributes', { ProductId: product, Name: 'a', Value: 'x' }));
  refused(await post('OptionalProductAttributes', { ProductId: product, Name: 'A', Value: 'x' }), 409, /already has an OptionalProductAttribute named/);
});

test('a database whose rows collide under the comparison does not migrate: the error names the index, and nothing changes', async () => {
  const product = await newProduct();
  created(await post('ProductSpecifics', { ProductId: product, Name: 'Colour', Value: 'red' }));
  const database = live.database;
  await live.close();
  // Before comparison keys, 'Colour' and 'colour' were two names of one product.
  const columns = '"account_id", "id", "product_id", "name", "value", "type", "creation_date", "modification_date", "row_version"';
  const copy = `INSERT INTO "product_specifics" (${columns}) SELECT ${columns.replace('"id"', '"id" + 1000000').replace('"name"', "'colour'")} FROM "product_specifics" WHERE "name" = 'Colour'`;
  // The owner is fenced by row-level security too; the copy lifts the fence for itself.
  // Rows made by hand are no changes: the change log's trigger is told so (it would write for no tenant).
  const unfenced =
    testEngine === 'sqlite'
      ? [copy]
      : [`SELECT set_config('${CAPTURE_CHANGES_SETTING}', 'off', false)`, 'ALTER TABLE "product_specifics" NO FORCE ROW LEVEL SECURITY', copy, 'ALTER TABLE "product_specifics" FORCE ROW LEVEL SECURITY'];
  await ownerSql([...schemaBeforeKeys(), ...unfenced]);
  await assert.rejects(startLive({ database }), /Cannot create the unique index product_specifics_unique_product_id_name_key: rows of product_specifics hold equal values .* ignoring case and trailing spaces/);
  // The migration is one transaction: the key columns it added are gone again, so renaming a row and starting again works.
  await ownerSql(testEngine === 'sqlite' ? [`UPDATE "product_specifics" SET "name" = 'Colour 2' WHERE "name" = 'colour'`] : [`SELECT set_config('${CAPTURE_CHANGES_SETTING}', 'off', false)`, 'ALTER TABLE "product_specifics" NO FORCE ROW LEVEL SECURITY', `UPDATE "product_specifics" SET "name" = 'Colour 2' WHERE "name" = 'colour'`, 'ALTER TABLE "product_specifics" FORCE ROW LEVEL SECURITY']);
  live = await startLive({ database });
  refused(await post('ProductSpecifics', { ProductId: product, Name: 'COLOUR 2 ', Value: 'x' }), 409, /already has a ProductSpecific named/);
});
