/**
 * Writes as the .NET WCF Data Services client makes them, against the live service, in Atom (what
 * the client writes) and JSON verbose (the same objects as JSON writers send them): every
 * property of the generated class on insert, with the key as 0, server-managed dates as
 * DateTime.MinValue and read-only properties holding whatever the object holds; on update the
 * whole object as last read, stale in the read-only properties an operation, a payment or the
 * platform changed since. The service ignores the key and the read-only properties in all of
 * them (201/204, never 400) and keeps its own values. Also dates from year 0001 on in bodies and
 * $filter, dates with an offset converted to UTC, and the same writes inside a $batch changeset.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EntityTypeDef } from '../../src/model/types';
import { batchBody, changesetAnswers, changesetPart, httpPart, postBatch, readBatchAnswer } from '../batch/support';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, storeRow, type LiveService, type Seller } from '../support/live-service';
import {
  dateMs,
  JSON_HEADERS,
  MIN_DATE,
  readAtomEntity,
  readJsonEntity,
  typeOfSet,
  WCF_ATOM_HEADERS,
  wcfAtomEntry,
  wcfJsonEntity,
  type ClientEntity,
} from './wcf-client';

type Format = 'atom' | 'json';
const FORMATS: readonly Format[] = ['atom', 'json'];

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'wcf');
});
after(() => live.close());

const Product = typeOfSet('Products');
const SalesOrder = typeOfSet('SalesOrders');

const headersOf = (format: Format) => (format === 'atom' ? WCF_ATOM_HEADERS : JSON_HEADERS);

/** The body of `entity` as the client writes it in `format` (JSON: dates as \/Date(ms)\/ unless isoDates). */
function bodyOf(format: Format, type: EntityTypeDef, entity: ClientEntity, id = '', isoDates = false): string {
  return format === 'atom' ? wcfAtomEntry(type, entity, id) : wcfJsonEntity(type, entity, isoDates);
}

function entityOf(format: Format, type: EntityTypeDef, res: HttpResponse): ClientEntity {
  return format === 'atom' ? readAtomEntity(type, res.body) : readJsonEntity(type, res.body);
}

async function readBack(format: Format, type: EntityTypeDef, id: string): Promise<ClientEntity> {
  const res = await asSeller(seller, `${live.root}/${type.setName}(${id}L)`, { headers: { Accept: headersOf(format).Accept! } });
  assert.equal(res.status, 200, res.body);
  return entityOf(format, type, res);
}

/** The ETag of a single-entity answer (GET, or the 204 of an update), which the client keeps for its next If-Match. */
function etagOf(res: HttpResponse): string {
  const etag = res.headers.etag;
  assert.ok(typeof etag === 'string' && etag.length > 0, `an ETag header: ${JSON.stringify(res.headers)}`);
  return etag;
}

async function readEtag(format: Format, type: EntityTypeDef, id: string): Promise<string> {
  return etagOf(await asSeller(seller, `${live.root}/${type.setName}(${id}L)`, { headers: { Accept: headersOf(format).Accept! } }));
}

/** A write as the client sends it; with `ifMatch`, the ETag it holds for the entity ($metadata declares ConcurrencyMode="Fixed"). */
function write(format: Format, method: string, path: string, body: string, ifMatch?: string): Promise<HttpResponse> {
  return asSeller(seller, live.root + path, { method, headers: { ...headersOf(format), ...(ifMatch ? { 'If-Match': ifMatch } : {}) }, body });
}

let counter = 0;

/**
 * A new Products object as the client's generated class holds it before insert: every property,
 * the key 0, both dates DateTime.MinValue, and arbitrary values in the read-only properties.
 */
