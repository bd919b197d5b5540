/**
 * A deep insert checks its tree in memory and stores it in multi-row INSERTs; the same entities
 * POSTed one by one in a $batch changeset (each child to `$n/Navigation`) are checked and stored
 * one at a time against the database. Both are one transaction in document order, so they must
 * agree on everything: the answer (status and message of the first rule broken) and, when both
 * succeed, the stored tree, images renumbered included. Generated trees (seeded) aim at every
 * rule a tree can break: unique keys compared ignoring case and trailing spaces, Type slots and
 * the numbering of further images, the characteristic limits across variations, duplicate
 * discount offers, Sku per product, values of a specific.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { asSeller, newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { JSON_HEADERS } from '../support/live-client';
import { errorMessage } from '../support/odata-error';
import { batchBody, changesetAnswers, changesetPart, errorMessageOf, jsonOperation, postBatch, readBatchAnswer, singleAnswer } from '../batch/support';

let live: LiveService;
let seller: Seller;

/** A catalog some trees link their product to; others name one that does not exist. */
let catalogUri: string;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'deepeq');
  const res = await asSeller(seller, `${live.root}/Catalogs`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ Name: 'Trees' }) });
  assert.equal(res.status, 201, res.body);
  catalogUri = String(res.headers.location);
});
after(() => live.close());

type Json = Record<string, unknown>;

/** A tree node: its values and its children by navigation, in document order. */
interface Node {
  readonly values: Json;
  readonly children: readonly (readonly [navigation: string, nodes: readonly Node[]])[];
}

/** A small seeded generator (mulberry32), so that a failure names a case that replays. */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  return { int, chance: (p: number) => next() < p, pick: <T>(items: readonly T[]): T => items[int(0, items.length - 1)]! };
}

/** Text that collides with `name` by the rules' comparison (case, trailing spaces), or not. */
const NAMES = ['Colour', 'colour', 'Colour  ', 'COLOUR', 'Size', 'size ', 'Material', 'Fit', 'Length', 'Width', 'Style', 'Grip'];

function tree(seed: number): Node {
  const g = generator(seed);
  const leaf = (values: Json): Node => ({ values, children: [] });
  const specifics = Array.from({ length: g.int(0, 4) }, () => leaf({ Name: g.pick(NAMES), Value: g.chance(0.1) ? Array.from({ length: 21 }, (_, i) => `v${i}`).join('|') : `value ${g.int(0, 3)}` }));
  // Types 1 and 2 are slots; 3 and up are further images, numbered without gaps: a Type in the
  // middle pushes the later ones up, a Type past the end leaves a gap (refused).
  const images = Array.from({ length: g.int(0, 6) }, (_, i) => leaf({ Type: g.chance(0.2) ? g.pick([1, 2]) : g.int(3, 3 + Math.min(i, 3) + (g.chance(0.1) ? 2 : 0)), ImageUrl: `https://img.example.com/${seed}/${i}.jpg` }));
  const manyValues = g.chance(0.15);
  // Around the 30 values a characteristic name may have across a product's variations (a
  // changeset holds at most 100 operations, so these variations carry one characteristic each).
  const variations = Array.from({ length: manyValues ? g.int(29, 33) : g.int(0, 6) }, (_, v) => {
    const sku = g.chance(0.05) ? 'SKU-DUP' : `SKU-${v}`;
    const characteristics = manyValues ? [leaf({ Name: 'Size', Value: `size ${v}` })] : Array.from({ length: g.int(0, 2) }, () => leaf({ Name: g.pick(NAMES), Value: `v${g.int(0, 2)}` }));
    const pictures = manyValues ? [] : Array.from({ length: g.int(0, 2) }, (_, i) => leaf({ ImagePosition: g.chance(0.1) ? 0 : i, ImageUrl: `https://img.example.com/${seed}/v${v}-${i}.jpg` }));
    return { values: { Price: '9.5', StockAmount: v, Sku: g.chance(0.05) ? sku.toLowerCase() : sku }, children: [['ProductVariationSpecifics', characteristics], ['ProductVariationImages', pictures]] } as Node;
  });
  const offers = Array.from({ length: g.int(0, 2) }, () => leaf({ Type: g.pick([1, 2]), Price: '12.5' }));
  // A binding of the product is linked before its parts are checked: a missing catalog is the
  // first fault even when a part breaks a rule too.
  const catalogs = g.chance(0.3) ? { Catalogs: [{ __metadata: { uri: g.chance(0.5) ? catalogUri : catalogUri.replace(/\(\d+L?\)$/, '(999999999L)') } }] } : {};
  return {
    values: { Title: `Tree ${seed}`, Price: '19.99', StockAmount: 3, ...catalogs },
    children: [
      ['ProductSpecifics', specifics],
      ['ProductImages', images],
      ['ProductVariations', variations],
      ['DiscountOffers', offers],
    ],
  };
}

