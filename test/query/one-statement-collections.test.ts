/**
 * A plain collection read (an entity set without $expand or $inlinecount) is tried as one
 * statement first, taking at most 255 rows; a larger collection is found out before anything of
 * the answer goes out and is read again as a stream (readResource). The answer must not show
 * which way it was read: every row, in order, for collections on both sides of the bound, with
 * $top, $skip and server paging. Read with datajs, in JSON and in Atom, as a browser connector
 * reads them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { odataRequest, loadDatajs } from '../clients/datajs';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { setType } from '../support/model-types';
import type { EdmValue } from '../../src/odata/edm';
import { defaultOf } from '../../src/catalogue/values';

/** One row more than a read of one statement takes. */
const BOUND = 255;
const PRODUCTS = 310;

interface Feed {
  readonly ids: string[];
  readonly next: string | undefined;
}

describe('collections read as one statement first', () => {
  let live: LiveService;
  let seller: Seller;
  /** Ids of the seeded products in id order; the first BOUND + 1 have StockAmount 1. */
  const ids: string[] = [];

  /** Seeds the products in one write: StockAmount 1 for the first BOUND + 1, 2 for the rest. */
  async function seed(target: LiveService, account: number): Promise<string[]> {
    const app = target.service.app;
    const type = setType('Products');
    return app.store.write(account, async (tx) => {
      const made: string[] = [];
      const now = app.clock.now();
      for (let i = 0; i < PRODUCTS; i++) {
        const values: Record<string, EdmValue> = { Id: await app.store.nextId(tx), Title: `P ${i}`, Price: '1.00', StockAmount: i <= BOUND ? 1 : 2, ForeignId: `OS-${i}` };
        const row: Record<string, EdmValue> = {};
        for (const p of type.properties) row[p.name] = values[p.name] ?? (p.timestamp ? now : defaultOf(p));
        await app.entities.insert(tx, account, type, row);
        made.push(String(values.Id));
      }
      return made;
    });
  }

  async function feed(target: LiveService, path: string, format: 'json' | 'atom'): Promise<Feed> {
    const OData = loadDatajs();
    const handler = format === 'json' ? OData.jsonHandler : OData.atomHandler;
    const { data } = await odataRequest({ requestUri: path.startsWith('http') ? path : `${target.root}/${path}`, headers: seller.auth }, handler);
    const { results, __next } = data as { results: { Id: string }[]; __next?: string };
    return { ids: results.map((e) => String(e.Id)), next: __next };
  }

  before(async () => {
    live = await startLive();
    seller = await newSeller(live, 'onestatement');
    ids.push(...(await seed(live, seller.accountId)));
  });
  after(() => live?.close());

  for (const format of ['json', 'atom'] as const) {
    test(`${format}: collections on both sides of the bound answer every row in order`, async () => {
      const cases: [string, string[]][] = [
        ['Products', ids],
        [`Products?$filter=StockAmount eq 1`, ids.slice(0, BOUND + 1)],
        [`Products?$filter=StockAmount eq 1 and Id ne ${ids[0]}L`, ids.slice(1, BOUND + 1)],
        [`Products?$filter=StockAmount eq 2`, ids.slice(BOUND + 1)],
        [`Products?$top=${BOUND}`, ids.slice(0, BOUND)],
        [`Products?$top=${BOUND + 1}`, ids.slice(0, BOUND + 1)],
        [`Products?$top=300`, ids.slice(0, 300)],
        [`Products?$skip=50&$top=260`, ids.slice(50, 310)],
        [`Products?$skip=100`, ids.slice(100)],
        // Titles compare as text: 'P 99' comes first in descending order.
        [`Products?$orderby=Title desc&$top=3`, [ids[99]!, ids[98]!, ids[97]!]],
      ];
      for (const [path, expected] of cases) {
        const got = await feed(live, path, format);
        assert.deepEqual(got.ids, expected, path);
        assert.equal(got.next, undefined, path);
      }
    });
  }

  test('server paging: the pages and their next links are the same either way', async () => {
    for (const pageSize of [100, 300]) {
      const paged = await startLive({ database: live.database, env: { PAGE_SIZE: String(pageSize) } });
      try {
        const seen: string[] = [];
        let next: string | undefined = 'Products';
        let pages = 0;
        while (next !== undefined) {
          const page: Feed = await feed(paged, next, 'json');
          assert.ok(page.ids.length <= pageSize, `a page of ${page.ids.length}`);
          seen.push(...page.ids);
          next = page.next;
          pages++;
        }
        assert.deepEqual(seen, ids, `PAGE_SIZE=${pageSize}`);
        assert.equal(pages, Math.ceil(PRODUCTS / pageSize));
      } finally {
        await paged.close();
      }
    }
  });
});
