/**
 * A scrape of /metrics read by a Prometheus text-format parser (parse-prometheus-text-format),
 * as a Prometheus server would read it, with lookups for the tests.
 */
import assert from 'node:assert/strict';
import { request } from './http-client';

interface Sample {
  readonly labels?: Record<string, string>;
  readonly value?: string;
  readonly count?: string;
  readonly sum?: string;
  readonly buckets?: Record<string, string>;
}
export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: string;
  readonly metrics: readonly Sample[];
}

// The package ships no type declarations; its one export is the parse function.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const parsePrometheusText = require('parse-prometheus-text-format') as (text: string) => MetricFamily[];

export class Scrape {
  readonly families: readonly MetricFamily[];
  constructor(readonly text: string) {
    this.families = parsePrometheusText(text);
  }

  family(name: string): MetricFamily {
    const found = this.families.find((f) => f.name === name);
    assert.ok(found, `the scrape has ${name}`);
    return found;
  }

  /** The value of a counter or gauge sample whose labels include `labels` (0 when none has them). */
  value(name: string, labels: Record<string, string> = {}): number {
    const sample = this.family(name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    return sample ? Number(sample.value) : 0;
  }

  /**
   * A histogram's count and sum, summed over its series whose labels include `labels`.
   * parse-prometheus-text-format keeps the count and sum of an unlabelled histogram only (it
   * drops them for labelled series), so these two lines are read from the exposition text:
   * `<name>_count{…} N` and `<name>_sum{…} S`, whose label syntax the parser has accepted.
   */
  histogram(name: string, labels: Record<string, string> = {}): { count: number; sum: number } {
    this.family(name);
    const total = (suffix: string) =>
      this.text
        .split('\n')
        .map((line) => new RegExp(`^${name}_${suffix}(?:\\{(.*)\\})? (\\S+)$`).exec(line))
        .filter((m): m is RegExpExecArray => m !== null)
        .filter((m) => {
          const have = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
          return Object.entries(labels).every(([k, v]) => have[k] === v);
        })
        .reduce((n, m) => n + Number(m[2]), 0);
    return { count: total('count'), sum: total('sum') };
  }

  /** Every label value of every sample. */
  labelValues(): string[] {
    return this.families.flatMap((f) => f.metrics.flatMap((m) => Object.values(m.labels ?? {})));
  }
}

export async function scrape(url: string, token?: string): Promise<Scrape> {
  const res = await request(url, token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return new Scrape(res.body);
}
