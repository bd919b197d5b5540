/**
 * Loading the PostgreSQL adapter leaves Node's fetch implementation (undici) unloaded and no
 * global `navigator` behind (see src/store/postgres/pg-driver.ts). Checked in a fresh process,
 * since this one may have loaded either for its own reasons.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const distSrc = path.join(__dirname, '..', '..', 'src');

function loadInFreshProcess(modules: readonly string[]): { undici: boolean; navigator: string; pgPool: string } {
  const script = `
    for (const m of ${JSON.stringify(modules)}) require(m);
    const pg = require(${JSON.stringify(path.join(distSrc, 'store', 'postgres', 'pg-driver.js'))}).default;
    console.log(JSON.stringify({
      undici: process.moduleLoadList.some((m) => m.includes('undici')),
      navigator: typeof globalThis.navigator,
      pgPool: typeof pg.Pool,
    }));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
}

test('the PostgreSQL store and the copy command load pg without loading undici, and leave no navigator', () => {
  const loaded = loadInFreshProcess([path.join(distSrc, 'store', 'postgres', 'pg-store.js'), path.join(distSrc, 'store', 'copy.js')]);
  // Node 20 has no navigator; where a later Node defines one, pg never takes the fetch path anyway.
  const nodeHasNavigator = loadInFreshProcess([]).navigator !== 'undefined';
  assert.equal(loaded.undici, false, 'undici was loaded with pg');
  assert.equal(loaded.navigator, nodeHasNavigator ? 'object' : 'undefined');
  assert.equal(loaded.pgPool, 'function');
});

test('the check can fail: pg loaded the plain way on this Node does load undici', { skip: typeof (globalThis as { navigator?: unknown }).navigator !== 'undefined' }, () => {
  const script = `require('pg'); console.log(process.moduleLoadList.some((m) => m.includes('undici')));`;
  assert.equal(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: path.join(distSrc, '..', '..') }).trim(), 'true');
});
