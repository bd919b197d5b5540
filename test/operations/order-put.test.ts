/**
 * PUT of SalesOrders and SalesOrderItems (README "Order history"): a PUT resets the writable
 * properties its body leaves out to their defaults, and that reset changes the entity's own row
 * and nothing else: no item, no other order, no history line. What the body sends counts as in a
 * MERGE. Against the live service; every tenant row of the account is read raw before and after.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import { clientSets } from '../../src/model/define';
import { VERSION_COLUMN } from '../../src/store/schema';
import { asSeller, newSeller, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { deliver, orderDocument, orderItem, startWithPlatform } from '../platform/platform-client';
import { getCollection, getEntity, mergeEntity } from '../support/live-client';
import { atomEntry } from '../support/entries';
import { callOperation, operationValue } from './operation-client';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startWithPlatform();
  seller = await newSeller(live, 'order-put');
});
after(() => live.close());

type Row = Record<string, unknown>;

function put(set: string, id: string, body: Record<string, unknown>) {
  return asSeller(seller, `${live.root}/${set}(${id}L)`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', DataServiceVersion: '1.0' },
    body: JSON.stringify(body),
  });
}

async function history(orderId: string): Promise<string> {
  return operationValue(await callOperation(live, seller, 'GET', 'GetSalesOrderHistory', `salesOrderId=${orderId}L`, 'json'), 'GetSalesOrderHistory', 'json') as string;
}

/** An order of two items, paid and shipped by the seller, with a carrier on its first item; a second order beside it. */
async function paidAndShippedOrder(name: string): Promise<{ orderId: string; itemIds: string[] }> {
  const orderId = (await deliver(live, seller.userName, orderDocument(name, [orderItem(`${name}-1`), orderItem(`${name}-2`)]))).id;
  await deliver(live, seller.userName, orderDocument(`${name}-other`));
  assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { PaidAmount: '39.98', PaidDate: '/Date(1714640000000)/', ForeignOrderId: 'ERP-1' })).status, 204);
  assert.equal((await mergeEntity(live, seller, 'SalesOrders', orderId, { ShippingStatus: 1 })).status, 204);
  const itemIds = (await getCollection(live, seller, `SalesOrders(${orderId}L)/SalesOrderItems`)).map((i) => String(i.Id));
  assert.equal((await mergeEntity(live, seller, 'SalesOrderItems', itemIds[0]!, { CarrierUsed: 'DHL', TrackingNumbers: '0034' })).status, 204);
  return { orderId, itemIds };
}

const columnsOf = (typeName: string, names: readonly string[]) => {
  const type = model.typeByName.get(typeName)!;
  return new Set(names.map((n) => type.properties.find((p) => p.name === n)!.column));
};

/** The type's writable columns, its ModificationDate and its row version: what a PUT may change in its own row. */
function ownWritableColumns(typeName: string): Set<string> {
  const type = model.typeByName.get(typeName)!;
  return new Set([...type.properties.filter(clientSets).map((p) => p.column), ...columnsOf(typeName, ['ModificationDate']), VERSION_COLUMN]);
}

/** A row that may change, and the columns of it that may. */
interface Allowed {
  readonly table: string;
  readonly id: string;
  readonly columns: ReadonlySet<string>;
}

/** Compares two dumps of every tenant row: equal except the `allowed` columns of the `allowed` rows. */
function assertOnlyChanged(before: Record<string, string[]>, after: Record<string, string[]>, allowed: readonly Allowed[]): void {
  for (const name of Object.keys(before)) {
    const here = allowed.filter((a) => a.table === name);
    if (here.length === 0) {
      assert.deepEqual(after[name], before[name], `${name}: no row changed`);
      continue;
    }
    const parse = (rows: string[]) => new Map(rows.map((r) => JSON.parse(r) as Row).map((r) => [String(r.id).replace(/n$/, ''), r]));
    const was = parse(before[name]!);
    const is = parse(after[name]!);
    assert.deepEqual([...is.keys()].sort(), [...was.keys()].sort(), `${name}: the same rows`);
    for (const [rowId, row] of was) {
      const changeable = here.find((a) => a.id === rowId)?.columns ?? new Set<string>();
      for (const column of Object.keys(row)) {
        if (!changeable.has(column)) assert.deepEqual(is.get(rowId)![column], row[column], `${name} ${rowId}: column ${column} unchanged`);
      }
    }
  }
}

const table = (typeName: string) => model.typeByName.get(typeName)!.table;

