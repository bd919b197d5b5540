/**
 * The baseline: a bare node:http server that answers every request with the same 300-byte JSON
 * body, the most a Node process can do per request on this machine. Run as its own process
 * (`node dist/bench/lib/baseline-server.js`, PORT and HOST from the environment) so that its
 * CPU time and resident set are measured exactly like the service's.
 *
 * With BASELINE_WORK_US it first computes for that many microseconds per request (`--calibrate`):
 * a server that does more per request also pays more per request to the kernel, since its
 * client waits for it asleep and each answer has to wake it.
 */
import http from 'node:http';
import { serveFromEnvironment } from './child-server';

export const BASELINE_BODY_BYTES = 300;

/** `{"d":{"Id":"1","Title":"xxx…"}}`, padded to exactly 300 bytes. */
export function baselineBody(): Buffer {
  const head = '{"d":{"__metadata":{"uri":"http://127.0.0.1/publicapi/v1/api.svc/Products(1L)","type":"Catalogue.Product"},"Id":"1","Title":"';
  const tail = '"}}';
  return Buffer.from(head + 'x'.repeat(BASELINE_BODY_BYTES - head.length - tail.length) + tail, 'utf8');
}

if (require.main === module) {
  const body = baselineBody();
  const headers = { 'Content-Type': 'application/json;charset=utf-8', 'Content-Length': String(body.length) };
  const workMs = Number(process.env.BASELINE_WORK_US ?? 0) / 1000;
  const server = http.createServer((req, res) => {
    // A request body (none in the bench) would be read and dropped.
    req.resume();
    if (workMs > 0) {
      const until = performance.now() + workMs;
      while (performance.now() < until);
    }
    res.writeHead(200, headers);
    res.end(body);
  });
  serveFromEnvironment(server, 'baseline');
}
