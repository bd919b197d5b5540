/**
 * Figures a reliability suite measured (cases run, 5xx answers, leaks, lost writes, p99, RSS
 * growth...). Each suite reports them once: as a test diagnostic in the runner's output, and as
 * a JSON line in test-results/figures-<engine>.jsonl, which scripts/run-tests.js prints as a
 * table at the end of each engine's half so the figures are at the tail of the CI log.
 */
import fs from 'node:fs';
import path from 'node:path';
import { testEngine } from './test-database';
import { tier } from './tier';

export type FigureValue = number | string | boolean;

export const FIGURES_DIR = path.join(__dirname, '..', '..', '..', 'test-results');

export function figuresFile(engine: string): string {
  return path.join(FIGURES_DIR, `figures-${engine}.jsonl`);
}

/** Records the figures of `suite`; `t` (a TestContext) also gets them as a diagnostic line. */
export function reportFigures(suite: string, figures: Record<string, FigureValue>, t?: { diagnostic(message: string): void }): void {
  const line = Object.entries(figures).map(([name, value]) => `${name}=${value}`).join(', ');
  t?.diagnostic(`${suite} [${testEngine}, ${tier}]: ${line}`);
  fs.mkdirSync(FIGURES_DIR, { recursive: true });
  fs.appendFileSync(figuresFile(testEngine), `${JSON.stringify({ suite, engine: testEngine, tier, figures })}\n`);
}