function newProductObject(): ClientEntity {
  const n = ++counter;
  return new Map<string, string | null>([
    ['Id', '0'],
    ['ForeignId', `WCF-${n}`],
    ['ExternalProductId', '4711'],
    ['ProductType', '0'],
    ['Title', `From the .NET client ${n}`],
    ['Description', 'All properties of the class'],
    ['ShortDescription', null],
    ['Price', '12.5'],
    ['StockAmount', '3'],
    ['UnitQuantity', null],
    ['UnitType', null],
    ['Ean', '4006381333931'],
    ['Isbn', null],
    ['Upc', null],
    ['Mpn', 'MPN-1'],
    ['Brand', 'Acme'],
    ['ConditionId', '1000'],
    ['DisableAutomatch', 'false'],
    ['BestOfferAutoAcceptPrice', null],
    ['BestOfferMinimumPrice', null],
    // Read-only: set by SetEbayCategory and SetProductProfile, never by a write.
    ['EbayCategoryId1', '9355'],
    ['EbayCategoryId2', '-1'],
    ['AutoMatched', 'true'],
    ['PaymentProfileId', '1'],
    ['ReturnProfileId', '0'],
    ['ShippingProfileId', '99999999999'],
    ['CreationDate', MIN_DATE],
    ['ModificationDate', MIN_DATE],
  ]);
}

/** The read-only properties of a new product as the service sets them: nothing. */
const PRODUCT_READ_ONLY_ON_CREATE = ['EbayCategoryId1', 'EbayCategoryId2', 'AutoMatched', 'PaymentProfileId', 'ReturnProfileId', 'ShippingProfileId'];

function assertServerDates(entity: ClientEntity, notBefore: number, what: string): void {
  const created = dateMs(entity.get('CreationDate')!);
  const modified = dateMs(entity.get('ModificationDate')!);
  // The service's own clock, not the client's 0001-01-01: no earlier than the test began.
  assert.ok(created >= notBefore - 1000, `${what}: CreationDate ${entity.get('CreationDate')} is the service's`);
  assert.ok(modified >= created, `${what}: ModificationDate ${entity.get('ModificationDate')}`);
}

async function callOperation(name: string, query: string): Promise<void> {
  const res = await asSeller(seller, `${live.root}/${name}?${query}`, { method: 'POST', headers: { Accept: 'application/json' } });
  assert.equal(res.status, 200, `${name}: ${res.body}`);
}

const started = Date.now();

describe('POST with every property of the class, dates as DateTime.MinValue', () => {
  for (const format of FORMATS) {
    for (const isoDates of format === 'json' ? [false, true] : [false]) {
      test(`201 with the service's dates and read-only values, the writable ones as sent (${format}${isoDates ? ', ISO dates' : ''})`, async () => {
        const sent = newProductObject();
        const res = await write(format, 'POST', '/Products', bodyOf(format, Product, sent, '', isoDates));
        assert.equal(res.status, 201, res.body);
        const answered = entityOf(format, Product, res);
        assert.notEqual(answered.get('Id'), '0', 'the service assigns the key');
        assertServerDates(answered, started, 'the 201 answer');
        for (const name of PRODUCT_READ_ONLY_ON_CREATE) assert.equal(answered.get(name), null, `${name} is the service's (none), not the client's`);
        for (const [name, value] of sent) {
          if (name === 'Id' || name === 'CreationDate' || name === 'ModificationDate' || PRODUCT_READ_ONLY_ON_CREATE.includes(name)) continue;
          assert.equal(answered.get(name), value, `${name} as sent`);
        }
        assert.deepEqual(await readBack(format, Product, answered.get('Id')!), answered, 'stored as answered');
      });
    }
  }
});

