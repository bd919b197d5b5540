/**
 * A real pgbouncer (Debian's package) in front of a test PostgreSQL server, in transaction
 * pooling mode, on 127.0.0.1 and a free port, with its own temporary directory. Every database
 * of the server is reachable through it under its own name (the `*` entry), so the per-test
 * databases of ./test-database.ts work through it as they are.
 *
 * pgbouncer refuses to run as root: as root it is started as the cluster's user (`postgres`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { APP_ROLE, OWNER_ROLE, freePort, runAsUser } from './postgres-cluster';
import { findProgram } from './requirements';

/** The pgbouncer program (on PATH, or in /usr/sbin where Debian puts it), or undefined. */
export function findPgbouncer(): string | undefined {
  return findProgram('pgbouncer', ['/usr/sbin', '/usr/bin']);
}

/** How to get pgbouncer, for the line a test skips with. */
export const PGBOUNCER_INSTALL = 'apt-get install pgbouncer (Debian; .ci/run does), brew install pgbouncer (macOS)';

export interface Pgbouncer {
  readonly port: number;
  /** The URL with its host and port replaced by the pooler's. */
  through(url: string): string;
  /** Everything pgbouncer logged so far. */
  log(): string;
  stop(): Promise<void>;
}

export interface PgbouncerOptions {
  /** The PostgreSQL server's port on 127.0.0.1. */
  readonly serverPort: number;
  /** Server connections per database and role (pgbouncer's default_pool_size). */
  readonly poolSize?: number;
  /** Extra `key = value` lines for the [pgbouncer] section. */
  readonly settings?: Readonly<Record<string, string>>;
}

const isRoot = () => process.getuid?.() === 0;

/** Resolves once `name` (a child process) accepts connections on 127.0.0.1:port. */
export function waitForListening(name: string, port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (child.exitCode !== null) return reject(new Error(`${name} exited with ${child.exitCode}:\n${output()}`));
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`${name} did not listen on ${port}:\n${output()}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/** The pgbouncer.ini text for a local pooler in front of one server. */
export function pgbouncerConfig(dir: string, port: number, options: PgbouncerOptions): string {
  const settings: Record<string, string> = {
    listen_addr: '127.0.0.1',
    listen_port: String(port),
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: path.join(dir, 'userlist.txt'),
    pool_mode: 'transaction',
    default_pool_size: String(options.poolSize ?? 4),
    max_client_conn: '500',
    // pgbouncer (before 1.21) keeps no prepared statements in transaction mode: the service
    // must send them unnamed (DATABASE_PREPARED_STATEMENTS=false).
    server_reset_query: 'DISCARD ALL',
    ignore_startup_parameters: 'extra_float_digits',
    logfile: path.join(dir, 'pgbouncer.log'),
    pidfile: path.join(dir, 'pgbouncer.pid'),
    ...options.settings,
  };
  return [
    '[databases]',
    `* = host=127.0.0.1 port=${options.serverPort}`,
    '',
    '[pgbouncer]',
    ...Object.entries(settings).map(([k, v]) => `${k} = ${v}`),
    '',
  ].join('\n');
}

export async function startPgbouncer(options: PgbouncerOptions): Promise<Pgbouncer> {
  const program = findPgbouncer();
  if (!program) throw new Error('pgbouncer is not installed');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-pgbouncer-'));
  const port = await freePort();
  // Trust between loopback processes, as the test cluster does; the names must still be listed.
  fs.writeFileSync(path.join(dir, 'userlist.txt'), [APP_ROLE, OWNER_ROLE, 'postgres'].map((r) => `"${r}" ""`).join('\n') + '\n');
  const ini = path.join(dir, 'pgbouncer.ini');
  fs.writeFileSync(ini, pgbouncerConfig(dir, port, options));
  const user = isRoot() ? runAsUser() : undefined;
  if (user) spawnSync('chown', ['-R', `${user}:`, dir]);
  // pgbouncer's own -u switches to that user once it has started.
  const [cmd, args] = user ? [program, ['-u', user, ini]] : [program, [ini]];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = () => {
    try {
      return out + fs.readFileSync(path.join(dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return out;
    }
  };
  try {
    await waitForListening('pgbouncer', port, child, log);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    port,
    through(url: string) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    log,
    async stop() {
      // SIGINT: pgbouncer's fast shutdown.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
