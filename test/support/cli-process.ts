/** Runs the `catalogue` command as an operator does: a child process, without blocking this one. */
import { spawn } from 'node:child_process';
import { CATALOGUE_BIN } from './serve-process';

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout as JSON lines. */
  lines<T = Record<string, unknown>>(): T[];
}

/** `catalogue ...args` with the environment `env` (DATABASE_URL…) and `input` on standard input. */
export function runCli(env: Record<string, string>, args: string[], input = ''): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CATALOGUE_BIN, ...args], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (status) =>
      resolve({ status, stdout, stderr, lines: <T>() => stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T) }),
    );
    child.stdin.end(input);
  });
}
