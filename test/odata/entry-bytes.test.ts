/**
 * Single-entity documents as response bytes (BytesSink, src/odata/text-sink.ts): the bytes must
 * be exactly the UTF-8 of the document the writers build as one string, whatever the values hold:
 * ASCII, Latin-1, other BMP characters, astral characters (surrogate pairs), XML and JSON
 * specials, values long and short, next to each other and alone, with and without $select.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EntityRecord, WriteContext } from '../../src/odata/entity';
import { atomEntryDocument, atomEntryDocumentBytes } from '../../src/odata/atom/writer';
import { jsonEntityDocument, jsonEntityDocumentBytes } from '../../src/odata/json/writer';
import { BytesSink } from '../../src/odata/text-sink';
import { entityType as typeOf } from '../support/model-types';

const ctx: WriteContext = { serviceRoot: 'http://localhost:8080/publicapi/v1/api.svc', version: 1, updated: '2024-05-01T10:00:00Z' };
const Product = typeOf('Product');

const TEXTS = [
  'plain ASCII',
  'Produkt 0 – Größe',
  'Ä'.repeat(3000),
  'a'.repeat(300) + 'ß' + 'b'.repeat(300),
  '日本語のタイトル',
  'emoji 😀 and 𝄞 (astral)',
  '<b>&amp; "quoted" \'single\'</b>',
  'line\nbreak\ttab \\ backslash',
  '',
];

function product(title: string | null, description: string | null, brand: string | null): EntityRecord {
  return {
    type: Product,
    values: {
      Id: 21n,
      ForeignId: 'F-0',
      Title: title,
      Description: description,
      Brand: brand,
      Price: '99',
      StockAmount: 0,
      ProductType: 0,
      DisableAutomatch: false,
      CreationDate: Date.UTC(2026, 10, 1),
      ModificationDate: Date.UTC(2026, 10, 2),
    },
  };
}

test('single-entity documents as bytes are the UTF-8 of the same documents as one string', () => {
  let documents = 0;
  for (const title of TEXTS) {
    for (const description of [null, 'ASCII between', 'Größe'] as const) {
      const rec = product(title, description, title.split('').reverse().join(''));
      for (const context of [ctx, { ...ctx, select: new Set(['Title', 'Price']) }]) {
        assert.deepEqual(jsonEntityDocumentBytes(context, rec), Buffer.from(jsonEntityDocument(context, rec), 'utf8'), `JSON, title ${JSON.stringify(title.slice(0, 40))}`);
        assert.deepEqual(atomEntryDocumentBytes(context, rec), Buffer.from(atomEntryDocument(context, rec), 'utf8'), `Atom, title ${JSON.stringify(title.slice(0, 40))}`);
        documents += 2;
      }
    }
  }
  assert.equal(documents, TEXTS.length * 3 * 2 * 2);
});

test('BytesSink keeps the order of pieces given apart and joined', () => {
  const sink = new BytesSink();
  const pieces: [boolean, string][] = [[false, 'a'], [true, 'ö'], [true, '😀'], [false, ''], [false, 'b'], [true, ''], [false, 'c']];
  for (const [apart, text] of pieces) {
    if (apart) sink.appendApart(text);
    else sink.append(text);
  }
  assert.equal(sink.bytes().toString('utf8'), 'aö😀bc');
  assert.equal(new BytesSink().bytes().length, 0);
});
