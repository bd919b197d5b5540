/**
 * node-pg, loaded without the side effect of its runtime probe. Every module of the service
 * takes pg from here, so this is the first to load it.
 *
 * On loading, pg asks whether it runs in a Cloudflare Worker. Where there is no global
 * `navigator` (Node 20 has none; Node 21 added it), the probe constructs a fetch `Response`,
 * which loads Node's whole fetch implementation (undici). The service never uses it, yet it
 * stayed in the heap for the life of the process: the idle process was 4–5 MB larger, and since
 * V8 lets the old space grow to a multiple of what stays alive, the peak resident set of a full
 * PostgreSQL export was about 10 MB higher (157–162 MB against 146–155 MB, bench runs taken
 * in turns).
 * A `navigator` that says Node.js, present only while pg loads, answers the probe as Node 21
 * does; where a `navigator` exists, nothing is touched.
 */
import type * as Pg from 'pg';

type PgModule = typeof Pg;

function loadPg(): PgModule {
  const global = globalThis as { navigator?: unknown };
  if (global.navigator !== undefined) return require('pg') as PgModule;
  global.navigator = { userAgent: 'Node.js' };
  try {
    return require('pg') as PgModule;
  } finally {
    delete global.navigator;
  }
}

const pg: PgModule = loadPg();

export default pg;
export const types = pg.types;
