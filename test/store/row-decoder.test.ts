/**
 * The row decoder that EntityStore compiles per entity type: every column lands under its own
 * property name, in model order, and the version after them. A name the compiled literal could
 * not hold as a plain member (`__proto__` would set the prototype) is refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import type { EntityTypeDef } from '../../src/model/types';
import { EntityStore } from '../../src/store/entities';
import type { Store } from '../../src/store/store';
import { sqliteCodec } from '../../src/store/sqlite/codec';
import { pgCodec } from '../../src/store/postgres/values';

const codecs = { sqlite: sqliteCodec, postgres: pgCodec };

test('every column of every type decodes under its own property name, in model order, with the version after them', () => {
  for (const [engine, codec] of Object.entries(codecs)) {
    const entities = new EntityStore(model, { codec } as unknown as Store);
    for (const type of model.entityTypes) {
      // A String column holds its property's name, every other column null: a value under the
      // wrong name, or a name missing, shows.
      const row = [...type.properties.map((p) => (p.type === 'Edm.String' ? p.name : null)), 7n];
      const decoded = entities.decodeRow(type, row);
      assert.deepEqual(Object.keys(decoded.values), type.properties.map((p) => p.name), `${engine}: ${type.name}`);
      for (const p of type.properties) assert.equal(decoded.values[p.name], p.type === 'Edm.String' ? p.name : null, `${engine}: ${type.name}.${p.name}`);
      assert.equal(decoded.version, 7n);
      assert.equal(decoded.type, type);
      assert.equal(Object.getPrototypeOf(decoded.values), Object.prototype);
    }
  }
});

test('a property name the compiled decoder cannot hold as a member is refused', () => {
  const product = model.typeByName.get('Product')!;
  const entities = new EntityStore(model, { codec: sqliteCodec } as unknown as Store);
  for (const name of ['__proto__', 'Title"', 'a b']) {
    const type: EntityTypeDef = { ...product, name: `Odd${name.length}`, properties: [...product.properties, { ...product.properties[1]!, name }] };
    assert.throws(() => entities.decodeRow(type, []), /is not a property name a compiled function can hold/, name);
  }
});
