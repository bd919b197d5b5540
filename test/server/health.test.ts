/**
 * /health and /health/ready, as a load balancer calls them (no credentials): /health says the
 * process is alive whatever its database does; /health/ready is 200 only while the database
 * answers and has every table and column the model needs, else 503. Neither body says more than
 * one word of state. Other methods and paths are 405.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import pg from 'pg';
import { request } from '../support/http-client';
import { startLive, type LiveService } from '../support/live-service';

let live: LiveService;
before(async () => {
  live = await startLive();
});
// Not live.close(): that refuses any 5xx in the log, and the 503s below are the point of a test.
after(async () => {
  await live.service.close();
  const faults = live.logLines.filter((l) => typeof l.status === 'number' && l.status >= 500 && !(l.status === 503 && l.path === '/health/ready'));
  assert.deepEqual(faults, []);
});

const get = async (path: string) => {
  const res = await request(live.origin + path);
  return { status: res.status, body: res.body === '' ? undefined : (JSON.parse(res.body) as unknown), type: String(res.headers['content-type']), cache: res.headers['cache-control'] };
};

test('GET /health and /health/ready answer 200 without credentials; HEAD too; POST and other paths are 405', async () => {
  assert.deepEqual(await get('/health'), { status: 200, body: { status: 'alive' }, type: 'application/json;charset=utf-8', cache: 'no-store' });
  assert.deepEqual(await get('/health/ready'), { status: 200, body: { status: 'ready' }, type: 'application/json;charset=utf-8', cache: 'no-store' });
  assert.equal((await request(live.origin + '/Health', { method: 'HEAD' })).status, 200);
  assert.equal((await request(live.origin + '/health/Ready', { method: 'HEAD' })).status, 200);
  const post = await request(live.origin + '/health/ready', { method: 'POST', body: '' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, 'GET, HEAD');
  assert.equal((await request(live.origin + '/health/deeper')).status, 405);
});

test('a database that lacks a column the model needs is not ready (503 "not migrated"), and the log says which', async () => {
  const { database } = live;
  if (database.file !== undefined) {
    await live.service.app.store.writeDirectory((tx) => tx.run('ALTER TABLE accounts DROP COLUMN disabled_at'));
  } else {
    const owner = new pg.Client({ connectionString: database.ownerUrl ?? database.url });
    await owner.connect();
    await owner.query('ALTER TABLE accounts DROP COLUMN disabled_at').finally(() => owner.end());
  }
  assert.deepEqual(await get('/health/ready'), { status: 503, body: { status: 'not migrated' }, type: 'application/json;charset=utf-8', cache: 'no-store' });
  assert.ok(live.logLines.some((l) => Array.isArray(l.missing) && l.missing.includes('accounts.disabled_at')));
  assert.equal((await get('/health')).status, 200, 'still alive');
  // Migrating again makes it ready.
  await live.service.app.store.migrate();
  assert.equal((await get('/health/ready')).status, 200);
});

test('a database that cannot be used: /health/ready is 503 "database unavailable", /health stays 200', async () => {
  await live.service.app.store.close();
  assert.deepEqual((await get('/health/ready')).body, { status: 'database unavailable' });
  assert.equal((await get('/health/ready')).status, 503);
  assert.deepEqual(await get('/health'), { status: 200, body: { status: 'alive' }, type: 'application/json;charset=utf-8', cache: 'no-store' });
});

test('a process that is draining for a shutdown is not ready: 503 "draining" on a connection still open', async () => {
  const draining = await startLive();
  const body = JSON.stringify({ userName: 'somebody', password: 'some-password' });
  const socket = net.connect(Number(new URL(draining.origin).port), '127.0.0.1');
  let answers = '';
  socket.on('data', (chunk: Buffer) => (answers += chunk.toString('latin1')));
  // A login whose body has not all arrived: it keeps the connection in flight while the service closes.
  const inFlight = new Promise((resolve) => draining.service.server.once('request', resolve));
  socket.write(`POST /Authentication_JSON_AppService.axd/Login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
  await inFlight;
  const closed = draining.service.close();
  // The rest of the body, and a readiness check pipelined behind it on the same connection.
  socket.write(`${body.slice(5)}GET /health/ready HTTP/1.1\r\nHost: x\r\n\r\n`);
  // Until both answers are in (the second ends with its JSON body), or the server hangs up.
  await new Promise<void>((resolve) => {
    socket.on('data', () => {
      if ((answers.match(/HTTP\/1\.1 \d{3} /g) ?? []).length === 2 && answers.endsWith('}')) resolve();
    });
    socket.on('close', () => resolve());
  });
  socket.destroy();
  await closed;
  const statuses = [...answers.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  assert.deepEqual(statuses, [200, 503], JSON.stringify(answers));
  assert.ok(answers.endsWith('{"status":"draining"}'), answers);
});
