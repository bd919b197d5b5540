/**
 * Changesets are all or nothing, over real HTTP. A changeset of twelve operations of every kind
 * (POST, a POST through `$1`, a `$links` POST on `$1`, MERGE, PUT, PATCH, DELETE of an entity and
 * of a link, a service operation, a MERGE of `$1`) is sent once with operation k made to fail,
 * for every k: each time the answer is that operation's error alone, with its Content-ID, and a
 * dump of every tenant table is the same before and after. Then the same changeset without a
 * failure, to show that it would have changed every one of those rows. And the variation limit
 * of 120 per product, evaluated inside the changeset's transaction.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { batchBody, changesetAnswers, changesetPart, client, errorMessageOf, jsonOperation, postBatch, readBatchAnswer, singleAnswer } from './support';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'atomic');
});
after(() => live.close());

interface Step {
  readonly method: string;
  readonly target: string;
  readonly body?: unknown;
}

interface Case {
  readonly name: string;
  readonly ok: Step;
  /** The same operation made to fail, and the status it fails with. */
  readonly failing: Step;
  readonly status: number;
}

interface World {
  readonly existing: bigint;
  readonly other: bigint;
  readonly variation: bigint;
  readonly image: bigint;
  readonly offer: bigint;
  readonly carPart: bigint;
  readonly catalog: bigint;
  readonly linkedCatalog: bigint;
}

async function makeWorld(): Promise<World> {
  const api = client(live, seller);
  const existing = await api.create('Products', { Title: 'Bestand', Price: '20', StockAmount: 4 });
  const other = await api.create('Products', { Title: 'Andere', Price: '30', StockAmount: 2 });
  const variation = await api.create('ProductVariations', { ProductId: String(existing), Sku: 'V-1', Price: '20', StockAmount: 1 });
  const image = await api.create('ProductImages', { ProductId: String(existing), Type: 1, ImageUrl: 'https://img.example.com/1.jpg' });
  const offer = await api.create('DiscountOffers', { ProductId: String(existing), Price: '18', Type: 1 });
  const carPart = await api.create('CarParts', { ProductId: String(other), KType: 1 });
  const catalog = await api.create('Catalogs', { Name: 'Neu verknüpft' });
  const linkedCatalog = await api.create('Catalogs', { Name: 'Verknüpft' });
  await api.link(`Products(${other}L)/$links/Catalogs`, `Catalogs(${linkedCatalog}L)`);
  return { existing, other, variation, image, offer, carPart, catalog, linkedCatalog };
}

const MISSING = 987654321n;

