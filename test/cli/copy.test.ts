/**
 * `catalogue copy --from sqlite:FILE --to postgres://…` as an operator runs it, moving several
 * accounts filled by `catalogue demo` (plus sessions, an extra token and an Idempotency-Key) from
 * a SQLite file into an empty PostgreSQL database. Every OData answer the accounts get (every
 * set in JSON and Atom, the product export with its expansions, order history, counts) is the
 * same before and after, byte for byte but for the feed's own `<updated>` time (the time of the
 * answer); the same session cookies and tokens work; a repeated POST with its Idempotency-Key
 * gets the stored answer; new ids go on after the copied ones; a second copy into the now full
 * database is refused.
 *
 * PostgreSQL half only (it needs a PostgreSQL target).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { asSeller, CONNECTOR_VERSIONS, newSeller, startLive, tempDatabaseFile, type LiveService, type Seller } from '../support/live-service';
import { freshDatabase, testEngine, type TestDatabase } from '../support/test-database';
import { CATALOGUE_BIN } from '../support/serve-process';
import { fillDemoAccount } from '../../src/cli/platform-commands';
import { model } from '../../src/model/catalogue-model';
import { buildSchema } from '../../src/store/schema';

const PUBLIC_URL = 'http://catalogue.example.com';
const ACCOUNTS = 3;

function sqliteDatabase(): TestDatabase {
  const file = tempDatabaseFile();
  return { url: `sqlite:${file}`, ownerUrl: undefined, file, env: { DATABASE_URL: `sqlite:${file}`, DATABASE_OWNER_URL: '' } };
}

function copy(from: string, to: TestDatabase) {
  const r = spawnSync(process.execPath, [CATALOGUE_BIN, 'copy', '--from', from, '--to', to.url], {
    env: { ...process.env, DATABASE_URL: '', DATABASE_OWNER_URL: to.ownerUrl ?? '', LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const EXPAND = 'CarParts,Catalogs,ChildProducts,DiscountOffers,OptionalProductAttributes,ProductImages,ProductSpecifics,ProductVariations/ProductVariationSpecifics,ProductVariations/ProductVariationPictures';

/** Every answer an account gets, keyed by request; what the service says is the time of the answer aside. */
async function answers(live: LiveService, seller: Seller): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const get = async (path: string, accept: string) => {
    const res = await asSeller(seller, `${live.root}/${path}`, { headers: { Accept: accept } });
    // A feed's own <updated> is the time of the answer, not data.
    out.set(`${accept} ${path}`, `${res.status}\n${res.body.replace(/<updated>[^<]*<\/updated>/g, '<updated/>')}`);
    return res;
  };
  for (const set of model.entityTypes.map((t) => t.setName)) {
    await get(`${set}?$orderby=Id`, 'application/json');
    await get(`${set}?$orderby=Id`, 'application/atom+xml');
    await get(`${set}/$count`, 'text/plain');
  }
  await get(`Products?$orderby=Id&$expand=${EXPAND}`, 'application/json');
  await get(`Products?$orderby=Id&$expand=${EXPAND}`, 'application/atom+xml');
  // The connector's version headers: its answers are 1.0, `d` the array of orders.
  const orders = JSON.parse((await asSeller(seller, `${live.root}/SalesOrders?$orderby=Id`, { headers: { Accept: 'application/json', ...CONNECTOR_VERSIONS } })).body) as { d: { Id: string }[] };
  for (const order of orders.d) await get(`GetSalesOrderHistory?salesOrderId=${order.Id}L`, 'application/json');
  return out;
}

