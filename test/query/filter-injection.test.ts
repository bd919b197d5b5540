/**
 * String literals whose text means something to SQL or to LIKE patterns (quotes, ;, --, %, _,
 * comments, backslashes, "' OR 1=1 --") match literally: eq, startswith, endswith and
 * substringof answer exactly the rows whose text literally matches, computed here with plain
 * JavaScript string operations over the seeded titles. Text outside literals that looks like SQL
 * is refused. Afterwards every row is as before and every table is still there.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { SPEC_ENTITY_SETS } from '../support/spec';
import { atomIds, filterUrl, jsonIds, KeepAliveClient, seedRow, sortIds } from './fixture';
import { odataError } from '../support/odata-error';

/** Titles with every special character at the start, in the middle and at the end, and look-alikes. */
const TITLES = [
  '100% cotton', '100 percent cotton', '%', '%%', 'end%', 'endX', '%start', 'Xstart',
  'a_b', 'aXb', 'ab', '_', '__', '_start', 'Zstart', 'end_', 'endZ',
  "O'Neil", "O''Neil", "'", "''", "ends with quote'", "'starts with quote",
  'semi;colon', ';', 'dash--dash', '--', '-- comment', 'c/*omment*/', '/*', '*/',
  'back\\slash', 'backslash', '\\', '\\%', '\\_', 'a\\b',
  "' OR 1=1 --", "x' OR 'x'='x", `'; DROP TABLE "products"; --`, '" OR ""="',
  '[abc]', 'a*b', 'a?b', 'a.b', 'a|b', '||', 'plain', 'PLAIN',
];

/** Needles: each special string on its own, and some combinations. */
const NEEDLES = [
  "'", "''", ';', '--', '%', '%%', '_', '__', '/*', '*/', '\\', '\\%', '\\_', "' OR 1=1 --", "x' OR 'x'='x",
  `'; DROP TABLE "products"; --`, '"', '[', '*', '?', '.', '|', 'a_b', 'a%', '%start', 'end_', 'plain',
];

const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

interface Probe {
  readonly filter: string;
  readonly expected: (title: string) => boolean;
}

function probesFor(needle: string): Probe[] {
  const l = literal(needle);
  return [
    { filter: `Title eq ${l}`, expected: (t) => t === needle },
    { filter: `Title ne ${l}`, expected: (t) => t !== needle },
    { filter: `startswith(Title, ${l})`, expected: (t) => t.startsWith(needle) },
    { filter: `endswith(Title, ${l})`, expected: (t) => t.endsWith(needle) },
    { filter: `substringof(${l}, Title)`, expected: (t) => t.includes(needle) },
    { filter: `indexof(Title, ${l}) eq 0`, expected: (t) => t.indexOf(needle) === 0 },
    { filter: `length(replace(Title, ${l}, '')) lt length(Title)`, expected: (t) => t.includes(needle) },
  ];
}

let live: LiveService;
let seller: Seller;
let bystander: Seller;
let client: KeepAliveClient;
const idOfTitle = new Map<string, string>();
let sellerBefore: Record<string, string[]>;
let bystanderBefore: Record<string, string[]>;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'injection');
  bystander = await newSeller(live, 'injection-bystander');
  client = new KeepAliveClient(8);
  for (const [i, title] of TITLES.entries()) {
    const id = await seedRow(live, seller.accountId, 'Products', { Title: title, Price: `${i}.5`, StockAmount: i, Description: title });
    idOfTitle.set(title, String(id));
    await seedRow(live, seller.accountId, 'ProductSpecifics', { ProductId: id, Name: 'Text', Value: title });
  }
  const other = await seedRow(live, bystander.accountId, 'Products', { Title: '%', Price: '1', StockAmount: 1 });
  await seedRow(live, bystander.accountId, 'ProductVariations', { ProductId: other, Price: '1', StockAmount: 1, Sku: "' OR 1=1 --" });
  sellerBefore = await tenantRows(live, seller.accountId);
  bystanderBefore = await tenantRows(live, bystander.accountId);
});

after(async () => {
  client?.close();
  await live?.close();
});

const expectedIds = (predicate: (title: string) => boolean) => sortIds(TITLES.filter(predicate).map((t) => idOfTitle.get(t)!));

describe('the probes can fail', () => {
  test('titles are distinct, and each of %, _ and the quote matches some titles but not all', () => {
    assert.equal(new Set(TITLES).size, TITLES.length);
    for (const special of ['%', '_', "'", ';', '--', '\\', '/*']) {
      const n = TITLES.filter((t) => t.includes(special)).length;
      assert.ok(n > 0 && n < TITLES.length / 2, `${special}: ${n}`);
    }
  });
});

for (const needle of NEEDLES) {
  describe(`the string ${JSON.stringify(needle)} matches literally`, () => {
    for (const probe of probesFor(needle)) {
      test(probe.filter, async () => {
        const want = expectedIds(probe.expected);
        const res = await client.get(filterUrl(live.root, 'Products', probe.filter, '%20', '$format=json'), seller.auth);
        assert.deepEqual(sortIds(jsonIds(res)), want, probe.filter);
      });
    }
  });
}

