/**
 * A product's further images (Type 3 to 12) are numbered consecutively beginning with 3 after
 * every write: created, given another Type, moved to another product, deleted, alone or in a
 * $batch changeset. Against the live service; the property test drives random writes of images
 * of two products and compares every answer and both products' images with a model of the rule
 * (an ordered list per product, Type = 3 + place; Types 1 and 2 are slots of one image each).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { createEntity, getCollection, JSON_HEADERS } from '../support/live-client';
import { errorMessage } from '../support/odata-error';
import { batchBody, changesetAnswers, changesetPart, jsonOperation, postBatch, readBatchAnswer, singleAnswer, errorMessageOf } from '../batch/support';
import { byTier } from '../support/tier';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'images');
});
after(() => live.close());

type Json = Record<string, unknown>;

function send(method: string, path: string, body?: Json) {
  return asSeller(seller, live.root + path, { method, headers: JSON_HEADERS, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

const newProduct = () => createEntity(live, seller, 'Products', { Title: 'images', Price: '1', StockAmount: 1 });
const url = (n: number | string) => `https://img.example.com/${n}.jpg`;

async function newImage(product: string, type: number): Promise<string> {
  return createEntity(live, seller, 'ProductImages', { ProductId: product, ImageUrl: url(`${product}-${type}`), Type: type });
}

/** The product's images by Type: Type -> Id. */
async function imagesOf(product: string): Promise<Map<number, string>> {
  const rows = await getCollection(live, seller, `Products(${product}L)/ProductImages`);
  const byType = new Map<number, string>();
  for (const r of rows) {
    assert.ok(!byType.has(Number(r.Type)), `two images of Type ${String(r.Type)} in product ${product}`);
    byType.set(Number(r.Type), String(r.Id));
  }
  return byType;
}

/** The Ids of the further images in Type order, after checking that they are Types 3, 4, … without a gap. */
async function furtherRun(product: string): Promise<string[]> {
  const byType = await imagesOf(product);
  const types = [...byType.keys()].filter((t) => t >= 3).sort((a, b) => a - b);
  assert.deepEqual(types, types.map((_, i) => 3 + i), `product ${product}: further Types ${types.join(',')} are consecutive from 3`);
  return types.map((t) => byType.get(t)!);
}