describe('an update re-sending the whole object as read before an operation changed read-only properties', () => {
  for (const format of FORMATS) {
    for (const method of ['MERGE', 'PUT', 'PATCH']) {
      test(`${method}: 204, the writable change applied, the read-only values the operations set kept (${format})`, async () => {
        // SetEbayCategory changes only products that opted out of the platform's matching.
        const created = await write(format, 'POST', '/Products', bodyOf(format, Product, newProductObject().set('DisableAutomatch', 'true')));
        assert.equal(created.status, 201, created.body);
        const id = entityOf(format, Product, created).get('Id')!;
        // The client reads the product; then the operations change read-only properties.
        const held = await readBack(format, Product, id);
        const heldEtag = await readEtag(format, Product, id);
        await callOperation('SetProductProfile', `productId=${id}L&type=1&profileId=4242L`);
        await callOperation('SetProductProfile', `productId=${id}L&type=3&profileId=4343L`);
        await callOperation('SetEbayCategory', `productId=${id}L&categoryId1=1234L&categoryId2=5678L&autoMatched=true`);
        const changed = await readBack(format, Product, id);

        held.set('StockAmount', '17');
        // With the ETag it read: the operations set only read-only values, which do not move it.
        const res = await write(format, method, `/Products(${id}L)`, bodyOf(format, Product, held, `${live.root}/Products(${id}L)`), heldEtag);
        assert.equal(res.status, 204, res.body);
        const after = await readBack(format, Product, id);
        assert.equal(after.get('StockAmount'), '17', 'the writable change');
        for (const [name, value] of [['PaymentProfileId', '4242'], ['ShippingProfileId', '4343'], ['EbayCategoryId1', '1234'], ['EbayCategoryId2', '5678'], ['AutoMatched', 'true']]) {
          assert.equal(after.get(name!), value, `${name} as the operation set it, not the stale null`);
        }
        assert.equal(after.get('CreationDate'), changed.get('CreationDate'));
        assert.ok(dateMs(after.get('ModificationDate')!) >= dateMs(changed.get('ModificationDate')!), 'ModificationDate is the service\'s');
        assert.equal(after.get('Id'), id);
      });
    }
  }

  test('a key in the body that differs from the URI is ignored: the URI names the entity (atom, json)', async () => {
    for (const format of FORMATS) {
      const [a, b] = await Promise.all([1, 2].map(async () => {
        const res = await write(format, 'POST', '/Products', bodyOf(format, Product, newProductObject()));
        assert.equal(res.status, 201, res.body);
        return entityOf(format, Product, res);
      }));
      const sent = new Map(a!);
      sent.set('Id', b!.get('Id')!);
      sent.set('Title', 'Changed through the URI');
      const res = await write(format, 'MERGE', `/Products(${a!.get('Id')}L)`, bodyOf(format, Product, sent, `${live.root}/Products(${a!.get('Id')}L)`));
      assert.equal(res.status, 204, res.body);
      assert.equal((await readBack(format, Product, a!.get('Id')!)).get('Title'), 'Changed through the URI');
      assert.deepEqual(await readBack(format, Product, b!.get('Id')!), b, 'the entity the body named is untouched');
    }
  });
});

describe('an order paid by the client, then updated again from its stale object', () => {
  async function seedOrder(): Promise<string> {
    const n = ++counter;
    const buyer = await storeRow(live, seller.accountId, typeOfSet('Buyers'), { BuyerName: `wcf-buyer-${n}` });
    const order = await storeRow(live, seller.accountId, SalesOrder, {
      BuyerId: buyer, PlatformOrderId: `wcf-order-${n}`, CurrencyCode: 'EUR', ItemCount: 1, TotalAmount: 1, TotalPrice: '59.9',
    });
    await storeRow(live, seller.accountId, typeOfSet('SalesOrderItems'), {
      SalesOrderId: order, PlatformItemId: `wcf-item-${n}`, TransactionId: `tx-${n}`, Amount: 1, Price: '59.9', CurrencyCode: 'EUR',
    });
    return String(order);
  }

  for (const format of FORMATS) {
    test(`MarkedAsPayed set by the payment stays; the payment date with an offset is stored in UTC (${format})`, async () => {
      const id = await seedOrder();
      const held = await readBack(format, SalesOrder, id);
      assert.equal(held.get('MarkedAsPayed'), 'false');
      // A DateTime of kind Local, as XmlConvert writes it: 10:00 at +02:00 is 08:00 UTC.
      held.set('PaidAmount', '59.9');
      held.set('PaidDate', '2015-06-01T10:00:00+02:00');
      const uri = `${live.root}/SalesOrders(${id}L)`;
      const paid = await write(format, 'MERGE', `/SalesOrders(${id}L)`, bodyOf(format, SalesOrder, held, uri, true), await readEtag(format, SalesOrder, id));
      assert.equal(paid.status, 204, paid.body);
      // The client takes the new ETag from its own update's answer.
      let heldEtag = etagOf(paid);
      const afterPayment = await readBack(format, SalesOrder, id);
      assert.equal(afterPayment.get('MarkedAsPayed'), 'true', 'the payment marks the order paid');
      assert.equal(dateMs(afterPayment.get('PaidDate')!), Date.UTC(2015, 5, 1, 8, 0, 0));

      // The client still holds MarkedAsPayed=false and the old ModificationDate, and sends all.
      held.set('ShippingStatus', '1');
      for (const method of ['MERGE', 'PUT']) {
        const res = await write(format, method, `/SalesOrders(${id}L)`, bodyOf(format, SalesOrder, held, uri, true), heldEtag);
        assert.equal(res.status, 204, `${method}: ${res.body}`);
        heldEtag = etagOf(res);
        const after = await readBack(format, SalesOrder, id);
        assert.equal(after.get('MarkedAsPayed'), 'true', `${method} does not set MarkedAsPayed back`);
        assert.equal(after.get('ShippingStatus'), '1');
        assert.equal(after.get('PlatformOrderId'), held.get('PlatformOrderId'));
      }
    });
  }
});

