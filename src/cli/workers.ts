/**
 * `catalogue serve --workers N`: a primary process forks N workers (node:cluster) that share the
 * listening port; each worker is a complete service with its own database pool. The primary
 * migrates once before forking, creates the demo account if asked, replaces a worker that dies,
 * and on SIGTERM or SIGINT tells every worker to drain (each stops accepting, finishes its
 * in-flight requests and closes its pool) and exits when all have.
 *
 * Nothing is kept in a process: accounts, sessions and the login throttle live in the database,
 * so any worker (or any other process on the same database) can answer any request.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config';
import { createLogger } from '../server/app';
import { openStore } from '../store/open';
import { createDemoAccount, serve } from './serve';
import { primaryMetricsSource } from '../server/metrics-cluster';
import { metricsHandler, startMetricsServer } from '../server/metrics-endpoint';

/** A worker that dies sooner than this after its start counts as failing to start. */
const QUICK_DEATH_MS = 5_000;
/** Wait before replacing a worker that failed to start, so a broken setup does not spin. */
const RESTART_BACKOFF_MS = 1_000;

export async function serveWorkers(config: Config, workers: number): Promise<void> {
  if (cluster.isWorker) {
    // The primary has migrated and made the demo account; a worker only serves.
    try {
      return await serve({ ...config, demoAccount: false });
    } catch (error) {
      // The channel to the primary would keep this process alive: close it, so that it exits.
      cluster.worker?.disconnect();
      throw error;
    }
  }
  const log = createLogger(config);
  const store = openStore(config.databaseUrl, config.database);
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
  // Metrics: the primary sums the workers' (for a worker's scrape, or on its own METRICS_PORT).
  const { token, port } = config.metrics;
  if (token !== undefined || port !== undefined) {
    const source = primaryMetricsSource();
    if (port !== undefined) {
      const server = await startMetricsServer(config.host, port, metricsHandler(source, token), config.limits, log);
      server.unref();
      log.info({ metricsPort: (server.address() as { port: number }).port }, 'metrics of every worker served on their own port');
    }
  }
  const started = new Map<number, number>();
  let stopping = false;
  let announced = false;
  const fork = () => {
    const worker = cluster.fork();
    started.set(worker.id, Date.now());
  };
  // Ready once every worker of the first start listens (the port is shared, so they all agree).
  let listening = 0;
  cluster.on('listening', (_worker: Worker, address) => {
    if (announced || ++listening < workers) return;
    announced = true;
    const host = address.address && address.address !== '0.0.0.0' && address.address !== '::' ? address.address : '127.0.0.1';
    const origin = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
    log.info({ origin, workers, primary: process.pid }, 'catalogue-service workers listening');
    if (config.demoAccount) void demoOnce(config, origin, log);
  });
  cluster.on('exit', (worker: Worker, code, signal) => {
    const lived = Date.now() - (started.get(worker.id) ?? 0);
    started.delete(worker.id);
    if (stopping) return;
    if (!announced) {
      // A worker that cannot start (port taken, database refused) would fail again: give up.
      log.error({ worker: worker.process.pid, code, signal }, 'a worker failed to start; stopping');
      stop('startup failure', 1);
      return;
    }
    log.error({ worker: worker.process.pid, code, signal }, 'a worker died; starting another');
    setTimeout(() => {
      if (!stopping) fork();
    }, lived < QUICK_DEATH_MS ? RESTART_BACKOFF_MS : 0);
  });
  for (let i = 0; i < workers; i++) fork();
  function stop(reason: string, exitCode = 0): void {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, 'shutting down: every worker drains its in-flight requests');
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    let failed = exitCode !== 0;
    let left = alive.length;
    if (left === 0) process.exit(exitCode);
    for (const worker of alive) {
      worker.once('exit', (code) => {
        if (code !== 0) failed = true;
        if (--left === 0) process.exit(failed ? 1 : 0);
      });
      worker.process.kill('SIGTERM');
    }
  }
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** The demo account, made by the primary once the service is reachable (the banner names it). */
async function demoOnce(config: Config, origin: string, log: ReturnType<typeof createLogger>): Promise<void> {
  const store = openStore(config.databaseUrl, config.database);
  try {
    await createDemoAccount(store, origin);
  } catch (error) {
    log.error({ err: error }, 'creating the demo account failed');
  } finally {
    await store.close();
  }
}