describe('catalogue copy from SQLite to PostgreSQL', { skip: testEngine !== 'postgres' && 'PostgreSQL half only: it copies into PostgreSQL' }, () => {
  const source = sqliteDatabase();
  let target: TestDatabase;
  let sellers: Seller[];
  let before_: Map<string, string>[];
  let idempotent: { key: string; body: string; answer: string };
  let copyRun: ReturnType<typeof copy>;
  let maxIdBefore: bigint;

  before(async () => {
    const live = await startLive({ database: source, env: { PUBLIC_URL } });
    try {
      sellers = [];
      for (let i = 0; i < ACCOUNTS; i++) {
        const seller = await newSeller(live, `copy-${i}`);
        await fillDemoAccount(live.service.app.store, seller.userName);
        sellers.push(seller);
      }
      const body = JSON.stringify({ Name: 'Einmal' });
      const res = await asSeller(sellers[0]!, `${live.root}/Catalogs`, {
        method: 'POST',
        headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'Idempotency-Key': 'copy-key-1' },
        body,
      });
      assert.equal(res.status, 201, res.body);
      idempotent = { key: 'copy-key-1', body, answer: res.body };
      before_ = [];
      for (const seller of sellers) before_.push(await answers(live, seller));
      const ids = await live.service.app.store.directory.get<{ last_value: bigint }>(`SELECT last_value FROM id_sequence`);
      maxIdBefore = BigInt(ids!.last_value);
    } finally {
      await live.close();
    }
    target = await freshDatabase();
    copyRun = copy(source.url, target);
  });

  test('copy reports every table of the schema with its row count and hash, and exits 0', () => {
    assert.equal(copyRun.status, 0, copyRun.stderr);
    const lines = copyRun.stdout.trim().split('\n').map((l) => JSON.parse(l) as { table: string; rows: number; sha256: string });
    const tables = buildSchema(model).filter((t) => t.name !== 'id_sequence').map((t) => t.name);
    assert.deepEqual(lines.map((l) => l.table), tables);
    const rows = Object.fromEntries(lines.map((l) => [l.table, l.rows]));
    assert.equal(rows.accounts, ACCOUNTS);
    assert.ok(rows.products! >= ACCOUNTS * 50, `products: ${rows.products}`);
    assert.ok(rows.sessions! >= ACCOUNTS);
    assert.ok(rows.sales_order_history! > 0);
    assert.equal(rows.idempotency_keys, 1);
    for (const l of lines) assert.match(l.sha256, /^[0-9a-f]{64}$/);
  });

  test('the copied tables have statistics: the planner knows their sizes from the first request on', async () => {
    const client = new pg.Client({ connectionString: target.ownerUrl ?? target.url });
    await client.connect();
    try {
      const tables = buildSchema(model).filter((t) => t.name !== 'id_sequence').map((t) => t.name);
      // reltuples is -1 until a table is first analyzed (PostgreSQL 14 and later).
      const stats = await client.query<{ table: string; reltuples: number }>(`SELECT relname AS table, reltuples FROM pg_class WHERE relname = ANY($1) AND relkind = 'r'`, [tables]);
      assert.equal(stats.rows.length, tables.length);
      assert.deepEqual(stats.rows.filter((r) => r.reltuples < 0).map((r) => r.table), []);
      const products = stats.rows.find((r) => r.table === 'products')!;
      assert.ok(products.reltuples >= ACCOUNTS * 50, `products: ${products.reltuples}`);
    } finally {
      await client.end();
    }
  });

  describe('the service on the copy', () => {
    let live: LiveService;
    before(async () => {
      live = await startLive({ database: target, env: { PUBLIC_URL } });
    });
    after(() => live?.close());

    test('every OData answer of every account is the same as on SQLite, with the same cookies and tokens', async () => {
      for (const [i, seller] of sellers.entries()) {
        const after_ = await answers(live, seller);
        assert.deepEqual([...after_.keys()], [...before_[i]!.keys()]);
        for (const [request, answer] of before_[i]!) {
          assert.ok(answer.startsWith('200\n'), `${request} on SQLite: ${answer.slice(0, 200)}`);
          assert.equal(after_.get(request), answer, `${seller.userName}: ${request}`);
        }
      }
    });

    test('a retried POST with its Idempotency-Key gets the stored answer, and new ids come after the copied ones', async () => {
      const res = await asSeller(sellers[0]!, `${live.root}/Catalogs`, {
        method: 'POST',
        headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'Idempotency-Key': idempotent.key },
        body: idempotent.body,
      });
      assert.equal(res.status, 201);
      assert.equal(res.body, idempotent.answer);
      const fresh = await asSeller(sellers[1]!, `${live.root}/Catalogs`, {
        method: 'POST',
        headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
        body: JSON.stringify({ Name: 'Neu' }),
      });
      assert.equal(fresh.status, 201, fresh.body);
      assert.ok(BigInt((JSON.parse(fresh.body) as { d: { Id: string } }).d.Id) > maxIdBefore);
      const another = await newSeller(live, 'after-copy');
      assert.ok(sellers.every((s) => another.accountId > s.accountId));
    });
  });

  test('a source that does not exist, or a target that is not PostgreSQL, is refused plainly', async () => {
    const empty = await freshDatabase();
    const missing = copy(`sqlite:${source.file}.missing`, empty);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /no SQLite database at/);
    const notPostgres = spawnSync(process.execPath, [CATALOGUE_BIN, 'copy', '--from', source.url, '--to', source.url], { encoding: 'utf8' });
    assert.equal(notPostgres.status, 2);
    assert.match(notPostgres.stderr, /--to must be a PostgreSQL URL/);
  });

  test('a second copy into the database, now full, is refused and changes nothing', () => {
    const again = copy(source.url, target);
    assert.equal(again.status, 2, again.stdout);
    assert.match(again.stderr, /not empty/);
  });
});
