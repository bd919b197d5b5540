/**
 * EntityStore.update given the version the write read (storedVersion). On PostgreSQL, inside a
 * write that may run again, the UPDATE goes out without being waited for and the new version is
 * answered from the one read; the statement is verified against that version, so that a wrong
 * one fails it, and the write runs again, waiting, and answers what the database holds. SQLite
 * waits for every statement: the same answers, each write run once. Against a real server.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import { EntityStore } from '../../src/store/entities';
import { openStore } from '../../src/store/open';
import type { Store } from '../../src/store/store';
import { freshDatabase, testEngine, type TestDatabase } from '../support/test-database';

const catalog = model.typeByName.get('Catalog')!;
const ACCOUNT = 31;

describe('an UPDATE given the version its write read', () => {
  let database: TestDatabase;
  let store: Store;
  let entities: EntityStore;
  const commits: number[] = [];

  before(async () => {
    database = await freshDatabase();
    // Which writes share a batch is then up to the test alone (see postgres-group-commit.test.ts).
    store = openStore(database.url, { ownerUrl: database.ownerUrl, batchTimeBudgetMs: 60_000 });
    await store.migrate();
    store.observeCommits((writes) => commits.push(writes));
    entities = new EntityStore(model, store);
    const epoch = store.codec.encode('Edm.DateTime', 0);
    await store.write(ACCOUNT, async (tx) => {
      for (const id of [1n, 2n]) {
        await tx.run(`INSERT INTO catalogs (account_id, id, name, is_root_level, creation_date, modification_date) VALUES (?, ?, ?, ?, ?, ?)`, [ACCOUNT, id, `c${id}`, 'true', epoch, epoch]);
      }
    });
  });
  after(() => store?.close());

  const stored = (id: bigint) => store.read(ACCOUNT, (tx) => entities.find(tx, ACCOUNT, catalog, id));

  /** A write that may run again and renames catalog `id`, telling the store `version` was read; counts its runs. */
  const rename = (id: bigint, name: string, version: bigint, runs: Map<string, number>) =>
    store.write(
      ACCOUNT,
      async (tx) => {
        runs.set(name, (runs.get(name) ?? 0) + 1);
        return entities.update(tx, ACCOUNT, catalog, id, { Name: name }, undefined, version);
      },
      { repeatable: true },
    );

  test('the version read: answered one above it, each write run once', async () => {
    const before = (await stored(1n))!.version!;
    const runs = new Map<string, number>();
    commits.length = 0;
    const answers = await Promise.all([rename(1n, 'first', before, runs), rename(1n, 'second', before + 1n, runs)]);
    assert.deepEqual(answers, [before + 1n, before + 2n]);
    assert.deepEqual(commits, [2], 'one batch');
    assert.deepEqual(Object.fromEntries(runs), { first: 1, second: 1 });
    const after = (await stored(1n))!;
    assert.equal(after.values.Name, 'second');
    assert.equal(after.version, before + 2n);
  });

  test('a version other than the row holds: the change is made once and answered with the version the database made', async () => {
    const before = (await stored(2n))!.version!;
    const otherBefore = (await stored(1n))!.version!;
    const runs = new Map<string, number>();
    commits.length = 0;
    const answers = await Promise.all([
      rename(2n, 'stale', before - 1n, runs),
      // A write after it in the same batch runs again with it on PostgreSQL, and ends the same.
      rename(1n, 'after stale', otherBefore, runs),
    ]);
    assert.equal(answers[1], otherBefore + 1n);
    assert.equal(answers[0], before + 1n, 'the version the UPDATE made, not one guessed from the stale one');
    assert.deepEqual(commits, [2], 'one batch');
    const after = (await stored(2n))!;
    assert.equal(after.values.Name, 'stale');
    assert.equal(after.version, before + 1n, 'changed once');
    assert.equal((await stored(1n))!.values.Name, 'after stale');
    // PostgreSQL's verified UPDATE failed, and the batch went back to the stale write's savepoint.
    assert.deepEqual(Object.fromEntries(runs), testEngine === 'postgres' ? { stale: 2, 'after stale': 2 } : { stale: 1, 'after stale': 1 });
  });

  test('a row that is not there: the write answers no version, as without the version read', async () => {
    const runs = new Map<string, number>();
    assert.equal(await rename(99n, 'missing', 1n, runs), undefined);
    assert.deepEqual(Object.fromEntries(runs), { missing: testEngine === 'postgres' ? 2 : 1 });
    assert.equal(await stored(99n), undefined);
  });
});
