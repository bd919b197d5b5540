/**
 * Summary of a V8 CPU profile (`node --cpu-prof`, a .cpuprofile JSON: nodes, samples,
 * timeDeltas): self time per function, and per area of the code (the service's own folders,
 * each dependency, Node's internals, GC), counted only over the samples taken inside the measured
 * window. V8 stamps samples with the monotonic clock (µs), the same clock as process.hrtime in
 * the bench, so the window of each workload can be cut out of its process's profile.
 *
 * V8 samples the main thread by the clock, not by CPU use: a function's self time includes the
 * time it spent blocked in a synchronous call (an fsync inside better-sqlite3's COMMIT, a socket
 * write). "(idle)" is the event loop waiting for work; everything else is "busy".
 */
import fs from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface HotFunction {
  readonly name: string;
  /** file:line, relative to the repository, or a Node internal. */
  readonly location: string;
  readonly selfMs: number;
  readonly selfPercent: number;
}

export interface ProfileSummary {
  readonly file: string;
  /** Sampled time in the window (ms), idle included. */
  readonly totalMs: number;
  /** Sampled time in the window without (idle): the main thread computing or blocked in a synchronous call. */
  readonly busyMs: number;
  /** Whether the window could be cut out; otherwise the whole profile is summarised. */
  readonly windowed: boolean;
  /** Self time per function, hottest first (percent of busy time). */
  readonly functions: readonly HotFunction[];
  /** Self time per area: src/<folder>, a dependency, node internals, (garbage collector), … */
  readonly areas: readonly { readonly area: string; readonly selfMs: number; readonly selfPercent: number }[];
}

const ROOT = path.resolve(__dirname, '..', '..', '..');

const sourceMaps = new Map<string, SourceMap | undefined>();

/** The compiled file's source map (tsconfig writes one beside each .js), if any. */
function sourceMapOf(file: string): SourceMap | undefined {
  if (!sourceMaps.has(file)) {
    let map: SourceMap | undefined;
    try {
      if (fs.existsSync(file + '.map')) map = new SourceMap(JSON.parse(fs.readFileSync(file + '.map', 'utf8')));
    } catch {
      map = undefined;
    }
    sourceMaps.set(file, map);
  }
  return sourceMaps.get(file);
}

/** Where the compiled code lives (dist/…js:line), for telling areas apart. */
function compiledLocation(frame: CallFrame): string {
  let url = frame.url;
  if (!url) return '';
  if (url.startsWith('file://')) url = url.slice('file://'.length);
  if (url.startsWith(ROOT + '/')) url = url.slice(ROOT.length + 1);
  return `${url}:${frame.lineNumber + 1}`;
}

/** The TypeScript source line for the service's own code, else the compiled location. */
function location(frame: CallFrame): string {
  const compiled = compiledLocation(frame);
  if (!compiled.startsWith('dist/')) return compiled;
  const file = path.join(ROOT, compiled.slice(0, compiled.lastIndexOf(':')));
  const entry = sourceMapOf(file)?.findEntry(frame.lineNumber, Math.max(0, frame.columnNumber)) as
    | { originalSource?: string; originalLine?: number }
    | undefined;
  if (!entry?.originalSource || entry.originalLine === undefined) return compiled;
  let source = entry.originalSource;
  if (source.startsWith('file://')) source = source.slice('file://'.length);
  source = path.relative(ROOT, path.resolve(path.dirname(file), source));
  return `${source}:${entry.originalLine + 1}`;
}

function areaOf(frame: CallFrame): string {
  const name = frame.functionName;
  if (!frame.url) return name.startsWith('(') ? name : '(native)';
  const loc = compiledLocation(frame);
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(loc);
  if (dep) return dep[1]!;
  const own = /^dist\/src\/([^/]+)\//.exec(loc);
  if (own) return `src/${own[1]}`;
  if (loc.startsWith('node:')) return 'node internals';
  return loc.split(':')[0] ?? loc;
}

/** The newest .cpuprofile in dir (one per process run). */
export function findProfile(dir: string): string | undefined {
  if (!fs.existsSync(dir)) return undefined;
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(dir, f));
  files.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  return files[0];
}

/** window: [from, to] in µs of the monotonic clock (process.hrtime.bigint() / 1000). */
export function summariseProfile(file: string, window?: { from: number; to: number }, top = 15): ProfileSummary {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) byId.set(node.id, node);
  // Each sample lasts until the next one.
  const times: number[] = new Array(profile.samples.length);
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    times[i] = t;
  }
  const inWindow = (i: number) => !window || (times[i]! >= window.from && times[i]! <= window.to);
  let windowed = window !== undefined;
  if (window) {
    let hits = 0;
    for (let i = 0; i < times.length; i++) if (inWindow(i)) hits++;
    // Clocks that do not line up would leave (almost) nothing: summarise everything instead.
    if (hits < Math.min(100, times.length / 10)) windowed = false;
  }
  const self = new Map<number, number>();
  let total = 0;
  for (let i = 0; i + 1 < profile.samples.length; i++) {
    if (windowed && !inWindow(i)) continue;
    const duration = times[i + 1]! - times[i]!;
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + duration);
    total += duration;
  }
  const functions = new Map<string, { name: string; location: string; micros: number }>();
  const areas = new Map<string, number>();
  let idle = 0;
  for (const [id, micros] of self) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') {
      idle += micros;
      continue;
    }
    const name = frame.functionName || '(anonymous)';
    const loc = location(frame);
    const key = `${name} ${loc}`;
    const entry = functions.get(key) ?? { name, location: loc, micros: 0 };
    entry.micros += micros;
    functions.set(key, entry);
    const area = areaOf(frame);
    areas.set(area, (areas.get(area) ?? 0) + micros);
  }
  const busy = total - idle;
  const percent = (micros: number) => (busy > 0 ? (100 * micros) / busy : 0);
  return {
    file,
    totalMs: total / 1000,
    busyMs: busy / 1000,
    windowed,
    functions: [...functions.values()]
      .sort((a, b) => b.micros - a.micros)
      .slice(0, top)
      .map((f) => ({ name: f.name, location: f.location, selfMs: f.micros / 1000, selfPercent: percent(f.micros) })),
    areas: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([area, micros]) => ({ area, selfMs: micros / 1000, selfPercent: percent(micros) })),
  };
}

export function formatProfile(title: string, s: ProfileSummary): string {
  const lines = [
    `--- CPU profile: ${title}: main thread busy ${s.busyMs.toFixed(0)} ms of ${s.totalMs.toFixed(0)} ms${s.windowed ? ' (measured window)' : ' (whole process run)'} ---`,
    '  self% of busy   self ms  function (location)',
  ];
  // The share of the ten hottest functions: how concentrated the cost is, where the next profile starts.
  const topTen = s.functions.slice(0, 10).reduce((sum, f) => sum + f.selfPercent, 0);
  for (const f of s.functions) {
    lines.push(`  ${f.selfPercent.toFixed(1).padStart(13)}  ${f.selfMs.toFixed(0).padStart(8)}  ${f.name}${f.location ? ` (${f.location})` : ''}`);
  }
  lines.push(`  top ten functions: ${topTen.toFixed(1)}% of busy`);
  lines.push('  by area: ' + s.areas.map((a) => `${a.area} ${a.selfPercent.toFixed(0)}%`).join(', '));
  return lines.join('\n');
}
