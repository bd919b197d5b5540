/**
 * `catalogue serve` as a real child process (as an operator runs it), on a free port, for tests
 * of several processes on one database, of crashes, and of a process's own memory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { request } from './http-client';

export const CATALOGUE_BIN = path.join(__dirname, '..', '..', '..', 'bin', 'catalogue.js');

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly origin: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM (graceful: drain, then exit); resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a process that dies without any chance to clean up. */
  kill(): Promise<void>;
  /** The process's peak resident set so far, in bytes (Linux VmHWM). */
  peakRss(): number;
}

/**
 * Starts `catalogue serve` with the environment (DATABASE_URL…), `args` after `serve`, and
 * `nodeArgs` for node itself (--cpu-prof); resolves once it listens.
 */
export async function serveProcess(env: Record<string, string>, args: string[] = [], nodeArgs: string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...nodeArgs, CATALOGUE_BIN, 'serve', ...args], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DEMO_ACCOUNT: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A child left running would keep the test process alive.
      child.kill('SIGKILL');
      reject(new Error(`serve did not start:\n${out}`));
    }, 30_000);
    // With --workers, ready when the primary says that every worker listens.
    const ready = args.includes('--workers') ? /"origin":"(http:\/\/[^"]+)"[^\n]*"msg":"catalogue-service workers listening"/ : /"origin":"(http:\/\/[^"]+)"/;
    const check = () => {
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${out}`));
    });
  });
  return {
    child,
    origin,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    peakRss: () => peakRssOf(child.pid!),
  };
}

/** A process's peak resident set so far, in bytes (Linux VmHWM). */
export function peakRssOf(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** Logs in over HTTP; the .ASPXAUTH value, or undefined when refused. */
export async function loginAt(origin: string, userName: string, password: string): Promise<string | undefined> {
  const res = await request(origin + '/Authentication_JSON_AppService.axd/Login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ userName, password, createPersistentCookie: false }),
  });
  const m = /^\.ASPXAUTH=([^;]+);/.exec(res.headers['set-cookie']?.[0] ?? '');
  return m ? m[1] : undefined;
}

/**
 * An account made with `catalogue account create` in a deployment's environment (`commandEnv`:
 * its DATABASE_URL and owner URL), logged in through its HTTP front (`origin`): the id and the
 * headers that authenticate as it. The password is `pw-<userName>-secret`.
 */
export async function deploymentAccount(origin: string, commandEnv: Readonly<Record<string, string>>, userName: string): Promise<{ accountId: number; auth: Record<string, string> }> {
  const password = `pw-${userName}-secret`;
  const made = spawnSync(process.execPath, [CATALOGUE_BIN, 'account', 'create', '--user', userName, '--password', password], {
    env: { ...process.env, ...commandEnv, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  if (made.status !== 0) throw new Error(`account create ${userName} failed: ${made.stderr}`);
  const { accountId, subscriptionToken } = JSON.parse(made.stdout) as { accountId: number; subscriptionToken: string };
  const cookie = await loginAt(origin, userName, password);
  if (!cookie) throw new Error(`login of ${userName} failed`);
  return { accountId, auth: { SubscriptionToken: subscriptionToken, Cookie: `.ASPXAUTH=${cookie}` } };
}
