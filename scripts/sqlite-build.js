#!/usr/bin/env node
'use strict';
// The postinstall step for better-sqlite3 (also `npm run build:sqlite`). package.json installs
// better-sqlite3 from vendor/better-sqlite3-<version>-patched.tgz, whose sources already carry
// patches/better-sqlite3+<version>.patch, so where better-sqlite3's own install compiles, it
// compiles the patched code, once, and this step has nothing to do. It acts only when the build
// lacks the patch: better-sqlite3's install took upstream's prebuilt binary (it tries that first,
// on machines that can download it). Then:
//   - on Node 22 and later nothing is rebuilt: upstream's build already makes each row in one
//     call there, which is all the patch does on Node 20;
//   - else it rebuilds better-sqlite3 with node-gyp; should that fail (no C++ compiler, no make,
//     no Python), it puts the build it had back, prints ONE warning saying what is lost and how
//     to get it, and the install still succeeds.
// The service finds the same marker to report its build (src/store/sqlite/driver-build.ts).
//
//   node scripts/sqlite-build.js [--force] [better-sqlite3 directory]
// --force rebuilds even a patched build (after editing the patch; and the tests use it to see a
// failed rebuild keep the build it had).
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const args = process.argv.slice(2);
const force = args.includes('--force');
const dir = path.resolve(args.find((a) => !a.startsWith('--')) ?? path.join(__dirname, '..', 'node_modules', 'better-sqlite3'));
const PREFIX = 'better-sqlite3:';
const DOC = 'docs/architecture.md, "The better-sqlite3 patch"';

/** Node 22 and later (ABI 127+): upstream's own code makes each row in one call. */
const rowsInOneCallUpstream = Number(process.versions.modules) >= 127;

/**
 * What the build in `dir` is, asked of a separate node process (a loaded addon cannot be
 * unloaded, and a rebuilt one must be loaded afresh): 'patched' when the addon carries the
 * patch's marker, 'unpatched' when it loads without it, or 'missing: <why>' when it does not load.
 */
function buildOf() {
  const probe = `
    const Database = require(${JSON.stringify(dir)});
    new Database(':memory:').close();
    const addon = Object.values(require.cache).find((m) => m.filename.endsWith('better_sqlite3.node'));
    process.stdout.write(addon && addon.exports.catalogueRowsInOneCall === true ? 'patched' : 'unpatched');`;
  const result = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  if (result.status === 0) return result.stdout.trim();
  const why = (result.stderr || '').split('\n').find((line) => /Error/.test(line)) || `exit ${result.status}`;
  return `missing: ${why.trim()}`;
}

/** node-gyp: the one npm runs scripts with, else the one npm bundles, else whatever is on PATH. */
function nodeGyp() {
  if (process.env.npm_config_node_gyp && fs.existsSync(process.env.npm_config_node_gyp)) return [process.execPath, [process.env.npm_config_node_gyp]];
  const npmCli = process.env.npm_execpath || (() => {
    const which = (spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout || '').trim();
    return which ? fs.realpathSync(which) : '';
  })();
  if (npmCli) {
    const bundled = path.join(path.dirname(npmCli), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    if (fs.existsSync(bundled)) return [process.execPath, [bundled]];
  }
  return ['node-gyp', []];
}

/** Rebuilds with node-gyp; its output goes to a log file, so that a failure is one line here. */
function rebuild(logFile) {
  const [cmd, pre] = nodeGyp();
  const out = fs.openSync(logFile, 'w');
  try {
    const result = spawnSync(cmd, [...pre, 'rebuild', '--release', '--jobs', 'max'], { cwd: dir, stdio: ['ignore', out, out] });
    if (result.status === 0) return null;
    return result.error ? result.error.message : whyGypFailed(logFile) ?? `node-gyp exited with ${result.status}`;
  } finally {
    fs.closeSync(out);
  }
}

/** node-gyp's own words for its failure: the step and its error ("build: `make` failed with exit code: 2"). */
function whyGypFailed(logFile) {
  const lines = fs.readFileSync(logFile, 'utf8').split('\n');
  const step = lines.map((line) => /^gyp ERR! (\w+) error/.exec(line)).find(Boolean);
  const start = lines.findIndex((line) => /^gyp ERR! stack Error: /.test(line));
  let detail = '';
  for (let i = start; start >= 0 && i < lines.length && !/^gyp ERR! stack\s+at /.test(lines[i]); i++) {
    detail += ` ${lines[i].replace(/^gyp ERR! stack( Error:)?/, '').trim()}`;
  }
  detail = detail.trim().replace(/\s+/g, ' ');
  if (detail.length > 200) detail = `${detail.slice(0, 200)}…`;
  if (!step && !detail) return null;
  return [step && `node-gyp ${step[1]}`, detail].filter(Boolean).join(': ');
}

function main() {
  if (!fs.existsSync(path.join(dir, 'package.json'))) {
    console.log(`${PREFIX} not installed at ${dir}, nothing to do`);
    return 0;
  }
  const build = path.join(dir, 'build');
  const kept = path.join(dir, 'build.kept');
  const logFile = path.join(dir, 'rebuild.log');
  // A run that was stopped during its rebuild left the build it had aside: put it back first.
  if (fs.existsSync(kept)) {
    fs.rmSync(build, { recursive: true, force: true });
    fs.renameSync(kept, build);
  }
  const before = buildOf();
  if (rowsInOneCallUpstream && !force) {
    console.log(`${PREFIX} Node ${process.versions.node} builds rows in one call without the patch: nothing rebuilt (${before})`);
    return 0;
  }
  if (before === 'patched' && !force) {
    console.log(`${PREFIX} patched build (${path.relative(process.cwd(), dir) || dir}), nothing rebuilt`);
    return 0;
  }
  if (fs.existsSync(build)) fs.renameSync(build, kept);
  let failure;
  try {
    failure = rebuild(logFile);
  } catch (error) {
    // Whatever goes wrong here must not cost the install the build it had.
    failure = error instanceof Error ? error.message : String(error);
  }
  const after = failure ? null : buildOf();
  if (!failure && after === 'patched') {
    fs.rmSync(kept, { recursive: true, force: true });
    console.log(`${PREFIX} rebuilt with the patch (node-gyp log: ${logFile})`);
    return 0;
  }
  // Put back the build it had, whatever the rebuild left.
  fs.rmSync(build, { recursive: true, force: true });
  if (fs.existsSync(kept)) fs.renameSync(kept, build);
  const reason = failure ?? `the rebuilt addon is ${after}`;
  if (before.startsWith('missing')) {
    console.error(`${PREFIX} no usable build (${before}) and the rebuild failed (${reason}; log: ${logFile}). SQLite cannot be used until better-sqlite3 builds: install a C++ compiler, make and Python 3, then run npm run build:sqlite.`);
    return 1;
  }
  const lost =
    before === 'patched'
      ? 'nothing: the build kept is the patched one'
      : `on Node ${process.versions.node} SQLite reads build each row value by value, a 50-row page took 1.3 to 1.7 times the CPU in the bench (${DOC})`;
  console.warn(
    `WARNING ${PREFIX} kept the ${before} build; the patched rebuild failed (${reason}; log: ${logFile}). ` +
      `Lost: ${lost}. To get it: install a C++ compiler, make and Python 3 (Debian: apt-get install g++ make python3), then run npm run build:sqlite; or run on Node 22 or later, which needs no patch.`,
  );
  return 0;
}

process.exit(main());
