/**
 * The platform API against the live service: switched off without PLATFORM_TOKEN; only the
 * platform credential gets in, and seller credentials never do (nor does the platform credential
 * get into the seller API); bad documents are a 400 naming the problem and store nothing (raw
 * rows compared); delivery is idempotent by platform ids; what is delivered is what sellers read.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock';
import { ConfigError, loadConfig } from '../../src/config';
import { request } from '../support/http-client';
import { asSeller, login, newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { getCollection, getEntity, jsonDate, createEntity } from '../support/live-client';
import {
  deliver,
  documentsUrl,
  orderDocument,
  orderItem,
  paymentEvent,
  PLATFORM_AUTH,
  PLATFORM_TOKEN,
  platformError,
  postDocument,
  shipmentEvent,
  startWithPlatform,
  type Json,
} from './platform-client';

const clock = new ManualClock(Date.UTC(2024, 5, 1, 12, 0, 0));
let live: LiveService;
let seller: Seller;
let other: Seller;

const create = (s: Seller, set: string, body: Json) => createEntity(live, s, set, body);

/** Moves the clock and logs both sellers in again (their sessions follow the same clock). */
async function advance(ms: number): Promise<void> {
  clock.advance(ms);
  for (const s of [seller, other]) {
    const cookie = await login(live, s.userName, s.password);
    Object.assign(s.auth, { Cookie: `.ASPXAUTH=${cookie!}` });
  }
}

let productId: string;
let variationId: string;

before(async () => {
  live = await startWithPlatform({ clock });
  seller = await newSeller(live, 'platform');
  other = await newSeller(live, 'platform-other');
  productId = await create(seller, 'Products', { Title: 'Trail runner', Price: '89.95', StockAmount: 12, ForeignId: 'TRAIL-1' });
  variationId = await create(seller, 'ProductVariations', { ProductId: productId, Price: '89.95', StockAmount: 3, Sku: 'TRAIL-1-43', ForeignId: 'TRAIL-1-43-F' });
});
after(() => live.close());

describe('switched off without PLATFORM_TOKEN', () => {
  test('every platform path answers 404, whatever the credential', async () => {
    const plain = await startLive();
    try {
      const s = await newSeller(plain, 'no-platform');
      for (const [method, path] of [['POST', `/platform/v1/accounts/${s.userName}/documents`], ['GET', '/platform/v1/schema'], ['GET', '/platform/v1']] as const) {
        const res = await request(plain.origin + path, { method, headers: { ...PLATFORM_AUTH, 'Content-Type': 'application/json' }, body: JSON.stringify(orderDocument('X')) });
        assert.equal(res.status, 404, `${method} ${path}`);
      }
      assert.deepEqual(Object.values(await tenantRows(plain, s.accountId)).flat(), []);
    } finally {
      await plain.close();
    }
  });

  test('a PLATFORM_TOKEN shorter than 32 characters or with blanks is refused at start', () => {
    assert.throws(() => loadConfig({ PLATFORM_TOKEN: 'short' }), ConfigError);
    assert.throws(() => loadConfig({ PLATFORM_TOKEN: 'a token with blanks in it that is long enough' }), ConfigError);
    assert.equal(loadConfig({ PLATFORM_TOKEN }).platformToken, PLATFORM_TOKEN);
    assert.equal(loadConfig({}).platformToken, undefined);
  });
});

