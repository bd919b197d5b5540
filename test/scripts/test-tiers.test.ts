/**
 * The rule that splits the suite into the unit tier (`npm run test:unit`) and the live tier: a
 * test file is live when it loads, directly or through other test modules, a helper that starts
 * the service or a PostgreSQL cluster, or node's child_process. Checked on a small tree of
 * compiled files written here, and on the real suite.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

interface Tiers {
  tierOf(file: string, testRoot: string): 'live' | 'unit';
  liveReason(file: string, testRoot: string): string | null;
}
// scripts/ is plain JavaScript (the runner loads it before anything is compiled).
const tiers = require(path.join(__dirname, '..', '..', '..', 'scripts', 'test-tiers.js')) as Tiers;

/** Writes compiled-looking test files below a fresh dist/test and returns its path. */
function tree(files: Record<string, string>): string {
  const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tiers-')), 'dist', 'test');
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

test('a test that loads a live helper, directly or through a test module, is live; the rest is unit', () => {
  const root = tree({
    'support/live-service.js': '"use strict";',
    'support/serve-process.js': 'const c = require("node:child_process");',
    'support/http-client.js': 'const h = require("node:http");',
    'batch/support.js': 'const l = require("../support/live-service");',
    'a/direct.test.js': 'const l = require("../support/live-service");',
    'a/indirect.test.js': 'const s = require("../batch/support");',
    'a/child.test.js': 'const c = require("node:child_process");',
    'a/serve.test.js': 'const s = require("../support/serve-process");',
    'a/pure.test.js': 'const h = require("../support/http-client"); const m = require("../../src/server/app");',
    'a/cycle-a.test.js': 'const b = require("./cycle-b");',
    'a/cycle-b.js': 'const a = require("./cycle-a.test");',
  });
  const tier = (name: string) => tiers.tierOf(path.join(root, name), root);
  assert.equal(tier('a/direct.test.js'), 'live');
  assert.equal(tier('a/indirect.test.js'), 'live');
  assert.match(tiers.liveReason(path.join(root, 'a/indirect.test.js'), root)!, /batch\/support\.js loads \.\.\/support\/live-service/);
  assert.equal(tier('a/child.test.js'), 'live');
  assert.equal(tier('a/serve.test.js'), 'live');
  // src/ is not followed: a test of a module that the server also uses is still a unit test.
  assert.equal(tier('a/pure.test.js'), 'unit');
  assert.equal(tier('a/cycle-a.test.js'), 'unit');
  fs.rmSync(path.dirname(path.dirname(root)), { recursive: true, force: true });
});

test('on the real suite: parsers and writers are unit tests, HTTP and process tests are live', () => {
  const root = path.join(__dirname, '..');
  const tier = (name: string) => tiers.tierOf(path.join(root, name), root);
  for (const unit of ['odata/expr/filter.test.js', 'odata/batch/parse.test.js', 'auth/sessions.test.js', 'scripts/test-tiers.test.js']) {
    assert.equal(tier(unit), 'unit', unit);
  }
  for (const live of ['server/errors.test.js', 'batch/atomicity.test.js', 'cli/cli.test.js', 'reliability/crash-durability.test.js', 'store/postgres-crash.test.js']) {
    assert.equal(tier(live), 'live', live);
  }
});
