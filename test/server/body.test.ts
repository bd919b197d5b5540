/**
 * readBody (src/server/body.ts) over real HTTP on 127.0.0.1: a body read after its client hung up
 * fails at once as an incomplete body. Before, a request whose client left while it waited (for
 * its credentials, or its account's turn) waited for events that had fired already, for ever,
 * and kept what it held: its account's slot, its memory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { readBody } from '../../src/server/body';
import { ODataError } from '../../src/odata/errors';

test('a body read after the client closed the connection fails at once with a 400, instead of waiting for ever', async () => {
  let outcome: Promise<unknown> | undefined;
  const closed = new Promise<void>((resolve) => {
    const server = http.createServer((req) => {
      // The handler reaches readBody only after the client is gone.
      req.once('close', () => {
        outcome = readBody(req, 1024).then(
          () => 'resolved',
          (error: unknown) => error,
        );
        resolve();
        server.close();
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":');
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on('error', () => undefined);
    });
  });
  await closed;
  const settled = await Promise.race([outcome!, new Promise((r) => setTimeout(() => r('still waiting'), 2000))]);
  assert.ok(settled instanceof ODataError, `readBody settled with ${String(settled)}`);
  assert.equal(settled.status, 400);
  assert.match(settled.message, /did not arrive completely/);
});

test('a whole body is read as before', async () => {
  const server = http.createServer(async (req, res) => {
    const body = await readBody(req, 1024);
    res.end(String(body.length));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  const answer = await new Promise<string>((resolve, reject) => {
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end('{"a":1}');
  });
  server.close();
  assert.equal(answer, '7');
});
