/**
 * Which build of better-sqlite3 this process runs, as the service reports it (a field of its
 * start log line and the catalogue_sqlite_build_info metric):
 * - 'patched':   Node 20 with the project's patch (patches/better-sqlite3+<version>.patch):
 *                each row, and the array of rows of all(), is made in one call into V8;
 * - 'upstream':  Node 22 or later, where better-sqlite3's own code already does that;
 * - 'unpatched': Node 20 without the patch (upstream's prebuilt binary, kept where the patched
 *                rebuild could not run): rows are made value by value: a 50-row page took 1.3 to
 *                1.7 times the CPU in the bench. `npm run build:sqlite` mends it.
 * The patch adds a marker to the addon's exports (catalogueRowsInOneCall), so the answer comes
 * from the addon this process loaded, not from what the install meant to do.
 * scripts/sqlite-build.js reads the same marker at install time.
 */
import Database from 'better-sqlite3';

export type SqliteBuild = 'patched' | 'upstream' | 'unpatched';

/** Node 22 and later (ABI 127+): better-sqlite3 makes rows in one call without the patch. */
export const ROWS_IN_ONE_CALL_UPSTREAM = Number(process.versions.modules) >= 127;

let known: SqliteBuild | undefined;

export function sqliteBuild(): SqliteBuild {
  if (known) return known;
  // Opening a database loads the addon (once per process); require's cache then holds it.
  new Database(':memory:').close();
  const addon = Object.values(require.cache).find((m) => m?.filename.endsWith('better_sqlite3.node'));
  const marked = (addon?.exports as { catalogueRowsInOneCall?: unknown } | undefined)?.catalogueRowsInOneCall === true;
  known = ROWS_IN_ONE_CALL_UPSTREAM ? 'upstream' : marked ? 'patched' : 'unpatched';
  return known;
}
