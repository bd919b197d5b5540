/**
 * The floor: the two read workloads of issue 17 (GET Products(id) and the 50-row filtered page,
 * JSON verbose) answered by a server that keeps the rules and the service's own lean parts,
 * but none of its pipeline. What it keeps:
 * - the credential check against the database on every request (the service's statement, with
 *   the token and cookie hashed as the service hashes them), in the same read transaction as the
 *   read, so both see one snapshot;
 * - the service's entity SQL layout, row decoder, JSON verbose writer and the encoding of a feed
 *   into buffers as it is written, so that the body is the service's byte for byte (the bench
 *   compares the first answers);
 * - one access log line per request, through pino at info, as the service writes it.
 * What it leaves out: the router, the URI and option parsers, negotiation, planning, the Store
 * interface, the responder and the metrics. It answers nothing else (404), and only the shapes
 * the bench sends. It is a measuring stick, not a server to run.
 *
 * Its figures say how much of a request's CPU the service's pipeline adds, and how near the
 * issue's targets a server that keeps the rules comes on the machine at hand.
 * Run as `node dist/bench/lib/floor-server.js` with PORT, HOST, DATABASE_FILE and ACCOUNT_ID.
 */
import http from 'node:http';
import Database from 'better-sqlite3';
import pino from 'pino';
import { serveFromEnvironment } from './child-server';
import { hashCredential, subscriptionTokenHash } from '../../src/auth/credentials';
import { liveSessionOfAccountStatement } from '../../src/auth/directory';
import { model } from '../../src/model/catalogue-model';
import type { EntityRecord, WriteContext } from '../../src/odata/entity';
import { jsonEntityDocumentBytes, jsonEntityTo, jsonFeedEnd, jsonFeedSeparator, jsonFeedStart } from '../../src/odata/json/writer';
import { ChunkedOutput } from '../../src/service/chunked-output';
import { odataHeaders } from '../../src/service/responder';
import { columnsOf, EntityStore } from '../../src/store/entities';
import { logTime } from '../../src/server/log-time';
import { DEFAULT_SESSION_OPTIONS } from '../../src/auth/sessions';
import { openStore } from '../../src/store/open';

const SERVICE_PATH = '/publicapi/v1/api.svc';
const BY_KEY = /^\/publicapi\/v1\/api\.svc\/Products\((\d+)L\)$/;
/** The bench's filter, `Id ge aL and Id le bL`, percent-encoded as the bench sends it. */
const ID_RANGE = /^\/publicapi\/v1\/api\.svc\/Products\?\$filter=Id%20ge%20(\d+)L%20and%20Id%20le%20(\d+)L$/;
const COOKIE = /(?:^|;\s*)\.ASPXAUTH=([^;]+)/;

/** A feed of these records, encoded into buffers entity by entity as the service encodes one. */
async function feedBytes(context: WriteContext, records: readonly EntityRecord[]): Promise<Buffer> {
  const parts: Buffer[] = [];
  const out = new ChunkedOutput({
    write: async (chunk) => void parts.push(chunk),
    end: (chunk) => void (chunk && parts.push(chunk)),
  });
  out.append(jsonFeedStart(context));
  for (let i = 0; i < records.length; i++) {
    if (i > 0) out.append(jsonFeedSeparator);
    jsonEntityTo(context, records[i]!, out);
  }
  out.append(jsonFeedEnd(context));
  await out.end();
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

function main(): void {
  const file = process.env.DATABASE_FILE;
  const accountId = Number(process.env.ACCOUNT_ID);
  if (!file || !Number.isSafeInteger(accountId)) throw new Error('DATABASE_FILE and ACCOUNT_ID are required');
  const product = model.typeByName.get('Product')!;
  // The store only lends its value codec to the row decoder; every statement below is our own.
  const entities = new EntityStore(model, openStore(`sqlite:${file}`));
  const db = new Database(file, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const prepare = (sql: string) => db.prepare(sql).safeIntegers(true);
  const begin = prepare('BEGIN');
  const commit = prepare('COMMIT');
  const columns = columnsOf(product);
  const table = `"${product.table}"`;
  const byKey = prepare(`SELECT ${columns} FROM ${table} t WHERE t.account_id = ? AND t.id = ?`).raw(true);
  const range = prepare(`SELECT ${columns} FROM ${table} t WHERE t.account_id = ? AND t.id >= ? AND t.id <= ? ORDER BY t.id LIMIT 256`).raw(true);
  const credentialSql = liveSessionOfAccountStatement('', '', 0, 0, accountId).sql;
  const credentialCheck = prepare(credentialSql);
  // The service's own OData headers of a version 1.0 answer, as the service sends them.
  const odataLines = Object.entries(odataHeaders(1)).flat();
  const log = pino({ level: 'info', base: undefined, timestamp: logTime });
  let served = 0;

  const server = http.createServer(async (req, res) => {
    const started = performance.now();
    const url = req.url ?? '';
    const key = BY_KEY.exec(url);
    const ids = key ? undefined : ID_RANGE.exec(url);
    const token = req.headers.subscriptiontoken;
    const cookie = COOKIE.exec(req.headers.cookie ?? '')?.[1];
    let status = 404;
    let body: Buffer | undefined;
    let etag: string | undefined;
    let records: EntityRecord[] | undefined;
    const context: WriteContext = { serviceRoot: `http://${req.headers.host ?? '127.0.0.1'}${SERVICE_PATH}`, version: 1, updated: '' };
    if ((key || ids) && typeof token === 'string' && cookie) {
      const now = Date.now();
      const statement = liveSessionOfAccountStatement(hashCredential(cookie), subscriptionTokenHash(token), now, now - DEFAULT_SESSION_OPTIONS.idleTimeoutMs, accountId);
      begin.run();
      try {
        if (credentialCheck.get(...statement.params) === undefined) status = 401;
        else if (key) {
          const row = byKey.get(accountId, BigInt(key[1]!)) as unknown[] | undefined;
          if (row) {
            const record: EntityRecord = entities.decodeRow(product, row);
            body = jsonEntityDocumentBytes(context, record);
            etag = `W/"${record.version}"`;
            status = 200;
          }
        } else {
          const rows = range.all(accountId, BigInt(ids![1]!), BigInt(ids![2]!)) as unknown[][];
          records = rows.map((row) => entities.decodeRow(product, row));
          status = 200;
        }
      } finally {
        commit.run();
      }
    }
    if (records !== undefined) body = await feedBytes(context, records);
    const headers = [...odataLines];
    if (etag !== undefined) headers.push('ETag', etag);
    if (body !== undefined) headers.push('Content-Type', 'application/json;charset=utf-8', 'Content-Length', String(body.length));
    res.writeHead(status, headers);
    res.end(body);
    log.info({ reqId: `floor-${(++served).toString(36)}`, method: req.method, path: url.slice(0, Math.min(512, url.indexOf('?') >>> 0)), status, ms: Math.round((performance.now() - started) * 10) / 10 });
  });
  serveFromEnvironment(server, 'floor');
}

if (require.main === module) main();
