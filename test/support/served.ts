/**
 * `catalogue serve` as a user runs it: a separate process on a free port, started from the built
 * bin/catalogue.js, ready once its "listening" log line names the origin. For tests that need a
 * real process (restarts, RSS, signals).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const BIN = path.join(__dirname, '..', '..', '..', 'bin', 'catalogue.js');

export interface Served {
  readonly child: ChildProcess;
  readonly origin: string;
  output(): string;
  /** The process's peak resident set so far, in bytes (Linux VmHWM). */
  peakRss(): number;
  stop(): Promise<number | null>;
}

/** Starts `catalogue serve` with DATABASE_URL and the given environment; resolves when it listens. */
export async function serve(databaseUrl: string, env: Record<string, string> = {}, args: string[] = []): Promise<Served> {
  const child = spawn(process.execPath, [...args, BIN, 'serve'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  // The origin is read from the "listening" line, which is logged at info.
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A child left running would keep the test process alive.
      child.kill('SIGKILL');
      reject(new Error(`serve did not start:\n${out}`));
    }, 20_000);
    const check = () => {
      const m = /"origin":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  return {
    child,
    origin,
    output: () => out,
    peakRss: () => {
      const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (!m) throw new Error('no VmHWM in /proc status');
      return Number(m[1]) * 1024;
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.removeAllListeners('exit');
        child.on('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}
