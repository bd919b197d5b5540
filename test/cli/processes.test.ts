/**
 * Several server processes on one database, as behind a load balancer: real `catalogue serve`
 * child processes on 127.0.0.1, on the engine under test.
 * - Two independent processes: a login on one gives a cookie that the other accepts, and a
 *   logout on the other ends it for both (sessions live in the database).
 * - `serve --workers 4` under a concurrent write load spread over the workers keeps every limit
 *   exactly: 120 variations per product, 5 characteristic names, 30 values per name, one image
 *   per Type slot 1 to 12.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { createAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { openStore } from '../../src/store/open';
import type { Store } from '../../src/store/store';
import { request, type HttpResponse } from '../support/http-client';
import { CATALOGUE_BIN, loginAt, serveProcess, type ServeProcess } from '../support/serve-process';
import { freshDatabase, type TestDatabase } from '../support/test-database';

const SERVICE = '/publicapi/v1/api.svc';

interface Credentials {
  readonly accountId: number;
  readonly token: string;
  readonly cookie: string;
}

async function newAccount(store: Store, origin: string, userName: string): Promise<Credentials> {
  const password = `${userName}-password`;
  const account = await createAccount(store, systemClock, { userName, password });
  const cookie = await loginAt(origin, userName, password);
  assert.ok(cookie, 'login succeeds');
  return { accountId: account.accountId, token: account.subscriptionToken, cookie };
}

function call(origin: string, who: Credentials, method: string, path: string, body?: unknown): Promise<HttpResponse> {
  return request(origin + SERVICE + path, {
    method,
    headers: {
      SubscriptionToken: who.token,
      Cookie: `.ASPXAUTH=${who.cookie}`,
      Accept: 'application/json',
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function createdId(res: HttpResponse): Promise<string> {
  assert.equal(res.status, 201, res.body);
  return String((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
}

describe('two independent server processes on one database', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let store: Store;
  let one: ServeProcess;
  let two: ServeProcess;

  before(async () => {
    database = await freshDatabase();
    one = await serveProcess(database.env);
    two = await serveProcess(database.env);
    store = openStore(database.url, { ownerUrl: database.ownerUrl });
  });
  after(async () => {
    await store?.close();
    assert.equal(await one?.stop(), 0);
    assert.equal(await two?.stop(), 0);
  });

  test('a login on process 1 gives a cookie that works on process 2; a logout on 2 ends it on 1', async () => {
    assert.notEqual(one.child.pid, two.child.pid);
    assert.notEqual(one.origin, two.origin);
    const seller = await newAccount(store, one.origin, `two-processes-${process.pid}`);
    const onTwo = await call(two.origin, seller, 'GET', '/');
    assert.equal(onTwo.status, 200, onTwo.body);
    // Written on one, read on the other.
    const id = await createdId(await call(one.origin, seller, 'POST', '/Products', { Title: 'shared', Price: '1.5', StockAmount: 1 }));
    const read = await call(two.origin, seller, 'GET', `/Products(${id}L)`);
    assert.equal(read.status, 200);
    assert.equal((JSON.parse(read.body) as { d: { Title: string } }).d.Title, 'shared');
    const logout = await request(two.origin + '/Authentication_JSON_AppService.axd/Logout', {
      method: 'POST',
      headers: { Cookie: `.ASPXAUTH=${seller.cookie}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    assert.equal(logout.status, 200);
    assert.equal((await call(one.origin, seller, 'GET', '/')).status, 401);
    assert.equal((await call(two.origin, seller, 'GET', '/')).status, 401);
  });
});

/** The pids of a process's children (Linux /proc), so a test only ever signals its own processes. */
function childrenOf(pid: number): number[] {
  const text = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text ? text.split(/\s+/).map(Number) : [];
}

/** Runs the requests with at most `width` in flight; answers in order. */
async function inFlight<T>(jobs: (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i]!();
      }
    }),
  );
  return results;
}

