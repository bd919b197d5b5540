/**
 * Whoever clones the repository must find everything in it: no file refers to documents outside
 * it. This reads every file of the repository's own folders and fails on a path into the shared design folder or a
 * design document's file name; docs/ holds what a reader needs, in the project's own words.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');

/** The names, built from pieces so that this file does not match itself. */
const OUTSIDE = [
  new RegExp(['shared', '/'].join('')),
  ...['entity-model', 'operations-and-protocol', 'client-compatibility', 'odata-v2-reference', 'interface-specification'].map(
    (name) => new RegExp(`${name}\\.md`),
  ),
  // docs/architecture.md is the repository's own.
  new RegExp(`(?<!docs/)${'architecture'}\\.md`),
];


/** The repository's own folders and files (not node_modules, dist, data or results). */
const FOLDERS = ['src', 'test', 'docs', 'bench', 'scripts', 'bin', '.ci'];
const TOP_FILES = ['README.md', 'package.json', 'tsconfig.json'];
const SKIPPED_FOLDERS = new Set(['results']);

function filesBelow(folder: string): string[] {
  const full = path.join(ROOT, folder);
  if (!fs.existsSync(full)) return [];
  return fs.readdirSync(full, { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(folder, entry.name);
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : filesBelow(relative);
    return entry.isFile() ? [relative] : [];
  });
}

test('no file of the repository refers to a document outside it', () => {
  const files = [...FOLDERS.flatMap(filesBelow), ...TOP_FILES];
  assert.ok(files.length > 100, `the repository's files (${files.length})`);
  const found: string[] = [];
  for (const file of files) {
    const full = path.join(ROOT, file);
    if (!fs.existsSync(full) || fs.statSync(full).size > 2_000_000) continue;
    const lines = fs.readFileSync(full, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (OUTSIDE.some((pattern) => pattern.test(line))) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, [], `references outside the repository:\n${found.join('\n')}`);
});
