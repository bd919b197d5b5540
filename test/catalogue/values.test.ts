/** applyPayload's read-only rule: a read-only value may be sent back unchanged, never altered (an invalid write, answered 400). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import { applyPayload } from '../../src/catalogue/values';
import { RuleViolation } from '../../src/model/rule-violation';
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

const merge = (values: Record<string, EdmValue>) => applyPayload(orders, new Map(Object.entries(values)), 'merge', stored, 1);

test('a read-only string that reads like a number must match exactly: "7" is not "007"', () => {
  assert.throws(() => merge({ PlatformOrderId: '7' }), (e: unknown) => e instanceof RuleViolation && e.kind === 'invalid' && /PlatformOrderId/.test(e.message));
  assert.doesNotThrow(() => merge({ PlatformOrderId: '007' }));
});

test('a read-only Decimal sent back in canonical form is accepted, another value refused', () => {
  assert.doesNotThrow(() => merge({ TotalPrice: '59.9' }));
  assert.throws(() => merge({ TotalPrice: '59.91' }), (e: unknown) => e instanceof RuleViolation && e.kind === 'invalid' && /TotalPrice/.test(e.message));
});
