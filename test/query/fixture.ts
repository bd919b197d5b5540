/**
 * Shared by the live $filter tests of this folder: rows seeded through the real store (the sets
 * sellers cannot POST), a keep-alive HTTP client for many small requests, the ids a JSON or Atom
 * feed answers, and the OData error document of a refusal. Nothing here calls the service's
 * query code: requests go over HTTP, rows go in through the store API only (so the tests do not
 * depend on the engine behind it).
 */
import http from 'node:http';
import assert from 'node:assert/strict';
import { defaultOf } from '../../src/catalogue/values';
import type { EdmValue } from '../../src/odata/edm';
import { childElements, parseXml } from '../clients/datajs';
import type { HttpResponse } from '../support/http-client';
import { CONNECTOR_VERSIONS, type LiveService, type Seller } from '../support/live-service';
import { ATOM, D, M } from '../support/spec';

export type Values = Record<string, EdmValue>;

/**
 * Inserts one row of an entity set through the real store, as the platform side does: every
 * property not given gets its default (timestamps: the clock's now). Answers the complete row
 * as stored (Id included), for an evaluator to run over.
 */
export async function seedFull(live: LiveService, accountId: number, set: string, values: Values): Promise<Values> {
  const app = live.service.app;
  const type = app.model.typeBySetName.get(set);
  if (!type) throw new Error(`seed: no entity set ${set}`);
  for (const name of Object.keys(values)) {
    if (!type.properties.some((p) => p.name === name)) throw new Error(`seed ${set}: no property ${name}`);
  }
  return app.store.write(accountId, async (tx) => {
    const id = await app.store.nextId(tx);
    const row: Values = {};
    for (const p of type.properties) {
      if (p.access === 'key') row[p.name] = id;
      else if (Object.prototype.hasOwnProperty.call(values, p.name)) row[p.name] = values[p.name]!;
      else if (p.timestamp) row[p.name] = app.clock.now();
      else row[p.name] = defaultOf(p);
      if (row[p.name] === null && !p.nullable && p.access !== 'key') throw new Error(`seed ${set}: ${p.name} needs a value`);
    }
    await app.entities.insert(tx, accountId, type, row);
    return row;
  });
}

/** seedFull, answering only the new Id. */
export async function seedRow(live: LiveService, accountId: number, set: string, values: Values): Promise<bigint> {
  return (await seedFull(live, accountId, set, values)).Id as bigint;
}

// ---------------------------------------------------------------------------------------------
// HTTP with keep-alive

/**
 * Requests over a pool of keep-alive connections (at most `sockets` at once), so that thousands
 * of small requests do not each open a connection.
 */
export class KeepAliveClient {
  private readonly agent: http.Agent;

  constructor(sockets = 8) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  }

  /**
   * A GET; retried once when it went out on a reused connection that the server closed at that
   * moment (its keep-alive timeout): the race Node documents for request.reusedSocket. The
   * request never reached the service, so the retry is no second request to it.
   */
  async get(url: string, given: Record<string, string> = {}): Promise<HttpResponse> {
    // Declaring its versions as the connector does, unless the test says otherwise: without any
    // version header the answers would be version 2.0 shapes.
    const headers = { ...CONNECTOR_VERSIONS, ...given };
    try {
      return await this.once(url, headers);
    } catch (error) {
      if ((error as { reusedSocket?: boolean }).reusedSocket && (error as NodeJS.ErrnoException).code === 'ECONNRESET') return this.once(url, headers);
      throw error;
    }
  }

  private once(url: string, headers: Record<string, string>): Promise<HttpResponse> {
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method: 'GET', headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', (error) => reject(Object.assign(error, { reusedSocket: req.reusedSocket })));
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Runs `work` over `items` with at most `limit` in flight; answers the results in item order. */
export async function inParallel<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      results[i] = await work(items[i]!, i);
    }
  });
  await Promise.all(workers);
  return results;
}

// ---------------------------------------------------------------------------------------------
// URLs

export type SpaceEncoding = '%20' | '+';

/**
 * A system query option's value as a client writes it: percent-encoded as encodeURIComponent
 * does (a literal '+' as %2B, a quote left as it is), with spaces as %20 or as '+' (form style).
 */
export function encodeOption(value: string, spaces: SpaceEncoding = '%20'): string {
  const encoded = encodeURIComponent(value);
  return spaces === '+' ? encoded.replace(/%20/g, '+') : encoded;
}

/** `<root>/<set>?$filter=…&<extra>` */
export function filterUrl(root: string, set: string, filter: string, spaces: SpaceEncoding = '%20', extra = ''): string {
  return `${root}/${set}?$filter=${encodeOption(filter, spaces)}${extra ? `&${extra}` : ''}`;
}

// ---------------------------------------------------------------------------------------------
// Reading answers

const obj = (v: unknown) => v as Record<string, unknown>;

/**
 * The entities of a JSON verbose collection answer, read as the connector reads it: `d.results`
 * when the answered DataServiceVersion starts with 2.0, else `d` itself (which must be an array).
 */
export function jsonEntities(res: HttpResponse): Record<string, unknown>[] {
  assert.equal(res.status, 200, `expected 200, got ${res.status}: ${res.body.slice(0, 400)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const version = String(res.headers.dataserviceversion ?? '');
  const d = obj(JSON.parse(res.body)).d;
  const list = version.startsWith('2.0') ? obj(d).results : d;
  assert.ok(Array.isArray(list), `DataServiceVersion ${version}: the collection is not an array: ${res.body.slice(0, 200)}`);
  return list as Record<string, unknown>[];
}

/** The Ids (as decimal text) of a JSON verbose collection answer. */
export function jsonIds(res: HttpResponse): string[] {
  return jsonEntities(res).map((e) => {
    assert.equal(typeof e.Id, 'string', 'Int64 Ids are JSON strings');
    return e.Id as string;
  });
}

/** The Ids of an Atom feed answer, read from each entry's <id> (…/Set(123L)) and its d:Id. */
export function atomIds(res: HttpResponse): string[] {
  assert.equal(res.status, 200, `expected 200, got ${res.status}: ${res.body.slice(0, 400)}`);
  assert.match(String(res.headers['content-type']), /^application\/atom\+xml/);
  const feed = parseXml(res.body).documentElement;
  assert.equal(feed.localName, 'feed');
  assert.equal(feed.namespaceURI, ATOM);
  return childElements(feed, ATOM, 'entry').map((entry) => {
    const idText = childElements(entry, ATOM, 'id')[0]?.textContent ?? '';
    const m = /\((\d+)L\)$/.exec(idText);
    assert.ok(m, `entry id ${idText}`);
    // The entry's own properties (not those of an entry inlined in one of its links).
    const content = childElements(entry, ATOM, 'content')[0];
    const properties = content ? childElements(content, M, 'properties')[0] : undefined;
    const dId = properties ? childElements(properties, D, 'Id')[0]?.textContent : undefined;
    if (dId !== undefined && dId !== null) assert.equal(dId, m[1], 'the entry id and d:Id name the same entity');
    return m[1]!;
  });
}

export const sortIds = (ids: Iterable<string | bigint>): string[] =>
  [...ids].map(String).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));

/** Headers that authenticate as the seller and ask for a format (JSON the way the connector asks). */
export function sellerHeaders(seller: Seller, format: 'json' | 'atom'): Record<string, string> {
  return {
    ...seller.auth,
    Accept: format === 'json' ? 'application/json' : 'application/atom+xml',
    DataServiceVersion: '2.0',
    MaxDataServiceVersion: format === 'json' ? '3.0' : '2.0',
  };
}