describe('only the platform credential gets in', () => {
  const doc = () => orderDocument('AUTH-1');

  test('no, a wrong, a truncated or a seller credential is a 401 with a JSON error, and nothing is stored', async () => {
    const rows = await tenantRows(live, seller.accountId);
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: 'Bearer wrong-token-wrong-token-wrong-token-wrong' },
      { Authorization: `Bearer ${PLATFORM_TOKEN.slice(0, -1)}` },
      { Authorization: `Bearer ${PLATFORM_TOKEN}x` },
      { Authorization: `Basic ${Buffer.from(`platform:${PLATFORM_TOKEN}`).toString('base64')}` },
      { Authorization: PLATFORM_TOKEN },
      { Authorization: `Bearer ${seller.token}` },
      { Authorization: `Bearer ${seller.cookie}` },
      seller.auth,
    ];
    for (const headers of attempts) {
      const res = await request(documentsUrl(live, seller.userName), { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(doc()) });
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="platform"');
      assert.match(platformError(res), /platform credential/);
    }
    assert.deepEqual(await tenantRows(live, seller.accountId), rows);
  });

  test('the platform credential together with seller credentials is refused: they never reach the platform API', async () => {
    for (const extra of [{ SubscriptionToken: seller.token }, { Cookie: `.ASPXAUTH=${seller.cookie}` }] as Record<string, string>[]) {
      const res = await postDocument(live, seller.userName, doc(), extra);
      assert.equal(res.status, 400);
      assert.match(platformError(res), /does not accept seller credentials/);
    }
    assert.equal((await getCollection(live, seller, 'SalesOrders')).length, 0);
  });

  test('the platform credential does not open the seller API', async () => {
    for (const path of ['/SalesOrders', '/', '/ProductIsListed?productId=1L']) {
      const res = await request(live.root + path, { headers: { ...PLATFORM_AUTH, Accept: 'application/json' } });
      assert.equal(res.status, 401, path);
    }
  });
});

describe('routes, methods and bodies', () => {
  test('GET /platform/v1/schema answers the four JSON Schemas', async () => {
    const res = await request(`${live.origin}/platform/v1/schema`, { headers: PLATFORM_AUTH });
    assert.equal(res.status, 200);
    const schemas = JSON.parse(res.body) as Record<string, { required: string[] }>;
    assert.deepEqual(Object.keys(schemas).sort(), ['listing', 'order', 'payment', 'shipment']);
    assert.deepEqual(schemas.order!.required, ['kind', 'PlatformOrderId', 'Buyer', 'SalesOrderItems']);
  });

  test('unknown paths are 404, other methods 405 with Allow, an unknown account 404', async () => {
    assert.equal((await request(`${live.origin}/platform/v1/orders`, { headers: PLATFORM_AUTH })).status, 404);
    assert.equal((await request(`${live.origin}/platform/v1/accounts/${seller.userName}`, { headers: PLATFORM_AUTH })).status, 404);
    const get = await request(documentsUrl(live, seller.userName), { headers: PLATFORM_AUTH });
    assert.equal(get.status, 405);
    assert.equal(get.headers.allow, 'POST');
    const post = await request(`${live.origin}/platform/v1/schema`, { method: 'POST', headers: PLATFORM_AUTH });
    assert.equal(post.headers.allow, 'GET');
    const unknown = await postDocument(live, 'nobody-has-this-name', orderDocument('X-1'));
    assert.equal(unknown.status, 404);
    assert.match(platformError(unknown), /no account with the user name 'nobody-has-this-name'/);
  });

  test('a body that is not JSON, not application/json, or too large is refused', async () => {
    const notJson = await postDocument(live, seller.userName, '{"kind": "order",');
    assert.equal(notJson.status, 400);
    assert.match(platformError(notJson), /not valid JSON/);
    const wrongType = await postDocument(live, seller.userName, orderDocument('X-2'), { 'Content-Type': 'text/plain' });
    assert.equal(wrongType.status, 415);
    const huge = await postDocument(live, seller.userName, orderDocument('X-3', [orderItem('X-3-1', { Name: 'x'.repeat(1_100_000) })]));
    assert.equal(huge.status, 413);
    assert.equal((await getCollection(live, seller, 'SalesOrders')).length, 0);
  });
});