describe('PUT on SalesOrders', () => {
  test('a PUT with one property resets the order\'s own writable properties and changes no other row', async () => {
    const { orderId, itemIds } = await paidAndShippedOrder('PUT-1');
    const lines = await history(orderId);
    const before = await tenantRows(live, seller.accountId);
    const res = await put('SalesOrders', orderId, { ForeignOrderId: 'ERP-2' });
    assert.equal(res.status, 204, res.body);
    assertOnlyChanged(before, await tenantRows(live, seller.accountId), [{ table: table('SalesOrder'), id: orderId, columns: ownWritableColumns('SalesOrder') }]);
    const order = await getEntity(live, seller, 'SalesOrders', orderId);
    assert.deepEqual(
      { ForeignOrderId: order.ForeignOrderId, PaidAmount: order.PaidAmount, PaidDate: order.PaidDate, ShippingStatus: order.ShippingStatus },
      { ForeignOrderId: 'ERP-2', PaidAmount: null, PaidDate: null, ShippingStatus: 0 },
      'the writable properties the body left out are back at their defaults',
    );
    assert.equal(order.MarkedAsPayed, true, 'the reset is no withdrawal of payment');
    assert.equal(order.MarkedAsShipped, true, 'the items are still shipped');
    assert.equal(await history(orderId), lines, 'no history line');
    for (const id of itemIds) assert.equal((await getEntity(live, seller, 'SalesOrderItems', id)).ShippingStatus, 1);
  });

  test('a PUT in Atom, as the WCF client sends it with ReplaceOnUpdate, does the same', async () => {
    const { orderId } = await paidAndShippedOrder('PUT-2');
    const before = await tenantRows(live, seller.accountId);
    const res = await asSeller(seller, `${live.root}/SalesOrders(${orderId}L)`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/atom+xml', DataServiceVersion: '1.0' },
      body: atomEntry('SalesOrder', { ForeignOrderId: 'ERP-3' }),
    });
    assert.equal(res.status, 204, res.body);
    assertOnlyChanged(before, await tenantRows(live, seller.accountId), [{ table: table('SalesOrder'), id: orderId, columns: ownWritableColumns('SalesOrder') }]);
  });

  test('what a PUT sends counts as in a MERGE: a new ShippingStatus is recorded for every item and items take it', async () => {
    const { orderId, itemIds } = await paidAndShippedOrder('PUT-3');
    const lines = (await history(orderId)).split('\r\n').length;
    assert.equal((await put('SalesOrders', orderId, { ShippingStatus: 0, PaidAmount: '39.98', PaidDate: '/Date(1714640000000)/' })).status, 204);
    const after = (await history(orderId)).split('\r\n');
    assert.deepEqual(after.slice(lines).map((l) => l.replace(/^.* - Aktion /, '')), ['Versandstatus:0', 'Versandstatus:0'], 'payment unchanged: no line; shipping: one per item');
    for (const id of itemIds) assert.equal((await getEntity(live, seller, 'SalesOrderItems', id)).ShippingStatus, 0);
  });
});

describe('PUT on SalesOrderItems', () => {
  test('a PUT with one property resets the item\'s own writable properties, writes no history and no other item', async () => {
    const { orderId, itemIds } = await paidAndShippedOrder('PUT-4');
    const lines = await history(orderId);
    const before = await tenantRows(live, seller.accountId);
    const res = await put('SalesOrderItems', itemIds[0]!, { CarrierUsed: 'UPS' });
    assert.equal(res.status, 204, res.body);
    const after = await tenantRows(live, seller.accountId);
    // The order follows any change of its items: its ModificationDate, and MarkedAsShipped (read-only flags, not the seller's data).
    assertOnlyChanged(before, after, [
      { table: table('SalesOrderItem'), id: itemIds[0]!, columns: ownWritableColumns('SalesOrderItem') },
      { table: table('SalesOrder'), id: orderId, columns: columnsOf('SalesOrder', ['ModificationDate', 'MarkedAsShipped']) },
    ]);
    const item = await getEntity(live, seller, 'SalesOrderItems', itemIds[0]!);
    assert.deepEqual({ CarrierUsed: item.CarrierUsed, TrackingNumbers: item.TrackingNumbers, ShippingStatus: item.ShippingStatus }, { CarrierUsed: 'UPS', TrackingNumbers: null, ShippingStatus: 0 });
    assert.equal(await history(orderId), lines, 'the reset of ShippingStatus is no shipping event');
    assert.equal((await getEntity(live, seller, 'SalesOrders', orderId)).MarkedAsShipped, false, 'MarkedAsShipped follows the items as stored');
  });
});
