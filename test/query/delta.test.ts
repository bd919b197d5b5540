/**
 * Change tracking with delta links (docs/protocol.md, "Change tracking"), against the live
 * service with server paging on (PAGE_SIZE=2, so every feed here is read through next links as a
 * connector does): a connector-style sync reads a set with change tracking, the seller changes and
 * deletes entities through the API, the service operations and the platform side, and the delta
 * link answers exactly those entities as they are now and the deleted ones, in JSON and Atom; the
 * delta composes with $filter, $select and $expand; tokens are checked (400) and expire (410).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { asSeller, CONNECTOR_VERSIONS, newSeller, type LiveService, type Seller } from '../support/live-service';
import { createEntity, mergeEntity } from '../support/live-client';
import { errorMessage } from '../support/odata-error';
import { deliver, orderDocument, paymentEvent, shipmentEvent, startWithPlatform, type Json } from '../platform/platform-client';

let live: LiveService;

before(async () => {
  live = await startWithPlatform({ env: { PAGE_SIZE: '2' } });
});
after(() => live.close());

/** What a tracked read (all its pages) delivered. */
interface Sync {
  /** Ids of the entries, in the order delivered. */
  readonly ids: string[];
  readonly entries: Json[];
  /** Ids of the removed entities (tombstones / deleted entries). */
  readonly removed: string[];
  readonly deltaLink: string;
  readonly pages: number;
  readonly headers: Record<string, string | string[] | undefined>;
}

const idOfUri = (uri: string) => /\((\d+)L?\)$/.exec(uri)![1]!;
const unescapeXml = (s: string) => s.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** Reads a feed through its next links, as a connector does, in JSON (V2 shapes) or Atom. */
async function readAll(seller: Seller, url: string, format: 'json' | 'atom', headers: Record<string, string> = {}): Promise<Sync> {
  const sync = { ids: [] as string[], entries: [] as Json[], removed: [] as string[], deltaLink: '', pages: 0, headers: {} };
  let next: string | undefined = url;
  while (next !== undefined) {
    const res = await asSeller(seller, next, { headers: { ...CONNECTOR_VERSIONS, Accept: format === 'json' ? 'application/json' : 'application/atom+xml', ...headers } });
    assert.equal(res.status, 200, res.body);
    if (sync.pages === 0) sync.headers = res.headers;
    sync.pages++;
    next = undefined;
    if (format === 'json') {
      const d = (JSON.parse(res.body) as { d: { results: Json[]; __next?: string; __delta?: string } }).d;
      for (const item of d.results) {
        if (typeof item['@odata.context'] === 'string') {
          assert.match(item['@odata.context'] as string, /^\$metadata#\w+\/\$deletedEntity$/);
          sync.removed.push(idOfUri(item.id as string));
        } else {
          sync.ids.push(idOfUri((item.__metadata as { uri: string }).uri));
          sync.entries.push(item);
        }
      }
      if (d.__next !== undefined) {
        assert.equal(d.__delta, undefined, 'only the last page carries the delta link');
        next = d.__next;
      } else sync.deltaLink = d.__delta!;
    } else {
      assert.match(res.body, /<feed [^>]*xmlns:at="http:\/\/purl\.org\/atompub\/tombstones\/1\.0"/);
      for (const entry of res.body.split('<entry').slice(1)) sync.ids.push(idOfUri(/<id>([^<]+)<\/id>/.exec(entry)![1]!));
      for (const m of res.body.matchAll(/<at:deleted-entry ref="([^"]+)" when="([^"]+)" \/>/g)) {
        assert.ok(!Number.isNaN(Date.parse(m[2]!)), 'when is a date');
        sync.removed.push(idOfUri(unescapeXml(m[1]!)));
      }
      const nextLink = /<link rel="next" href="([^"]+)" \/>/.exec(res.body);
      const delta = /<link rel="delta" href="([^"]+)" \/>/.exec(res.body);
      if (nextLink) {
        assert.equal(delta, null, 'only the last page carries the delta link');
        next = unescapeXml(nextLink[1]!);
      } else sync.deltaLink = unescapeXml(delta![1]!);
    }
  }
  assert.ok(sync.deltaLink.startsWith(`${live.root}/`), sync.deltaLink);
  return sync;
}

const sorted = (ids: readonly string[]) => [...ids].sort((a, b) => Number(a) - Number(b));

