/**
 * Turns the metrics on when the configuration asks for them (METRICS_TOKEN or METRICS_PORT) and
 * says where they are served: on the service's port with the token, on a port of their own, or
 * both. In a worker of `--workers N`, scrapes are answered with the sum over all workers (the
 * primary serves METRICS_PORT then: ../cli/workers.ts).
 */
import cluster from 'node:cluster';
import type http from 'node:http';
import type { Logger } from 'pino';
import type { Activity } from '../auth/activity';
import type { Config } from '../config';
import type { Model } from '../model/types';
import type { Store } from '../store/store';
import type { RequestObserver, Route } from './http';
import { ServiceMetrics } from './metrics';
import { workerMetricsSource } from './metrics-cluster';
import { METRICS_PATH, metricsHandler, startMetricsServer, type MetricsSource } from './metrics-endpoint';

export interface MetricsSetUp {
  readonly activity: Activity;
  readonly observe: RequestObserver;
  /** /metrics on the service's own port (only with a token). */
  readonly route: Route | undefined;
  close(): Promise<void>;
}

export async function setUpMetrics(config: Config, model: Model, store: Store, platformPath: string, log: Logger): Promise<MetricsSetUp | undefined> {
  const { token, port } = config.metrics;
  if (token === undefined && port === undefined) return undefined;
  const metrics = new ServiceMetrics(model, store, platformPath);
  const source: MetricsSource = cluster.isWorker
    ? workerMetricsSource(metrics.registry)
    : async () => ({ text: await metrics.registry.metrics(), contentType: metrics.registry.contentType });
  const handler = metricsHandler(source, token);
  let own: http.Server | undefined;
  if (port !== undefined && !cluster.isWorker) {
    own = await startMetricsServer(config.host, port, handler, config.limits, log);
    log.info({ metricsPort: (own.address() as { port: number }).port }, 'metrics served on their own port');
  }
  return {
    activity: metrics,
    observe: () => metrics.requestStarted(),
    route: token !== undefined ? { prefix: METRICS_PATH, handler } : undefined,
    async close() {
      if (!own) return;
      const server = own;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
