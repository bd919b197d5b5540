/**
 * Delta links across kill -9: a connector keeps a mirror of one seller's products (Id →
 * StockAmount) from delta links alone, while writers MERGE rising StockAmounts, and the
 * `catalogue serve` process is killed with SIGKILL at a random moment, cycle after cycle, and
 * restarted on the same database. The connector goes on with the last delta link it was given.
 *
 * Checked: after every delta it applied, each MERGE acknowledged before the delta was asked for
 * is in the mirror (the value, or a later one: values only rise), so a change committed before
 * a link was issued is never missing from the delta that follows it, also when the link was
 * issued before the kill and followed after the restart; and at the end the mirror equals a full
 * read of the set, unacknowledged writes that did commit included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { openStore } from '../../src/store/open';
import { reportFigures } from '../support/figures';
import { request } from '../support/http-client';
import { mulberry32 } from '../support/random';
import { loginAt, serveProcess, type ServeProcess } from '../support/serve-process';
import { freshDatabase } from '../support/test-database';
import { byTier } from '../support/tier';

const SERVICE = '/publicapi/v1/api.svc';
const CYCLES = byTier(4, 25);
const PRODUCTS = 12;
const WRITERS = 4;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface DeltaAnswer {
  readonly results: Record<string, unknown>[];
  readonly __delta: string;
}

test(`${CYCLES} cycles of writes, delta reads, kill -9 and restart miss no committed change`, async (t) => {
  const database = await freshDatabase();
  let server: ServeProcess = await serveProcess(database.env);
  // A failed check must not leave a server running: the test process would wait for it.
  t.after(() => server.stop());
  const random = mulberry32(0xde17a);
  const userName = `delta-crash-${process.pid}`;
  const password = `${userName}-password`;
  const store = openStore(database.url, { ownerUrl: database.ownerUrl });
  const account = await createAccount(store, systemClock, { userName, password }).finally(() => store.close());
  const cookie = await loginAt(server.origin, userName, password);
  assert.ok(cookie);
  const auth = { SubscriptionToken: account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}`, Accept: 'application/json', DataServiceVersion: '2.0', MaxDataServiceVersion: '2.0' };
  const send = (method: string, target: string, body?: string) =>
    request(target.startsWith('http') ? target : server.origin + SERVICE + target, { method, headers: { ...auth, 'Content-Type': 'application/json' }, ...(body ? { body } : {}) });

  const ids: string[] = [];
  for (let i = 0; i < PRODUCTS; i++) {
    const res = await send('POST', '/Products', JSON.stringify({ Title: `P${i}`, Price: '1', StockAmount: 0 }));
    assert.equal(res.status, 201, res.body);
    ids.push(String((JSON.parse(res.body) as { d: { Id: string } }).d.Id));
  }
  const mirror = new Map<string, number>();
  const acked = new Map<string, number>();
  const attempted = new Map<string, number>(ids.map((id) => [id, 0]));
  const violations: string[] = [];
  let deltas = 0;
  let merges = 0;

  /** Follows a delta link, applies it to the mirror, and checks it against what was acknowledged before it was asked. */
  const follow = async (link: string): Promise<string | undefined> => {
    const before = new Map(acked);
    let res;
    try {
      res = await send('GET', link);
    } catch {
      return undefined;
    }
    if (res.status !== 200) return undefined;
    const d = (JSON.parse(res.body) as { d: DeltaAnswer }).d;
    for (const item of d.results) {
      if (item['@odata.context'] !== undefined) mirror.delete(/\((\d+)L\)$/.exec(String(item.id))![1]!);
      else mirror.set(String(item.Id), Number(item.StockAmount));
    }
    deltas++;
    for (const [id, value] of before) {
      if ((mirror.get(id) ?? -1) < value) violations.push(`product ${id}: ${value} was acknowledged before the delta was asked, the mirror holds ${mirror.get(id)}`);
    }
    return d.__delta;
  };

  const first = await send('GET', '/Products?!deltatoken=');
  assert.equal(first.status, 200, first.body);
  const firstFeed = (JSON.parse(first.body) as { d: DeltaAnswer }).d;
  for (const item of firstFeed.results) mirror.set(String(item.Id), Number(item.StockAmount));
  let link = firstFeed.__delta;

  for (let cycle = 0; cycle < CYCLES; cycle++) {
    let killed = false;
    const writer = async (w: number) => {
      const mine = ids.filter((_, i) => i % WRITERS === w);
      while (!killed) {
        const id = mine[Math.floor(random() * mine.length)]!;
        const value = attempted.get(id)! + 1;
        attempted.set(id, value);
        try {
          const res = await send('MERGE', `/Products(${id}L)`, JSON.stringify({ StockAmount: value }));
          if (res.status === 204) {
            acked.set(id, value);
            merges++;
          } else if (!killed) violations.push(`MERGE answered ${res.status}: ${res.body}`);
        } catch {
          return;
        }
      }
    };
    const reader = async () => {
      while (!killed) {
        const next = await follow(link);
        if (next === undefined) return;
        link = next;
      }
    };
    const running = [...Array.from({ length: WRITERS }, (_, w) => writer(w)), reader()];
    await sleep(150 + Math.floor(random() * 400));
    killed = true;
    await server.kill();
    await Promise.all(running);
    // The link the connector holds was issued by the killed process: the new one answers it.
    const oldOrigin = server.origin;
    server = await serveProcess(database.env);
    link = link.replace(oldOrigin, server.origin);
    const next = await follow(link);
    assert.ok(next, 'the link issued before the kill is answered after the restart');
    link = next;
  }

  // Nothing changes any more: the mirror is the set as it is.
  link = (await follow(link))!;
  const all = await send('GET', '/Products');
  // A plain read of a client that sends its versions: the version 1.0 array.
  const actual = new Map((JSON.parse(all.body) as { d: Record<string, unknown>[] }).d.map((p) => [String(p.Id), Number(p.StockAmount)] as const));
  reportFigures('delta across kill -9', { cycles: CYCLES, acknowledgedMerges: merges, deltasRead: deltas, missedChanges: violations.length }, t);
  assert.deepEqual(violations, []);
  assert.deepEqual([...mirror.entries()].sort(), [...actual.entries()].sort());
  assert.ok(merges > CYCLES && deltas > CYCLES, 'writes and deltas ran in every cycle');
});