describe('the same through a navigation path, in Atom, and in the other formats of a literal', () => {
  test("substringof('%', Title) and startswith(Title, '_') in Atom", async () => {
    for (const [filter, predicate] of [
      ["substringof('%', Title)", (t: string) => t.includes('%')],
      ["startswith(Title, '_')", (t: string) => t.startsWith('_')],
      ["endswith(Title, '''')", (t: string) => t.endsWith("'")],
    ] as const) {
      const res = await client.get(filterUrl(live.root, 'Products', filter, '+'), { ...seller.auth, Accept: 'application/atom+xml' });
      const want = expectedIds(predicate);
      assert.ok(want.length > 0 && want.length < TITLES.length);
      assert.deepEqual(sortIds(atomIds(res)), want, filter);
    }
  });

  test('ProductSpecifics through Product/Title and by Value', async () => {
    const specificOf = new Map<string, string>();
    const all = await client.get(`${live.root}/ProductSpecifics?$format=json`, seller.auth);
    for (const e of JSON.parse(all.body).d as { Id: string; Value: string }[]) specificOf.set(e.Value, e.Id);
    for (const needle of ['%', '_', "' OR 1=1 --", '\\', '--']) {
      for (const [filter, predicate] of [
        [`substringof(${literal(needle)}, Product/Title)`, (t: string) => t.includes(needle)],
        [`Value eq ${literal(needle)}`, (t: string) => t === needle],
        [`startswith(Product/Title, ${literal(needle)})`, (t: string) => t.startsWith(needle)],
      ] as const) {
        const res = await client.get(filterUrl(live.root, 'ProductSpecifics', filter), { ...seller.auth, Accept: 'application/json' });
        assert.deepEqual(sortIds(jsonIds(res)), sortIds(TITLES.filter(predicate).map((t) => specificOf.get(t)!)), filter);
      }
    }
  });

  test('a percent sign sent percent-encoded as %25 and a plus sent as %2B stay literal', async () => {
    // '100% cotton' contains '% c'; a '+' in the query would be a space, so '%2B' is a plus.
    const pct = await client.get(`${live.root}/Products?$filter=substringof('%25%20c',Title)&$format=json`, seller.auth);
    assert.deepEqual(sortIds(jsonIds(pct)), expectedIds((t) => t.includes('% c')));
    const plus = await client.get(`${live.root}/Products?$filter=substringof('%2B',Title)&$format=json`, seller.auth);
    assert.deepEqual(jsonIds(plus), [], 'no title has a plus sign');
    const space = await client.get(`${live.root}/Products?$filter=substringof('+',Title)&$format=json`, seller.auth);
    assert.deepEqual(sortIds(jsonIds(space)), expectedIds((t) => t.includes(' ')), "'+' is a space");
  });
});

describe('text that looks like SQL outside a literal is refused', () => {
  const refused = [
    "Title eq 'x'; DROP TABLE products",
    "Title eq 'x' -- comment",
    "Title eq 'x' /* comment */",
    "Title eq 'x' OR 1=1",
    "Title eq 'x' or 1 eq 1 --",
    'Title eq "x" or ""=""',
    "Title eq 'x' union select * from accounts",
    "Title eq 'x'' or ''1''=''1'",
    'Title; DROP TABLE products',
    '1=1',
  ];
  for (const text of refused) {
    test(text, async () => {
      const res = await client.get(filterUrl(live.root, 'Products', text, '%20', '$format=json'), seller.auth);
      assert.equal(res.status, text === "Title eq 'x'' or ''1''=''1'" ? 200 : 400, `${res.status} ${res.body.slice(0, 200)}`);
      if (res.status === 200) assert.deepEqual(jsonIds(res), [], 'the quotes are inside one literal');
      else assert.match(odataError(res).message, /Syntax error|incompatible|No property|Unknown function/);
    });
  }

  test('$orderby and $select with SQL text are refused too', async () => {
    for (const query of [
      `$orderby=${encodeURIComponent('Title; DROP TABLE products')}`,
      `$orderby=${encodeURIComponent('Title -- x')}`,
      `$select=${encodeURIComponent('Title, (select 1)')}`,
      `$orderby=${encodeURIComponent("Title desc, 'x'")}`,
    ]) {
      const res = await client.get(`${live.root}/Products?${query}&$format=json`, seller.auth);
      if (res.status === 200) {
        // An ordering by a constant is a valid expression; it must still answer every row.
        assert.equal(jsonIds(res).length, TITLES.length, query);
      } else {
        assert.equal(res.status, 400, query);
        odataError(res);
      }
    }
  });
});

describe('nothing changed and every table still exists', () => {
  test("both accounts' rows are as before, read raw from every tenant table", async () => {
    assert.deepEqual(await tenantRows(live, seller.accountId), sellerBefore);
    assert.deepEqual(await tenantRows(live, bystander.accountId), bystanderBefore);
    const total = Object.values(sellerBefore).reduce((n, r) => n + r.length, 0);
    assert.ok(total >= 2 * TITLES.length, `${total} rows were compared`);
  });

  test('every entity set answers 200, and the seeded sets answer every seeded row', async () => {
    for (const set of SPEC_ENTITY_SETS) {
      const res = await client.get(`${live.root}/${set}?$format=json`, seller.auth);
      assert.equal(res.status, 200, `${set}: ${res.body.slice(0, 200)}`);
    }
    const products = await client.get(`${live.root}/Products?$format=json`, seller.auth);
    assert.deepEqual(sortIds(jsonIds(products)), sortIds([...idOfTitle.values()]));
    const titles = (JSON.parse(products.body).d as { Title: string }[]).map((p) => p.Title).sort();
    assert.deepEqual(titles, [...TITLES].sort(), 'every title is stored exactly as seeded');
    const other = await client.get(`${live.root}/ProductVariations?$format=json`, bystander.auth);
    assert.equal((JSON.parse(other.body).d as { Sku: string }[])[0]?.Sku, "' OR 1=1 --");
  });
});
