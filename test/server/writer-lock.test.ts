/**
 * While another process holds SQLite's write lock (an operator's sqlite3, a backup tool), what
 * can be judged without the database is answered at once: a malformed body is a 400 and a POST
 * to a read-only set a 405, because writes are planned before they wait for the writer. A valid
 * write that cannot get the lock within the busy timeout is a 503 with Retry-After and an OData
 * error, never a 500, and nothing of it is written. SQLite only: PostgreSQL has no single writer.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { batchBody, changesetPart, errorMessageOf, jsonOperation, postBatch, readBatchAnswer, singleAnswer } from '../batch/support';
import { testEngine } from '../support/test-database';

/** Another process that takes the write lock (BEGIN IMMEDIATE) and keeps it until told to stop. */
async function holdWriteLock(file: string): Promise<{ release(): Promise<void> }> {
  const script = `
    const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
    const db = new Database(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    process.stdin.on('data', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });
  `;
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['-e', script]);
  const [first] = (await once(child.stdout, 'data')) as [Buffer];
  assert.equal(first.toString().trim(), 'locked');
  return {
    async release() {
      child.stdin.write('release\n');
      await once(child, 'exit');
    },
  };
}

function odataMessage(body: string): string {
  return (JSON.parse(body) as { error: { message: { value: string } } }).error.message.value;
}

describe('writes while another process holds the SQLite write lock', { skip: testEngine !== 'sqlite' && 'SQLite only' }, () => {
  let live: LiveService;
  let seller: Seller;
  const products = () => `${live.root}/Products`;
  const json = { Accept: 'application/json', 'Content-Type': 'application/json' };
  const product = JSON.stringify({ Title: 'Held back', Price: '9.99', StockAmount: 1 });

  before(async () => {
    live = await startLive();
    seller = await newSeller(live);
  });
  after(async () => {
    // The one 503 the test expects is not a fault; any other 5xx still fails the suite at close.
    const expected = live.logLines.findIndex((line) => line.status === 503);
    if (expected >= 0) live.logLines.splice(expected, 1);
    await live.close();
  });

  test('a malformed body is 400 and a POST to a read-only set 405 at once; a valid write is 503 with Retry-After', async () => {
    const countBefore = (await asSeller(seller, `${products()}/$count`)).body;
    const lock = await holdWriteLock(live.database.file!);
    try {
      const malformed = await asSeller(seller, products(), { method: 'POST', headers: json, body: '{"Title": "no end' });
      assert.equal(malformed.status, 400, malformed.body);
      assert.match(odataMessage(malformed.body), /JSON/i);

      const readOnly = await asSeller(seller, `${live.root}/Buyers`, { method: 'POST', headers: json, body: '{"Name": "x"}' });
      assert.equal(readOnly.status, 405, readOnly.body);
      assert.equal(readOnly.headers.allow, 'GET, HEAD');

      // A changeset is planned whole before it takes the writer: its second operation's body
      // (a MERGE of `$1`, the entity the first would create) is malformed JSON, so none runs.
      const changeset = changesetPart([
        jsonOperation('POST', 'Products', 1, { Title: 'First of two', Price: '1', StockAmount: 1 }),
        jsonOperation('MERGE', '$1', 2).replace(/\r\n$/, '\r\n{"Title": "no end'),
      ]);
      const batch = await postBatch(live, seller, batchBody([changeset]));
      assert.equal(batch.status, 202, batch.body);
      const failed = singleAnswer(readBatchAnswer(batch)[0]);
      assert.equal(failed.status, 400, failed.body);
      assert.match(errorMessageOf(failed), /JSON/i);

      const unsupported = await asSeller(seller, products(), { method: 'POST', headers: { ...json, 'Content-Type': 'text/csv' }, body: 'a,b' });
      assert.equal(unsupported.status, 415, unsupported.body);

      const valid = await asSeller(seller, products(), { method: 'POST', headers: json, body: product });
      assert.equal(valid.status, 503, valid.body);
      assert.match(String(valid.headers['retry-after']), /^\d+$/);
      assert.match(String(valid.headers['content-type']), /^application\/json/);
      assert.match(odataMessage(valid.body), /busy; nothing was written/);
    } finally {
      await lock.release();
    }
    // Nothing of the refused write was kept, and the same write succeeds once the lock is gone.
    assert.equal((await asSeller(seller, `${products()}/$count`)).body, countBefore);
    const retried = await asSeller(seller, products(), { method: 'POST', headers: json, body: product });
    assert.equal(retried.status, 201, retried.body);
    assert.equal(live.logLines.filter((line) => typeof line.status === 'number' && line.status >= 500).length, 1, 'the busy write is the only 5xx');
  });
});
