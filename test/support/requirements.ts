/**
 * Programs that some tests need and npm cannot install: Chromium for the console's browser tests,
 * pgbouncer, HAProxy, PostgreSQL's pg_dump, Mono for a .NET client. A machine with only Node.js
 * and npm lacks them, and the suite must still pass there: such a test is skipped with ONE line
 * that names what is missing and how to install it, and the skip is recorded in
 * test-results/skips-<engine>.jsonl, which scripts/run-tests.js lists at the end of each half.
 *
 * Where everything must run (CI: `.ci/run` sets REQUIRE_ALL=1), a missing program is an error
 * instead: the test file fails with that same line. REQUIRE_POSTGRES=1 does the same for the
 * programs of the PostgreSQL half (pgbouncer, HAProxy), as it always has.
 *
 *   const skip = testEngine !== 'postgres' ? 'PostgreSQL only'
 *     : requireProgram('pgbouncer', findProgram('pgbouncer'), 'apt-get install pgbouncer', { postgres: true });
 *   describe('…', { skip }, () => …);
 *
 * Nothing here starts a process: a test that only checks for a program stays in the unit tier.
 */
import fs from 'node:fs';
import path from 'node:path';
import { testEngine } from './test-database';

export const SKIPS_DIR = path.join(__dirname, '..', '..', '..', 'test-results');

export function skipsFile(engine: string): string {
  return path.join(SKIPS_DIR, `skips-${engine}.jsonl`);
}

/** Whether `file` is a program this process may run (a broken link or a plain file is not). */
export function isProgram(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The first of `names` found as a program on PATH, or else in `moreDirs` (places a package puts
 * programs that are not on every user's PATH, such as /usr/sbin), or undefined.
 */
export function findProgram(names: string | readonly string[], moreDirs: readonly string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...moreDirs];
  const suffixes = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const name of typeof names === 'string' ? [names] : names) {
    if (path.isAbsolute(name)) {
      if (isProgram(name)) return name;
      continue;
    }
    for (const dir of dirs) {
      for (const suffix of suffixes) {
        const candidate = path.join(dir, name + suffix);
        if (isProgram(candidate)) return candidate;
      }
    }
  }
  return undefined;
}

export interface RequirementOptions {
  /** Also required under REQUIRE_POSTGRES=1 (a program of the PostgreSQL half). */
  readonly postgres?: boolean;
}

/** Whether this run must have every program (CI), or at least the PostgreSQL half's. */
export function required(options: RequirementOptions = {}): boolean {
  return process.env.REQUIRE_ALL === '1' || (options.postgres === true && process.env.REQUIRE_POSTGRES === '1');
}

/**
 * For a test that needs `what` (e.g. 'pgbouncer'): false when `found` (a path, or true) says it
 * is there; else the skip reason, recorded for the runner's summary. When the run requires
 * everything (REQUIRE_ALL=1), it throws instead, so that the test file fails with the same line.
 */
export function requireProgram(what: string, found: string | boolean | undefined, howToInstall: string, options: RequirementOptions = {}): string | false {
  if (found) return false;
  const reason = `needs ${what}, which this machine lacks: ${howToInstall}`;
  if (required(options)) {
    const by = process.env.REQUIRE_ALL === '1' ? 'REQUIRE_ALL=1' : 'REQUIRE_POSTGRES=1';
    throw new Error(`${by}: this run requires every test, and this one ${reason}`);
  }
  const file = require.main?.filename ?? process.argv[1] ?? 'unknown';
  fs.mkdirSync(SKIPS_DIR, { recursive: true });
  fs.appendFileSync(skipsFile(testEngine), `${JSON.stringify({ file: path.relative(path.join(__dirname, '..', '..'), file), what, howToInstall })}\n`);
  return reason;
}

/** How to get Mono with the WCF Data Services client (Debian's packages; .ci/run installs them when missing). */
export const MONO_INSTALL = 'apt-get install mono-mcs mono-runtime libmono-system-data-services-client4.0-cil (Debian; .ci/run does)';

/** The skip option of a test that drives a .NET client under Mono: needs `mono` and the `mcs` compiler. */
export function requireMono(): string | false {
  return requireProgram('Mono (mono and mcs)', Boolean(findProgram('mono') && findProgram('mcs')), MONO_INSTALL);
}
