/**
 * The platform documents' schemas: derived from the entity model (names, types, lengths), and the
 * README's example of each document valid against them, so the documentation cannot drift.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { model } from '../../src/model/catalogue-model';
import { DOCUMENT_KINDS, DocumentValidator, platformProperties } from '../../src/platform/documents';

const validator = new DocumentValidator(model);
type Schema = { properties: Record<string, Schema & { maxLength?: number; type?: unknown }>; items?: Schema };

test("the README's example of every kind of document is valid", () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
  const examples = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as { kind: string });
  assert.deepEqual(examples.map((e) => e.kind).sort(), [...DOCUMENT_KINDS].sort());
  for (const example of examples) assert.equal(validator.validate(example).kind, example.kind);
});

test('document members are the platform properties of the model, with its lengths and nullability', () => {
  const order = validator.schemas.order as unknown as Schema;
  const address = order.properties.Address!;
  const addressType = model.typeByName.get('Address')!;
  assert.deepEqual(Object.keys(address.properties), platformProperties(addressType).map((p) => p.name));
  assert.equal(order.properties.CurrencyCode!.maxLength, model.typeByName.get('SalesOrder')!.properties.find((p) => p.name === 'CurrencyCode')!.maxLength);
  assert.deepEqual(order.properties.CheckoutCompletionDate!.type, ['string', 'null']);
  for (const maintained of ['Id', 'BuyerId', 'MarkedAsPayed', 'ModificationDate', 'ForeignOrderId', 'PaidAmount']) assert.ok(!(maintained in order.properties), maintained);
  const item = (order.properties.SalesOrderItems as unknown as { items: Schema }).items;
  assert.ok(!('ProductId' in item.properties) && 'Product' in item.properties && 'PlatformItemId' in item.properties);
});
