/**
 * kill -9 of the service during a write load, cycle after cycle, on one database of the engine
 * under test (on PostgreSQL the service process dies, the database keeps running; the database
 * crash itself is test/store/postgres-crash.test.ts).
 *
 * Each cycle: a `catalogue serve` child process takes concurrent writes from 8 writers of 4
 * sellers: product POSTs (each with an Idempotency-Key, which is also the product's ForeignId),
 * MERGEs and DELETEs of the products they created, and $batch changesets that create a product
 * with a specific, an image and a variation and MERGE it (every row marked with the changeset's
 * marker). After a random 100–600 ms the process is killed with SIGKILL. Every request answered
 * 2xx before that is recorded as acknowledged. On SQLite, `PRAGMA integrity_check` and
 * `foreign_key_check` run on the file as the kill left it. The service restarts on the same
 * database, every unacknowledged POST is retried with its Idempotency-Key and must answer 201,
 * and the checker reads the catalogue back through the service:
 * - no acknowledged write is lost: created products exist (with the acknowledged Id), the last
 *   acknowledged MERGE's value holds (or a later unanswered MERGE's), deleted products are gone;
 * - no changeset is partial: its product, specific, image, variation and MERGE are all there or
 *   none is (an acknowledged one: all);
 * - no duplicates: one product per Idempotency-Key, acknowledged, replayed or retried.
 * At the end the whole catalogue of every cycle is checked again.
 *
 * And the proof that the checker can fail: one cycle against a build patched by a test-only
 * preload (../support/ack-before-commit.ts) to answer writes before their COMMIT must show lost
 * acknowledged writes.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { openStore } from '../../src/store/open';
import { batchBody, BATCH_BOUNDARY, changesetAnswers, changesetPart, jsonOperation, readBatchAnswer } from '../batch/support';
import { reportFigures } from '../support/figures';
import { request, type HttpResponse } from '../support/http-client';
import { mulberry32 } from '../support/random';
import { loginAt, serveProcess, type ServeProcess } from '../support/serve-process';
import { freshDatabase, testEngine, type TestDatabase } from '../support/test-database';
import { byTier } from '../support/tier';

const SERVICE = '/publicapi/v1/api.svc';
const CYCLES = byTier(20, 100);
const SELLERS = 4;
const WRITERS = 8;
const ACK_BEFORE_COMMIT = path.join(__dirname, '..', 'support', 'ack-before-commit.js');
const SEED = 0xc4a5;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A product created by one POST with an Idempotency-Key, and what was acknowledged about it. */
interface ProductRecord {
  /** The Idempotency-Key, and the product's ForeignId. */
  readonly key: string;
  readonly seller: number;
  readonly cycle: number;
  /** The exact body, so that a retry is the same request. */
  readonly body: string;
  /** Its 201 arrived before the kill. */
  acked: boolean;
  /** Unanswered, then retried after the restart (and answered 201). */
  retried: boolean;
  /** The retry answered the stored first answer: the original had committed. */
  replayed: boolean;
  id: string | undefined;
  /** StockAmount as last acknowledged: the POST's, then each answered MERGE's. */
  stock: number;
  /** A MERGE sent after that and never answered: it may or may not have committed. */
  pendingStock: number | undefined;
  deletion: 'none' | 'unanswered' | 'acked';
}

/** A $batch changeset of five operations, all marked with `marker`. */
interface ChangesetRecord {
  readonly marker: string;
  readonly seller: number;
  readonly cycle: number;
  acked: boolean;
}

interface Seller {
  readonly index: number;
  readonly headers: Record<string, string>;
}

const CHANGESET_STOCK = 7;

/** Every write and answer of every cycle on one database, and what the checker found. */
class Ledger {
  readonly products: ProductRecord[] = [];
  readonly changesets: ChangesetRecord[] = [];
  acknowledgedWrites = 0;
  retried = 0;
  replayed = 0;
  /** Answers that were not the expected 2xx while the service was up: always a failure. */
  readonly errors: string[] = [];
  /** What the checker found, one line per violation (a set: checks repeat at the end). */
  readonly violations = new Set<string>();

