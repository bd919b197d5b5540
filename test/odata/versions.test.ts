/**
 * readVersionHeaders: a request that declares no version gets version 2.0 answers under the
 * default policy (auto), one that declares any keeps the lowest version that carries the answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseResponseVersion, readVersionHeaders } from '../../src/odata/negotiate';

const headers = (given: Record<string, string>) => (name: string) => Object.entries(given).find(([n]) => n.toLowerCase() === name)?.[1];
const answered = (given: Record<string, string>, policy?: 'auto' | 'lowest' | 'highest') => chooseResponseVersion(readVersionHeaders(headers(given), policy), 1);

test('auto: no version header at all (or only empty ones) answers 2.0', () => {
  assert.equal(answered({}), 2);
  assert.equal(answered({ DataServiceVersion: '', MaxDataServiceVersion: ' ' }), 2);
});

test('auto: any one version header keeps the lowest version, as the connectors read it', () => {
  const declaring: Record<string, string>[] = [{ DataServiceVersion: '2.0' }, { MaxDataServiceVersion: '3.0' }, { MinDataServiceVersion: '1.0' }, { DataServiceVersion: '2.0', MaxDataServiceVersion: '3.0' }, { DataServiceVersion: '1.0;NetFx', MaxDataServiceVersion: '2.0;NetFx' }];
  for (const declared of declaring) {
    assert.equal(answered(declared), 1, JSON.stringify(declared));
  }
  assert.equal(answered({ MinDataServiceVersion: '2.0' }), 2);
});

test('lowest and highest override it', () => {
  assert.equal(answered({}, 'lowest'), 1);
  assert.equal(answered({ DataServiceVersion: '2.0', MaxDataServiceVersion: '3.0' }, 'highest'), 2);
  assert.equal(answered({ MaxDataServiceVersion: '1.0' }, 'highest'), 1);
});

test('the headers are read once per combination of values: which header holds a value still counts, and a refused value is refused every time', () => {
  // The same value in another header is another combination (a key made of the values alone would mix them up).
  for (let i = 0; i < 2; i++) {
    assert.equal(answered({ DataServiceVersion: '1.0' }, 'highest'), 2);
    assert.equal(answered({ MaxDataServiceVersion: '1.0' }, 'highest'), 1);
    assert.equal(answered({ MinDataServiceVersion: '2.0' }, 'lowest'), 2);
    assert.equal(answered({ DataServiceVersion: '', MaxDataServiceVersion: '1.0' }, 'highest'), 1);
    assert.equal(answered({ DataServiceVersion: '1.0', MaxDataServiceVersion: '' }, 'highest'), 2);
    assert.throws(() => answered({ DataServiceVersion: '3.0' }), /DataServiceVersion '3\.0' is not supported/);
  }
});
