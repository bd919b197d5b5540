/**
 * The deployment of deploy/ on one machine (deploy/local.ts: HAProxy, two `catalogue serve`
 * processes, pgbouncer in transaction mode, one PostgreSQL), under a mixed load of 64 clients of
 * 8 accounts through HAProxy while one process is killed with SIGKILL and started again:
 * - a session made on one process works on the other;
 * - every answer is right or a failure a client can retry (a connection error, or HAProxy's
 *   502/503/504 for a request the killed process had taken): never a wrong answer, never a 4xx
 *   or 500 from the service;
 * - every acknowledged write is in the database afterwards (read as the superuser, past the
 *   service), and a POST retried with its Idempotency-Key created one row, not two;
 * - both processes served, and the restarted one served again.
 *
 * Bounded: each client stops after 200 operations or when the run ends (about 5 s after the
 * restart). PostgreSQL half only, with its own cluster; skipped, saying what is missing, without
 * pgbouncer or haproxy (CI installs them, and fails instead under REQUIRE_ALL=1 or REQUIRE_POSTGRES=1).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { request, type HttpResponse } from '../support/http-client';
import { deploymentAccount, loginAt } from '../support/serve-process';
import { testEngine } from '../support/test-database';
import { reportFigures } from '../support/figures';
import { missingPrograms, startLocalDeployment, type LocalDeployment } from '../../deploy/local';
import { requireProgram } from '../support/requirements';

const SERVICE = '/publicapi/v1/api.svc';
const CLIENTS = 64;
const ACCOUNTS = 8;
const MAX_OPERATIONS = 200;
/** Attempts of one operation before the client gives up on it (each a retryable failure). */
const MAX_ATTEMPTS = 20;

const missing = testEngine === 'postgres' ? missingPrograms() : [];
const skip =
  testEngine !== 'postgres'
    ? 'PostgreSQL half only: the deployment runs on PostgreSQL'
    : requireProgram(missing.map((m) => m.what).join(' and '), missing.length === 0, missing.map((m) => m.install).join('; '), { postgres: true });

interface Account {
  readonly id: number;
  readonly auth: Record<string, string>;
}

/** A failure that a client retries: the request may or may not have been carried out. */
type Outcome = { kind: 'answer'; res: HttpResponse } | { kind: 'retryable'; why: string };

