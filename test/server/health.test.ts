/**
 * GET /health, as a load balancer calls it: 200 while the process reaches its database, 503 once
 * it cannot (here: its store is closed under it), no credentials needed, other methods 405.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../support/http-client';
import { startLive, type LiveService } from '../support/live-service';
import { testEngine } from '../support/test-database';

let live: LiveService;
before(async () => {
  live = await startLive();
});
// Not live.close(): that refuses any 5xx in the log, and the 503 below is the point of a test.
after(async () => {
  await live.service.close();
  const faults = live.logLines.filter((l) => typeof l.status === 'number' && l.status >= 500 && !(l.status === 503 && l.path === '/health'));
  assert.deepEqual(faults, []);
});

test('GET /health answers 200 with the engine, without credentials; HEAD too; POST is a 405', async () => {
  const res = await request(live.origin + '/health');
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.deepEqual(JSON.parse(res.body), { status: 'ok', database: testEngine });
  assert.equal((await request(live.origin + '/Health', { method: 'HEAD' })).status, 200);
  const post = await request(live.origin + '/health', { method: 'POST', body: '' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, 'GET, HEAD');
  assert.equal((await request(live.origin + '/health/deeper')).status, 405);
});

test('GET /health answers 503 when the database cannot be used', async () => {
  await live.service.app.store.close();
  const res = await request(live.origin + '/health');
  assert.equal(res.status, 503);
  assert.deepEqual(JSON.parse(res.body), { status: 'database unavailable', database: testEngine });
});