describe('a binding of a navigation whose foreign key is read-only', () => {
  test("is ignored like the property: an order's Buyer stays (json, atom)", async () => {
    const n = ++counter;
    const buyer = await storeRow(live, seller.accountId, typeOfSet('Buyers'), { BuyerName: `bound-${n}` });
    const other = await storeRow(live, seller.accountId, typeOfSet('Buyers'), { BuyerName: `other-${n}` });
    const order = String(await storeRow(live, seller.accountId, SalesOrder, { BuyerId: buyer, PlatformOrderId: `bound-${n}` }));
    for (const target of [`Buyers(${other}L)`, 'Buyers(999999999L)']) {
      const json = await write('json', 'MERGE', `/SalesOrders(${order}L)`, `{"ForeignOrderId":"ERP-${n}","Buyer":{"__metadata":{"uri":"${live.root}/${target}"}}}`);
      assert.equal(json.status, 204, json.body);
      const atom = wcfAtomEntry(SalesOrder, await readBack('atom', SalesOrder, order)).replace('  <content', `  <link rel="http://schemas.microsoft.com/ado/2007/08/dataservices/related/Buyer" href="${live.root}/${target}" />\r\n  <content`);
      const res = await write('atom', 'MERGE', `/SalesOrders(${order}L)`, atom);
      assert.equal(res.status, 204, res.body);
      const after = await readBack('json', SalesOrder, order);
      assert.equal(after.get('BuyerId'), String(buyer));
      assert.equal(after.get('ForeignOrderId'), `ERP-${n}`);
    }
  });
});