function cases(w: World): Case[] {
  const catalogUri = (id: bigint) => ({ uri: `${live.root}/Catalogs(${id}L)` });
  return [
    {
      name: 'POST Products',
      ok: { method: 'POST', target: 'Products', body: { Title: 'Neu im Changeset', Price: '9.99', StockAmount: 1 } },
      failing: { method: 'POST', target: 'Products', body: { Title: 'x'.repeat(81), Price: '9.99', StockAmount: 1 } },
      status: 400,
    },
    {
      name: 'POST $1/ProductSpecifics',
      ok: { method: 'POST', target: '$1/ProductSpecifics', body: { Name: 'Marke', Value: 'Acme' } },
      failing: { method: 'POST', target: '$1/ProductSpecifics', body: { Name: 'Marke', Value: Array.from({ length: 21 }, (_, i) => `v${i}`).join('|') } },
      status: 400,
    },
    {
      name: 'POST $1/$links/Catalogs',
      ok: { method: 'POST', target: '$1/$links/Catalogs', body: catalogUri(w.catalog) },
      failing: { method: 'POST', target: '$1/$links/Catalogs', body: catalogUri(MISSING) },
      status: 404,
    },
    {
      name: 'MERGE Products',
      ok: { method: 'MERGE', target: `Products(${w.existing}L)`, body: { Title: 'Geändert' } },
      failing: { method: 'MERGE', target: `Products(${MISSING}L)`, body: { Title: 'Geändert' } },
      status: 404,
    },
    {
      name: 'PUT ProductVariations',
      ok: { method: 'PUT', target: `ProductVariations(${w.variation}L)`, body: { ProductId: String(w.existing), Sku: 'V-1b', Price: '21', StockAmount: 0 } },
      failing: { method: 'PUT', target: `ProductVariations(${w.variation}L)`, body: { ProductId: String(w.existing), Sku: 'V-1b', Price: '21', StockAmount: -1 } },
      status: 400,
    },
    {
      name: 'DELETE ProductImages',
      ok: { method: 'DELETE', target: `ProductImages(${w.image}L)` },
      failing: { method: 'DELETE', target: `ProductImages(${MISSING}L)` },
      status: 404,
    },
    {
      name: 'POST ProductVariations',
      ok: { method: 'POST', target: 'ProductVariations', body: { ProductId: String(w.existing), Sku: 'V-2', Price: '20', StockAmount: 3 } },
      // The Sku that operation 5 gave the other variation, in the same changeset: a conflict.
      failing: { method: 'POST', target: 'ProductVariations', body: { ProductId: String(w.existing), Sku: 'V-1b', Price: '20', StockAmount: 3 } },
      status: 409,
    },
    {
      name: 'MERGE $1',
      ok: { method: 'MERGE', target: '$1', body: { StockAmount: 7 } },
      failing: { method: 'MERGE', target: '$1', body: { Price: 'zwölf' } },
      status: 400,
    },
    {
      name: 'DELETE a $link',
      ok: { method: 'DELETE', target: `Products(${w.other}L)/$links/Catalogs(${w.linkedCatalog}L)` },
      failing: { method: 'DELETE', target: `Products(${w.other}L)/$links/Catalogs(${w.catalog}L)` },
      status: 404,
    },
    {
      name: 'POST ReviseInventoryStatus',
      ok: { method: 'POST', target: `ReviseInventoryStatus?productId=${w.other}L&stockAmount=11` },
      failing: { method: 'POST', target: `ReviseInventoryStatus?productId=${MISSING}L&stockAmount=11` },
      status: 404,
    },
    {
      name: 'PATCH DiscountOffers',
      ok: { method: 'PATCH', target: `DiscountOffers(${w.offer}L)`, body: { Price: '17.5' } },
      failing: { method: 'PATCH', target: `DiscountOffers(${w.offer}L)`, body: { Price: '-1' } },
      status: 400,
    },
    {
      name: 'DELETE CarParts',
      ok: { method: 'DELETE', target: `CarParts(${w.carPart}L)` },
      failing: { method: 'DELETE', target: `CarParts(${MISSING}L)` },
      status: 404,
    },
  ];
}

function changeset(steps: readonly Step[]): string {
  return batchBody([changesetPart(steps.map((s, i) => jsonOperation(s.method, s.target, i + 1, s.body)))]);
}

describe('failure injection: operation k of 12 fails, for every k', () => {
  test('each time: one error part for the changeset, with the failing Content-ID, and not one row changed', async () => {
    const w = await makeWorld();
    const all = cases(w);
    const rowsBefore = await tenantRows(live, seller.accountId);
    for (let k = 0; k < all.length; k++) {
      const steps = all.map((c, i) => (i === k ? c.failing : c.ok));
      const answers = readBatchAnswer(await postBatch(live, seller, changeset(steps)));
      assert.equal(answers.length, 1, `k=${k + 1}`);
      const failure = singleAnswer(answers[0]);
      assert.equal(failure.status, all[k]!.status, `k=${k + 1} (${all[k]!.name}): ${failure.body}`);
      assert.equal(failure.headers.get('content-id'), String(k + 1), `k=${k + 1}`);
      assert.match(failure.headers.get('content-type') ?? '', /^application\/json;charset=utf-8/);
      assert.ok(errorMessageOf(failure).length > 0);
      assert.deepEqual(await tenantRows(live, seller.accountId), rowsBefore, `k=${k + 1} (${all[k]!.name}) changed nothing`);
    }

    // An undefined `$n` at position k fails the changeset just the same.
    for (let k = 0; k < all.length; k++) {
      const steps = all.map((c, i) => (i === k ? { method: 'MERGE', target: '$99', body: { Title: 'nie' } } : c.ok));
      const failure = singleAnswer(readBatchAnswer(await postBatch(live, seller, changeset(steps)))[0]);
      assert.equal(failure.status, 400, failure.body);
      assert.equal(failure.headers.get('content-id'), String(k + 1));
      assert.match(errorMessageOf(failure), /Content-ID '99'/);
      assert.deepEqual(await tenantRows(live, seller.accountId), rowsBefore);
    }

    // Without a failure the same changeset runs whole: each operation answers, each change is there.
    const steps = all.map((c) => c.ok);
    const responses = changesetAnswers(readBatchAnswer(await postBatch(live, seller, changeset(steps)))[0]);
    assert.deepEqual(
      responses.map((r) => [r.status, r.headers.get('content-id')]),
      [201, 201, 204, 204, 204, 204, 201, 204, 204, 200, 204, 204].map((status, i) => [status, String(i + 1)]),
      responses.map((r) => r.body).join('\n'),
    );
    assert.notDeepEqual(await tenantRows(live, seller.accountId), rowsBefore);
    const api = client(live, seller);
    const created = (JSON.parse(responses[0]!.body) as { d: { Id: string } }).d.Id;
    assert.equal(responses[0]!.headers.get('location'), `${live.root}/Products(${created}L)`);
    assert.equal((await api.get(`Products(${created}L)`))?.StockAmount, 7, 'MERGE $1 changed the new product');
    assert.deepEqual((await api.feed(`Products(${created}L)/ProductSpecifics`)).map((s) => s.Name), ['Marke']);
    assert.deepEqual((await api.feed(`Products(${created}L)/Catalogs`)).map((c) => c.Id), [String(w.catalog)]);
    assert.equal((await api.get(`Products(${w.existing}L)`))?.Title, 'Geändert');
    assert.equal((await api.get(`ProductVariations(${w.variation}L)`))?.Sku, 'V-1b');
    assert.equal(await api.get(`ProductImages(${w.image}L)`), undefined);
    assert.deepEqual((await api.feed(`Products(${w.existing}L)/ProductVariations`)).map((v) => v.Sku), ['V-1b', 'V-2']);
    assert.deepEqual(await api.feed(`Products(${w.other}L)/Catalogs`), []);
    assert.equal((await api.get(`Products(${w.other}L)`))?.StockAmount, 11);
    assert.equal((await api.get(`DiscountOffers(${w.offer}L)`))?.Price, '17.5');
    assert.equal(await api.get(`CarParts(${w.carPart}L)`), undefined);
  });
});

