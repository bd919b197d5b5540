/**
 * The composition root: opens the store, builds the services and the HTTP server, and closes
 * them in order (stop accepting, drain in-flight requests, close the store).
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import type { Config } from '../config';
import { systemClock, type Clock } from '../clock';
import { model } from '../model/catalogue-model';
import { renderMetadata } from '../odata/metadata';
import { openStore } from '../store/open';
import { SessionService } from '../auth/sessions';
import { EntityReads } from '../store/reads';
import { createCatalogueServices } from '../catalogue/services';
import { authEndpointsHandler } from './auth-endpoints';
import { createHttpServer, type Route } from './http';
import { publicApiHandler } from './publicapi';
import { PLATFORM_PATH, platformApiHandler } from './platform-api';
import { PlatformIntake } from '../platform/intake';
import { SERVICE_PATH } from '../service/request';
import type { App } from '../service/app';
import { HEALTH_PATH, healthHandler } from './health';
import { OPENAPI_PATH, openApiHandler } from './openapi-endpoint';
import { CONSOLE_PATH, consoleHandler } from '../console/handler';
import { startHousekeeping } from './housekeeping';
import { noActivity } from '../auth/activity';
import { TokenActivity } from '../auth/token-activity';
import { AccountAdmission } from '../service/admission';
import { setUpMetrics } from './metrics-setup';
import { logTime } from './log-time';
import { startWebhookWorker, type WebhookWorker } from '../webhooks/worker';
import { WEBHOOKS_PATH, webhooksHandler } from './webhooks-endpoint';

export interface RunningService {
  readonly app: App;
  readonly server: http.Server;
  /** e.g. http://127.0.0.1:8080 */
  readonly origin: string;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly clock?: Clock;
  readonly log?: Logger;
}

export function createLogger(config: Config): Logger {
  return pino({ level: config.logLevel, base: undefined, timestamp: logTime });
}

export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const log = options.log ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  const store = openStore(config.databaseUrl, config.database);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  const sessions = new SessionService(store, clock);
  const catalogue = createCatalogueServices(store, clock);
  const reads = new EntityReads(model, store, catalogue.entities);
  let address = `${config.host}:${config.port}`;
  const metrics = await setUpMetrics(config, model, store, PLATFORM_PATH, log).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const activity = metrics?.activity ?? noActivity;
  const app: App = {
    config,
    model,
    store,
    sessions,
    entities: catalogue.entities,
    reads,
    writes: catalogue.writes,
    operations: catalogue.operations,
    clock,
    log,
    activity,
    tokenActivity: new TokenActivity(store, clock, log),
    admission: new AccountAdmission(config.admission, (reason) => activity.admissionRefused(reason)),
    metadataXml: renderMetadata(model),
    listenHost: () => address,
  };
  let draining = false;
  const authOptions = {
    sessions,
    secureCookies: config.secureCookies,
    absoluteTimeoutMs: sessions.options.absoluteTimeoutMs,
    now: () => clock.now(),
    activity: app.activity,
    ...(config.publicUrl === undefined ? {} : { publicUrl: config.publicUrl }),
  };
  const routes: Route[] = [
    { prefix: SERVICE_PATH, handler: publicApiHandler(app) },
    { prefix: OPENAPI_PATH, handler: openApiHandler(app) },
    { prefix: WEBHOOKS_PATH, handler: webhooksHandler(app) },
    { prefix: HEALTH_PATH, handler: healthHandler(store, () => draining) },
    { prefix: CONSOLE_PATH, handler: consoleHandler({ ...app, auth: authOptions }) },
    {
      prefix: '/authentication_json_appservice.axd',
      handler: authEndpointsHandler(authOptions),
    },
  ];
  if (metrics?.route) routes.push(metrics.route);
  // The platform API exists only with its credential configured: without it nothing answers there.
  if (config.platformToken !== undefined) {
    routes.push({ prefix: PLATFORM_PATH, handler: platformApiHandler(app, new PlatformIntake(catalogue), config.platformToken) });
  }
  const server = createHttpServer(routes, config.limits, log, metrics?.observe, config.compression);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    // Port taken or not allowed: release the database too, or its pool keeps the process alive.
    await metrics?.close();
    await store.close();
    throw error;
  }
  const housekeeping = startHousekeeping(store, sessions, clock, config.housekeepingIntervalMs, config.changeRetentionDays, log);
  const bound = server.address() as AddressInfo;
  address = `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  let webhooks: WebhookWorker | undefined;
  if (config.webhooks.enabled) {
    const worker = startWebhookWorker({ store, clock, log, settings: config.webhooks, serviceRoot: () => (config.publicUrl ?? `http://${address}`) + SERVICE_PATH });
    // A commit may have written changes: fan them out now rather than at the next poll.
    store.observeCommits(() => worker.nudge());
    webhooks = worker;
  }
  return {
    app,
    server,
    origin: `http://${address}`,
    async close() {
      // Stop accepting, let in-flight requests finish, drop idle keep-alive connections.
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await housekeeping.stop();
      await webhooks?.stop();
      await metrics?.close();
      await store.close();
    },
  };
}
