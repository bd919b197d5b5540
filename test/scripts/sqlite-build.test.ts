/**
 * scripts/sqlite-build.js, the postinstall step for better-sqlite3, on a copy of the installed
 * package, with the compiler hidden (CC=false, CXX=false): it must never cost the install its
 * build. A build with the patch is left as it is, without a word of warning; when a rebuild is
 * attempted and cannot run, the build it had is put back, the step succeeds, and it says so in
 * exactly one warning line that names what is lost and how to get it; a build that a stopped run
 * left aside is put back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'sqlite-build.js');
const INSTALLED = path.join(ROOT, 'node_modules', 'better-sqlite3');
const ADDON = path.join('build', 'Release', 'better_sqlite3.node');

/** Whether the addon in `dir` carries the patch's marker (asked of a fresh process). */
function patched(dir: string): boolean {
  const probe = `process.stdout.write(String(require(${JSON.stringify(path.join(dir, ADDON))}).catalogueRowsInOneCall === true))`;
  const result = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout === 'true';
}

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('the better-sqlite3 postinstall step without a compiler', () => {
  let dir: string;
  before(() => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-build-')), 'better-sqlite3');
    fs.cpSync(INSTALLED, dir, { recursive: true, verbatimSymlinks: true });
  });
  after(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

  /** The step on the copy; its own dependencies (bindings) come from the project's node_modules. */
  function run(...args: string[]) {
    const env: NodeJS.ProcessEnv = { ...process.env, CC: 'false', CXX: 'false', NODE_PATH: path.join(ROOT, 'node_modules') };
    for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
    const result = spawnSync(process.execPath, [SCRIPT, ...args, dir], { encoding: 'utf8', env, timeout: 120_000 });
    return { status: result.status, lines: `${result.stdout}${result.stderr}`.split('\n').filter(Boolean) };
  }

  test('a build with the patch (or on Node 22+) is left as it is, with one line and no warning', () => {
    const before = sha256(path.join(dir, ADDON));
    const { status, lines } = run();
    const nothingToDo = patched(dir) || Number(process.versions.modules) >= 127;
    assert.equal(status, 0, lines.join('\n'));
    assert.equal(lines.length, 1, lines.join('\n'));
    if (nothingToDo) assert.match(lines[0]!, /^better-sqlite3: .*nothing rebuilt/);
    // Without the patch (upstream's prebuilt binary kept at install), the rebuild cannot run here.
    else assert.match(lines[0]!, /^WARNING better-sqlite3: kept the unpatched build; the patched rebuild failed .*Lost: .* To get it: .*npm run build:sqlite/);
    assert.equal(sha256(path.join(dir, ADDON)), before);
  });

  test('a rebuild that cannot run puts the build back: exit 0, one warning line, the same addon, which loads', () => {
    const before = sha256(path.join(dir, ADDON));
    const wasPatched = patched(dir);
    const { status, lines } = run('--force');
    assert.equal(status, 0, lines.join('\n'));
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /^WARNING better-sqlite3: kept the (patched|unpatched) build; the patched rebuild failed \(.+; log: .+rebuild\.log\)\. Lost: .+\. To get it: install a C\+\+ compiler, make and Python 3 .*npm run build:sqlite/);
    assert.equal(sha256(path.join(dir, ADDON)), before, 'the addon it had is back');
    assert.equal(patched(dir), wasPatched);
    assert.ok(!fs.existsSync(path.join(dir, 'build.kept')), 'nothing left over');
    assert.ok(fs.existsSync(path.join(dir, 'rebuild.log')), "node-gyp's output is kept in a log");
  });

  test('a build that a stopped run left aside is put back before anything else', () => {
    const before = sha256(path.join(dir, ADDON));
    // As a run stopped during its rebuild leaves it: the build aside, a half-made one in its place.
    fs.renameSync(path.join(dir, 'build'), path.join(dir, 'build.kept'));
    fs.mkdirSync(path.join(dir, 'build', 'Release'), { recursive: true });
    fs.writeFileSync(path.join(dir, ADDON), 'half-made');
    const { status, lines } = run();
    assert.equal(status, 0, lines.join('\n'));
    assert.equal(sha256(path.join(dir, ADDON)), before);
    assert.ok(!fs.existsSync(path.join(dir, 'build.kept')));
  });
});
