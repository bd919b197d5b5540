/**
 * The replicated deployment of this folder, started on one machine with everything on
 * 127.0.0.1: three PostgreSQL 15 nodes under Patroni (./patroni.yml, with its built-in Raft
 * store), HAProxy with a write frontend that follows Patroni's /primary (./haproxy-postgres.cfg)
 * and the HTTP frontend of ./haproxy.cfg, and two `catalogue serve` processes between them.
 * The node-specific settings an operator puts in each machine's environment
 * (./patroni-node.env) are set here per node, with local ports and directories. The Patroni
 * fault test drives it, and an operator can try it:
 *
 *   npm run build && node dist/deploy/replicated.js   # prints the addresses; Ctrl-C stops and removes it all
 *
 * Needs Debian's patroni and python3-pysyncobj, haproxy, and PostgreSQL's server programs
 * (Debian's postgresql; Patroni runs pg_ctl, pg_basebackup and pg_rewind from their directory).
 * As root, Patroni and PostgreSQL run as the `postgres` user.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { APP_ROLE, BASE_DATABASE, findSystemPostgresBin, freePorts, OWNER_ROLE, runAsUser } from '../test/support/postgres-cluster';
import { request } from '../test/support/http-client';
import { waitForListening } from '../test/support/pgbouncer';
import { findProgram } from '../test/support/requirements';
import { CATALOGUE_BIN, serveProcess, type ServeProcess } from '../test/support/serve-process';
import { DEPLOY_DIR, findHaproxy, type MissingProgram } from './local';

/** The passwords of the local throwaway cluster (a real one takes them from each node's environment). */
const SUPERUSER_PASSWORD = 'local-superuser-secret';
const REPLICATION_PASSWORD = 'local-replication-secret';
const REWIND_PASSWORD = 'local-rewind-secret';
const OWNER_PASSWORD = 'local-owner-secret';
const APP_PASSWORD = 'local-app-secret';

export const PATRONI_INSTALL = 'apt-get install patroni python3-pysyncobj (Debian; .ci/run does)';

export function findPatroni(): string | undefined {
  return findProgram('patroni', ['/usr/bin']);
}

/** Whether Patroni's Raft store (pysyncobj) can be imported by the python Patroni runs on. */
function hasPysyncobj(patroni: string): boolean {
  const python = fs.readFileSync(patroni, 'utf8').split('\n')[0]!.replace(/^#!\s*/, '').split(' ')[0]!;
  return spawnSync(python, ['-c', 'import pysyncobj'], { stdio: 'ignore' }).status === 0;
}

/** The programs Patroni runs from PostgreSQL's bin_dir. */
const PATRONI_NEEDS = ['initdb', 'pg_ctl', 'postgres', 'pg_controldata', 'pg_basebackup', 'pg_rewind'];

/**
 * A directory with every program Patroni runs: Debian's /usr/lib/postgresql/<version>/bin
 * (newest first), else the one of pg_ctl on PATH when it has them all.
 */
export function findPatroniPostgresBin(): string | undefined {
  const candidates: string[] = [];
  const debian = '/usr/lib/postgresql';
  if (fs.existsSync(debian)) {
    for (const v of fs.readdirSync(debian).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a))) candidates.push(path.join(debian, v, 'bin'));
  }
  const system = findSystemPostgresBin();
  if (system) candidates.push(system);
  return candidates.find((dir) => PATRONI_NEEDS.every((program) => findProgram(path.join(dir, program))));
}

/** What is missing to start the replicated deployment (empty when everything is installed). */
export function missingForReplicated(): MissingProgram[] {
  const patroni = findPatroni();
  return [
    ...(patroni && hasPysyncobj(patroni) ? [] : [{ what: 'Patroni with its Raft store (patroni, python3-pysyncobj)', install: PATRONI_INSTALL }]),
    ...(findPatroniPostgresBin() ? [] : [{ what: `PostgreSQL's programs (${PATRONI_NEEDS.join(', ')})`, install: 'apt-get install postgresql' }]),
    ...(findHaproxy() ? [] : [{ what: 'HAProxy', install: 'apt-get install haproxy' }]),
  ];
}

