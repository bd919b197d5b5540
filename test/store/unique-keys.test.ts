/**
 * Every unique key of the model is enforced alike on both engines, whether or not anything checks
 * it before the write: a second row with the same key values, written straight through the store
 * (no rule runs there, as for the platform's rows), fails with the key's UniqueKeyViolation rather
 * than the engine's raw error (SQLITE_CONSTRAINT_UNIQUE, SQLSTATE 23505), and the service edge
 * answers it with 409 and the key's message. So a key
 * added to the model needs no hand-written check to answer correctly. Over HTTP the generic check
 * (catalogue/rules.ts) answers a duplicate with the same status and message.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { uniqueKeyMessage } from '../../src/model/define';
import { UniqueKeyViolation } from '../../src/model/rule-violation';
import type { EntityTypeDef, PropertyDef, UniqueKey } from '../../src/model/types';
import type { EdmValue } from '../../src/odata/edm';
import { errorReply } from '../../src/service/error-reply';
import { newRow, type RowDelivery } from '../../src/platform/delivery';
import { asSeller, newSeller, startLive, storeRow, type LiveService, type Seller } from '../support/live-service';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live);
});
after(() => live.close());

const model = () => live.service.app.model;
let counter = 0;

/** A value of the property's type, different on every call (so only the key can collide). */
function someValue(p: PropertyDef): EdmValue {
  const n = ++counter;
  switch (p.type) {
    case 'Edm.String':
      return `${p.name}-${n}`;
    case 'Edm.Int32':
      return 1 + (n % 5);
    case 'Edm.Int64':
      return BigInt(n);
    case 'Edm.Decimal':
      return String(n);
    case 'Edm.Boolean':
      return false;
    case 'Edm.DateTime':
      return Date.UTC(2026, 0, 1) + n;
  }
}

/** A stored row of `type` with every non-nullable property set and its references pointing at rows stored first. */
async function values(type: EntityTypeDef, fixed: Readonly<Record<string, EdmValue>> = {}): Promise<Record<string, EdmValue>> {
  const row: Record<string, EdmValue> = {};
  for (const r of model().relations) {
    if (r.kind !== 'reference' || r.dependent !== type.name || r.foreignKey in fixed) continue;
    const principal = model().typeByName.get(r.principal)!;
    row[r.foreignKey] = await storeRow(live, seller.accountId, principal, await values(principal));
  }
  for (const p of type.properties) {
    if (p.access === 'key' || p.timestamp || p.name in row) continue;
    if (!p.nullable && p.defaultValue === undefined) row[p.name] = someValue(p);
  }
  return { ...row, ...fixed };
}

const keyed = () => model().entityTypes.flatMap((type) => type.uniqueKeys.map((key) => ({ type, key })));

describe('a duplicate of any unique key, written where no rule checks it', () => {
  test('every type with a key is covered', () => {
    assert.ok(keyed().length >= 10, `the model declares ${keyed().length} unique keys`);
  });

  test('fails with the key\'s violation on this engine, answered with its status and message', async () => {
    for (const { type, key } of keyed()) {
      const first = await values(type);
      // Every key property (reference or not) as in the first row, everything else new.
      const same: Record<string, EdmValue> = {};
      for (const name of key.properties) same[name] = first[name] ?? null;
      for (const name of key.properties) if (same[name] === null) same[name] = first[name] = someValue(type.properties.find((p) => p.name === name)!);
      await storeRow(live, seller.accountId, type, first);
      const second = await values(type, same);
      let caught: unknown;
      await storeRow(live, seller.accountId, type, second).catch((error: unknown) => (caught = error));
      assert.ok(caught instanceof UniqueKeyViolation, `${type.name} (${key.properties.join(', ')}): ${String(caught)}`);
      assert.equal(caught.type, type);
      assert.equal(caught.key, key);
      const reply = errorReply(caught, 'json', 'test');
      assert.equal(reply.status, 409, `${type.name}: ${String(reply.body)}`);
      const message = (JSON.parse(String(reply.body)) as { error: { message: { value: string } } }).error.message.value;
      assert.equal(message, uniqueKeyMessage(key, second, (v) => v));
    }
  });

  test('statements sent together (a deep insert\'s tree): the first that collides is the violation reported, and nothing of them stays', async () => {
    const app = live.service.app;
    const products = model().typeByName.get('Product')!;
    const specifics = model().typeByName.get('ProductSpecific')!;
    const images = model().typeByName.get('ProductImage')!;
    const taken = await values(specifics);
    await storeRow(live, seller.accountId, specifics, taken);
    const nameKey = specifics.uniqueKeys[0]!;
    assert.deepEqual(nameKey.properties, ['ProductId', 'Name']);
    const newProduct = await values(products);
    const specific = await values(specifics, { ProductId: taken.ProductId!, Name: taken.Name! });
    let caught: unknown;
    let productId = 0n;
    await app.store
      .write(seller.accountId, async (tx) => {
        const [id, specificId, imageId] = await app.store.nextIds(tx, 3);
        productId = id!;
        // Complete rows, defaults and dates included, as a deep insert stores them.
        const row = (type: EntityTypeDef, id: bigint, given: Readonly<Record<string, EdmValue>>) => newRow({ now: app.clock.now() } as RowDelivery, type, id, given);
        await app.entities.insertManyTogether(tx, seller.accountId, [
          { type: products, rows: [row(products, productId, newProduct)] },
          // The same Name under the same product as the stored specific; the image after it fails too.
          { type: specifics, rows: [row(specifics, specificId!, specific)] },
          { type: images, rows: [row(images, imageId!, await values(images, { ProductId: productId }))] },
        ]);
      })
      .catch((error: unknown) => (caught = error));
    assert.ok(caught instanceof UniqueKeyViolation, String(caught));
    assert.equal(caught.type, specifics);
    assert.equal(caught.key, nameKey);
    const stored = await app.store.read(seller.accountId, (tx) => app.entities.find(tx, seller.accountId, products, productId));
    assert.equal(stored, undefined, 'the new product was undone with the rest');
  });

  test('keys without a message of their own name their properties', () => {
    const plain = keyed().filter(({ type }) => ['SalesOrder', 'SalesOrderItem', 'Listing'].includes(type.name));
    assert.ok(plain.length > 0);
    for (const { type, key } of plain) {
      for (const name of key.properties) assert.ok(key.message.includes(name), `${type.name}: ${key.message}`);
    }
  });
});

describe('a duplicate over HTTP', () => {
  test('is answered by the generic check with the key\'s status and message from the model', async () => {
    const json = { Accept: 'application/json', 'Content-Type': 'application/json' };
    const post = (set: string, body: Record<string, unknown>) => asSeller(seller, `${live.root}/${set}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
    const product = await post('Products', { Title: 'Keyed', Price: '1', StockAmount: 1 });
    assert.equal(product.status, 201, product.body);
    const productId = (JSON.parse(product.body) as { d: { Id: string } }).d.Id;
    const variation = { ProductId: productId, Price: '2', StockAmount: 1, Sku: 'KEY-1' };
    assert.equal((await post('ProductVariations', variation)).status, 201);
    const duplicate = await post('ProductVariations', variation);
    const key: UniqueKey = model().typeByName.get('ProductVariation')!.uniqueKeys[0]!;
    assert.equal(duplicate.status, 409, duplicate.body);
    assert.equal((JSON.parse(duplicate.body) as { error: { message: { value: string } } }).error.message.value, uniqueKeyMessage(key, { Sku: 'KEY-1' }));
  });
});
