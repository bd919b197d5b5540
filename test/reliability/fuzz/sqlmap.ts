/**
 * A sqlmap scan (soak tier only) of the live service's $filter and key predicates, as the seller
 * (SubscriptionToken and session cookie), with the marker `*` where sqlmap injects. The findings
 * are read from its output: any "identified the following injection point" or "is vulnerable"
 * line is one. A scan that did not really test (sqlmap missing, no connection, no parameter
 * tested) is an error, never a pass.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LiveService, Seller } from '../../support/live-service';
import { FIGURES_DIR } from '../../support/figures';
import { testEngine } from '../../support/test-database';

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, command)));
}

function run(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('sqlmap', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

/** What one scan's output says: the injection points it claims, or why it did not really test. */
export function readSqlmapOutput(output: string): { findings: string[]; notTested?: string; payloadsTried: number } {
  // Each technique sqlmap tries is announced by a "testing '…'" line.
  const payloadsTried = (output.match(/\[INFO\] testing '/g) ?? []).length;
  const findings = output.split('\n').filter((line) => /identified the following injection point|parameter '.*' is vulnerable|appears to be '.*' injectable|is '.*' injectable/i.test(line));
  if (findings.length) return { findings, payloadsTried };
  if (/all tested parameters do not appear to be injectable/i.test(output) && payloadsTried >= 10) return { findings: [], payloadsTried };
  const reason = output.split('\n').find((line) => /\[CRITICAL\]/.test(line)) ?? output.slice(-500);
  return { findings: [], notTested: `${payloadsTried} techniques tried; ${reason}`, payloadsTried };
}

export async function sqlmapScan(live: LiveService, seller: Seller, productId: string, t: { diagnostic(message: string): void }): Promise<string[]> {
  if (!onPath('sqlmap')) throw new Error('sqlmap is not on PATH: the soak tier needs it (apt-get install sqlmap)');
  const targets = [
    `${live.root}/Products?$filter=Title%20eq%20'Fuzz*'`,
    `${live.root}/Products?$filter=StockAmount%20gt%201*`,
    `${live.root}/Products?$filter=substringof('uz*',Title)`,
    `${live.root}/Products(${productId}*L)`,
    `${live.root}/Products(${productId}L)/ProductSpecifics?$filter=Name%20eq%20'Colour*'`,
  ];
  const findings: string[] = [];
  for (const url of targets) {
    const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlmap-'));
    try {
      const output = await run([
        '-u', url,
        '--headers', `SubscriptionToken: ${seller.token}\nAccept: application/json`,
        '--cookie', `.ASPXAUTH=${seller.cookie}`,
        '--batch', '--flush-session', '--disable-coloring',
        '--dbms', testEngine === 'postgres' ? 'PostgreSQL' : 'SQLite',
        '--level', '3', '--risk', '2', '--technique', 'BEUT', '--time-sec', '2',
        '--output-dir', outputDir,
      ]);
      fs.mkdirSync(FIGURES_DIR, { recursive: true });
      fs.writeFileSync(path.join(FIGURES_DIR, `sqlmap-${testEngine}-${targets.indexOf(url) + 1}.log`), `${url}\n${output}`);
      const read = readSqlmapOutput(output);
      t.diagnostic(`sqlmap ${url}: ${read.payloadsTried} techniques tried; ${read.findings.length ? read.findings.join(' | ') : read.notTested ? `not tested: ${read.notTested}` : 'nothing injectable'}`);
      if (read.notTested) throw new Error(`sqlmap did not test ${url}: ${read.notTested}`);
      findings.push(...read.findings.map((f) => `${url}: ${f}`));
    } finally {
      fs.rmSync(outputDir, { recursive: true, force: true });
    }
  }
  return findings;
}
