/**
 * Starts the real service on 127.0.0.1 (a free port) over a fresh database of the engine under
 * test (a SQLite file, or a new PostgreSQL database: ./test-database.ts), and logs accounts in
 * through the real HTTP login endpoint. Nothing is mocked.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { loadConfig, type Config } from '../../src/config';
import type { Clock } from '../../src/clock';
import { startService, type RunningService } from '../../src/server/app';
import { createAccount } from '../../src/auth/accounts';
import { model } from '../../src/model/catalogue-model';
import { buildSchema, CHANGES, WEBHOOK_CURSORS, WEBHOOK_DELIVERIES, WEBHOOK_SUBSCRIPTIONS } from '../../src/store/schema';
import { defaultOf } from '../../src/catalogue/values';
import type { EntityTypeDef } from '../../src/model/types';
import type { EdmValue } from '../../src/odata/edm';
import { request, type HttpRequest, type HttpResponse } from './http-client';
import { freshDatabase, type TestDatabase } from './test-database';

export { tempDatabaseFile } from './test-database';

export const SERVICE_PATH = '/publicapi/v1/api.svc';

/**
 * The version headers the shop connector sends with every request. A request that declares no
 * version at all gets version 2.0 answers (docs/protocol.md, "Versions"); a test that reads the
 * version 1.0 shapes, as the connectors do, declares its versions with these.
 */
export const CONNECTOR_VERSIONS: Readonly<Record<string, string>> = { DataServiceVersion: '2.0', MaxDataServiceVersion: '3.0' };

export interface LiveService {
  readonly service: RunningService;
  readonly origin: string;
  readonly root: string;
  /** The database it serves (reuse it to restart on the same data). */
  readonly database: TestDatabase;
  /** Every log line the service wrote, parsed. */
  readonly logLines: Record<string, unknown>[];
  close(): Promise<void>;
}

export interface LiveOptions {
  readonly env?: Record<string, string>;
  readonly clock?: Clock;
  /** Reuse a database (restart tests); a fresh one otherwise. */
  readonly database?: TestDatabase;
}

export async function startLive(options: LiveOptions = {}): Promise<LiveService> {
  const database = options.database ?? (await freshDatabase());
  const config: Config = loadConfig({ PORT: '0', HOST: '127.0.0.1', ...database.env, DEMO_ACCOUNT: 'false', ...options.env });
  const logLines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const log = pino({ level: 'info', base: undefined }, sink);
  const service = await startService(config, { log, ...(options.clock ? { clock: options.clock } : {}) });
  return {
    service,
    origin: service.origin,
    root: service.origin + SERVICE_PATH,
    database,
    logLines,
    // The suite must never see a 5xx: every live service checks its own log when it closes.
    async close() {
      await service.close();
      const faults = logLines.filter((l) => typeof l.status === 'number' && l.status >= 500);
      if (faults.length) throw new Error(`the service answered 5xx: ${JSON.stringify(faults.slice(0, 3))}`);
    },
  };
}

export interface Seller {
  readonly accountId: number;
  readonly userName: string;
  readonly password: string;
  readonly token: string;
  /** The .ASPXAUTH value from the login answer. */
  readonly cookie: string;
  /** Headers that authenticate a request as this seller. */
  readonly auth: Record<string, string>;
}

let sellerCounter = 0;

/** Creates an account and logs it in over HTTP. */
export async function newSeller(live: LiveService, prefix = 'seller'): Promise<Seller> {
  const userName = `${prefix}-${++sellerCounter}-${process.pid}`;
  const password = `pw-${userName}-secret`;
  const { app } = live.service;
  const account = await createAccount(app.store, app.clock, { userName, password });
  const cookie = await login(live, userName, password);
  if (!cookie) throw new Error(`login of ${userName} failed`);
  return {
    accountId: account.accountId,
    userName,
    password,
    token: account.subscriptionToken,
    cookie,
    auth: { SubscriptionToken: account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}` },
  };
}

/** Logs in through the HTTP endpoint; the cookie value, or undefined when refused. */
export async function login(live: LiveService, userName: string, password: string): Promise<string | undefined> {
  const res = await request(live.origin + '/Authentication_JSON_AppService.axd/Login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ userName, password, createPersistentCookie: false }),
  });
  const setCookie = res.headers['set-cookie']?.[0];
  const m = setCookie ? /^\.ASPXAUTH=([^;]+);/.exec(setCookie) : null;
  return m ? m[1] : undefined;
}

/** A request to the service as a seller (auth headers merged under the given ones). */
export function asSeller(seller: Seller, url: string, init: HttpRequest = {}): Promise<HttpResponse> {
  return request(url, { ...init, headers: { ...seller.auth, ...(init.headers ?? {}) } });
}

/**
 * Writes one row straight through the store, as the platform import does (for sets sellers
 * cannot create over the API): the given values, a new Id, timestamps now, defaults otherwise.
 * A non-nullable property left without a value is the test's mistake, said at once.
 */
export async function storeRow(live: LiveService, accountId: number, type: EntityTypeDef, values: Readonly<Record<string, EdmValue>>): Promise<bigint> {
  const app = live.service.app;
  return app.store.write(accountId, async (tx) => {
    const newId = await app.store.nextId(tx);
    const row: Record<string, EdmValue> = {};
    for (const p of type.properties) {
      if (p.access === 'key') row[p.name] = newId;
      else if (Object.prototype.hasOwnProperty.call(values, p.name)) row[p.name] = values[p.name]!;
      else if (p.timestamp) row[p.name] = app.clock.now();
      else row[p.name] = defaultOf(p);
      if (row[p.name] === null && !p.nullable && p.access !== 'key') throw new Error(`storeRow ${type.name}: ${p.name} needs a value`);
    }
    await app.entities.insert(tx, accountId, type, row);
    return newId;
  });
}

/**
 * The change log is left out: every write that changes a row adds to it, so a test that proves a
 * write changed nothing but its own rows would have to allow for it everywhere. What it records is
 * checked by test/store/change-log.test.ts (a rolled-back write leaves no row) and the delta tests.
 * So are the webhook worker's tables: it updates them in the background (a delivery's attempts,
 * an endpoint's failures, the fan-out's cursor) whatever the test does; test/webhooks checks them.
 */
const BACKGROUND_TABLES = new Set([CHANGES.table, WEBHOOK_SUBSCRIPTIONS, WEBHOOK_DELIVERIES, WEBHOOK_CURSORS]);
const TENANT_TABLES = buildSchema(model)
  .filter((t) => t.tenant && !BACKGROUND_TABLES.has(t.name))
  .map((t) => t.name);

/**
 * Every row an account has in every tenant table but those above, read raw from the database
 * (bigints marked), so a test can prove that a refused or foreign write changed nothing.
 */
export async function tenantRows(live: LiveService, accountId: number): Promise<Record<string, string[]>> {
  return live.service.app.store.read(accountId, async (tx) => {
    const out: Record<string, string[]> = {};
    for (const table of TENANT_TABLES) {
      const rows = await tx.all(`SELECT * FROM "${table}" WHERE account_id = ? ORDER BY 2`, [accountId]);
      out[table] = rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))).sort();
    }
    return out;
  });
}