export interface PatroniNode {
  readonly name: string;
  readonly pgPort: number;
  readonly apiPort: number;
  readonly dataDir: string;
  /** The PID of the node's postmaster now (from postmaster.pid), or undefined when it is not running. */
  postmasterPid(): number | undefined;
  /** Patroni's output so far. */
  output(): string;
}

/** A member as Patroni's GET /cluster reports it. */
export interface Member {
  readonly name: string;
  /** 'leader', 'sync_standby', 'replica'. */
  readonly role: string;
  /** 'running', 'streaming', 'stopped', 'starting'… */
  readonly state: string;
  readonly timeline?: number;
  readonly lag?: number | string;
}

export interface ReplicatedDeployment {
  /** Where clients connect: HAProxy's HTTP frontend. */
  readonly origin: string;
  readonly nodes: readonly PatroniNode[];
  readonly services: readonly ServeProcess[];
  /** The superuser's URL on one node (past HAProxy: reads a standby too). */
  superuserUrl(node: PatroniNode): string;
  /** The superuser's URL through HAProxy's write frontend (the primary). */
  readonly primaryUrl: string;
  /** The environment of a `catalogue` command on this deployment (account create…). */
  readonly commandEnv: Record<string, string>;
  /** The members as Patroni reports them now. */
  members(): Promise<Member[]>;
  /** The node that is the leader now, or undefined. */
  leader(): Promise<PatroniNode | undefined>;
  /** A switchover to `candidate` (or to any synchronous standby), as an operator asks for one. */
  switchover(candidate?: PatroniNode): Promise<void>;
  haproxyOutput(): string;
  stop(): Promise<void>;
}

const isRoot = () => process.getuid?.() === 0;

/** Patroni's environment: this process's without the PG* variables (PGPASSWORD would override its password file). */
function patroniBaseEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PG') && !k.startsWith('PATRONI_')));
}

/** How long a Patroni REST API call may take (a switchover answers within seconds). */
const API_TIMEOUT_MS = 30_000;