async function attempt(url: string, init: Parameters<typeof request>[1]): Promise<Outcome> {
  try {
    const res = await request(url, init);
    // HAProxy's own answers for a process that died under the request or is down.
    if ((res.status === 502 || res.status === 503 || res.status === 504) && !/"error"/.test(res.body)) return { kind: 'retryable', why: `HAProxy ${res.status}` };
    return { kind: 'answer', res };
  } catch (error) {
    return { kind: 'retryable', why: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  }
}

describe('the scale-out deployment under load while a process is killed', { skip }, () => {
  let deployment: LocalDeployment;
  const accounts: Account[] = [];

  before(async () => {
    deployment = await startLocalDeployment();
    for (let i = 0; i < ACCOUNTS; i++) {
      // Logged in through HAProxy: whichever process made the session, both must accept it.
      const { accountId, auth } = await deploymentAccount(deployment.origin, deployment.commandEnv, `scale-${i}`);
      accounts.push({ id: accountId, auth });
    }
  });
  after(() => deployment?.stop());

  test('a session made on one process is accepted by the other, and by HAProxy', async () => {
    const [one, two] = deployment.serviceOrigins;
    const cookie = await loginAt(one!, 'scale-0', 'pw-scale-0-secret');
    assert.ok(cookie);
    const auth = { SubscriptionToken: accounts[0]!.auth.SubscriptionToken!, Cookie: `.ASPXAUTH=${cookie}`, Accept: 'application/json' };
    for (const origin of [two!, one!, deployment.origin]) {
      const res = await request(`${origin}${SERVICE}/`, { headers: auth });
      assert.equal(res.status, 200, `${origin}: ${res.body}`);
    }
  });

  test('64 clients: no wrong answer, no acknowledged write lost, while process 1 is killed with SIGKILL and restarted', { timeout: 240_000 }, async (t) => {
    const json = { Accept: 'application/json', 'Content-Type': 'application/json', DataServiceVersion: '1.0' };
    const wrong: string[] = [];
    const retryable = new Map<string, number>();
    /** ForeignId -> [account, Id] of every acknowledged POST. */
    const created = new Map<string, { account: number; id: string }>();
    /** Product Id -> the stock of its last acknowledged MERGE. */
    const stock = new Map<string, number>();
    let operations = 0;
    let running = true;

    /** One operation, retried while it fails retryably; its answer, or undefined after MAX_ATTEMPTS. */
    const perform = async (url: string, init: Parameters<typeof request>[1]): Promise<HttpResponse | undefined> => {
      for (let n = 0; n < MAX_ATTEMPTS; n++) {
        const outcome = await attempt(url, init);
        if (outcome.kind === 'answer') return outcome.res;
        retryable.set(outcome.why, (retryable.get(outcome.why) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 100));
      }
      return undefined;
    };

    const client = async (c: number) => {
      const account = accounts[c % ACCOUNTS]!;
      const mine: { foreignId: string; id: string }[] = [];
      const headers = { ...account.auth, ...json };
      for (let op = 0; op < MAX_OPERATIONS && running; op++) {
        operations++;
        const kind = mine.length === 0 ? 0 : op % 4;
        if (kind === 0) {
          const foreignId = `c${c}-${op}`;
          const body = JSON.stringify({ Title: `Produkt ${foreignId}`, Price: '9.90', StockAmount: 0, ForeignId: foreignId });
          // The same Idempotency-Key on every attempt: a POST that committed before its process
          // died answers its first answer on the retry instead of creating a second product.
          const res = await perform(`${deployment.origin}${SERVICE}/Products`, { method: 'POST', headers: { ...headers, 'Idempotency-Key': `key-${foreignId}` }, body });
          if (!res) continue;
          if (res.status !== 201) {
            wrong.push(`POST ${foreignId}: ${res.status} ${res.body.slice(0, 200)}`);
            continue;
          }
          const id = String((JSON.parse(res.body) as { d: { Id: string; ForeignId: string } }).d.Id);
          created.set(foreignId, { account: account.id, id });
          mine.push({ foreignId, id });
        } else {
          const target = mine[op % mine.length]!;
          if (kind === 1) {
            const res = await perform(`${deployment.origin}${SERVICE}/Products(${target.id}L)`, { headers });
            if (res && (res.status !== 200 || (JSON.parse(res.body) as { d: { ForeignId: string } }).d.ForeignId !== target.foreignId)) {
              wrong.push(`GET ${target.id}: ${res.status} ${res.body.slice(0, 200)}`);
            }
          } else if (kind === 2) {
            const res = await perform(`${deployment.origin}${SERVICE}/Products?$filter=${encodeURIComponent(`ForeignId eq '${target.foreignId}'`)}`, { headers });
            const found = res?.status === 200 ? (JSON.parse(res.body) as { d: { Id: string }[] }).d.map((p) => String(p.Id)) : undefined;
            if (res && JSON.stringify(found) !== JSON.stringify([target.id])) wrong.push(`filter ${target.foreignId}: ${res.status} ${res.body.slice(0, 200)}`);
          } else {
            const res = await perform(`${deployment.origin}${SERVICE}/Products(${target.id}L)`, { method: 'MERGE', headers, body: JSON.stringify({ StockAmount: op }) });
            if (res && res.status !== 204) wrong.push(`MERGE ${target.id}: ${res.status} ${res.body.slice(0, 200)}`);
            else if (res) stock.set(target.id, op);
          }
        }
      }
    };

    const load = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await wait(2000);
    const before = operations;
    await deployment.kill(0);
    await wait(2000);
    await deployment.restart(0);
    const restarted = deployment.services[0]!;
    await wait(5000);
    running = false;
    await load;

    assert.ok(before > 0, 'the load was running when the process was killed');
    assert.deepEqual(wrong, []);
    const retries = [...retryable.values()].reduce((a, b) => a + b, 0);
    // The kill hit requests in flight: they failed in a way a client retries, and were retried.
    assert.ok(retries > 0, 'the killed process had requests in flight');
    // The restarted process served requests through HAProxy again.
    assert.match(restarted.output(), /"path":"\/publicapi\/v1\/api\.svc\/Products[^"]*","status":20/);
    assert.match(deployment.services[1]!.output(), /"path":"\/publicapi\/v1\/api\.svc\/Products[^"]*","status":20/);

    // Every acknowledged write is in the database, read as the superuser (past the service and
    // row-level security); a retried POST made one product, not two.
    const admin = new pg.Client({ connectionString: deployment.cluster.adminUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ account_id: string; id: string; foreign_id: string; stock_amount: number }>(
        `SELECT account_id::text, id::text, foreign_id, stock_amount FROM products`,
      );
      const byForeignId = new Map<string, typeof rows>();
      for (const row of rows) byForeignId.set(row.foreign_id, [...(byForeignId.get(row.foreign_id) ?? []), row]);
      for (const [foreignId, rowsOf] of byForeignId) assert.equal(rowsOf.length, 1, `${foreignId} was created ${rowsOf.length} times`);
      for (const [foreignId, { account, id }] of created) {
        const row = byForeignId.get(foreignId)?.[0];
        assert.ok(row, `acknowledged POST ${foreignId} (Id ${id}) is missing`);
        assert.equal(row.id, id);
        assert.equal(Number(row.account_id), account);
      }
      const byId = new Map(rows.map((r) => [r.id, r] as const));
      for (const [id, value] of stock) assert.equal(byId.get(id)?.stock_amount, value, `acknowledged MERGE of ${id}`);
      reportFigures('scale-out', {
        clients: CLIENTS,
        operations,
        acknowledgedPosts: created.size,
        acknowledgedMerges: stock.size,
        retriedFailures: retries,
        failureKinds: [...retryable.keys()].join('|'),
        productsInDatabase: rows.length,
      }, t);
    } finally {
      await admin.end();
    }
  });
});