describe('serve --workers 4 under a concurrent write load', { timeout: 180_000 }, () => {
  let database: TestDatabase;
  let store: Store;
  let served: ServeProcess;
  let seller: Credentials;

  before(async () => {
    database = await freshDatabase();
    served = await serveProcess(database.env, ['--workers', '4']);
    store = openStore(database.url, { ownerUrl: database.ownerUrl });
    seller = await newAccount(store, served.origin, `workers-${process.pid}`);
  });
  after(async () => {
    await store?.close();
    assert.equal(await served?.stop(), 0, 'all workers drain and the primary exits 0');
  });

  test('every limit holds exactly, with the requests spread over the workers', async () => {
    const post = (set: string, body: Record<string, unknown>) => () => call(served.origin, seller, 'POST', `/${set}`, body);
    const product = async (title: string) => createdId(await call(served.origin, seller, 'POST', '/Products', { Title: title, Price: '10', StockAmount: 1 }));
    const [variations, names, values, images] = await Promise.all([product('variations'), product('names'), product('values'), product('images')]);
    // Variations to hang characteristics on, made before the load.
    const nameHolders = await inFlight(Array.from({ length: 8 }, (_, i) => async () => createdId(await post('ProductVariations', { ProductId: names, Price: '1', StockAmount: 1, Sku: `n${i}` })())), 4);
    const valueHolders = await inFlight(Array.from({ length: 40 }, (_, i) => async () => createdId(await post('ProductVariations', { ProductId: values, Price: '1', StockAmount: 1, Sku: `v${i}` })())), 4);

    const seen = new Map<string, number>();
    const ranks = new WeakMap<object, number>();
    /** The job's position within its kind, spread over [0, 1). */
    const rank = (job: { kind: string }) => ranks.get(job)!;
    const jobs: { kind: string; run: () => Promise<HttpResponse> }[] = [
      ...Array.from({ length: 150 }, (_, i) => ({ kind: 'variation', run: post('ProductVariations', { ProductId: variations, Price: '1', StockAmount: 1, Sku: `sku-${i}` }) })),
      ...nameHolders.map((v, i) => ({ kind: 'name', run: post('ProductVariationSpecifics', { ProductVariationId: v, Name: `Name${i}`, Value: 'x' }) })),
      ...valueHolders.map((v, i) => ({ kind: 'value', run: post('ProductVariationSpecifics', { ProductVariationId: v, Name: 'Colour', Value: `colour-${i}` }) })),
      // Types 1 and 2 hold one image each (a second is 409); the further images, all sent at
      // Type 3, are inserted there one after another, at most 10 of them (then 400).
      ...Array.from({ length: 36 }, (_, i) => ({ kind: 'image', run: post('ProductImages', { ProductId: images, ImageUrl: `https://img.example.com/${i}.jpg`, Type: i < 3 ? 1 : i < 6 ? 2 : 3 }) })),
    ];
    const sizes = new Map<string, number>();
    for (const j of jobs) sizes.set(j.kind, (sizes.get(j.kind) ?? 0) + 1);
    for (const j of jobs) {
      const k = seen.get(j.kind) ?? 0;
      seen.set(j.kind, k + 1);
      ranks.set(j, k / sizes.get(j.kind)!);
    }
    // Interleaved, so that every limit is raced at once.
    jobs.sort((x, y) => rank(x) - rank(y));
    const answers = await inFlight(jobs.map((j) => j.run), 32);
    const tally = (kind: string, status: number) => answers.filter((r, i) => jobs[i]!.kind === kind && r.status === status).length;
    const unexpected = answers.filter((r) => ![201, 400, 409].includes(r.status));
    assert.deepEqual(unexpected.map((r) => `${r.status} ${r.body}`), [], 'only 201, 400 and 409');

    assert.equal(tally('variation', 201), 120, '120 variations accepted');
    assert.equal(tally('variation', 400), 30, '30 refused by the limit');
    assert.equal(tally('name', 201), 5, '5 characteristic names accepted');
    assert.equal(tally('name', 400), 3);
    assert.equal(tally('value', 201), 30, '30 values accepted');
    assert.equal(tally('value', 400), 10);
    assert.equal(tally('image', 201), 12, 'one image per Type 1 and 2, ten further images');
    assert.equal(tally('image', 409), 4, 'a second image of Type 1 or 2');
    assert.equal(tally('image', 400), 20, 'an eleventh further image');

    // What is stored, read back on its own.
    const stored = await store.read(seller.accountId, async (tx) => {
      const n = async (sql: string, params: unknown[]) => Number((await tx.get<{ n: bigint | number }>(sql, params as never))!.n);
      const ofProduct = `FROM product_variation_specifics s JOIN product_variations v ON v.account_id = s.account_id AND v.id = s.product_variation_id WHERE s.account_id = ? AND v.product_id = ?`;
      return {
        variations: await n(`SELECT count(*) AS n FROM product_variations WHERE account_id = ? AND product_id = ?`, [seller.accountId, BigInt(variations)]),
        names: await n(`SELECT count(DISTINCT s.name) AS n ${ofProduct}`, [seller.accountId, BigInt(names)]),
        values: await n(`SELECT count(DISTINCT s.value) AS n ${ofProduct} AND s.name = 'Colour'`, [seller.accountId, BigInt(values)]),
        images: await n(`SELECT count(*) AS n FROM product_images WHERE account_id = ? AND product_id = ?`, [seller.accountId, BigInt(images)]),
        slots: await n(`SELECT count(DISTINCT type) AS n FROM product_images WHERE account_id = ? AND product_id = ?`, [seller.accountId, BigInt(images)]),
      };
    });
    assert.deepEqual(stored, { variations: 120, names: 5, values: 30, images: 12, slots: 12 });

    // Request ids start with the serving process's pid: the load reached every worker.
    const workersThatWrote = new Set(
      served
        .output()
        .split('\n')
        .filter((line) => line.includes('"method":"POST"'))
        .map((line) => /"reqId":"([^-"]+)-/.exec(line)?.[1])
        .filter(Boolean),
    );
    assert.equal(workersThatWrote.size, 4, `POSTs were served by ${workersThatWrote.size} workers`);
  });

  test('a worker that dies is replaced, and the others keep serving meanwhile', async () => {
    const workers = () => childrenOf(served.child.pid!);
    const before = workers();
    assert.equal(before.length, 4, 'four workers');
    // No request while it dies: node:cluster hands a connection to a worker through the primary,
    // and one handed to a worker at the moment it dies is lost (a load balancer retries those).
    process.kill(before[0]!, 'SIGKILL');
    const until = Date.now() + 20_000;
    while (!/a worker died; starting another/.test(served.output())) {
      assert.ok(Date.now() < until, 'the primary notices');
      await new Promise((r) => setTimeout(r, 50));
    }
    // The three left serve while the fifth starts.
    for (let i = 0; i < 6; i++) assert.equal((await call(served.origin, seller, 'GET', '/')).status, 200);
    const listening = () => served.output().split('\n').filter((l) => l.includes('"msg":"catalogue-service listening"')).length;
    while (listening() < 5) {
      assert.ok(Date.now() < until, `a fifth worker starts listening:\n${served.output().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const after = workers();
    assert.equal(after.length, 4, 'four workers again');
    assert.ok(!after.includes(before[0]!));
    for (let i = 0; i < 8; i++) assert.equal((await call(served.origin, seller, 'GET', '/')).status, 200);
  });
});

describe('serve --workers: refusals', () => {
  test('a worker that cannot start (port taken) stops the whole service with exit code 1, promptly', async () => {
    const database = await freshDatabase();
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const started = Date.now();
      const r = spawnSync(process.execPath, [CATALOGUE_BIN, 'serve', '--workers', '2'], {
        env: { ...process.env, ...database.env, PORT: String(port), HOST: '127.0.0.1', DEMO_ACCOUNT: 'false' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stderr + r.stdout, /EADDRINUSE/);
      assert.match(r.stdout, /a worker failed to start; stopping/);
      assert.ok(Date.now() - started < 10_000, `exited after ${Date.now() - started} ms`);
    } finally {
      blocker.close();
    }
  });

  test('--workers must be a whole number from 1 to 64', () => {
    for (const bad of ['0', '65', 'four', '-1', '']) {
      const r = spawnSync(process.execPath, [CATALOGUE_BIN, 'serve', `--workers=${bad}`], { env: { ...process.env, PORT: '0' }, encoding: 'utf8', timeout: 20_000 });
      assert.equal(r.status, 2, `--workers '${bad}': ${r.stderr}`);
      assert.match(r.stderr, /--workers must be a whole number from 1 to 64/);
    }
  });
});
