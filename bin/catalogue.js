#!/usr/bin/env node
'use strict';
// The `catalogue` command. The TypeScript sources are compiled to dist/ by `npm install`
// (prepare) and `npm start` (prestart); this shim only points at the result.
const path = require('node:path');
const fs = require('node:fs');
const entry = path.join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  console.error('catalogue: the service is not built yet. Run `npm run build` (or `npm install`) first.');
  process.exit(1);
}
require(entry).main(process.argv.slice(2));
