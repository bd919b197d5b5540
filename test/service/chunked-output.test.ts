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

/** An output whose sent bytes are collected: what went to write(), then what went to end(). */
function collected(): { out: ChunkedOutput; sent: () => Buffer[] } {
  const chunks: Buffer[] = [];
  const out = new ChunkedOutput({ write: async (chunk) => void chunks.push(chunk), end: (chunk) => void (chunk && chunks.push(chunk)) });
  return { out, sent: () => chunks };
}

test('a small answer leaves as an exact copy, not as a view of a 128 KiB buffer (each of those is external memory V8 counts towards a full collection)', async () => {
  for (const length of [100, 20_000]) {
    const { out, sent } = collected();
    out.append('y'.repeat(length));
    await out.end();
    const [only, ...more] = sent();
    assert.equal(more.length, 0);
    assert.equal(only!.toString('utf8'), 'y'.repeat(length));
    assert.ok(only!.buffer.byteLength < 128 * 1024, `${length} bytes went out in an allocation of ${only!.buffer.byteLength} bytes`);
  }
});

test('the buffer a small answer gives back is reused by the next answer, and what the first one sent stays as it was', async () => {
  const first = collected();
  first.out.append('{"first":"' + 'a'.repeat(5_000) + '"}');
  await first.out.end();
  const second = collected();
  second.out.append('{"second":"' + 'b'.repeat(5_000) + '"}');
  await second.out.end();
  assert.equal(Buffer.concat(first.sent()).toString('utf8'), '{"first":"' + 'a'.repeat(5_000) + '"}');
  assert.equal(Buffer.concat(second.sent()).toString('utf8'), '{"second":"' + 'b'.repeat(5_000) + '"}');
});

test('an answer of several buffers, its last one small or large, and an empty answer come out whole and in order', async () => {
  for (const tail of [10, 100_000]) {
    const { out, sent } = collected();
    const piece = 'z'.repeat(1_000) + ',';
    let text = '';
    for (let i = 0; i < 300; i++) {
      out.append(piece);
      text += piece;
      if (out.filled) await out.drain();
    }
    out.append('t'.repeat(tail));
    text += 't'.repeat(tail);
    await out.end();
    assert.ok(sent().length >= 3, `${sent().length} chunks`);
    assert.equal(Buffer.concat(sent()).toString('utf8'), text);
  }
  const empty = collected();
  await empty.out.end();
  assert.equal(Buffer.concat(empty.sent()).length, 0);
});

test('ending an output twice gives nothing back twice: the next answer still gets a whole buffer', async () => {
  const once = collected();
  once.out.append('x');
  await once.out.end();
  await once.out.end();
  // Were an empty buffer among the spares, this answer would leave in pieces of one append each.
  const next = collected();
  for (let i = 0; i < 10; i++) next.out.append('y'.repeat(1000));
  await next.out.end();
  assert.equal(next.sent().length, 1);
  assert.equal(Buffer.concat(next.sent()).toString('utf8'), 'y'.repeat(10_000));
});
