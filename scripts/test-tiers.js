'use strict';
// Which tier a compiled test file belongs to. The rule, applied to the compiled JavaScript (so
// that type-only imports do not count):
//
//   A test file is LIVE when it, or any module under dist/test that it loads (directly or through
//   other test modules), loads one of the LIVE_MODULES: the helpers that start the service
//   (test/support/live-service, in this process, or test/support/serve-process, as a child),
//   the one that starts a PostgreSQL cluster (test/support/postgres-cluster), or node's
//   child_process. Every other test file is a UNIT test.
//
// A new test therefore lands in the right tier without a list to keep: if it starts a service or
// another process it is live, else it is unit. `npm run test:unit` runs the unit tier on SQLite
// only (an in-memory or temporary-file database in this process), which takes seconds.
const fs = require('node:fs');
const path = require('node:path');

const LIVE_MODULES = [
  ['test', 'support', 'live-service.js'],
  ['test', 'support', 'serve-process.js'],
  ['test', 'support', 'postgres-cluster.js'],
].map((parts) => parts.join(path.sep));
const LIVE_BUILTINS = new Set(['node:child_process', 'child_process']);

/**
 * The modules a compiled file loads: the statements tsc writes for value imports
 * (`const x = require("…")`, `__importDefault(require("…"))`, `__exportStar(require("…"), …)`)
 * and hand-written ones of the same form, each at the start of a line, so that a string that
 * merely contains `require(…)` does not count.
 */
const REQUIRE_STATEMENT = /^\s*(?:(?:const|let|var)\s+[^=;]+=\s*)?(?:__import(?:Default|Star)\(|__exportStar\()?require\((["'])([^"']+)\1\)/gm;
function requiresOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(REQUIRE_STATEMENT)].map((m) => m[2]);
}

/**
 * Why `file` is live (the chain of loads that reach a live module), or null for a unit test.
 * `testRoot` is dist/test: only test modules are followed, never src/ (the service's own code
 * loads node:http and the store whatever the test does with it).
 */
function liveReason(file, testRoot, seen = new Set()) {
  if (seen.has(file)) return null;
  seen.add(file);
  for (const spec of requiresOf(file)) {
    if (LIVE_BUILTINS.has(spec)) return `${path.relative(testRoot, file)} loads ${spec}`;
    if (!spec.startsWith('.')) continue;
    const target = path.resolve(path.dirname(file), spec.endsWith('.js') ? spec : `${spec}.js`);
    if (LIVE_MODULES.some((m) => target.endsWith(path.sep + m))) return `${path.relative(testRoot, file)} loads ${spec}`;
    if (!target.startsWith(testRoot + path.sep) || !fs.existsSync(target)) continue;
    const deeper = liveReason(target, testRoot, seen);
    if (deeper) return `${path.relative(testRoot, file)} -> ${deeper}`;
  }
  return null;
}

/** 'live' or 'unit'. */
function tierOf(file, testRoot) {
  return liveReason(file, testRoot) ? 'live' : 'unit';
}

module.exports = { LIVE_MODULES, liveReason, tierOf };