  count(kind: 'lost' | 'partial' | 'duplicate'): number {
    return [...this.violations].filter((v) => v.startsWith(kind)).length;
  }
}

type Entity = Record<string, unknown>;

function listOf(value: unknown): Entity[] {
  if (Array.isArray(value)) return value as Entity[];
  const results = (value as { results?: unknown } | null)?.results;
  return Array.isArray(results) ? (results as Entity[]) : [];
}

/** One database, its sellers and the server process currently serving it. */
class Harness {
  server: ServeProcess | undefined;
  readonly ledger = new Ledger();
  private sellers: Seller[] = [];
  private mergeValue = 100;

  constructor(readonly database: TestDatabase) {}

  async start(nodeArgs: string[] = []): Promise<ServeProcess> {
    this.server = await serveProcess(this.database.env, [], nodeArgs);
    return this.server;
  }

  /** Accounts made through a store of this process; sessions through the server's login (they live in the database). */
  async createSellers(): Promise<void> {
    const store = openStore(this.database.url, { ownerUrl: this.database.ownerUrl });
    try {
      for (let i = 0; i < SELLERS; i++) {
        const userName = `crash-${i}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
        const password = `${userName}-password`;
        const account = await createAccount(store, systemClock, { userName, password });
        const cookie = await loginAt(this.server!.origin, userName, password);
        assert.ok(cookie, `login of ${userName}`);
        this.sellers.push({ index: i, headers: { SubscriptionToken: account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}` } });
      }
    } finally {
      await store.close();
    }
  }

  private send(seller: number, method: string, target: string, body?: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
    return request(this.server!.origin + SERVICE + target, {
      method,
      headers: { ...this.sellers[seller]!.headers, Accept: 'application/json', 'Content-Type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body }),
    });
  }

  /**
   * A write during the load: its answer when it was the expected one; undefined when it got none
   * (the kill), and also, recorded as an error, when it got another status.
   */
  private async attempt(seller: number, expected: number, method: string, target: string, body?: string, headers?: Record<string, string>): Promise<HttpResponse | undefined> {
    let res: HttpResponse;
    try {
      res = await this.send(seller, method, target, body, headers);
    } catch {
      return undefined; // no answer: the process died with the request in flight (or before it)
    }
    if (res.status !== expected) {
      this.ledger.errors.push(`${method} ${target}: ${res.status} ${res.body.slice(0, 300)}`);
      return undefined;
    }
    this.ledger.acknowledgedWrites++;
    return res;
  }

  /** POST with its key, MERGE it one to three times, and DELETE it sometimes. False once unanswered. */
  private async productLife(cycle: number, writer: number, n: number, random: () => number): Promise<boolean> {
    const seller = writer % SELLERS;
    const key = `k${cycle}-w${writer}-p${n}`;
    const record: ProductRecord = {
      key,
      seller,
      cycle,
      body: JSON.stringify({ Title: `crash ${key}`, Price: '5', StockAmount: 1, ForeignId: key }),
      acked: false,
      retried: false,
      replayed: false,
      id: undefined,
      stock: 1,
      pendingStock: undefined,
      deletion: 'none',
    };
    this.ledger.products.push(record);
    const created = await this.attempt(seller, 201, 'POST', '/Products', record.body, { 'Idempotency-Key': key });
    if (!created) return false;
    record.acked = true;
    record.id = String((JSON.parse(created.body) as { d: { Id: string } }).d.Id);
    for (let m = 1 + Math.floor(random() * 3); m > 0; m--) {
      const value = ++this.mergeValue;
      record.pendingStock = value;
      if (!(await this.attempt(seller, 204, 'MERGE', `/Products(${record.id}L)`, JSON.stringify({ StockAmount: value })))) return false;
      record.stock = value;
      record.pendingStock = undefined;
    }
    if (random() < 0.4) {
      record.deletion = 'unanswered';
      if (!(await this.attempt(seller, 204, 'DELETE', `/Products(${record.id}L)`))) return false;
      record.deletion = 'acked';
    }
    return true;
  }

  /** A product with a specific, an image and a variation, then a MERGE of it: one transaction. */
  private async changeset(cycle: number, writer: number, n: number): Promise<boolean> {
    const seller = writer % SELLERS;
    const marker = `k${cycle}-w${writer}-c${n}`;
    const record: ChangesetRecord = { marker, seller, cycle, acked: false };
    this.ledger.changesets.push(record);
    const body = batchBody([
      changesetPart([
        jsonOperation('POST', 'Products', 1, { Title: `changeset ${marker}`, Price: '7', StockAmount: 1, ForeignId: marker }),
        jsonOperation('POST', '$1/ProductSpecifics', 2, { Name: 'Charge', Value: marker }),
        jsonOperation('POST', '$1/ProductImages', 3, { Type: 1, ImageUrl: `https://img.example.com/${marker}.jpg` }),
        jsonOperation('POST', '$1/ProductVariations', 4, { Sku: marker, Price: '7', StockAmount: 1 }),
        jsonOperation('MERGE', '$1', 5, { StockAmount: CHANGESET_STOCK }),
      ]),
    ]);
    const res = await this.attempt(seller, 202, 'POST', '/$batch', body, { 'Content-Type': `multipart/mixed; boundary=${BATCH_BOUNDARY}`, DataServiceVersion: '2.0', MaxDataServiceVersion: '2.0' });
    if (!res) return false;
    try {
      const statuses = changesetAnswers(readBatchAnswer(res)[0]).map((part) => part.status);
      assert.deepEqual(statuses, [201, 201, 201, 201, 204]);
    } catch (error) {
      this.ledger.errors.push(`changeset ${marker}: ${(error as Error).message.slice(0, 300)}`);
      return false;
    }
    record.acked = true;
    return true;
  }

  private async writer(cycle: number, writer: number, random: () => number, killed: () => boolean): Promise<void> {
    for (let n = 0; !killed(); n++) {
      const answered = random() < 0.25 ? await this.changeset(cycle, writer, n) : await this.productLife(cycle, writer, n, random);
      if (!answered) return;
    }
  }

  /**
   * The load, then SIGKILL after `delayMs` (and, when `atLeastOneAck`, not before some write was
   * acknowledged); resolves when every writer has stopped.
   */
  /**
   * Runs the writers and kills the service after `delayMs`, or later: with `atLeastOneAck` not
   * before a write of the cycle was answered, with `everyKind` not before an answered DELETE,
   * MERGE and changeset (on a slow, loaded machine a few hundred ms may answer none of them).
   */
  async loadAndKill(cycle: number, random: () => number, delayMs: number, wait: { atLeastOneAck?: boolean; everyKind?: boolean } = {}): Promise<void> {
    const server = this.server!;
    let killed = false;
    const ackedBefore = this.ledger.acknowledgedWrites;
    const writers = Array.from({ length: WRITERS }, (_, w) => this.writer(cycle, w, mulberry32(Math.floor(random() * 2 ** 31)), () => killed));
    await sleep(delayMs);
    const ledger = this.ledger;
    const everyKindAnswered = () =>
      ledger.products.some((p) => p.cycle === cycle && p.deletion === 'acked') &&
      ledger.products.some((p) => p.cycle === cycle && p.acked && p.stock > 1) &&
      ledger.changesets.some((c) => c.cycle === cycle && c.acked);
    const waiting = () => (wait.atLeastOneAck === true && ledger.acknowledgedWrites === ackedBefore) || (wait.everyKind === true && !everyKindAnswered());
    for (let waited = 0; waiting() && waited < 15_000; waited += 10) await sleep(10);
    const dead = server.kill();
    killed = true;
    await dead;
    await Promise.all(writers);
    this.server = undefined;
  }

  /** SQLite only: the file as the kill left it passes integrity_check and foreign_key_check. */
  integrity(): { ok: boolean; detail: string } {
    const db = new Database(this.database.file!);
    try {
      const integrity = db.pragma('integrity_check', { simple: true });
      const foreignKeys = db.pragma('foreign_key_check') as unknown[];
      return { ok: integrity === 'ok' && foreignKeys.length === 0, detail: `integrity_check ${String(integrity)}, ${foreignKeys.length} foreign key violations` };
    } finally {
      db.close();
    }
  }

  /** Every unanswered POST of the cycle again, with its key and body: each must answer 201. */
  async retryUnanswered(cycle: number): Promise<void> {
    await Promise.all(
      this.ledger.products
        .filter((p) => p.cycle === cycle && !p.acked)
        .map(async (p) => {
          const res = await this.send(p.seller, 'POST', '/Products', p.body, { 'Idempotency-Key': p.key });
          if (res.status !== 201) {
            this.ledger.errors.push(`retry of ${p.key}: ${res.status} ${res.body.slice(0, 300)}`);
            return;
          }
          this.ledger.acknowledgedWrites++;
          this.ledger.retried++;
          p.retried = true;
          p.id = String((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
          p.replayed = res.headers['idempotent-replayed'] === 'true';
          if (p.replayed) this.ledger.replayed++;
        }),
    );
  }

  /** The seller's products whose ForeignId starts with `prefix`, with their parts, by ForeignId. */
  private async catalogue(seller: number, prefix: string): Promise<Map<string, Entity[]>> {
    const filter = encodeURIComponent(`startswith(ForeignId, '${prefix}')`);
    const res = await this.send(seller, 'GET', `/Products?$filter=${filter}&$expand=ProductSpecifics,ProductImages,ProductVariations`);
    assert.equal(res.status, 200, res.body.slice(0, 500));
    const byKey = new Map<string, Entity[]>();
    for (const product of listOf((JSON.parse(res.body) as { d: unknown }).d)) {
      const key = String(product.ForeignId);
      byKey.set(key, [...(byKey.get(key) ?? []), product]);
    }
    return byKey;
  }

  /** Checks the records of one cycle (or of all: undefined) against what the service reads back. */
  async verify(cycle: number | undefined): Promise<void> {
    const prefix = cycle === undefined ? 'k' : `k${cycle}-`;
    const found = await Promise.all(this.sellers.map((s) => this.catalogue(s.index, prefix)));
    const v = this.ledger.violations;
    for (const p of this.ledger.products.filter((r) => cycle === undefined || r.cycle === cycle)) {
      const rows = found[p.seller]!.get(p.key) ?? [];
      if (rows.length > 1) v.add(`duplicate: ${rows.length} products for the Idempotency-Key ${p.key}`);
      if (p.deletion === 'acked') {
        if (rows.length > 0) v.add(`lost: the acknowledged DELETE of ${p.key} (${p.id}): it is still there`);
        continue;
      }
      const row = rows[0];
      if (!row) {
        if (p.deletion === 'none') v.add(`lost: the ${p.acked ? 'acknowledged' : 'retried'} create of ${p.key} (${p.id}) is missing`);
        continue;
      }
      if (String(row.Id) !== p.id) v.add(`lost: ${p.key} was acknowledged as ${p.id}, the service has ${String(row.Id)}`);
      const allowed = p.pendingStock === undefined ? [p.stock] : [p.stock, p.pendingStock];
      if (!allowed.includes(Number(row.StockAmount))) v.add(`lost: the acknowledged MERGE of ${p.key}: StockAmount ${String(row.StockAmount)}, acknowledged ${allowed.join(' (or unanswered) ')}`);
    }
    for (const c of this.ledger.changesets.filter((r) => cycle === undefined || r.cycle === cycle)) {
      const rows = found[c.seller]!.get(c.marker) ?? [];
      if (rows.length > 1) v.add(`duplicate: ${rows.length} products for the changeset ${c.marker}`);
      const row = rows[0];
      if (!row) {
        if (c.acked) v.add(`lost: the acknowledged changeset ${c.marker} is missing`);
        continue;
      }
      const parts = {
        specific: listOf(row.ProductSpecifics).filter((s) => s.Name === 'Charge' && s.Value === c.marker).length,
        image: listOf(row.ProductImages).filter((i) => i.ImageUrl === `https://img.example.com/${c.marker}.jpg`).length,
        variation: listOf(row.ProductVariations).filter((x) => x.Sku === c.marker).length,
        merge: Number(row.StockAmount) === CHANGESET_STOCK ? 1 : 0,
      };
      if (Object.values(parts).some((count) => count !== 1)) v.add(`partial: changeset ${c.marker} left its product with ${JSON.stringify(parts)}`);
    }
  }
}

/** The figures of the real cycles, reported with the fault-injection result by the last test. */
let cycleFigures: Record<string, number | string | boolean> | undefined;

describe('kill -9 of the service during a write load', { timeout: 600_000 }, () => {
  test(`${CYCLES} cycles of load, kill -9, restart and retry lose no acknowledged write`, async (t) => {
    const harness = new Harness(await freshDatabase());
    const random = mulberry32(SEED);
    await harness.start();
    await harness.createSellers();
    const integrityFailures: string[] = [];
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        // Every fourth cycle runs until each kind of write was answered, so the checks below
        // always have answered deletes, merges and changesets to check.
        await harness.loadAndKill(cycle, random, 100 + Math.floor(random() * 500), { everyKind: cycle % 4 === 3 });
        if (testEngine === 'sqlite') {
          const { ok, detail } = harness.integrity();
          if (!ok) integrityFailures.push(`cycle ${cycle}: ${detail}`);
        }
        await harness.start();
        await harness.retryUnanswered(cycle);
        await harness.verify(cycle);
      }
      await harness.verify(undefined);
    } finally {
      await harness.server?.stop();
    }
    const { ledger } = harness;
    cycleFigures = {
      cycles: CYCLES,
      acknowledgedWrites: ledger.acknowledgedWrites,
      lostWrites: ledger.count('lost'),
      partialChangesets: ledger.count('partial'),
      duplicates: ledger.count('duplicate'),
      integrityOk: testEngine === 'sqlite' ? integrityFailures.length === 0 : 'n/a (postgres)',
    };
    const unanswered = ledger.products.filter((p) => !p.acked).length + ledger.changesets.filter((c) => !c.acked).length;
    t.diagnostic(
      `${ledger.products.length} product POSTs, ${ledger.changesets.length} changesets; ${unanswered} writes unanswered at a kill; ` +
        `${ledger.retried} POSTs retried, ${ledger.replayed} of them replayed (committed before the kill, answer lost)`,
    );
    assert.deepEqual(ledger.errors.slice(0, 5), [], 'every answered write answered 2xx, and every retry 201');
    assert.deepEqual([...ledger.violations].slice(0, 10), [], 'no lost, partial or duplicated write');
    assert.deepEqual(integrityFailures, [], 'the SQLite file passes its checks after every kill');
    // The checker had something to check: acknowledged writes of every kind, and retries.
    assert.ok(ledger.products.some((p) => p.acked && p.deletion === 'acked'), 'acknowledged deletes');
    assert.ok(ledger.products.some((p) => p.acked && p.stock > 1), 'acknowledged merges');
    assert.ok(ledger.changesets.some((c) => c.acked), 'acknowledged changesets');
    assert.ok(ledger.retried > 0, 'unanswered POSTs were retried');
  });

  test('the checker sees lost writes when the service answers before COMMIT (test-only fault)', async (t) => {
    const harness = new Harness(await freshDatabase());
    const random = mulberry32(SEED + 1);
    await harness.start(); // the accounts' logins on a sound build
    await harness.createSellers();
    await harness.server!.stop();
    const faulty = await harness.start(['-r', ACK_BEFORE_COMMIT]);
    assert.match(faulty.output(), /ack-before-commit: store\.write answers before COMMIT/, 'the fault is loaded');
    try {
      await harness.loadAndKill(0, random, 100 + Math.floor(random() * 500), { atLeastOneAck: true });
      await harness.start();
      await harness.retryUnanswered(0);
      await harness.verify(0);
    } finally {
      await harness.server?.stop();
    }
    const lost = harness.ledger.count('lost');
    t.diagnostic(`against the faulty build: ${harness.ledger.acknowledgedWrites} acknowledged writes, ${lost} lost: ${[...harness.ledger.violations].slice(0, 3).join('; ')}`);
    reportFigures('crash durability', { ...(cycleFigures ?? { cycles: 'failed' }), ackBeforeCommitDetected: lost > 0 }, t);
    assert.deepEqual(harness.ledger.errors.slice(0, 5), [], 'no error answers, only lost ones');
    assert.ok(lost > 0, 'the checker detects acknowledged writes that the kill lost');
  });
});