async function api(node: PatroniNode, method: string, pathname: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await request(`http://127.0.0.1:${node.apiPort}${pathname}`, {
    method,
    // A node's API answers at once or not at all (a port another program took holds the request
    // open): without a bound one such port would hold the deployment's start or a test forever.
    timeoutMs: API_TIMEOUT_MS,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
  });
  return { status: res.status, text: res.body };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until `reached` holds `times` times in a row. HAProxy takes every server for up until
 * its first checks say otherwise, and for down once they have failed: until then a connection
 * may reach a standby, or a process not started, whatever the last one reached.
 */
async function untilHaproxySettled(what: string, times: number, reached: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (let inARow = 0; inARow < times; ) {
    if (Date.now() > deadline) throw new Error(`HAProxy did not settle: ${what}`);
    inARow = (await reached().catch(() => false)) ? inARow + 1 : 0;
    if (inARow < times) await wait(100);
  }
}

export async function startReplicatedDeployment(options: { readonly nodes?: number } = {}): Promise<ReplicatedDeployment> {
  const missing = missingForReplicated();
  if (missing.length) throw new Error(`The replicated deployment needs ${missing.map((m) => `${m.what} (${m.install})`).join(', ')}`);
  const count = options.nodes ?? 3;
  const bin = findPatroniPostgresBin()!;
  const patroni = findPatroni()!;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-patroni-'));
  fs.chmodSync(root, 0o755);
  const stops: (() => Promise<void> | void)[] = [() => fs.rmSync(root, { recursive: true, force: true })];
  const stop = async () => {
    for (const s of stops.reverse()) await Promise.resolve(s()).catch(() => undefined);
  };
  try {
    // Every port of the deployment, all different (freePorts): the nodes' three each, then HAProxy's
    // write frontend, the HTTP frontend and the two services.
    const allPorts = await freePorts(count * 3 + 4);
    const ports = Array.from({ length: count }, (_, i) => ({ pg: allPorts[3 * i]!, api: allPorts[3 * i + 1]!, raft: allPorts[3 * i + 2]! }));
    const [writePort, frontPort, ...servicePorts] = allPorts.slice(count * 3) as [number, number, number, number];
    const nodes: (PatroniNode & { child: ChildProcess; exited: Promise<void> })[] = [];
    for (let i = 0; i < count; i++) {
      const name = `node${i + 1}`;
      const dir = path.join(root, name);
      fs.mkdirSync(path.join(dir, 'raft'), { recursive: true });
      if (isRoot()) spawnSync('chown', ['-R', `${runAsUser()}:`, dir]);
      const { pg: pgPort, api: apiPort, raft } = ports[i]!;
      const dataDir = path.join(dir, 'data');
      // What an operator puts in each machine's environment (deploy/patroni-node.env).
      const env = {
        ...patroniBaseEnv(),
        PATRONI_NAME: name,
        PATRONI_RESTAPI_LISTEN: `127.0.0.1:${apiPort}`,
        PATRONI_RESTAPI_CONNECT_ADDRESS: `127.0.0.1:${apiPort}`,
        PATRONI_POSTGRESQL_LISTEN: `127.0.0.1:${pgPort}`,
        PATRONI_POSTGRESQL_CONNECT_ADDRESS: `127.0.0.1:${pgPort}`,
        PATRONI_POSTGRESQL_DATA_DIR: dataDir,
        PATRONI_POSTGRESQL_BIN_DIR: bin,
        PATRONI_POSTGRESQL_PGPASS: path.join(dir, 'pgpass'),
        PATRONI_RAFT_SELF_ADDR: `127.0.0.1:${raft}`,
        PATRONI_RAFT_PARTNER_ADDRS: ports.filter((_, j) => j !== i).map((p) => `'127.0.0.1:${p.raft}'`).join(','),
        PATRONI_RAFT_DATA_DIR: path.join(dir, 'raft'),
        PATRONI_SUPERUSER_USERNAME: 'postgres',
        PATRONI_SUPERUSER_PASSWORD: SUPERUSER_PASSWORD,
        PATRONI_REPLICATION_USERNAME: 'replicator',
        PATRONI_REPLICATION_PASSWORD: REPLICATION_PASSWORD,
        PATRONI_REWIND_USERNAME: 'rewinder',
        PATRONI_REWIND_PASSWORD: REWIND_PASSWORD,
      };
      const config = path.join(DEPLOY_DIR, 'patroni.yml');
      const [cmd, args] = isRoot() ? ['runuser', ['-u', runAsUser(), '--', patroni, config]] : [patroni, [config]];
      // Its own process group, so that stopping it reaches Patroni behind runuser.
      const child = spawn(cmd, args, { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let out = '';
      child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const node = {
        name,
        pgPort,
        apiPort,
        dataDir,
        child,
        exited,
        output: () => out,
        postmasterPid() {
          try {
            const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
            return pid > 0 && processAlive(pid) ? pid : undefined;
          } catch {
            return undefined;
          }
        },
      };
      nodes.push(node);
      stops.push(async () => {
        // Patroni stops its postgres on SIGTERM; killing Patroni would leave the postmaster running.
        if (child.exitCode === null && child.signalCode === null) {
          try {
            process.kill(-child.pid!, 'SIGTERM');
          } catch {
            // Gone already.
          }
          await Promise.race([exited, wait(20_000)]);
          if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
        }
        const left = node.postmasterPid();
        if (left) process.kill(left, 'SIGKILL');
      });
    }
    const members = async (): Promise<Member[]> => {
      for (const node of nodes) {
        try {
          const res = await api(node, 'GET', '/cluster');
          if (res.status === 200) return (JSON.parse(res.text) as { members: Member[] }).members;
        } catch {
          // That node's API is down: ask the next.
        }
      }
      return [];
    };
    // Bootstrapped: a leader, and every other node streaming from it with one synchronous.
    const deadline = Date.now() + 180_000;
    for (;;) {
      const now = await members();
      const running = now.filter((m) => m.state === 'running' || m.state === 'streaming');
      if (running.length === count && now.some((m) => m.role === 'leader') && now.some((m) => m.role === 'sync_standby')) break;
      if (Date.now() > deadline) throw new Error(`Patroni did not bring up the cluster: ${JSON.stringify(now)}\n${nodes.map((n) => `--- ${n.name}\n${n.output().slice(-3000)}`).join('\n')}`);
      for (const node of nodes) if (node.child.exitCode !== null || node.child.signalCode !== null) throw new Error(`Patroni ${node.name} exited:\n${node.output()}`);
      await wait(500);
    }

    // HAProxy: the write frontend for PostgreSQL, the HTTP frontend for the service.
    const origin = `http://127.0.0.1:${frontPort}`;
    const haproxy = findHaproxy()!;
    const cfgs = ['-f', path.join(DEPLOY_DIR, 'haproxy.cfg'), '-f', path.join(DEPLOY_DIR, 'haproxy-postgres.cfg')];
    const haproxyEnv: NodeJS.ProcessEnv = {
      ...process.env,
      CATALOGUE_BIND: `127.0.0.1:${frontPort}`,
      CATALOGUE_APP1: `127.0.0.1:${servicePorts[0]}`,
      CATALOGUE_APP2: `127.0.0.1:${servicePorts[1]}`,
      PG_WRITE_BIND: `127.0.0.1:${writePort}`,
    };
    // A deployment of fewer nodes lists the first one again (HAProxy's file names three).
    for (let i = 0; i < 3; i++) {
      const node = nodes[Math.min(i, count - 1)]!;
      haproxyEnv[`PG_NODE${i + 1}`] = `127.0.0.1:${node.pgPort}`;
      haproxyEnv[`PG_NODE${i + 1}_API`] = String(node.apiPort);
    }
    const check = spawnSync(haproxy, ['-c', ...cfgs], { env: haproxyEnv, encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy -c rejected the configuration:\n${check.stdout}${check.stderr}`);
    const haproxyChild = spawn(haproxy, ['-db', ...cfgs], { env: haproxyEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let haproxyOut = '';
    haproxyChild.stdout!.on('data', (c: Buffer) => (haproxyOut += c.toString()));
    haproxyChild.stderr!.on('data', (c: Buffer) => (haproxyOut += c.toString()));
    const haproxyExited = new Promise<void>((resolve) => haproxyChild.once('exit', () => resolve()));
    stops.push(async () => {
      if (haproxyChild.exitCode === null && haproxyChild.signalCode === null) haproxyChild.kill('SIGTERM');
      await haproxyExited;
    });
    await waitForListening('haproxy', writePort, haproxyChild, () => haproxyOut);

    const through = (user: string, password: string, database: string) => `postgresql://${user}:${password}@127.0.0.1:${writePort}/${database}`;
    const primaryUrl = through('postgres', SUPERUSER_PASSWORD, BASE_DATABASE);
    // Every connection through the write frontend reaches the primary: not only the first one,
    // or `catalogue migrate` below could still be sent to a standby.
    await untilHaproxySettled('the write frontend reaching the primary', count * 2, async () => {
      const client = new pg.Client({ connectionString: through('postgres', SUPERUSER_PASSWORD, 'postgres') });
      try {
        await client.connect();
        return !(await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')).rows[0]!.standby;
      } finally {
        await client.end().catch(() => undefined);
      }
    });
    // The service's roles and database, made once on the primary (an operator does this with psql).
    const admin = new pg.Client({ connectionString: through('postgres', SUPERUSER_PASSWORD, 'postgres') });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${OWNER_ROLE} LOGIN CREATEDB PASSWORD '${OWNER_PASSWORD}'`);
      await admin.query(`CREATE ROLE ${APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD '${APP_PASSWORD}'`);
      await admin.query(`CREATE DATABASE ${BASE_DATABASE} OWNER ${OWNER_ROLE}`);
    } finally {
      await admin.end();
    }

    const commandEnv = {
      DATABASE_URL: through(APP_ROLE, APP_PASSWORD, BASE_DATABASE),
      DATABASE_OWNER_URL: through(OWNER_ROLE, OWNER_PASSWORD, BASE_DATABASE),
    };
    const migrated = spawnSync(process.execPath, [CATALOGUE_BIN, 'migrate'], { env: { ...process.env, ...commandEnv }, encoding: 'utf8' });
    if (migrated.status !== 0) throw new Error(`catalogue migrate failed: ${migrated.stderr}`);
    const services = await Promise.all(
      servicePorts.map((port) => serveProcess({ ...commandEnv, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: origin, DEMO_ACCOUNT: 'false' })),
    );
    stops.push(() => Promise.all(services.map((s) => s.stop())).then(() => undefined));
    await waitForListening('haproxy', frontPort, haproxyChild, () => haproxyOut);
    // HAProxy checked the services before they started and marked them down: the deployment is
    // up once its checks have seen every process answer.
    await untilHaproxySettled('the HTTP frontend reaching the services', servicePorts.length * 2, async () => (await request(`${origin}/health`, { timeoutMs: 5_000 })).status === 200);

    return {
      origin,
      nodes,
      services,
      superuserUrl: (node) => `postgresql://postgres:${SUPERUSER_PASSWORD}@127.0.0.1:${node.pgPort}/${BASE_DATABASE}`,
      primaryUrl,
      commandEnv,
      members,
      async leader() {
        const name = (await members()).find((m) => m.role === 'leader' && m.state === 'running')?.name;
        return nodes.find((n) => n.name === name);
      },
      async switchover(candidate) {
        const leader = (await members()).find((m) => m.role === 'leader')?.name;
        if (!leader) throw new Error('no leader to switch over from');
        const node = nodes.find((n) => n.name === leader)!;
        const res = await api(node, 'POST', '/switchover', { leader, ...(candidate ? { candidate: candidate.name } : {}) });
        // 200 once Patroni saw it done; 503 when it stopped watching before ("status unknown"):
        // members() tells either way. Anything else is a refusal.
        if (res.status !== 200 && res.status !== 503) throw new Error(`switchover refused: ${res.status} ${res.text}`);
      },
      haproxyOutput: () => haproxyOut,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

if (require.main === module) {
  void (async () => {
    const deployment = await startReplicatedDeployment();
    const leader = await deployment.leader();
    process.stdout.write(
      `catalogue-service behind HAProxy at ${deployment.origin}\n` +
        `  PostgreSQL under Patroni: ${deployment.nodes.map((n) => `${n.name} on 127.0.0.1:${n.pgPort} (REST API ${n.apiPort})`).join(', ')}; leader ${leader?.name}\n` +
        `  the primary through HAProxy: ${deployment.primaryUrl}\n` +
        `  an account: env ${Object.entries(deployment.commandEnv).map(([k, v]) => `${k}='${v}'`).join(' ')} npx catalogue account create --user shop1 --password 'a-long-password'\n` +
        'Ctrl-C stops and removes everything.\n',
    );
    // Every signal is heard, not only the first: a second one (Ctrl-C twice, or `timeout`, which
    // signals the process and then its group) would otherwise end this process before it has
    // stopped Patroni, whose nodes run in process groups of their own and would be left running.
    let stopping: Promise<void> | undefined;
    const shutdown = () => void (stopping ??= deployment.stop().then(() => process.exit(0)));
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
  })().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