describe('further images form one run from Type 3', () => {
  test('deleting one closes the gap: the later images move down and keep their order', async () => {
    const p = await newProduct();
    const ids = [];
    for (const t of [3, 4, 5, 6]) ids.push(await newImage(p, t));
    assert.equal((await send('DELETE', `/ProductImages(${ids[1]}L)`)).status, 204);
    assert.deepEqual(await furtherRun(p), [ids[0], ids[2], ids[3]]);
    const moved = await getCollection(live, seller, `ProductImages?$filter=Id eq ${ids[3]}L`);
    assert.equal(moved[0]!.ImageUrl, url(`${p}-6`), 'the image kept its URL; only its Type moved');
  });

  test('a Type that would leave a gap is refused with 400 naming the next free Type; an occupied one inserts', async () => {
    const p = await newProduct();
    const first = await newImage(p, 3);
    const res = await send('POST', '/ProductImages', { ProductId: p, ImageUrl: url('gap'), Type: 5 });
    assert.equal(res.status, 400, res.body);
    assert.match(errorMessage(res), /numbered consecutively beginning with 3: product \d+ has Types 3 to 3, so a further image takes a Type from 3 to 4; Type 5 would leave a gap/);
    const inserted = await newImage(p, 3);
    assert.deepEqual(await furtherRun(p), [inserted, first], 'the new image took place 3; the old one moved up');
    const refusedMerge = await send('MERGE', `/ProductImages(${first}L)`, { Type: 9 });
    assert.equal(refusedMerge.status, 400, refusedMerge.body);
    assert.deepEqual(await furtherRun(p), [inserted, first], 'a refused write renumbers nothing');
  });

  test('changing a Type moves the image within the run, in both directions', async () => {
    const p = await newProduct();
    const ids = [];
    for (const t of [3, 4, 5, 6]) ids.push(await newImage(p, t));
    assert.equal((await send('MERGE', `/ProductImages(${ids[0]}L)`, { Type: 5 })).status, 204);
    assert.deepEqual(await furtherRun(p), [ids[1], ids[2], ids[0], ids[3]]);
    assert.equal((await send('MERGE', `/ProductImages(${ids[3]}L)`, { Type: 3 })).status, 204);
    assert.deepEqual(await furtherRun(p), [ids[3], ids[1], ids[2], ids[0]]);
    // To the list image slot: it leaves the run, which closes up.
    assert.equal((await send('MERGE', `/ProductImages(${ids[1]}L)`, { Type: 1 })).status, 204);
    assert.deepEqual(await furtherRun(p), [ids[3], ids[2], ids[0]]);
  });

  test('moving an image to another product closes the gap in one and takes its place in the other', async () => {
    const p = await newProduct();
    const q = await newProduct();
    const ps = [await newImage(p, 3), await newImage(p, 4), await newImage(p, 5)];
    const qs = [await newImage(q, 3)];
    assert.equal((await send('MERGE', `/ProductImages(${ps[0]}L)`, { ProductId: q, Type: 4 })).status, 204);
    assert.deepEqual(await furtherRun(p), [ps[1], ps[2]]);
    assert.deepEqual(await furtherRun(q), [qs[0], ps[0]]);
    const gap = await send('MERGE', `/ProductImages(${ps[2]}L)`, { ProductId: q, Type: 6 });
    assert.equal(gap.status, 400, gap.body);
    assert.deepEqual(await furtherRun(p), [ps[1], ps[2]], 'a refused move leaves both products as they were');
    assert.deepEqual(await furtherRun(q), [qs[0], ps[0]]);
  });

  test('at most 10 further images: an 11th is refused whatever its Type', async () => {
    const p = await newProduct();
    for (let t = 3; t <= 12; t++) await newImage(p, t);
    const res = await send('POST', '/ProductImages', { ProductId: p, ImageUrl: url('eleventh'), Type: 3 });
    assert.equal(res.status, 400, res.body);
    assert.match(errorMessage(res), /at most 10 further images/);
    assert.equal((await furtherRun(p)).length, 10);
  });

  test('a $batch changeset that replaces image 3 (DELETE, then POST of Type 3) keeps the run', async () => {
    const p = await newProduct();
    const ids = [await newImage(p, 3), await newImage(p, 4), await newImage(p, 5)];
    const res = await postBatch(
      live,
      seller,
      batchBody([
        changesetPart([
          jsonOperation('DELETE', `ProductImages(${ids[0]}L)`, 1),
          jsonOperation('POST', 'ProductImages', 2, { ProductId: p, ImageUrl: url('new-3'), Type: 3 }),
        ]),
      ]),
    );
    const answers = changesetAnswers(readBatchAnswer(res)[0]);
    assert.deepEqual(answers.map((a) => a.status), [204, 201]);
    const created = String((JSON.parse(answers[1]!.body) as { d: Json }).d.Id);
    assert.deepEqual(await furtherRun(p), [created, ids[1], ids[2]]);
  });
});

// ---------------------------------------------------------------------------------------------
// The property test

/** Model of one product's images: the slots 1 and 2, and the further images in order. */
interface ProductModel {
  slots: Map<number, string>;
  further: string[];
}

type Step =
  | { readonly kind: 'create'; readonly product: number; readonly type: number }
  | { readonly kind: 'retype'; readonly pick: number; readonly type: number }
  | { readonly kind: 'move'; readonly pick: number; readonly product: number; readonly type: number | undefined }
  | { readonly kind: 'delete'; readonly pick: number };

type Command = Step | { readonly kind: 'batch'; readonly steps: readonly Step[] };

