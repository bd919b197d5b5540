#!/usr/bin/env node
'use strict';
// Runs every compiled test file (dist/test/**/*.test.js) with node's built-in test runner.
// Node 20's runner does not expand globs, so the files are listed here.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..', 'dist', 'test');
function collect(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return collect(full);
    return entry.name.endsWith('.test.js') ? [full] : [];
  });
}
// Only files whose TypeScript source still exists: a deleted test leaves no stale copy running.
const files = collect(root)
  .filter((file) => fs.existsSync(path.join(__dirname, '..', path.relative(path.join(__dirname, '..', 'dist'), file)).replace(/\.js$/, '.ts')))
  .sort();
if (files.length === 0) {
  console.error('No test files found under dist/test: did the build run?');
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--test', ...process.argv.slice(2), ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