/** The deep insert's JSON body: the node with its children inline. */
function inlineBody(node: Node): Json {
  return { ...node.values, ...Object.fromEntries(node.children.filter(([, nodes]) => nodes.length > 0).map(([nav, nodes]) => [nav, nodes.map(inlineBody)])) };
}

/** The same tree as single POSTs in document order, each child to its parent's `$n/Navigation`. */
function changesetOperations(root: Node): string[] {
  const operations: string[] = [];
  const add = (target: string, node: Node) => {
    const contentId = operations.length + 1;
    operations.push(jsonOperation('POST', target, contentId, node.values));
    for (const [nav, nodes] of node.children) for (const child of nodes) add(`$${contentId}/${nav}`, child);
  };
  add('Products', root);
  return operations;
}

const EXPAND = 'ProductSpecifics,ProductImages,ProductVariations/ProductVariationSpecifics,ProductVariations/ProductVariationImages,DiscountOffers';

/** The stored tree as comparable values: what the client wrote, and the Types the numbering gave. */
async function storedTree(location: string): Promise<unknown> {
  const res = await asSeller(seller, `${location}?$expand=${EXPAND}`, { headers: { Accept: 'application/json', MaxDataServiceVersion: '1.0' } });
  assert.equal(res.status, 200, res.body);
  const d = (JSON.parse(res.body) as { d: Json }).d;
  const list = (v: unknown) => [...(v as Json[])].sort((a, b) => (BigInt(String(a.Id)) < BigInt(String(b.Id)) ? -1 : 1));
  const keep = (e: Json, names: string[]) => names.map((n) => e[n]);
  return [
    list(d.ProductSpecifics).map((s) => keep(s, ['Name', 'Value'])),
    list(d.ProductImages).map((i) => keep(i, ['Type', 'ImageUrl'])),
    list(d.ProductVariations).map((v) => [keep(v, ['Sku', 'StockAmount']), list(v.ProductVariationSpecifics).map((s) => keep(s, ['Name', 'Value'])), list(v.ProductVariationImages).map((p) => keep(p, ['ImagePosition', 'ImageUrl']))]),
    list(d.DiscountOffers).map((o) => keep(o, ['Type', 'Price'])),
  ];
}

/** A message with the ids of this run's rows taken out: the two ways make different rows. */
const withoutIds = (message: string) => message.replace(/(product|variation|Product|ProductVariationId|ProductId) \d+/g, '$1 #');

test('a deep insert answers and stores exactly what the same entities POSTed one by one in a changeset do', async (t) => {
  const outcomes = new Map<string, number>();
  for (let seed = 1; seed <= 60; seed++) {
    const root = tree(seed);
    const before = await tenantRows(live, seller.accountId);
    const deep = await asSeller(seller, `${live.root}/Products`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(inlineBody(root)) });
    const res = await postBatch(live, seller, batchBody([changesetPart(changesetOperations(root))]));
    assert.equal(res.status, 202, res.body);
    const top = readBatchAnswer(res)[0];
    // A changeset that failed is answered by its failed operation alone.
    const failed = top?.kind === 'response' ? singleAnswer(top) : undefined;
    const answers = failed ? [] : changesetAnswers(top);
    const what = `seed ${seed}: deep insert ${deep.status} ${deep.body.slice(0, 300)}; one by one ${failed ? `${failed.status} ${failed.body.slice(0, 300)}` : 'created'}`;
    if (failed) {
      assert.equal(deep.status, failed.status, what);
      assert.equal(withoutIds(errorMessage(deep)), withoutIds(errorMessageOf(failed)), what);
      assert.deepEqual(await tenantRows(live, seller.accountId), before, `${what}: nothing stored`);
      outcomes.set(`${failed.status}`, (outcomes.get(`${failed.status}`) ?? 0) + 1);
    } else {
      assert.equal(deep.status, 201, what);
      const oneByOne = answers[0]!.headers.get('location')!;
      assert.deepEqual(await storedTree(String(deep.headers.location)), await storedTree(oneByOne), what);
      outcomes.set('201', (outcomes.get('201') ?? 0) + 1);
    }
  }
  t.diagnostic(`outcomes by status: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  // The generator reaches both outcomes and both refusals, or the comparison proves little.
  for (const status of ['201', '400', '404', '409']) assert.ok((outcomes.get(status) ?? 0) >= 3, `${status} in ${JSON.stringify([...outcomes])}`);
});
