/**
 * The two ways each writer builds an entity give the same text. An entity without expansions or
 * $select is written by functions compiled per type (all properties, every navigation deferred
 * in one string); one with a $select goes member by member. Naming every property and navigation
 * in $select must therefore change nothing, for every entity type of the model, whatever its
 * values (absent ones, text outside ASCII, text that needs escaping).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../src/model/catalogue-model';
import type { EdmType, EntityTypeDef } from '../../src/model/types';
import type { EdmValue } from '../../src/odata/edm';
import type { EntityRecord, WriteContext } from '../../src/odata/entity';
import { jsonEntity } from '../../src/odata/json/writer';
import { atomEntry } from '../../src/odata/atom/writer';

const ROOT = 'http://localhost:8080/publicapi/v1/api.svc';
const UPDATED = '2024-05-01T10:00:00Z';

const TEXTS = ['plain', 'Größe – 20 €', 'a "quoted" <b>&amp;</b> \\ /', ' padded ', '😀', ''];

/** A value of `type` for the n-th case: every third one absent. */
function valueOf(type: EdmType, n: number): EdmValue {
  if (n % 3 === 2) return null;
  switch (type) {
    case 'Edm.Int64':
      return BigInt(n) * 9_007_199_254_740_993n;
    case 'Edm.Int32':
      return n % 2 === 0 ? n : -n;
    case 'Edm.Decimal':
      return n % 2 === 0 ? `${n}.5` : String(n);
    case 'Edm.Boolean':
      return n % 2 === 0;
    case 'Edm.DateTime':
      return 1325419200000 + n * 1000;
    case 'Edm.String':
      return TEXTS[n % TEXTS.length]!;
  }
}

function recordOf(type: EntityTypeDef, seed: number): EntityRecord {
  const values: Record<string, EdmValue> = {};
  type.properties.forEach((p, i) => (values[p.name] = valueOf(p.type, seed + i)));
  values['Id'] = BigInt(seed + 1);
  return { type, values, version: BigInt(seed + 3) };
}

/** $select naming every property and navigation of the type, without `*`. */
const everything = (type: EntityTypeDef): ReadonlySet<string> => new Set([...type.properties.map((p) => p.name), ...type.navigations.map((n) => n.name)]);

for (const [format, write] of [
  ['JSON', jsonEntity],
  ['Atom', atomEntry],
] as const) {
  test(`${format}: an entity written whole equals the same entity with every member named in $select, for every type`, () => {
    for (const version of [1, 2] as const) {
      const whole: WriteContext = { serviceRoot: ROOT, version, updated: UPDATED };
      for (const type of model.entityTypes) {
        const selected: WriteContext = { ...whole, select: everything(type) };
        for (let seed = 0; seed < 6; seed++) {
          const rec = recordOf(type, seed);
          assert.equal(write(whole, rec), write(selected, rec), `${type.name}, seed ${seed}, version ${version}`);
        }
      }
    }
  });
}