async function call(seller: Seller, method: string, path: string): Promise<void> {
  const res = await asSeller(seller, `${live.root}/${path}`, { method, headers: { Accept: 'application/json' } });
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.body}`);
}

for (const format of ['json', 'atom'] as const) {
  describe(`a connector's sync (${format})`, () => {
    let seller: Seller;
    const products: string[] = [];
    const variations: string[] = [];

    before(async () => {
      seller = await newSeller(live, `delta-${format}`);
      for (let i = 1; i <= 5; i++) {
        const product = await createEntity(live, seller, 'Products', { Title: `Product ${i}`, Price: '10', StockAmount: i });
        products.push(product);
        variations.push(await createEntity(live, seller, 'ProductVariations', { ProductId: Number(product), Price: '11', StockAmount: 1, Sku: `S-${i}` }));
      }
    });

    test('the delta answers exactly what the API, the operations and the platform side changed and deleted, then nothing', async () => {
      const [p1, p2, p3, p4] = products;
      // The first reads: with an empty !deltatoken (no header), and with the preference.
      const first = await readAll(seller, `${live.root}/Products?!deltatoken=`, format);
      assert.deepEqual(sorted(first.ids), sorted(products));
      assert.equal(first.pages, 3);
      assert.deepEqual(first.removed, []);
      const firstVariations = await readAll(seller, `${live.root}/ProductVariations`, format, { Prefer: 'odata.track-changes' });
      assert.equal(firstVariations.headers['preference-applied'], 'odata.track-changes');
      assert.deepEqual(sorted(firstVariations.ids), sorted(variations));
      const firstOrders = await readAll(seller, `${live.root}/SalesOrders?!deltatoken=`, format);
      assert.deepEqual(firstOrders.ids, []);
      const firstListings = await readAll(seller, `${live.root}/Listings?!deltatoken=`, format);

      // The changes: an OData MERGE, a DELETE (its variation goes with it: the database's cascade),
      // a POST, two service operations, and the platform's order, payment and shipment.
      assert.equal((await mergeEntity(live, seller, 'Products', p1!, { Title: 'Renamed' })).status, 204);
      await call(seller, 'DELETE', `Products(${p2}L)`);
      const created = await createEntity(live, seller, 'Products', { Title: 'New', Price: '1', StockAmount: 1 });
      await call(seller, 'POST', `ReviseInventoryStatus?productId=${p3}L&productVariationId=${variations[2]}L&stockAmount=42`);
      await call(seller, 'POST', `SetProductProfile?productId=${p4}L&type=1&profileId=77L`);
      const order = await deliver(live, seller.userName, orderDocument(`DELTA-${format}`));
      await deliver(live, seller.userName, paymentEvent(`DELTA-${format}`));
      await deliver(live, seller.userName, shipmentEvent(`DELTA-${format}`));
      const listing = await deliver(live, seller.userName, { kind: 'listing', PlatformItemId: `L-${format}`, Status: 1, Price: '5' });

      const delta = await readAll(seller, first.deltaLink, format);
      assert.deepEqual(sorted(delta.ids), sorted([p1!, p4!, created]));
      assert.deepEqual(delta.removed, [p2]);
      if (format === 'json') {
        const byId = new Map(delta.entries.map((e) => [idOfUri((e.__metadata as { uri: string }).uri), e]));
        assert.equal(byId.get(p1!)!.Title, 'Renamed', 'the entity as it is now');
        assert.equal(byId.get(p4!)!.PaymentProfileId, '77');
      }
      const variationDelta = await readAll(seller, firstVariations.deltaLink, format);
      assert.deepEqual(variationDelta.ids, [variations[2]]);
      assert.deepEqual(variationDelta.removed, [variations[1]]);
      const orderDelta = await readAll(seller, firstOrders.deltaLink, format);
      assert.deepEqual(orderDelta.ids, [order.id]);
      assert.deepEqual(orderDelta.removed, []);
      const listingDelta = await readAll(seller, firstListings.deltaLink, format);
      assert.deepEqual(listingDelta.ids, [listing.id]);

      // Nothing changed since: the new links answer nothing, and a link can be followed again.
      for (const link of [delta.deltaLink, variationDelta.deltaLink, orderDelta.deltaLink]) {
        const again = await readAll(seller, link, format);
        assert.deepEqual([again.ids, again.removed], [[], []]);
      }
      const repeated = await readAll(seller, first.deltaLink, format);
      assert.deepEqual(sorted(repeated.ids), sorted(delta.ids));

      // The connector writes ForeignOrderId back: the order's next delta has it.
      assert.equal((await mergeEntity(live, seller, 'SalesOrders', order.id, { ForeignOrderId: 'SHOP-1' })).status, 204);
      const written = await readAll(seller, orderDelta.deltaLink, format);
      assert.deepEqual(written.ids, [order.id]);
      // The platform changes the order it delivered: a payment taken back, an ended listing.
      await deliver(live, seller.userName, paymentEvent(`DELTA-${format}`, false));
      await deliver(live, seller.userName, { kind: 'listing', PlatformItemId: `L-${format}`, Status: 0, Price: '5' });
      assert.deepEqual((await readAll(seller, written.deltaLink, format)).ids, [order.id]);
      assert.deepEqual((await readAll(seller, listingDelta.deltaLink, format)).ids, [listing.id]);
    });
  });
}

