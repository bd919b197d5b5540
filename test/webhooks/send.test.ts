/**
 * The delivery-time guard: an attempt connects only to an address the rules allow, checked on
 * the address it connects to (an IP-literal host before connecting, a name through the lookup it
 * connects with), so an endpoint whose name comes to resolve to loopback is refused then too.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { attempt } from '../../src/webhooks/send';

let server: http.Server;
let port = 0;
let hits = 0;
before(async () => {
  server = http.createServer((_req, res) => {
    hits++;
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const strict = { allowHttp: true, allowPrivateAddresses: false };

test('an attempt to a loopback address or a name resolving to one is refused without connecting', async () => {
  for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]']) {
    const outcome = await attempt(`http://${host}:${port}/hooks`, {}, '{}', 1_000, strict);
    assert.equal(outcome.ok, false, host);
    assert.match(outcome.error!, /refused/, host);
  }
  assert.equal(hits, 0);
});

test('with private addresses allowed the same attempt is delivered; https is required unless http is allowed', async () => {
  assert.deepEqual(await attempt(`http://localhost:${port}/hooks`, {}, '{}', 1_000, { allowHttp: true, allowPrivateAddresses: true }), { ok: true, status: 204, error: null });
  assert.equal(hits, 1);
  const plain = await attempt(`http://localhost:${port}/hooks`, {}, '{}', 1_000, { allowHttp: false, allowPrivateAddresses: true });
  assert.match(plain.error!, /scheme http: is not allowed/);
  assert.equal(hits, 1);
});
