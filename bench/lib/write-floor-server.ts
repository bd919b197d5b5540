/**
 * The write floor: the two durable write workloads of the bench (`POST Products` with the
 * connector's JSON body, and `MERGE ProductVariations(id)` of StockAmount) answered by a server
 * that keeps the hot-path issue's rules for writes and the service's own lean parts, but none of
 * its pipeline, as floor-server.ts is for reads. What it keeps:
 * - the credential check against the database on every request (the service's statement, with the
 *   token and cookie hashed as the service hashes them) as the first statement of the write's own
 *   transaction, so a refused check writes nothing;
 * - the group commit: every write goes through the SQLite store's writer queue, which runs the
 *   writes that arrived in one turn of the event loop in one transaction, each in a savepoint,
 *   and answers them after one durable COMMIT (WAL, synchronous=FULL);
 * - what a write is made of: the service's JSON entity reader, the catalogue's writes with their
 *   rules (applyPayload, checkRules, follow-ups, row versions), its SQL layout and JSON writer;
 * - one access log line per request, through pino at info, as the service writes it.
 * What it leaves out: the router, the URI and option parsers, negotiation, the write plan,
 * admission, the responder and the metrics. It answers nothing else (404), and only the shapes the
 * bench sends. It is a measuring stick, not a server to run.
 *
 * Run as `node dist/bench/lib/write-floor-server.js` with PORT, HOST, DATABASE_FILE and ACCOUNT_ID.
 */
import http from 'node:http';
import pino from 'pino';
import { serveFromEnvironment } from './child-server';
import { hashCredential, subscriptionTokenHash } from '../../src/auth/credentials';
import { liveSessionOfAccountStatement } from '../../src/auth/directory';
import { DEFAULT_SESSION_OPTIONS } from '../../src/auth/sessions';
import { systemClock } from '../../src/clock';
import { createCatalogueServices } from '../../src/catalogue/services';
import { model } from '../../src/model/catalogue-model';
import { entityUri, etagOf, type WriteContext } from '../../src/odata/entity';
import { readJsonEntity } from '../../src/odata/json/reader';
import { jsonEntityDocumentBytes } from '../../src/odata/json/writer';
import { odataHeaders } from '../../src/service/responder';
import type { ReadGuard } from '../../src/store/store';
import { openStore } from '../../src/store/open';
import { logTime } from '../../src/server/log-time';

const SERVICE_PATH = '/publicapi/v1/api.svc';
const PRODUCTS = `${SERVICE_PATH}/Products`;
const VARIATION = /^\/publicapi\/v1\/api\.svc\/ProductVariations\((\d+)L\)$/;
const COOKIE = /(?:^|;\s*)\.ASPXAUTH=([^;]+)/;

class Refused extends Error {}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function main(): void {
  const file = process.env.DATABASE_FILE;
  const accountId = Number(process.env.ACCOUNT_ID);
  if (!file || !Number.isSafeInteger(accountId)) throw new Error('DATABASE_FILE and ACCOUNT_ID are required');
  const store = openStore(`sqlite:${file}`);
  // The catalogue's writes as the service builds them, over the store's writer queue.
  const { entities, writes } = createCatalogueServices(store, systemClock);
  const product = model.typeByName.get('Product')!;
  const variation = model.typeByName.get('ProductVariation')!;
  // The service's own OData headers of a version 1.0 answer, as the service sends them.
  const odataLines = Object.entries(odataHeaders(1)).flat();
  const log = pino({ level: 'info', base: undefined, timestamp: logTime });
  let served = 0;

  /** The service's credential check, as the first statement of the write's transaction. */
  const guardOf = (req: http.IncomingMessage): ReadGuard | undefined => {
    const token = req.headers.subscriptiontoken;
    const cookie = COOKIE.exec(req.headers.cookie ?? '')?.[1];
    if (typeof token !== 'string' || !cookie) return undefined;
    const now = Date.now();
    const statement = liveSessionOfAccountStatement(hashCredential(cookie), subscriptionTokenHash(token), now, now - DEFAULT_SESSION_OPTIONS.idleTimeoutMs, accountId);
    return {
      sql: statement.sql,
      params: statement.params,
      check: (row) => {
        if (row === undefined) throw new Refused();
      },
    };
  };

  const server = http.createServer(async (req, res) => {
    const started = performance.now();
    const url = req.url ?? '';
    const merge = req.method === 'MERGE' ? VARIATION.exec(url) : null;
    const post = req.method === 'POST' && url === PRODUCTS;
    const headers = [...odataLines];
    let status = 404;
    let body: Buffer | undefined;
    try {
      const guard = guardOf(req);
      const sent = await readBody(req);
      if ((post || merge) && !guard) status = 401;
      else if (post) {
        const context: WriteContext = { serviceRoot: `http://${req.headers.host ?? '127.0.0.1'}${SERVICE_PATH}`, version: 1, updated: '' };
        const payload = readJsonEntity(product, sent);
        const record = await store.write(accountId, async (tx) => (await writes.create(tx, accountId, product, payload)).record, { newIds: 1, repeatable: true, guard: guard! });
        body = jsonEntityDocumentBytes(context, record);
        status = 201;
        headers.push('ETag', etagOf(record.version!), 'Location', entityUri(context.serviceRoot, product, record.values.Id as bigint));
        headers.push('Content-Type', 'application/json;charset=utf-8', 'Content-Length', String(body.length));
      } else if (merge) {
        const id = BigInt(merge[1]!);
        const payload = readJsonEntity(variation, sent);
        const version = await store.write(
          accountId,
          async (tx) => {
            const stored = await entities.find(tx, accountId, variation, id);
            if (!stored) return undefined;
            return writes.update(tx, accountId, variation, id, payload, 'merge', stored);
          },
          { repeatable: true, guard: guard! },
        );
        if (version !== undefined) {
          status = 204;
          headers.push('ETag', etagOf(version));
        }
      }
    } catch (error) {
      // The floor measures the answers the bench expects; anything else is a plain failure.
      status = error instanceof Refused ? 401 : 500;
      if (status === 500) log.error({ err: error }, 'write floor failed');
    }
    res.writeHead(status, headers);
    res.end(body);
    log.info({ reqId: `wfloor-${(++served).toString(36)}`, method: req.method, path: url.slice(0, 512), status, ms: Math.round((performance.now() - started) * 10) / 10 });
  });
  serveFromEnvironment(server, 'write floor');
}

if (require.main === module) main();