describe('composition and tokens', () => {
  let seller: Seller;
  let other: Seller;

  before(async () => {
    seller = await newSeller(live, 'delta-compose');
    other = await newSeller(live, 'delta-other');
  });

  test('$filter, $select and $expand apply to the delta; an entity that leaves the filter is answered as removed', async () => {
    const low = await createEntity(live, seller, 'Products', { Title: 'Low', Price: '1', StockAmount: 1 });
    const high = await createEntity(live, seller, 'Products', { Title: 'High', Price: '1', StockAmount: 10 });
    const quiet = await createEntity(live, seller, 'Products', { Title: 'Quiet', Price: '1', StockAmount: 20 });
    await createEntity(live, seller, 'ProductVariations', { ProductId: Number(low), Price: '2', StockAmount: 1, Sku: 'LOW-1' });
    const query = `$filter=${encodeURIComponent('StockAmount gt 5')}&$select=Id,Title,StockAmount,ProductVariations&$expand=ProductVariations`;
    const first = await readAll(seller, `${live.root}/Products?${query}&!deltatoken=`, 'json');
    assert.deepEqual(sorted(first.ids), sorted([high, quiet]));
    assert.ok(first.deltaLink.includes('$filter=') && first.deltaLink.includes('$expand=ProductVariations'), 'the link carries the options');

    assert.equal((await mergeEntity(live, seller, 'Products', low, { StockAmount: 9 })).status, 204);
    assert.equal((await mergeEntity(live, seller, 'Products', high, { StockAmount: 2 })).status, 204);
    const delta = await readAll(seller, first.deltaLink, 'json');
    assert.deepEqual(delta.ids, [low]);
    assert.deepEqual(delta.removed, [high]);
    const entry = delta.entries[0]!;
    assert.deepEqual(Object.keys(entry).filter((k) => k !== '__metadata').sort(), ['Id', 'ProductVariations', 'StockAmount', 'Title']);
    assert.equal((entry.ProductVariations as { results: Json[] }).results.length, 1, 'expanded as now');

    // Following the link with other options is refused, naming the token.
    const token = new URL(first.deltaLink).searchParams.get('!deltatoken')!;
    const changed = await asSeller(seller, `${live.root}/Products?$filter=StockAmount gt 1&!deltatoken=${token}`, { headers: { Accept: 'application/json' } });
    assert.equal(changed.status, 400);
    assert.match(errorMessage(changed), new RegExp(token.slice(0, 20)));
  });

  test('a token that is malformed, of another account or of another set is a 400 naming it; one older than the retention a 410 in the request format', async () => {
    const first = await readAll(seller, `${live.root}/Products?!deltatoken=`, 'json');
    const token = new URL(first.deltaLink).searchParams.get('!deltatoken')!;
    const cases: [Seller, string, RegExp][] = [
      [seller, 'Products?!deltatoken=not-a-token', /not-a-token/],
      // Base64url of JSON that is no object: `null`, `1`, `[]`.
      ...['null', '1', '[]'].map((json): [Seller, string, RegExp] => [seller, `Products?!deltatoken=${Buffer.from(json).toString('base64url')}`, /is not a delta token/]),
      [other, `Products?!deltatoken=${token}`, /is not a delta token of this account/],
      [seller, `ProductVariations?!deltatoken=${token}`, /issued for Products, not ProductVariations/],
      [seller, `Products?$orderby=Title&!deltatoken=${token}`, /\$orderby/],
      [seller, `Products(1L)?!deltatoken=`, /entity set/],
    ];
    for (const [who, path, message] of cases) {
      const res = await asSeller(who, `${live.root}/${path}`, { headers: { Accept: 'application/json' } });
      assert.equal(res.status, 400, path);
      assert.match(errorMessage(res), message, path);
    }
    // Aged by 31 days (the retention is 30): gone, in JSON and in XML.
    const wire = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { t: number };
    const aged = Buffer.from(JSON.stringify({ ...wire, t: wire.t - 31 * 86_400_000 })).toString('base64url');
    for (const accept of ['application/json', 'application/atom+xml']) {
      const res = await asSeller(seller, `${live.root}/Products?!deltatoken=${aged}`, { headers: { Accept: accept } });
      assert.equal(res.status, 410, res.body);
      assert.match(String(res.headers['content-type']), accept === 'application/json' ? /^application\/json/ : /^application\/xml/);
      assert.match(errorMessage(res), /older than the 30 days/);
    }
    // 29 days old is still good.
    const young = Buffer.from(JSON.stringify({ ...wire, t: wire.t - 29 * 86_400_000 })).toString('base64url');
    assert.equal((await asSeller(seller, `${live.root}/Products?!deltatoken=${young}`, { headers: { Accept: 'application/json' } })).status, 200);
  });

  test('a read that does not ask carries no delta link, and a preference that cannot apply is left unapplied', async () => {
    await createEntity(live, seller, 'Products', { Title: 'Plain', Price: '1', StockAmount: 1 });
    for (const accept of ['application/json', 'application/atom+xml']) {
      const plain = await asSeller(seller, `${live.root}/Products?$top=1`, { headers: { ...CONNECTOR_VERSIONS, Accept: accept } });
      assert.doesNotMatch(plain.body, /delta|deleted|tombstones/);
      const preferred = await asSeller(seller, `${live.root}/Products?$top=1`, { headers: { ...CONNECTOR_VERSIONS, Accept: accept, Prefer: 'odata.track-changes' } });
      assert.equal(preferred.headers['preference-applied'], undefined);
      assert.doesNotMatch(preferred.body, /delta|deleted|tombstones/);
    }
  });
});
