/**
 * `isof` and `cast` in $filter against the live service (README "Query options"): each answers
 * the same rows as the expression without it that means the same, and a few hand-counted ones.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { encodeOption, KeepAliveClient, seedRow } from './fixture';

let live: LiveService;
let seller: Seller;
let client: KeepAliveClient;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'typefunctions');
  client = new KeepAliveClient(2);
  await seedRow(live, seller.accountId, 'Products', { Title: 'Shirt', Price: '19.99', StockAmount: 3, ExternalProductId: 5n });
  await seedRow(live, seller.accountId, 'Products', { Title: 'Hat', Price: '5', StockAmount: 0, ExternalProductId: null });
  await seedRow(live, seller.accountId, 'Products', { Title: 'Coat', Price: '120.5', StockAmount: 12, ExternalProductId: 7n });
});

after(async () => {
  client?.close();
  await live?.close();
});

async function ids(filter: string): Promise<string[]> {
  const res = await client.get(`${live.root}/Products?$filter=${encodeOption(filter)}`, { ...seller.auth, Accept: 'application/json' });
  assert.equal(res.status, 200, `${filter}: ${res.body.slice(0, 300)}`);
  const d = (JSON.parse(res.body) as { d: { Id: string }[] | { results: { Id: string }[] } }).d;
  return (Array.isArray(d) ? d : d.results).map((r) => r.Id).sort();
}

describe('isof and cast in $filter', () => {
  const same: [string, string, number][] = [
    ["isof('CatalogueService.Product')", 'true', 3],
    ["isof('CatalogueService.Catalog')", 'false', 0],
    ["not isof('CatalogueService.Catalog') and StockAmount gt 0", 'StockAmount gt 0', 2],
    ["isof(ExternalProductId, 'Edm.Int64')", 'ExternalProductId ne null', 2],
    ["isof(Title, 'Edm.String')", 'Title ne null', 3],
    ["isof(Price, 'Edm.Int32')", 'false', 0],
    ["isof(StockAmount, 'Edm.Double')", 'false', 0],
    ["cast(StockAmount, 'Edm.Int64') eq 3L", 'StockAmount eq 3', 1],
    ["cast(StockAmount, 'Edm.Decimal') div 2M eq 1.5M", 'StockAmount eq 3', 1],
    ["cast(ExternalProductId, 'Edm.Decimal') gt 5.5M", 'ExternalProductId gt 5', 1],
    ["cast(Title, 'Edm.String') eq 'Hat'", "Title eq 'Hat'", 1],
    ["cast(null, 'Edm.Int32') eq StockAmount", 'StockAmount eq null', 0],
  ];
  for (const [withFunction, without, count] of same) {
    test(`${withFunction} answers as ${without}`, async () => {
      const got = await ids(withFunction);
      assert.deepEqual(got, await ids(without));
      assert.equal(got.length, count);
    });
  }
});