describe('bad documents: a 400 naming the problem, and nothing stored', () => {
  const item = (extra: Json = {}) => orderItem('BAD-1', extra);
  const order = (extra: Json = {}, items: Json[] = [item()]) => orderDocument('BAD', items, extra);
  const BAD: readonly (readonly [string, unknown, RegExp])[] = [
    ['an array', [orderDocument('BAD')], /is a JSON object/],
    ['a string', '"order"', /is a JSON object/],
    ['no kind', { PlatformOrderId: 'BAD' }, /'kind' must be one of "listing", "order", "payment", "shipment"/],
    ['an unknown kind', { kind: 'refund', PlatformOrderId: 'BAD' }, /'kind' must be one of/],
    ['no PlatformOrderId', { ...order(), PlatformOrderId: undefined }, /lacks the required member 'PlatformOrderId'/],
    ['an empty PlatformOrderId', order({ PlatformOrderId: '' }), /'\/PlatformOrderId' must NOT have fewer than 1 characters/],
    ['no buyer', { ...order(), Buyer: undefined }, /lacks the required member 'Buyer'/],
    ['no items', order({}, []), /'\/SalesOrderItems' must NOT have fewer than 1 items/],
    ['an unknown member', order({ Discount: '5' }), /has the member 'Discount', which this kind of document does not have/],
    ['a member the service maintains', order({ MarkedAsPayed: true }), /has the member 'MarkedAsPayed'/],
    ['a seller property', order({ ForeignOrderId: 'ERP-1' }), /has the member 'ForeignOrderId'/],
    ['a price that is no number', order({}, [item({ Price: 'abc' })]), /'\/SalesOrderItems\/0\/Price' must be a decimal/],
    ['a price with 7 decimals', order({}, [item({ Price: '1.1234567' })]), /'\/SalesOrderItems\/0\/Price' must be a decimal with at most 12 integer digits and 6 decimal places/],
    ['a JSON number price with 7 decimals', order({}, [item({ Price: 1.1234567 })]), /'\/SalesOrderItems\/0\/Price': 1.1234567 has more than 6 decimal places/],
    ['a fractional Amount', order({}, [item({ Amount: 1.5 })]), /'\/SalesOrderItems\/0\/Amount' must be integer/],
    ['an Amount as text', order({}, [item({ Amount: '1' })]), /'\/SalesOrderItems\/0\/Amount' must be integer/],
    ['an Amount above Int32', order({}, [item({ Amount: 2147483648 })]), /'\/SalesOrderItems\/0\/Amount' must be <= 2147483647/],
    ['a CurrencyCode longer than 5', order({ CurrencyCode: 'EURO12' }), /'\/CurrencyCode' must NOT have more than 5 characters/],
    ['a country that is no ISO code', order({ Address: { Name: 'E', Country: 'Germany' } }), /'\/Address\/Country' must be a two-letter ISO 3166-1 country code/],
    ['a date that does not exist', order({ CreationDate: '2024-02-30T10:00:00Z' }), /'\/CreationDate': '2024-02-30T10:00:00Z' is not a valid date and time/],
    ['a date with a local offset', order({ CheckoutCompletionDate: '2024-05-01T10:00:00+02:00' }), /'\/CheckoutCompletionDate' must be a UTC date and time/],
    ['an Int64 id of 20 digits', order({}, [item({ Product: { Id: '12345678901234567890' } })]), /'\/SalesOrderItems\/0\/Product\/Id' must be an Int64/],
    ['an Int64 id beyond the range', order({}, [item({ Product: { Id: '9223372036854775808' } })]), /outside the Int64 range/],
    ['a product reference by two keys', order({}, [item({ Product: { Id: '1', ForeignId: 'TRAIL-1' } })]), /'\/SalesOrderItems\/0\/Product' must name exactly one of its members/],
    ['a product no one has', order({}, [item({ Product: { ForeignId: 'NO-SUCH' } })]), /names the ForeignId 'NO-SUCH', but no product of this account has it/],
    ['a product Id of nothing', order({}, [item({ Product: { Id: '870000000123' } })]), /names the product Id 870000000123, which this account does not have/],
    ['a variation Sku without its product', order({}, [item({ ProductVariation: { Sku: 'TRAIL-1-43' } })]), /needs the product it belongs to/],
    ['a variation Sku the product lacks', order({}, [item({ Product: { ForeignId: 'TRAIL-1' }, ProductVariation: { Sku: 'TRAIL-1-44' } })]), /has no such variation/],
    ['the same item twice', order({}, [item(), item()]), /'\/SalesOrderItems\/1' repeats the PlatformItemId and TransactionId/],
    // The first item would be stored before the second fails: the whole document is one transaction.
    ['a good item, then a bad reference', order({}, [item(), orderItem('BAD-2', { Product: { ForeignId: 'NO-SUCH' } })]), /'\/SalesOrderItems\/1\/Product'/],
    ['a listing Status other than 0 or 1', { kind: 'listing', PlatformItemId: 'L-BAD', Status: 2 }, /'\/Status' must be one of 0, 1/],
    ['a listing item without Sku', { kind: 'listing', PlatformItemId: 'L-BAD', ListingItems: [{ Price: '1' }] }, /'\/ListingItems\/0' lacks the required member 'Sku'/],
    ['a listing item Sku twice', { kind: 'listing', PlatformItemId: 'L-BAD', ListingItems: [{ Sku: 'A' }, { Sku: 'A' }] }, /repeats the Sku 'A'/],
    ['a listing variation of another product', { kind: 'listing', PlatformItemId: 'L-BAD', Product: { ForeignId: 'TRAIL-1' }, ListingItems: [{ Sku: 'A', ProductVariation: { Id: '870000000123' } }] }, /variation Id 870000000123/],
    ['a payment for an order never delivered', paymentEvent('NEVER'), /no order 'NEVER' was delivered to this account/],
    ['a payment without Paid', { kind: 'payment', PlatformOrderId: 'NEVER' }, /lacks the required member 'Paid'/],
    ['a payment with Paid as text', paymentEvent('NEVER', true, { Paid: 'yes' }), /'\/Paid' must be boolean/],
    ['a shipment with ShippingStatus 2', shipmentEvent('NEVER', { ShippingStatus: 2 }), /'\/ShippingStatus' must be <= 1/],
    ['a shipment without items in its list', shipmentEvent('NEVER', { SalesOrderItems: [] }), /must NOT have fewer than 1 items/],
  ];

  for (const [label, doc, message] of BAD) {
    test(label, async () => {
      const rows = await tenantRows(live, seller.accountId);
      const res = await postDocument(live, seller.userName, typeof doc === 'string' ? doc : JSON.stringify(doc));
      assert.equal(res.status, 400, res.body);
      assert.match(platformError(res), message);
      assert.deepEqual(await tenantRows(live, seller.accountId), rows, 'nothing stored');
    });
  }

  test('events that break the rules of the delivered order store nothing', async () => {
    await deliver(live, seller.userName, orderDocument('RULES', [orderItem('R-1'), orderItem('R-2')]));
    const rows = await tenantRows(live, seller.accountId);
    const refused: readonly (readonly [Json, RegExp])[] = [
      [shipmentEvent('RULES', { TrackingNumbers: 'a;b' }), /TrackingNumbers needs CarrierUsed/],
      [shipmentEvent('RULES', { CarrierUsed: 'DHL', TrackingNumbers: '1;2;3;4;5;6;7;8;9' }), /1 to 8 non-empty numbers/],
      [shipmentEvent('RULES', { SalesOrderItems: [{ PlatformItemId: 'R-3' }] }), /'\/SalesOrderItems\/0' names no item of order 'RULES'/],
      [shipmentEvent('RULES', { SalesOrderItems: [{ PlatformItemId: 'R-1' }, { PlatformItemId: 'R-9' }] }), /'\/SalesOrderItems\/1' names no item/],
    ];
    for (const [doc, message] of refused) {
      const res = await postDocument(live, seller.userName, doc);
      assert.equal(res.status, 400, res.body);
      assert.match(platformError(res), message);
    }
    assert.deepEqual(await tenantRows(live, seller.accountId), rows);
  });

  test("an item that another order already holds is refused", async () => {
    await deliver(live, seller.userName, orderDocument('HOLDER', [orderItem('SHARED-1')]));
    const rows = await tenantRows(live, seller.accountId);
    const res = await postDocument(live, seller.userName, orderDocument('THIEF', [orderItem('SHARED-1')]));
    assert.equal(res.status, 400);
    assert.match(platformError(res), /was delivered with another order already/);
    assert.deepEqual(await tenantRows(live, seller.accountId), rows);
  });
});