describe('dates from year 0001 on', () => {
  for (const format of FORMATS) {
    test(`a writable date of 0001-01-01T00:00:00 is stored and read back exactly, and found by datetime'0001-01-01T00:00:00' (${format})`, async () => {
      const n = ++counter;
      const buyer = await storeRow(live, seller.accountId, typeOfSet('Buyers'), { BuyerName: `year-one-${n}` });
      const order = String(await storeRow(live, seller.accountId, SalesOrder, { BuyerId: buyer, PlatformOrderId: `year-one-${n}` }));
      const held = await readBack(format, SalesOrder, order);
      held.set('PaidDate', MIN_DATE);
      const res = await write(format, 'MERGE', `/SalesOrders(${order}L)`, bodyOf(format, SalesOrder, held, `${live.root}/SalesOrders(${order}L)`));
      assert.equal(res.status, 204, res.body);
      assert.equal((await readBack(format, SalesOrder, order)).get('PaidDate'), MIN_DATE);
      if (format === 'json') {
        const raw = await asSeller(seller, `${live.root}/SalesOrders(${order}L)`, { headers: { Accept: 'application/json' } });
        assert.match(raw.body, /"PaidDate":"\\\/Date\(-62135596800000\)\\\/"/);
      }
      const filter = `PaidDate eq datetime'${MIN_DATE}' and PlatformOrderId eq 'year-one-${n}'`;
      const found = await asSeller(seller, `${live.root}/SalesOrders?$filter=${encodeURIComponent(filter)}`, { headers: { Accept: 'application/json' } });
      assert.equal(found.status, 200, found.body);
      assert.match(found.body, new RegExp(`"PlatformOrderId":"year-one-${n}"`));
      const offset = `PaidDate lt datetime'0001-01-01T02:00:00+01:00' and PlatformOrderId eq 'year-one-${n}'`;
      const viaOffset = await asSeller(seller, `${live.root}/SalesOrders?$filter=${encodeURIComponent(offset)}`, { headers: { Accept: 'application/json' } });
      assert.equal(viaOffset.status, 200, viaOffset.body);
      assert.match(viaOffset.body, new RegExp(`"PlatformOrderId":"year-one-${n}"`), 'an offset in a datetime literal is converted to UTC');
    });
  }

  test('a date before 0001-01-01 or after 9999-12-31 in UTC is a 400 naming it', async () => {
    const n = ++counter;
    const buyer = await storeRow(live, seller.accountId, typeOfSet('Buyers'), { BuyerName: `range-${n}` });
    const order = String(await storeRow(live, seller.accountId, SalesOrder, { BuyerId: buyer, PlatformOrderId: `range-${n}` }));
    for (const [format, paidDate] of [
      ['json', '/Date(-62135596800001)/'],
      ['json', '0001-01-01T00:00:00+01:00'],
      ['atom', '9999-12-31T23:59:59-01:00'],
    ] as const) {
      const held = await readBack(format, SalesOrder, order);
      let body: string;
      if (format === 'atom') body = bodyOf(format, SalesOrder, new Map(held).set('PaidDate', paidDate));
      else body = JSON.stringify({ ...(JSON.parse(bodyOf(format, SalesOrder, held, '', true)) as object), PaidDate: paidDate });
      const res = await write(format, 'MERGE', `/SalesOrders(${order}L)`, body);
      assert.equal(res.status, 400, res.body);
      assert.match(res.body, /PaidDate/);
      assert.match(res.body, /outside the DateTime range/);
    }
  });
});

describe('the same writes inside a $batch changeset', () => {
  for (const format of FORMATS) {
    test(`POST with DateTime.MinValue dates and a stale MERGE answer 201 and 204 (${format})`, async () => {
      const created = await write(format, 'POST', '/Products', bodyOf(format, Product, newProductObject()));
      assert.equal(created.status, 201, created.body);
      const id = entityOf(format, Product, created).get('Id')!;
      const held = await readBack(format, Product, id);
      await callOperation('SetProductProfile', `productId=${id}L&type=2&profileId=5151L`);
      held.set('Title', 'Changed in a changeset');

      const headers = Object.entries(headersOf(format)).map(([name, value]) => `${name}: ${value}`);
      const body = batchBody([
        changesetPart([
          httpPart({ method: 'POST', target: `${live.root}/Products`, headers: [...headers, 'Content-ID: 1'], body: bodyOf(format, Product, newProductObject()) }),
          httpPart({ method: 'MERGE', target: `${live.root}/Products(${id}L)`, headers: [...headers, 'Content-ID: 2'], body: bodyOf(format, Product, held, `${live.root}/Products(${id}L)`) }),
        ]),
      ]);
      const answers = changesetAnswers(readBatchAnswer(await postBatch(live, seller, body))[0]);
      assert.deepEqual(answers.map((a) => a.status), [201, 204], answers.map((a) => a.body).join('\n'));
      const inserted = format === 'atom' ? readAtomEntity(Product, answers[0]!.body) : readJsonEntity(Product, answers[0]!.body);
      assertServerDates(inserted, started, 'the changeset 201');
      const after = await readBack(format, Product, id);
      assert.equal(after.get('Title'), 'Changed in a changeset');
      assert.equal(after.get('ReturnProfileId'), '5151', 'the profile the operation set stays');
    });
  }
});
