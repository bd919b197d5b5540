/**
 * The cost and the delay of webhooks under the bench's durable write load (`post-json`: POST
 * Products, JSON, 32 connections):
 * - the write throughput with no subscription ('none'), with a subscription the load's changes
 *   do not concern ('outbox': the fan-out reads and publishes every change but sends nothing),
 *   and with one that gets every product event ('delivered': one delivery per POST, sent by the
 *   same process), runs alternated on fresh copies of the seeded database, since the machine's
 *   load drifts;
 * - the delay from commit to delivery: for each product created, the time its `product.changed`
 *   event reached a receiver on loopback after the change's time (`time` in the event, written
 *   in the change's transaction), p50 and p99, and how long the last event took after the load.
 *
 *   node dist/bench/webhooks.js [--engine sqlite|postgres] [--duration 10] [--runs 2] [--connections 32] [--products 2000] [--modes none,outbox,delivered]
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { postgresDatabase, sqliteDatabase, type BenchDatabase } from './lib/database';
import { connectorHeaders, login, request, SERVICE_PATH } from './lib/http';
import { runLoad, type RequestShape } from './lib/load';
import { startService } from './lib/processes';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const engine = args.get('engine') === 'postgres' ? 'postgres' : 'sqlite';
const seconds = Number(args.get('duration') ?? 10);
const runs = Number(args.get('runs') ?? 2);
const connections = Number(args.get('connections') ?? 32);
const products = Number(args.get('products') ?? 2000);
/** The runs' order within each round (--modes outbox,none,delivered), alternated as given. */
const modes = (args.get('modes') ?? 'none,outbox,delivered').split(',') as Array<'none' | 'outbox' | 'delivered'>;

const log = (line: string) => console.log(line);

/** Receives deliveries, answers 204, and keeps each one's delay after the change's time. */
class DelayReceiver {
  readonly delays: number[] = [];
  lastArrival = 0;
  private server: http.Server | undefined;
  port = 0;
  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const now = Date.now();
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; time: string };
        if (event.type === 'product.changed') {
          this.delays.push(now - Date.parse(event.time));
          this.lastArrival = now;
        }
        res.writeHead(204).end();
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;

function productBody(run: string, n: number): string {
  return JSON.stringify({ ForeignId: `HOOK-${run}-${n}`, ProductType: 0, Title: `Webhook Produkt ${n}`, Price: '19.99', StockAmount: n % 100, Description: '<p>Ein Produkt.</p>' });
}

type Mode = 'none' | 'outbox' | 'delivered';

async function oneRun(db: BenchDatabase, workDir: string, label: string, mode: Mode): Promise<Record<string, number | string>> {
  const env = { ...db.forProcess(label), WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', ACCOUNT_MAX_IN_FLIGHT: '0' };
  const service = await startService(label, env, path.join(workDir, `${label}.log`));
  const receiver = new DelayReceiver();
  let unsubscribe = async () => {};
  try {
    log(`${label}: service at ${service.origin}`);
    const cookie = await login(service.origin, db.account.userName, db.account.password);
    const headers = connectorHeaders({ subscriptionToken: db.account.subscriptionToken, cookie });
    const subscribed = mode === 'delivered';
    if (mode !== 'none') {
      await receiver.start();
      const res = await request(`${service.origin}/publicapi/v1/webhooks`, {
        method: 'POST',
        headers: { SubscriptionToken: db.account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${receiver.port}/hooks`, eventTypes: mode === 'delivered' ? ['order.created', 'order.paid', 'product.changed', 'product.deleted', 'stock.changed'] : ['order.created'] }),
      });
      if (res.status !== 201) throw new Error(`subscription refused: ${res.status} ${res.body}`);
      // On PostgreSQL every run shares the database: the next run must start without it.
      const id = (JSON.parse(res.body) as { id: string }).id;
      unsubscribe = async () => {
        await request(`${service.origin}/publicapi/v1/webhooks/${id}`, { method: 'DELETE', headers: { SubscriptionToken: db.account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}` } });
      };
    }
    const pool: RequestShape[] = Array.from({ length: 2000 }, (_, n) => ({ method: 'POST', path: `${SERVICE_PATH}/Products`, headers, body: productBody(label, n) }));
    log(`${label}: warming up`);
    const warmup = await runLoad({ origin: service.origin, connections, seconds: 2, pool, expectStatus: 201 });
    log(`${label}: measuring (warm-up: ${JSON.stringify(warmup.statuses)})`);
    const warmedUp = receiver.delays.length;
    const load = await runLoad({ origin: service.origin, connections, seconds, pool, expectStatus: 201 });
    const loadEnd = Date.now();
    const row: Record<string, number | string> = { run: label, postsPerSecond: Math.round(load.requestsPerSecond), p50Ms: load.p50Ms, p99Ms: load.p99Ms, unexpected: load.unexpectedStatus + load.errors };
    if (subscribed) {
      // Every product of the measured load: its event arrives (or the wait gives up after a minute).
      const expected = warmedUp + load.requests;
      const deadline = Date.now() + 60_000;
      while (receiver.delays.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const measured = receiver.delays.slice(warmedUp).sort((a, b) => a - b);
      Object.assign(row, {
        events: measured.length,
        expectedEvents: load.requests,
        delayP50Ms: percentile(measured, 50),
        delayP99Ms: percentile(measured, 99),
        delayMaxMs: measured[measured.length - 1] ?? NaN,
        lastEventAfterLoadMs: receiver.lastArrival - loadEnd,
      });
    }
    return row;
  } finally {
    await unsubscribe();
    await receiver.stop();
    await service.stop();
  }
}

async function main(): Promise<void> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-bench-webhooks-'));
  const db = engine === 'postgres' ? await postgresDatabase(products, log) : await sqliteDatabase(workDir, products, log);
  try {
    log(`webhooks bench: ${engine}, ${db.description}; ${connections} connections, ${seconds} s per run, ${os.cpus().length} cores`);
    const rows: Record<string, number | string>[] = [];
    for (let i = 1; i <= runs; i++) {
      for (const mode of modes) {
        const row = await oneRun(db, workDir, `${mode}-${i}`, mode);
        log(JSON.stringify(row));
        rows.push(row);
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const meanOf = (mode: Mode) => mean(rows.filter((r) => String(r.run).startsWith(mode + '-')).map((r) => r.postsPerSecond as number));
    const none = meanOf('none');
    for (const mode of ['outbox', 'delivered'] as const) log(`mean POST/s: none ${none.toFixed(0)}, ${mode} ${meanOf(mode).toFixed(0)} (${(((meanOf(mode) - none) / none) * 100).toFixed(1)}%)`);
  } finally {
    await db.dispose();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