// Mostly Types near the start of the run, so that most writes succeed; sometimes any Type, for the gaps.
const imageType = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 12 }) });
const productIndex = fc.integer({ min: 0, max: 1 });
const pick = fc.nat(40);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('create' as const), product: productIndex, type: imageType }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('retype' as const), pick, type: imageType }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('move' as const), pick, product: productIndex, type: fc.option(imageType, { nil: undefined }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick }) },
);
const command: fc.Arbitrary<Command> = fc.oneof({ weight: 6, arbitrary: step }, { weight: 1, arbitrary: fc.record({ kind: fc.constant('batch' as const), steps: fc.array(step, { minLength: 2, maxLength: 4 }) }) });

/** The statuses the model expects: 2xx, 400 (a gap or the limit) or 409 (an occupied slot). */
type Outcome = 'ok' | 400 | 409;

class World {
  readonly products: ProductModel[] = [
    { slots: new Map(), further: [] },
    { slots: new Map(), further: [] },
  ];

  constructor(readonly productIds: readonly string[]) {}

  clone(): World {
    const w = new World(this.productIds);
    this.products.forEach((p, i) => {
      w.products[i] = { slots: new Map(p.slots), further: [...p.further] };
    });
    return w;
  }

  images(): { id: string; product: number; type: number }[] {
    const out: { id: string; product: number; type: number }[] = [];
    this.products.forEach((p, product) => {
      for (const [type, id] of p.slots) out.push({ id, product, type });
      p.further.forEach((id, i) => out.push({ id, product, type: 3 + i }));
    });
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  private remove(id: string): void {
    for (const p of this.products) {
      for (const [t, i] of p.slots) if (i === id) p.slots.delete(t);
      p.further = p.further.filter((i) => i !== id);
    }
  }

  /** Places an image (not placed anywhere) as the rule says, or answers why it cannot. */
  private place(id: string, product: number, type: number): Outcome {
    const p = this.products[product]!;
    if (type < 3) {
      if (p.slots.has(type)) return 409;
      p.slots.set(type, id);
      return 'ok';
    }
    if (p.further.length >= 10 || type - 3 > p.further.length) return 400;
    p.further.splice(type - 3, 0, id);
    return 'ok';
  }

  create(id: string, product: number, type: number): Outcome {
    return this.place(id, product, type);
  }

  update(id: string, product: number, type: number): Outcome {
    this.remove(id);
    return this.place(id, product, type);
  }

  delete(id: string): void {
    this.remove(id);
  }
}

/** The request of a step against the current world, and how the model answers it (on a copy). */
function plan(world: World, s: Step, newId: string): { method: string; target: string; body?: Json; apply: (w: World) => Outcome } | undefined {
  // Images created earlier in the same changeset have no id yet: only stored ones are picked.
  const images = world.images().filter((i) => /^\d+$/.test(i.id));
  if (s.kind === 'create') {
    const product = world.productIds[s.product]!;
    return { method: 'POST', target: 'ProductImages', body: { ProductId: product, ImageUrl: url(newId), Type: s.type }, apply: (w) => w.create(newId, s.product, s.type) };
  }
  if (images.length === 0) return undefined;
  const image = images[s.pick % images.length]!;
  const target = `ProductImages(${image.id}L)`;
  switch (s.kind) {
    case 'retype':
      return { method: 'MERGE', target, body: { Type: s.type }, apply: (w) => w.update(image.id, image.product, s.type) };
    case 'move': {
      const type = s.type ?? image.type;
      return { method: 'MERGE', target, body: { ProductId: world.productIds[s.product], ...(s.type === undefined ? {} : { Type: s.type }) }, apply: (w) => w.update(image.id, s.product, type) };
    }
    case 'delete':
      return { method: 'DELETE', target, apply: (w) => (w.delete(image.id), 'ok') };
  }
}

const outcomeOf = (status: number): Outcome => (status >= 200 && status < 300 ? 'ok' : status === 400 ? 400 : status === 409 ? 409 : (assert.fail(`unexpected status ${status}`) as never));

async function checkWorld(world: World): Promise<void> {
  for (const [i, product] of world.productIds.entries()) {
    const byType = await imagesOf(product);
    const further = await furtherRun(product);
    const m = world.products[i]!;
    assert.deepEqual(further, m.further, `product ${product}: the further images in the model's order`);
    assert.deepEqual(new Map([...byType].filter(([t]) => t < 3)), m.slots, `product ${product}: the slots 1 and 2`);
  }
}

test('random creates, Type changes, moves and deletes of images, alone and in changesets, keep every product\'s further images consecutive from 3', async (t) => {
  const runs = byTier(25, 200);
  let commands = 0;
  let batches = 0;
  const statuses = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 30 }), async (cmds) => {
      let world = new World([await newProduct(), await newProduct()]);
      // Each run starts with further images in both products: Types 3 and 4 in the first, 3 in the second.
      for (const [product, type] of [[0, 3], [0, 4], [1, 3]] as const) {
        const id = await newImage(world.productIds[product]!, type);
        assert.equal(world.create(id, product, type), 'ok');
      }
      let counter = 0;
      for (const c of cmds) {
        commands++;
        if (c.kind === 'batch') {
          // The changeset runs its steps in order in one transaction; one failure undoes all of them.
          const expected = world.clone();
          const operations: string[] = [];
          const placeholders: string[] = [];
          let outcome: Outcome = 'ok';
          for (const s of c.steps) {
            const placeholder = `n${counter++}`;
            const p = plan(expected, s, placeholder);
            if (!p) continue;
            operations.push(jsonOperation(p.method, p.target, operations.length + 1, p.body));
            if (p.method === 'POST') placeholders.push(placeholder);
            outcome = p.apply(expected);
            if (outcome !== 'ok') break;
          }
          if (operations.length === 0) continue;
          batches++;
          const answer = readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart(operations)])))[0];
          if (outcome === 'ok') {
            // The created images get the ids the service gave them, in the order of their POSTs.
            const createdIds = changesetAnswers(answer)
              .filter((a) => a.status === 201)
              .map((a) => String((JSON.parse(a.body) as { d: Json }).d.Id));
            assert.equal(createdIds.length, placeholders.length);
            placeholders.forEach((placeholder, i) => renameIn(expected, placeholder, createdIds[i]!));
            world = expected;
          } else {
            const single = singleAnswer(answer);
            assert.equal(outcomeOf(single.status), outcome, errorMessageOf(single));
          }
          statuses.set(`batch ${String(outcome)}`, (statuses.get(`batch ${String(outcome)}`) ?? 0) + 1);
        } else {
          const p = plan(world, c, 'new');
          if (!p) continue;
          const res = await send(p.method, `/${p.target}`, p.body);
          const expected = world.clone();
          const outcome = p.apply(expected);
          assert.equal(outcomeOf(res.status), outcome, `${p.method} ${p.target} ${JSON.stringify(p.body)}: ${res.body}`);
          if (outcome === 'ok') {
            if (p.method === 'POST') renameIn(expected, 'new', String((JSON.parse(res.body) as { d: Json }).d.Id));
            world = expected;
          }
          statuses.set(`${c.kind} ${String(outcome)}`, (statuses.get(`${c.kind} ${String(outcome)}`) ?? 0) + 1);
        }
        await checkWorld(world);
      }
    }),
    { numRuns: runs, ...(process.env.TEST_SEED ? { seed: Number(process.env.TEST_SEED) } : {}) },
  );
  t.diagnostic(`${runs} runs, ${commands} commands (${batches} changesets): ${JSON.stringify(Object.fromEntries(statuses))}`);
  // The generator reached every kind of answer, so the property is not vacuous.
  for (const key of ['create ok', 'create 400', 'retype ok', 'move ok', 'delete ok', 'batch ok']) assert.ok((statuses.get(key) ?? 0) > 0, `${key}: ${JSON.stringify([...statuses])}`);
  assert.ok(commands > runs * 5 && batches > 0);
});

function renameIn(world: World, from: string, to: string): void {
  for (const p of world.products) {
    for (const [t, id] of p.slots) if (id === from) p.slots.set(t, to);
    p.further = p.further.map((id) => (id === from ? to : id));
  }
}
