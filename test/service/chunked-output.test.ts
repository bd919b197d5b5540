/**
 * ChunkedOutput (src/service/chunked-output.ts): text encoded into 128 KiB buffers as it comes.
 * A feed's writer asks `filled` after each entity and awaits drain() only then, so `filled` must
 * say true exactly while a full buffer waits, and the bytes must come out whole and in order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChunkedOutput } from '../../src/service/chunked-output';

test('filled: false while the text fits the current buffer, true once a buffer is full, false again after drain()', async () => {
  const written: Buffer[] = [];
  let ended: Buffer | undefined;
  const out = new ChunkedOutput({ write: async (chunk) => void written.push(chunk), end: (chunk) => void (ended = chunk) });
  const entity = `{"Title":"${'x'.repeat(1000)}"},`;
  let appended = 0;
  while (!out.filled) {
    out.append(entity);
    appended++;
    assert.ok(appended <= 200, 'a buffer of 128 KiB fills within 200 pieces of 1 KB');
  }
  // Most of 128 KiB: a buffer is sealed once the next piece of pending text (about 4096
  // characters, up to 3 bytes each) might not fit in what is left of it.
  assert.ok(appended * entity.length > 100 * 1024, `filled after ${appended} pieces`);
  assert.equal(written.length, 0, 'nothing is sent before drain()');
  await out.drain();
  assert.equal(out.filled, false);
  assert.equal(written.length, 1);
  out.append('"end"');
  await out.end();
  const bytes = Buffer.concat([...written, ...(ended ? [ended] : [])]).toString('utf8');
  assert.equal(bytes, entity.repeat(appended) + '"end"');
});