describe('the limit of 120 variations per product holds inside a changeset', () => {
  const variationOps = (product: bigint, from: number, count: number) =>
    Array.from({ length: count }, (_, i) => jsonOperation('POST', 'ProductVariations', i + 1, { ProductId: String(product), Sku: `S-${from + i}`, Price: '5', StockAmount: 1 }));

  test('115 variations plus a changeset of 6 is refused whole; plus 5 reaches 120; then one more is refused', async () => {
    const api = client(live, seller);
    const product = await api.create('Products', { Title: 'Viele Varianten', Price: '5', StockAmount: 1 });
    // 115 variations, themselves created by two changesets (100 operations is the default limit).
    for (const [from, count] of [
      [0, 100],
      [100, 15],
    ] as const) {
      const responses = changesetAnswers(readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart(variationOps(product, from, count))])))[0]);
      assert.equal(responses.length, count);
      assert.ok(responses.every((r) => r.status === 201));
    }
    const count = async () => (await api.feed(`Products(${product}L)/ProductVariations`)).length;
    assert.equal(await count(), 115);

    const rowsBefore = await tenantRows(live, seller.accountId);
    const refused = singleAnswer(readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart(variationOps(product, 115, 6))])))[0]);
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get('content-id'), '6', 'the sixth would be the 121st');
    assert.match(errorMessageOf(refused), /at most 120 variations/);
    assert.deepEqual(await tenantRows(live, seller.accountId), rowsBefore, 'no variation added');
    assert.equal(await count(), 115);

    // Moving a variation of another product in, as the last of six, is refused the same way.
    const donor = await api.create('Products', { Title: 'Spender', Price: '5', StockAmount: 1 });
    const moved = await api.create('ProductVariations', { ProductId: String(donor), Sku: 'S-moved', Price: '5', StockAmount: 1 });
    const moving = [...variationOps(product, 200, 5), jsonOperation('MERGE', `ProductVariations(${moved}L)`, 6, { ProductId: String(product) })];
    const movedRefused = singleAnswer(readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart(moving)])))[0]);
    assert.equal(movedRefused.status, 400, movedRefused.body);
    assert.equal(movedRefused.headers.get('content-id'), '6');
    assert.equal(await count(), 115);
    assert.equal((await api.get(`ProductVariations(${moved}L)`))?.ProductId, String(donor));

    const five = changesetAnswers(readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart(variationOps(product, 115, 5))])))[0]);
    assert.ok(five.every((r) => r.status === 201));
    assert.equal(await count(), 120);
    const one = singleAnswer(readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart(variationOps(product, 120, 1))])))[0]);
    assert.equal(one.status, 400);
    assert.equal(await count(), 120);
  });
});
