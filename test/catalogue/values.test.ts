/** applyPayload's read-only rule: the key and read-only values in a payload are ignored, whatever they hold. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import { applyPayload } from '../../src/catalogue/values';
import type { EdmValue } from '../../src/odata/edm';

const orders = model.typeByName.get('SalesOrder')!;
const stored = {
  type: orders,
  values: Object.fromEntries(orders.properties.map((p) => [p.name, null])) as Record<string, EdmValue>,
};
stored.values.Id = 5n;
stored.values.PlatformOrderId = '007';
stored.values.TotalPrice = '59.9';
stored.values.ShippingStatus = 0;
stored.values.CreationDate = 0;
stored.values.MarkedAsPayed = true;

const merge = (values: Record<string, EdmValue>) => applyPayload(orders, new Map(Object.entries(values)), 'merge', stored, 1);

test('read-only values sent with another value are ignored: the stored ones stay', () => {
  const row = merge({ PlatformOrderId: '7', TotalPrice: '59.91', MarkedAsPayed: false, CreationDate: -62135596800000, ShippingStatus: 1 });
  assert.equal(row.PlatformOrderId, '007');
  assert.equal(row.TotalPrice, '59.9');
  assert.equal(row.MarkedAsPayed, true);
  assert.equal(row.CreationDate, 0);
  assert.equal(row.ModificationDate, 1, 'stamped with the time of the write');
  assert.equal(row.ShippingStatus, 1, 'the writable property is applied');
});

test('a key in the payload is ignored: the entity keeps its own', () => {
  assert.equal(merge({ Id: 6n }).Id, 5n);
  const products = model.typeByName.get('Product')!;
  const created = applyPayload(products, new Map<string, EdmValue>([['Id', 77n], ['Title', 'x'], ['Price', '1'], ['StockAmount', 1], ['CreationDate', -62135596800000]]), 'create', undefined, 1000);
  assert.equal(created.Id, null, 'the store assigns the key');
  assert.equal(created.CreationDate, 1000);
});
