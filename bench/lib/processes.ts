/**
 * The processes under test: `catalogue serve` (bin/catalogue.js, exactly as an operator starts it)
 * and the bare node:http baseline, each a child process of its own so that its CPU time and its
 * peak resident set are its own. Their output goes to a log file (the service logs each request at
 * info, its default level), never through the bench process. Each is given a free port and is
 * ready once that port accepts a connection, whatever its log level.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort } from '../../test/support/postgres-cluster';
import { peakRssOf } from '../../test/support/serve-process';

const ROOT = path.join(__dirname, '..', '..', '..');
export const CATALOGUE_BIN = path.join(ROOT, 'bin', 'catalogue.js');
export const BASELINE_SERVER = path.join(__dirname, 'baseline-server.js');
export const FLOOR_SERVER = path.join(__dirname, 'floor-server.js');
export const WRITE_FLOOR_SERVER = path.join(__dirname, 'write-floor-server.js');

export interface ServerProcess {
  readonly label: string;
  readonly pid: number;
  readonly origin: string;
  readonly logFile: string;
  /** CPU time (user + system, all threads) so far, in microseconds. */
  cpuMicros(): number;
  /** Peak resident set so far (VmHWM), in bytes. */
  peakRss(): number;
  /** The end of its log, for a failure report. */
  logTail(lines?: number): string;
  /** SIGTERM and wait (the service drains, closes the store, and writes its CPU profile). */
  stop(): Promise<void>;
}

let clockTicks: number | undefined;

/** USER_HZ: the unit of utime and stime in /proc/<pid>/stat. */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim();
    clockTicks = out && /^\d+$/.test(out) ? Number(out) : 100;
  }
  return clockTicks;
}

export function cpuMicrosOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1e6) / ticksPerSecond();
}

/** CPU time all processes of the machine have used so far (every core, idle and iowait left out), in µs. */
export function machineBusyMicros(): number {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1e6) / ticksPerSecond();
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function startProcess(label: string, args: string[], env: Record<string, string>, logFile: string): Promise<ServerProcess> {
  const port = await freePort();
  const fd = fs.openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, args, { env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', fd, fd] });
  } finally {
    fs.closeSync(fd);
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const read = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${label} exited (${child.exitCode ?? child.signalCode}) before it listened:\n${read().slice(-4000)}`);
    }
    if (await accepts(port)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${label} did not listen within 30 s:\n${read().slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const origin = `http://127.0.0.1:${port}`;
  const pid = child.pid!;
  return {
    label,
    pid,
    origin,
    logFile,
    cpuMicros: () => cpuMicrosOf(pid),
    peakRss: () => peakRssOf(pid),
    logTail(lines = 20) {
      return read().split('\n').slice(-lines - 1).join('\n');
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface ServiceOptions {
  /** Directory for the V8 CPU profile (`node --cpu-prof`), written when the process exits. */
  readonly cpuProfDir?: string;
}

/** `node bin/catalogue.js serve` on 127.0.0.1 and a free port. */
export function startService(label: string, env: Record<string, string>, logFile: string, options: ServiceOptions = {}): Promise<ServerProcess> {
  const nodeArgs = options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [];
  // Flags NODE_OPTIONS refuses (--trace-gc, for one) reach only the service this way.
  const extraArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  return startProcess(label, [...nodeArgs, ...extraArgs, CATALOGUE_BIN, 'serve'], { DEMO_ACCOUNT: 'false', ...env }, logFile);
}

/** The bare node:http server with its fixed 300-byte JSON body. */
export function startBaseline(logFile: string, workMicros = 0): Promise<ServerProcess> {
  return startProcess(workMicros > 0 ? `baseline-${workMicros}us` : 'baseline', [BASELINE_SERVER], workMicros > 0 ? { BASELINE_WORK_US: String(workMicros) } : {}, logFile);
}

/** The floor (floor-server.ts) over an SQLite file the service has used, for one account. */
/** The read floor (floor-server.ts), or with `writes` the write floor (write-floor-server.ts). */
export function startFloor(label: string, databaseFile: string, accountId: number, logFile: string, writes = false): Promise<ServerProcess> {
  return startProcess(label, [writes ? WRITE_FLOOR_SERVER : FLOOR_SERVER], { DATABASE_FILE: databaseFile, ACCOUNT_ID: String(accountId) }, logFile);
}
