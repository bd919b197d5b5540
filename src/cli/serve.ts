/**
 * `catalogue serve`: starts the service, creates a demo account filled with the demonstration
 * data and prints how to reach it when the database has no account (unless DEMO_ACCOUNT=false),
 * and shuts down gracefully on SIGTERM/SIGINT.
 */
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import { startService } from '../server/app';
import { countAccounts, createAccount } from '../auth/accounts';
import { systemClock } from '../clock';
import type { Store } from '../store/store';
import { sqliteBuild } from '../store/sqlite/driver-build';
import { fillDemoAccount } from './platform-commands';

export const DEMO_USER = 'demo';

/** The banner a new user copies from: credentials and a curl sequence that works as printed. */
export function demoBanner(origin: string, password: string, token: string): string {
  // In the user's own temporary folder (TMPDIR): another user's file of the same name in /tmp
  // would make the printed curl fail.
  const jar = path.join(os.tmpdir(), 'catalogue-demo-cookies.txt');
  return [
    '',
    'No account existed, so a demo account was created (shown only this once):',
    `  user name:          ${DEMO_USER}`,
    `  password:           ${password}`,
    `  SubscriptionToken:  ${token}`,
    '',
    'See its demonstration products and orders in the seller console (log in with the user name and password above):',
    `  ${origin}/console/`,
    '',
    'Or log in, then read the service document:',
    `  curl -s -c ${jar} -H 'Content-Type: application/json' -d '{"userName":"${DEMO_USER}","password":"${password}","createPersistentCookie":false}' ${origin}/Authentication_JSON_AppService.axd/Login`,
    `  curl -s -b ${jar} -H 'SubscriptionToken: ${token}' -H 'Accept: application/json' ${origin}/publicapi/v1/api.svc/`,
    '',
  ].join('\n');
}

/**
 * Creates the demo account in an empty database, fills it with the demonstration data (what a
 * newcomer sees first in the console) and prints its banner for `origin`.
 */
export async function createDemoAccount(store: Store, origin: string): Promise<void> {
  if ((await countAccounts(store)) > 0) return;
  const password = randomBytes(12).toString('base64url');
  const account = await createAccount(store, systemClock, { userName: DEMO_USER, password });
  await fillDemoAccount(store, DEMO_USER);
  // A wildcard listen address is reached on loopback from the same machine.
  const reachable = origin.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:');
  process.stdout.write(demoBanner(reachable, password, account.subscriptionToken) + '\n');
}

export async function serve(config: Config): Promise<void> {
  const service = await startService(config);
  const engine = service.app.store.engine;
  // On SQLite, which better-sqlite3 build serves (patched, upstream or unpatched: src/store/sqlite/driver-build.ts).
  service.app.log.info({ origin: service.origin, database: engine, ...(engine === 'sqlite' ? { sqliteBuild: sqliteBuild() } : {}) }, 'catalogue-service listening');
  if (config.demoAccount) await createDemoAccount(service.app.store, service.origin);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.app.log.info({ signal }, 'shutting down: draining in-flight requests');
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        service.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
