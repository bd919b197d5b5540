/**
 * docs/entity-sets.md is generated from the entity model by scripts/entity-reference.ts. This
 * renders it again in memory and fails when the committed file differs, so a change to the model
 * that is not followed by `npm run docs` cannot go unnoticed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REFERENCE_PATH, renderEntityReference } from '../../scripts/entity-reference';
import { model } from '../../src/model/catalogue-model';
import { defineModel } from '../../src/model/define';

const committedFile = path.join(__dirname, '..', '..', '..', REFERENCE_PATH);

test('the committed entity set reference is what the model generates (else run `npm run docs`)', () => {
  const committed = fs.readFileSync(committedFile, 'utf8').split('\n');
  const generated = renderEntityReference().split('\n');
  const firstDifference = generated.findIndex((line, i) => committed[i] !== line);
  assert.ok(
    firstDifference === -1 && committed.length === generated.length,
    `${REFERENCE_PATH} is stale: run \`npm run docs\` and commit it. First difference at line ${firstDifference + 1}:\n` +
      `  committed: ${committed[firstDifference] ?? '(end of file)'}\n  generated: ${generated[firstDifference] ?? '(end of file)'}`,
  );
});

test('the reference names every set, every property with its type, and every navigation of the model', () => {
  const text = renderEntityReference();
  for (const type of model.entityTypes) {
    const section = text.split(`\n## ${type.setName}\n`)[1]?.split('\n## ')[0];
    assert.ok(section, `a section for ${type.setName}`);
    for (const p of type.properties) {
      const row = section.split('\n').find((line) => line.startsWith(`| \`${p.name}\` |`));
      assert.ok(row, `${type.setName}.${p.name} has a row`);
      assert.ok(row.includes(`| ${p.type.replace('Edm.', '')}`), `${type.setName}.${p.name}: ${row}`);
      assert.ok(row.includes(p.nullable ? '| yes |' : '| no |'), `${type.setName}.${p.name} nullability: ${row}`);
    }
    for (const n of type.navigations) assert.ok(section.includes(`| \`${n.name}\``), `${type.setName}/${n.name}`);
  }
});

test('a property added to the model shows in the reference, so the committed file would be stale', () => {
  const products = model.entityTypes.find((t) => t.setName === 'Products')!;
  const widened = defineModel({
    namespace: model.namespace,
    containerName: model.containerName,
    entities: model.entityTypes.map((t) => ({
      name: t.name,
      setName: t.setName,
      setAliases: t.setAliases,
      access: t.access,
      uniqueKeys: t.uniqueKeys,
      properties: Object.fromEntries(
        [
          ...t.properties.map((p) => [p.name, { type: p.type, options: { ...p } }] as const),
          ...(t === products ? [['GiftWrapNote', { type: 'Edm.String' as const, options: { nullable: true, maxLength: 120 } }] as const] : []),
        ],
      ),
    })),
    relations: model.relations,
    operations: model.operations,
  });
  const text = renderEntityReference(widened);
  assert.match(text, /\| `GiftWrapNote` \| String\(120\) \| yes \| writable \|/);
  assert.notEqual(text, renderEntityReference());
});