describe('idempotent delivery by platform ids', () => {
  test('the same order twice gives one order, and the second delivery changes no row at all', async () => {
    const doc = orderDocument('TWICE', [orderItem('T-1', { Product: { ForeignId: 'TRAIL-1' }, ProductVariation: { Sku: 'TRAIL-1-43' } }), orderItem('T-2')]);
    const first = await deliver(live, seller.userName, doc);
    assert.equal(first.outcome, 'created');
    const rows = await tenantRows(live, seller.accountId);
    await advance(60_000);
    const second = await deliver(live, seller.userName, doc);
    assert.deepEqual(second, { ...first, outcome: 'unchanged' });
    assert.deepEqual(await tenantRows(live, seller.accountId), rows, 'no new rows, no new dates');
    const orders = await getCollection(live, seller, "SalesOrders?$filter=PlatformOrderId eq 'TWICE'".replace(/ /g, '%20'));
    assert.equal(orders.length, 1);
  });

  test('a changed order updates in place: same ids, new values, EbayModificationDate moves, new items are added', async () => {
    const before = (await getCollection(live, seller, "SalesOrders?$filter=PlatformOrderId eq 'TWICE'".replace(/ /g, '%20')))[0]!;
    await advance(60_000);
    const changed = orderDocument('TWICE', [orderItem('T-1', { Price: '17.5' }), orderItem('T-2'), orderItem('T-3', { Amount: 3 })], { ShippingService: 'Hermes' });
    const res = await deliver(live, seller.userName, changed);
    assert.deepEqual([res.id, res.outcome], [String(before.Id), 'updated']);
    const after = await getEntity(live, seller, 'SalesOrders', res.id);
    assert.equal(after.ShippingService, 'Hermes');
    assert.deepEqual([after.ItemCount, after.TotalAmount, after.TotalPrice], [3, 5, '97.46']);
    assert.equal(after.BuyerId, before.BuyerId);
    assert.equal(after.AddressId, before.AddressId);
    assert.equal(jsonDate(after.EbayModificationDate), clock.now());
    assert.equal((await getCollection(live, seller, `SalesOrders(${res.id}L)/SalesOrderItems`)).length, 3);
    assert.equal(await deliver(live, seller.userName, changed).then((r) => r.outcome), 'unchanged');
  });

  test('an item keeps the catalogue ids copied at sale time, even when its product is deleted later', async () => {
    const order = (await getCollection(live, seller, "SalesOrders?$filter=PlatformOrderId eq 'TWICE'".replace(/ /g, '%20')))[0]!;
    const items = await getCollection(live, seller, `SalesOrders(${String(order.Id)}L)/SalesOrderItems`);
    const sold = items.find((i) => i.PlatformItemId === 'T-1')!;
    assert.deepEqual([sold.ProductId, sold.ProductVariationId, sold.ForeignId, sold.ProductVariationSku, sold.ProductVariationForeignId], [productId, variationId, 'TRAIL-1', 'TRAIL-1-43', 'TRAIL-1-43-F']);
    assert.equal(items.find((i) => i.PlatformItemId === 'T-2')!.ProductId, null, 'an item that names no product');
  });

  test('the same PlatformOrderId in two accounts is two orders, each invisible to the other account', async () => {
    const mine = await deliver(live, seller.userName, orderDocument('SHARED-ID'));
    const theirs = await deliver(live, other.userName, orderDocument('SHARED-ID'));
    assert.notEqual(mine.id, theirs.id);
    assert.equal((await asSeller(seller, `${live.root}/SalesOrders(${theirs.id}L)`)).status, 404);
    assert.equal((await getCollection(live, other, 'SalesOrders')).length, 1);
  });

  test('the same listing twice is one listing; items follow the latest delivery', async () => {
    const listing = { kind: 'listing', PlatformItemId: 'L-1', Title: 'Trail runner', Status: 1, StartDate: '2024-06-01T08:00:00Z', Price: '89.95', Quantity: 3, CategoryId: '11450', Product: { ForeignId: 'TRAIL-1' }, ListingItems: [{ Sku: 'TRAIL-1-43', ProductVariation: { Sku: 'TRAIL-1-43' }, Price: '89.95', Quantity: 3 }, { Sku: 'TRAIL-1-44', Price: '89.95', Quantity: 1 }] };
    const first = await deliver(live, seller.userName, listing);
    const rows = await tenantRows(live, seller.accountId);
    assert.equal((await deliver(live, seller.userName, listing)).outcome, 'unchanged');
    assert.deepEqual(await tenantRows(live, seller.accountId), rows);
    const stored = await getEntity(live, seller, 'Listings', first.id);
    assert.deepEqual([stored.ProductId, stored.Status, stored.CategoryId, jsonDate(stored.StartDate)], [productId, 1, '11450', Date.UTC(2024, 5, 1, 8)]);
    const items = await getCollection(live, seller, `Listings(${first.id}L)/ListingItems`);
    assert.deepEqual(items.map((i) => [i.Sku, i.ProductId, i.ProductVariationId]), [['TRAIL-1-43', productId, variationId], ['TRAIL-1-44', productId, null]]);
    const ended = { ...listing, Status: 0, EndDate: '2024-06-03T08:00:00Z', QuantitySold: 2, ListingItems: [{ Sku: 'TRAIL-1-43', Price: '89.95', Quantity: 3, QuantitySold: 2 }] };
    assert.equal((await deliver(live, seller.userName, ended)).outcome, 'updated');
    const after = await getCollection(live, seller, `Listings(${first.id}L)/ListingItems`);
    assert.deepEqual(after.map((i) => [i.Id, i.QuantitySold]), [[items[0]!.Id, 2]]);
    assert.equal((await getEntity(live, seller, 'Listings', first.id)).Status, 0);
  });

  test('an order without a shipping address leaves ShippingAddressId null; a later one with it fills it', async () => {
    const doc = orderDocument('NO-SHIP', undefined, { ShippingAddress: undefined });
    const { id } = await deliver(live, seller.userName, doc);
    assert.equal((await getEntity(live, seller, 'SalesOrders', id)).ShippingAddressId, null);
    await deliver(live, seller.userName, orderDocument('NO-SHIP'));
    const address = await getEntity(live, seller, 'Addresses', String((await getEntity(live, seller, 'SalesOrders', id)).ShippingAddressId));
    assert.deepEqual([address.Town, address.Company, address.Country], ['Hamburg', 'Muster GmbH', 'DE']);
  });

  test("a known buyer's next order reuses the buyer", async () => {
    const first = await deliver(live, seller.userName, orderDocument('BUY-1', undefined, { Buyer: { BuyerName: 'repeat-buyer', Email: 'r@example.com' } }));
    const second = await deliver(live, seller.userName, orderDocument('BUY-2', undefined, { Buyer: { BuyerName: 'repeat-buyer', Email: 'r@example.com' } }));
    const [a, b] = [await getEntity(live, seller, 'SalesOrders', first.id), await getEntity(live, seller, 'SalesOrders', second.id)];
    assert.equal(a.BuyerId, b.BuyerId);
    assert.equal((await getCollection(live, seller, `Buyers(${String(a.BuyerId)}L)/SalesOrders`)).length, 2);
  });
});
