/**
 * `npm run bench`: the service's throughput, latency, CPU per request and memory against a bare
 * node:http baseline on the same machine, for the connector's workloads (issue 8). See the
 * README's "Benchmark" section for what each column means and the targets.
 *
 *   node dist/bench/run.js [--engine sqlite|postgres] [--duration 10] [--warmup 3]
 *     [--connections 32] [--products 10000] [--export-runs 3] [--only get-json,export]
 *     [--cpu-prof] [--keep] [--floor] [--calibrate]   (--only export-gzip,export-br: the export compressed)
 *     [--only mix --sellers 200 --seller-products 10 --mix-rates 25,50,75]   (the connector mix, issue 39)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BenchSetupError, postgresDatabase, sqliteDatabase, type BenchDatabase, type Engine, type SeedMore } from './lib/database';
import { runExport, type ExportCoding } from './lib/export';
import { login, request, SERVICE_PATH, connectorHeaders, type Credentials } from './lib/http';
import { runLoad, type LoadResult, type RequestShape } from './lib/load';
import { machineBusyMicros, startBaseline, startFloor, startService, type ServerProcess } from './lib/processes';
import { sqliteFileOf } from '../src/store/open';
import { findProfile, formatProfile, summariseProfile, type ProfileSummary } from './lib/profile';
import { evaluateTargets, formatCompressedExport, formatExport, formatFloorComparison, formatTable, formatTargets, summariseBaselines, type ExportResult, type Row } from './lib/report';
import { baselineRequest, feedEntities, WORKLOADS, type Catalogue, type Workload, type WorkloadContext } from './lib/workloads';
import { seedSellers, type MixSellerAccount } from './lib/mix-seed';
import { checkMixKinds, connectSellers } from './lib/mix-connect';
import { MIX_KINDS } from './lib/mix-kinds';
import { runClosedMix, runOpenMix, type MixRun, type MixTarget } from './lib/mix-load';
import { evaluateMixGoals, formatMixGoals, formatMixKinds, formatMixPhases, type MixPhase, type MixResult } from './lib/mix-report';

interface Options {
  readonly engine: Engine;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  readonly products: number;
  readonly exportRuns: number;
  readonly only: readonly string[] | undefined;
  readonly cpuProf: boolean;
  readonly keep: boolean;
  readonly floor: boolean;
  readonly calibrate: boolean;
  /** The connector mix (--only mix): sellers, products per seller, open-loop rates in % of capacity. */
  readonly sellers: number;
  readonly sellerProducts: number;
  readonly mixRates: readonly number[];
  /** The same mix against the baseline computing this many µs per request (0: not run). */
  readonly mixBaselineMicros: number;
  /** Where the JSON results go (default bench/results). */
  readonly resultsDir: string | undefined;
}

/** The work per request (µs) of the calibration runs (--calibrate). */
const CALIBRATION_MICROS = [20, 40, 60, 100];

const USAGE = `npm run bench -- [options]
  --engine sqlite|postgres   database engine (default sqlite). postgres uses BENCH_DATABASE_URL or
                             DATABASE_URL (+ BENCH_DATABASE_OWNER_URL / DATABASE_OWNER_URL), else
                             starts a throwaway cluster with initdb and pg_ctl
  --duration S               measured seconds per workload (default 10)
  --warmup S                 warm-up seconds before each measurement (default 3)
  --connections N            concurrent keep-alive connections (default 32)
  --products N               products in the seeded catalogue (default 10000)
  --export-runs N            full-export repetitions (default 3)
  --only a,b                 run only these workloads (ids: ${[...WORKLOADS.map((w) => w.id), 'export', 'export-gzip', 'export-br', 'mix'].join(', ')});
                             export-gzip and export-br are the export asked for with Accept-Encoding gzip or br,
                             not run by default; nor is mix, the connector mix (below)
  --sellers N                mix: sellers, each with its own account, catalogue, orders and schedule (default 200)
  --seller-products N        mix: products per seller (default 10, each with 10 variations)
  --mix-rates a,b,c          mix: the open-loop rates in % of the closed-loop capacity (default 25,50,75)
  --mix-baseline-us N        mix: then the same mix, capacity and rates against the baseline computing N µs
                             per request: the latencies this machine and generator allow a server that
                             does nothing else, at the capacity that N gives it
  --results-dir DIR          where the JSON results go (default bench/results)
  --cpu-prof                 run each service process under node --cpu-prof and print the hottest
                             functions of each workload's measured window
  --keep                     keep the work directory (databases, server logs)
  --floor                    SQLite: after each read workload that has one, measure the floor too
                             (bench/lib/floor-server.ts: the same answer, the same rules, no pipeline)
  --calibrate                also measure the baseline computing ${CALIBRATION_MICROS.join(', ')} µs per request: what a
                             request of that cost gets on this machine, kernel and client included
environment:
  BENCH_SERVICE_NODE_ARGS    node flags for the service processes only, e.g. "--trace-gc" (with --keep,
                             the GC trace is in the work directory's server logs)`;

function parseArgs(argv: readonly string[]): Options {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new BenchSetupError(`unexpected argument '${arg}'\n${USAGE}`);
    const name = m[1]!;
    if (name === 'help') {
      console.log(USAGE);
      process.exit(0);
    }
    if (['cpu-prof', 'keep', 'floor', 'calibrate'].includes(name)) flags.add(name);
    else if (['engine', 'duration', 'warmup', 'connections', 'products', 'export-runs', 'only', 'sellers', 'seller-products', 'mix-rates', 'mix-baseline-us', 'results-dir'].includes(name)) {
      const value = m[2] ?? argv[++i];
      if (value === undefined) throw new BenchSetupError(`--${name} needs a value`);
      values.set(name, value);
    } else throw new BenchSetupError(`unknown option --${name}\n${USAGE}`);
  }
  const number = (name: string, fallback: number, min: number) => {
    const raw = values.get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) throw new BenchSetupError(`--${name} must be a number ≥ ${min}, not '${raw}'`);
    return n;
  };
  const engine = values.get('engine') ?? 'sqlite';
  if (engine !== 'sqlite' && engine !== 'postgres') throw new BenchSetupError(`--engine must be sqlite or postgres, not '${engine}'`);
  const only = values.get('only')?.split(',').map((s) => s.trim()).filter(Boolean);
  const known = new Set([...WORKLOADS.map((w) => w.id), 'export', 'export-gzip', 'export-br', 'mix']);
  for (const id of only ?? []) if (!known.has(id)) throw new BenchSetupError(`--only: unknown workload '${id}' (known: ${[...known].join(', ')})`);
  return {
    engine,
    seconds: number('duration', 10, 1),
    warmupSeconds: number('warmup', 3, 0),
    connections: Math.round(number('connections', 32, 1)),
    products: Math.round(number('products', 10_000, 100)),
    exportRuns: Math.round(number('export-runs', 3, 1)),
    only,
    cpuProf: flags.has('cpu-prof'),
    keep: flags.has('keep'),
    floor: flags.has('floor'),
    calibrate: flags.has('calibrate'),
    sellers: Math.round(number('sellers', 200, 1)),
    sellerProducts: Math.round(number('seller-products', 10, 1)),
    mixRates: mixRates(values.get('mix-rates')),
    mixBaselineMicros: Math.round(number('mix-baseline-us', 0, 0)),
    resultsDir: values.get('results-dir'),
  };
}

function mixRates(raw: string | undefined): number[] {
  if (raw === undefined) return [25, 50, 75];
  const rates = raw.split(',').map((s) => Number(s.trim()));
  if (rates.length === 0 || rates.some((r) => !Number.isFinite(r) || r <= 0 || r > 100)) throw new BenchSetupError(`--mix-rates must be percentages of the capacity between 0 and 100, not '${raw}'`);
  return rates;
}

const REPO = path.join(__dirname, '..', '..');
const RESULTS = path.join(REPO, 'bench', 'results');
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);
const mib = (bytes: number) => bytes / 2 ** 20;
const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The service's environment: the caller's, without what the bench decides itself. */
function serviceBaseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  for (const k of ['DATABASE_URL', 'DATABASE_OWNER_URL', 'PORT', 'HOST', 'PUBLIC_URL', 'PAGE_SIZE', 'DEMO_ACCOUNT']) delete env[k];
  if (process.env.BENCH_LOG_LEVEL) env.LOG_LEVEL = process.env.BENCH_LOG_LEVEL;
  // The bench's 32 clients are one seller: the per-account share (ACCOUNT_MAX_IN_FLIGHT, 4 by
  // default) would measure the admission queue, not the pipeline. Off unless the caller sets it.
  env.ACCOUNT_MAX_IN_FLIGHT ??= '0';
  return env;
}

/** Bytes of prepared requests per run at most: bounds the pool for large bodies ($batch). */
const POOL_BYTES = 16 * 2 ** 20;
const MAX_POOL = 1024;

function poolSize(first: RequestShape, connections: number): number {
  const bytes = first.path.length + 400 + (first.body ? Buffer.byteLength(first.body) : 0);
  return Math.max(16, Math.min(MAX_POOL, Math.floor(POOL_BYTES / (connections * bytes))));
}

interface Measurement {
  readonly load: LoadResult;
  /** Server CPU time during the measured run (µs). */
  readonly cpu: number;
  readonly window: { readonly from: number; readonly to: number };
  readonly warmFailures: number;
  readonly peakRss: number;
  /** CPU the rest of the machine used during the run, in cores (other processes: noise). */
  readonly otherCores: number;
}

class Bench {
  private readonly live = new Set<ServerProcess>();
  /** Rows of the floor (--floor), measured beside the workloads, not yet reported. */
  private floorRows: Row[] = [];
  private catalogue: Catalogue | undefined;
  private baselineServer: ServerProcess | undefined;
  readonly baselines: Row[] = [];

  constructor(
    private readonly options: Options,
    private readonly workDir: string,
    private readonly profileDir: string | undefined,
    private readonly db: BenchDatabase,
  ) {}

  /** A `catalogue serve` process with its own database copy, stopped (and its profile written) after fn. */
  private async withService<T>(label: string, fn: (service: ServerProcess, databaseUrl: string | undefined) => Promise<T>, env = serviceBaseEnv()): Promise<T> {
    const cpuProfDir = this.profileDir ? path.join(this.profileDir, label) : undefined;
    const database = this.db.forProcess(label);
    const service = await startService(label, { ...env, ...database }, path.join(this.workDir, `${label}.log`), cpuProfDir ? { cpuProfDir } : {});
    this.live.add(service);
    try {
      return await fn(service, database.DATABASE_URL);
    } catch (error) {
      const tail = service.logTail(8);
      throw new Error(`${(error as Error).message}\n  server log (${service.logFile}), last lines:\n${tail.replace(/^/gm, '    ')}`);
    } finally {
      await service.stop();
      this.live.delete(service);
    }
  }

  private profileOf(label: string, window: { from: number; to: number } | undefined): ProfileSummary | undefined {
    if (!this.profileDir) return undefined;
    const file = findProfile(path.join(this.profileDir, label));
    if (!file) {
      log(`no CPU profile was written for ${label}`);
      return undefined;
    }
    return summariseProfile(file, window);
  }

  private async credentials(service: ServerProcess): Promise<Credentials> {
    const cookie = await login(service.origin, this.db.account.userName, this.db.account.password);
    return { subscriptionToken: this.db.account.subscriptionToken, cookie };
  }

  private async loadCatalogue(origin: string, credentials: Credentials): Promise<Catalogue> {
    // With $select when the build has it; whole entities otherwise.
    const ids = async (set: string, options: string, limit = Infinity) => {
      let res = await request(`${origin}${SERVICE_PATH}/${set}?${options}`, { headers: connectorHeaders(credentials) });
      if (res.status === 400) res = await request(`${origin}${SERVICE_PATH}/${set}`, { headers: connectorHeaders(credentials) });
      if (res.status !== 200) throw new Error(`GET ${set} answered ${res.status}: ${res.body.slice(0, 300)}`);
      return feedEntities(res.body)
        .map((e) => String(e.Id))
        .sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0))
        .slice(0, limit);
    };
    const productIds = await ids('Products', '$select=Id');
    const variationIds = await ids('ProductVariations', '$select=Id&$top=10000', 10_000);
    if (productIds.length !== this.db.products) throw new Error(`expected ${this.db.products} products, the service lists ${productIds.length}`);
    return { productIds, variationIds };
  }

  /** Warm-up, then the measured run with the server's CPU time and the machine's read around it. */
  private async measure(server: ServerProcess, pool: readonly RequestShape[], expectStatus: number, verifyBody?: (body: string) => boolean, crowd?: Workload['crowd']): Promise<Measurement> {
    const spec = {
      origin: server.origin,
      connections: crowd?.connections ?? this.options.connections,
      pool,
      expectStatus,
      ...(crowd ? { shedStatus: crowd.shedStatus } : {}),
      ...(verifyBody ? { verifyBody } : {}),
    };
    let warmFailures = 0;
    if (this.options.warmupSeconds > 0) {
      const warm = await runLoad({ ...spec, seconds: this.options.warmupSeconds });
      warmFailures = warm.unexpectedStatus + warm.mismatches + warm.errors;
    }
    const cpuBefore = server.cpuMicros();
    const machineBefore = machineBusyMicros();
    const from = monotonicMicros();
    const load = await runLoad({ ...spec, seconds: this.options.seconds });
    const to = monotonicMicros();
    const cpu = server.cpuMicros() - cpuBefore;
    const machine = machineBusyMicros() - machineBefore;
    const client = load.clientCpuShare * (to - from);
    return { load, cpu, window: { from, to }, warmFailures, peakRss: server.peakRss(), otherCores: Math.max(0, (machine - cpu - client) / (to - from)) };
  }

  private row(id: string, title: string, m: Measurement, baseline: Row | undefined, entitiesPerRequest?: number): Row {
    const { load } = m;
    const failures = load.unexpectedStatus + load.mismatches + load.errors + m.warmFailures;
    const cpuPerRequest = load.requests ? m.cpu / load.requests : undefined;
    const statuses = Object.entries(load.statuses).map(([s, c]) => `${c}× ${s}`).join(', ');
    return {
      id,
      title,
      result: failures === 0 && load.requests > 0 ? 'ok' : 'FAILED',
      ...(failures > 0
        ? { note: `statuses ${statuses || 'none'}; ${load.mismatches} body mismatches, ${load.errors} connection errors/timeouts, ${m.warmFailures} failures in warm-up` }
        : load.shed > 0 || id.startsWith('crowd')
          ? { note: `${load.shed} of ${load.requests} answered 503 (busy, ${((100 * load.shed) / Math.max(1, load.requests)).toFixed(1)}%)` }
          : {}),
      requests: load.requests,
      seconds: load.seconds,
      requestsPerSecond: load.requestsPerSecond,
      ...(baseline?.requestsPerSecond ? { baselineRequestsPerSecond: baseline.requestsPerSecond, ratioToBaseline: load.requestsPerSecond / baseline.requestsPerSecond } : {}),
      p50Ms: load.p50Ms,
      p99Ms: load.p99Ms,
      ...(cpuPerRequest !== undefined ? { cpuMicrosPerRequest: cpuPerRequest } : {}),
      serverCpuShare: m.cpu / (m.window.to - m.window.from),
      ...(cpuPerRequest !== undefined && baseline?.cpuMicrosPerRequest ? { cpuRatioToBaseline: cpuPerRequest / baseline.cpuMicrosPerRequest } : {}),
      peakRssMb: mib(m.peakRss),
      failures,
      statuses: load.statuses,
      clientCpuShare: load.clientCpuShare,
      otherCores: m.otherCores,
      ...(entitiesPerRequest ? { entitiesPerSecond: load.requestsPerSecond * entitiesPerRequest } : {}),
    };
  }

  /** The baseline, measured right before each workload so that both see the same machine. */
  async baseline(before: string): Promise<Row> {
    if (!this.baselineServer) {
      this.baselineServer = await startBaseline(path.join(this.workDir, 'baseline.log'));
      this.live.add(this.baselineServer);
    }
    // The connector's headers too; the credentials only need to look real.
    const shape = baselineRequest({ subscriptionToken: this.db.account.subscriptionToken, cookie: 'x'.repeat(64) });
    const m = await this.measure(this.baselineServer, [shape], 200);
    const row = this.row('baseline', `baseline before ${before}`, m, undefined);
    this.baselines.push(row);
    return row;
  }

  /**
   * The baseline computing `workMicros` per request before it answers (--calibrate): the
   * requests/s and CPU per request a server of that cost gets here, with the same load.
   */
  async calibration(workMicros: number): Promise<Row> {
    const label = `calibrate-${workMicros}us`;
    const title = `baseline + ${workMicros} µs of work per request`;
    log(title);
    const server = await startBaseline(path.join(this.workDir, `${label}.log`), workMicros);
    this.live.add(server);
    try {
      const shape = baselineRequest({ subscriptionToken: this.db.account.subscriptionToken, cookie: 'x'.repeat(64) });
      const row = this.row(label, title, await this.measure(server, [shape], 200), this.baselines.at(-1));
      return { ...row, note: `${((row.cpuMicrosPerRequest ?? 0) - workMicros).toFixed(0)} µs per request beside the work` };
    } catch (error) {
      return { id: label, title, result: 'FAILED', note: (error as Error).message };
    } finally {
      await server.stop();
      this.live.delete(server);
    }
  }

  async stopBaseline(): Promise<void> {
    if (!this.baselineServer) return;
    await this.baselineServer.stop();
    this.live.delete(this.baselineServer);
  }

  async workload(w: Workload): Promise<Row> {
    let window: { from: number; to: number } | undefined;
    try {
      const value: Row = await this.withService(w.id, async (service, databaseUrl) => {
        const credentials = await this.credentials(service);
        this.catalogue ??= await this.loadCatalogue(service.origin, credentials);
        const ctx: WorkloadContext = { root: service.origin + SERVICE_PATH, credentials, catalogue: this.catalogue };
        const first = w.request(ctx, 0);
        const res = await request(service.origin + first.path, { method: first.method, headers: { ...first.headers }, ...(first.body !== undefined ? { body: first.body } : {}) });
        if (res.status === 501 && w.mayBeUnavailable) {
          return { id: w.id, title: w.title, result: 'not available', note: `answers 501: ${extractMessage(res.body)}` } satisfies Row;
        }
        if (res.status !== w.expectStatus) throw new Error(`the first request answered ${res.status}, expected ${w.expectStatus}: ${res.body.slice(0, 400)}`);
        w.check?.(res, ctx, first);
        const pool = Array.from({ length: poolSize(first, w.crowd?.connections ?? this.options.connections) }, (_, i) => w.request(ctx, i + 1));
        const baseline = await this.baseline(w.id);
        const m = await this.measure(service, pool, w.expectStatus, w.verifyBody ? (body) => w.verifyBody!(body) : undefined, w.crowd);
        window = m.window;
        const row = this.row(w.id, w.title, m, baseline, w.entitiesPerRequest);
        if (this.options.floor && w.floor && this.options.engine === 'sqlite' && databaseUrl !== undefined && row.result === 'ok') {
          this.floorRows.push(await this.floor(w, service, sqliteFileOf(databaseUrl), pool, baseline));
        }
        return row;
      });
      if (value.result === 'not available') return value;
      const profile = this.profileOf(w.id, window);
      return profile ? { ...value, profile } : value;
    } catch (error) {
      return { id: w.id, title: w.title, result: 'FAILED', note: (error as Error).message };
    }
  }

  /**
   * The floor of a workload (floor-server.ts) over the database the service has just served, with
   * the session it logged in: first the same answer as the service's, byte for byte, then the
   * same load, compared with the baseline the service's run was.
   */
  private async floor(w: Workload, service: ServerProcess, databaseFile: string, pool: readonly RequestShape[], baseline: Row): Promise<Row> {
    const label = `floor-${w.id}`;
    const title = `floor: ${w.title}`;
    log(title);
    const floor = await startFloor(label, databaseFile, this.db.account.accountId, path.join(this.workDir, `${label}.log`), w.writes === true);
    this.live.add(floor);
    try {
      const first = pool[0]!;
      const ask = (origin: string) => request(origin + first.path, { method: first.method, headers: { ...first.headers }, ...(first.body !== undefined ? { body: first.body } : {}) });
      const [ours, its] = [await ask(service.origin), await ask(floor.origin)];
      // Two creates cannot share their key or their time of creation: those are set aside.
      const comparable = (body: string, origin: string) => (w.writes ? sameButKeyAndTime(body.split(origin).join('ORIGIN')) : body.split(origin).join('ORIGIN'));
      if (its.status !== ours.status || comparable(its.body, floor.origin) !== comparable(ours.body, service.origin) || (its.headers.etag === undefined) !== (ours.headers.etag === undefined)) {
        throw new Error(`the floor's answer differs from the service's: ${its.status} ${its.body.slice(0, 300)}`);
      }
      const m = await this.measure(floor, pool, w.expectStatus, w.verifyBody ? (body) => w.verifyBody!(body) : undefined);
      const row = this.row(label, title, m, baseline, w.entitiesPerRequest);
      log(`${label}: ${row.result}, ${row.requestsPerSecond?.toFixed(0)} req/s`);
      return row;
    } catch (error) {
      return { id: label, title, result: 'FAILED', note: (error as Error).message };
    } finally {
      await floor.stop();
      this.live.delete(floor);
    }
  }

  /** The floor rows measured since the last call. */
  takeFloorRows(): Row[] {
    const rows = this.floorRows;
    this.floorRows = [];
    return rows;
  }

  /**
   * The full export in each of `codings` as the client asks for it, each coding in a service
   * process of its own, all started at once. The runs go in turns (identity, gzip, br, identity,
   * …), so that a change in the machine's other load falls on every coding alike instead of on
   * whichever ran last: on a shared machine their wall times are only comparable so.
   */
  async exports(codings: readonly ExportCoding[]): Promise<ExportResult[]> {
    const products = this.db.products;
    const labelOf = (coding: ExportCoding) => (coding === 'identity' ? 'export' : `export-${coding}`);
    const runs = new Map<ExportCoding, ExportResult['runs'][number][]>(codings.map((c) => [c, []]));
    const windows = new Map<ExportCoding, { from: number; to: number }>();
    const peakRss = new Map<ExportCoding, number>();
    const failures = new Map<ExportCoding, string>();
    // Nested: each service is stopped (and its profile written) after the others are done.
    const withServices = async (rest: readonly ExportCoding[], started: { coding: ExportCoding; service: ServerProcess; credentials: Credentials }[]): Promise<void> => {
      if (rest.length === 0) return this.exportRounds(started, runs, windows, peakRss, failures);
      const [coding, ...others] = rest as [ExportCoding, ...ExportCoding[]];
      let ready = false;
      try {
        await this.withService(labelOf(coding), async (service) => {
          const credentials = await this.credentials(service);
          const count = await request(`${service.origin}${SERVICE_PATH}/Products/$count`, { headers: connectorHeaders(credentials) });
          if (count.status !== 200 || Number(count.body) !== products) throw new Error(`Products/$count answered ${count.status} ${count.body.slice(0, 200)}, expected ${products}`);
          ready = true;
          await withServices(others, [...started, { coding, service, credentials }]);
        });
      } catch (error) {
        failures.set(coding, (error as Error).message);
        // A service that did not start: the other codings run without it.
        if (!ready) await withServices(others, started);
      }
    };
    await withServices(codings, []);
    return codings.map((coding): ExportResult => {
      const failure = failures.get(coding);
      const done = runs.get(coding)!;
      if (failure !== undefined || done.length === 0) return { result: 'FAILED', note: failure ?? 'not run', coding, products, runs: [] };
      const best = done.reduce((a, b) => (b.seconds < a.seconds ? b : a));
      const value: ExportResult = {
        result: 'ok',
        coding,
        products,
        runs: done,
        bestSeconds: best.seconds,
        bestMegabytesPerSecond: best.megabytesPerSecond,
        megabytes: best.megabytes,
        wireMegabytes: best.wireMegabytes,
        peakRssMb: peakRss.get(coding)!,
      };
      const profile = this.profileOf(labelOf(coding), windows.get(coding));
      return profile ? { ...value, profile } : value;
    });
  }

  /** The export runs of the started services, in turns: round after round, one run of each. */
  private async exportRounds(
    started: readonly { coding: ExportCoding; service: ServerProcess; credentials: Credentials }[],
    runs: Map<ExportCoding, ExportResult['runs'][number][]>,
    windows: Map<ExportCoding, { from: number; to: number }>,
    peakRss: Map<ExportCoding, number>,
    failures: Map<ExportCoding, string>,
  ): Promise<void> {
    const products = this.db.products;
    const from = monotonicMicros();
    for (let i = 0; i < this.options.exportRuns; i++) {
      for (const { coding, service, credentials } of started) {
        if (failures.has(coding)) continue;
        const label = coding === 'identity' ? 'export' : `export-${coding}`;
        try {
          const cpuBefore = service.cpuMicros();
          const machineBefore = machineBusyMicros();
          const clientBefore = process.cpuUsage();
          const r = await runExport(service.origin, credentials, coding);
          const cpuSeconds = (service.cpuMicros() - cpuBefore) / 1e6;
          const client = process.cpuUsage(clientBefore);
          const clientSeconds = (client.user + client.system) / 1e6;
          const otherCores = Math.max(0, ((machineBusyMicros() - machineBefore) / 1e6 - cpuSeconds - clientSeconds) / r.seconds);
          if (r.status !== 200) throw new Error(`the export answered ${r.status}: ${extractMessage(r.errorBody ?? '')}`);
          if (r.productEntities < products) throw new Error(`the export held ${r.productEntities} product entities, expected at least ${products}`);
          runs.get(coding)!.push({
            seconds: r.seconds,
            firstByteSeconds: r.firstByteSeconds,
            megabytes: r.bytes / 1e6,
            wireMegabytes: r.wireBytes / 1e6,
            megabytesPerSecond: r.bytes / 1e6 / r.seconds,
            productEntities: r.productEntities,
            cpuSeconds,
            clientCpuShare: clientSeconds / r.seconds,
            otherCores,
          });
          peakRss.set(coding, mib(service.peakRss()));
          log(
            `${label} run ${i + 1}: ${r.seconds.toFixed(2)} s, ${(r.bytes / 1e6).toFixed(0)} MB${coding === 'identity' ? '' : ` (${(r.wireBytes / 1e6).toFixed(1)} MB in ${coding})`}, server CPU ${cpuSeconds.toFixed(2)} s, ` +
              `client CPU ${(clientSeconds / r.seconds).toFixed(2)} cores, other processes ${otherCores.toFixed(2)} cores, peak RSS so far ${mib(service.peakRss()).toFixed(0)} MB`,
          );
        } catch (error) {
          const tail = service.logTail(8);
          failures.set(coding, `${(error as Error).message}\n  server log (${service.logFile}), last lines:\n${tail.replace(/^/gm, '    ')}`);
        }
      }
    }
    const to = monotonicMicros();
    for (const { coding } of started) windows.set(coding, { from, to });
  }

  /**
   * The connector mix (issue 39): the sellers come online, a closed loop of the mix measures its
   * capacity, then open loops run at each share of it (--mix-rates), one after another in one
   * service process, with the per-account fair share on as in production unless
   * ACCOUNT_MAX_IN_FLIGHT is set: what each connector feels includes its share.
   */
  async mix(accounts: readonly MixSellerAccount[]): Promise<MixResult> {
    const o = this.options;
    const env = serviceBaseEnv();
    if (process.env.ACCOUNT_MAX_IN_FLIGHT === undefined) delete env.ACCOUNT_MAX_IN_FLIGHT;
    const base = this.mixHeader(accounts.length, process.env.ACCOUNT_MAX_IN_FLIGHT ?? 'default');
    let window: { from: number; to: number } | undefined;
    try {
      const value = await this.withService(
        'mix',
        async (service) => {
          log(`mix: ${accounts.length} sellers log in and read their keys`);
          const sellers = await connectSellers(service.origin, accounts, o.sellerProducts);
          const target = { origin: service.origin, sellers };
          await checkMixKinds(service.origin, sellers[0]!);
          if (o.warmupSeconds > 0) {
            const warm = await runClosedMix(target, o.connections, o.warmupSeconds);
            if (warm.errors > 0) log(`mix: ${warm.errors} errors in the warm-up: ${warm.kinds.filter((k) => k.errors).map((k) => `${k.id} ${JSON.stringify(k.statuses)}`).join('; ')}`);
          }
          const from = monotonicMicros();
          const phases = await this.mixPhases(service, target);
          window = { from, to: monotonicMicros() };
          return { result: 'ok', ...base, phases } satisfies MixResult;
        },
        env,
      );
      const profile = this.profileOf('mix', window);
      if (profile) console.log('\n' + formatProfile('connector mix (all runs)', profile));
      return value;
    } catch (error) {
      return { result: 'FAILED', note: (error as Error).message, ...base, phases: [] };
    }
  }

  /** What a mix result says of its setup, before its phases. */
  private mixHeader(sellers: number, accountMaxInFlight: string) {
    return {
      sellers,
      productsPerSeller: this.options.sellerProducts,
      perHour: Object.fromEntries(MIX_KINDS.map((k) => [k.id, k.perHour])),
      accountMaxInFlight,
      closedLoopWorkers: this.options.connections,
    };
  }

  /**
   * The mix's measured runs against `server`: a closed loop of --connections workers for the
   * capacity, then an open loop at each of --mix-rates of it, with the server's CPU for each.
   */
  private async mixPhases(server: ServerProcess, target: MixTarget): Promise<MixPhase[]> {
    const o = this.options;
    const phases: MixPhase[] = [];
    const measured = async (label: string, share: number | undefined, run: () => Promise<MixRun>) => {
      const cpuBefore = server.cpuMicros();
      const machineBefore = machineBusyMicros();
      const started = monotonicMicros();
      const r = await run();
      const micros = monotonicMicros() - started;
      const cpu = server.cpuMicros() - cpuBefore;
      const machine = machineBusyMicros() - machineBefore;
      const phase: MixPhase = {
        ...r,
        label,
        ...(share !== undefined ? { share } : {}),
        serverCpuMicrosPerRequest: r.requests ? cpu / r.requests : NaN,
        serverCpuShare: cpu / micros,
        otherCores: Math.max(0, (machine - cpu - r.clientCpuShare * micros) / micros),
        peakRssMb: mib(server.peakRss()),
      };
      phases.push(phase);
      log(`mix ${label} (${server.label}): ${phase.requestsPerSecond.toFixed(0)} req/s${r.targetRate !== undefined ? ` (asked ${r.targetRate.toFixed(0)})` : ''}, ${r.errors} errors, server CPU ${phase.serverCpuMicrosPerRequest.toFixed(0)} µs/request`);
      return phase;
    };
    const capacity = await measured('capacity', undefined, () => runClosedMix(target, o.connections, o.seconds));
    for (const pct of o.mixRates) await measured(`${pct}%`, pct / 100, () => runOpenMix(target, (capacity.requestsPerSecond * pct) / 100, o.seconds));
    return phases;
  }

  /**
   * The same mix against the baseline computing `workMicros` per request (--mix-baseline-us): a
   * server with no pipeline, no database and no garbage to speak of, at the capacity that work
   * gives it. Its latencies are what this machine and this generator allow; the service's beside
   * them are what the service adds.
   */
  async mixBaseline(workMicros: number, sellers: number): Promise<MixResult> {
    const base = this.mixHeader(sellers, 'none (baseline)');
    const server = await startBaseline(path.join(this.workDir, `mix-baseline-${workMicros}us.log`), workMicros);
    this.live.add(server);
    try {
      // The baseline reads no key: any will do, as long as the requests have the connector's shape.
      const target: MixTarget = {
        origin: server.origin,
        checkAnswers: false,
        sellers: Array.from({ length: sellers }, (_, index) => ({
          index,
          credentials: { subscriptionToken: `baseline-${index}`, cookie: 'x'.repeat(64) },
          productIds: ['1'],
          variationsByProduct: [['1']],
          acknowledgedOrderIds: ['1'],
          pendingOrders: 0,
        })),
      };
      if (this.options.warmupSeconds > 0) await runClosedMix(target, this.options.connections, this.options.warmupSeconds);
      return { result: 'ok', ...base, phases: await this.mixPhases(server, target) };
    } catch (error) {
      return { result: 'FAILED', note: (error as Error).message, ...base, phases: [] };
    } finally {
      await server.stop();
      this.live.delete(server);
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.live].map((p) => p.stop()));
  }
}

/** A created entity's answer without what differs between two creates: its key and its times. */
function sameButKeyAndTime(body: string): string {
  const id = /"Id":"(\d+)"/.exec(body)?.[1];
  const keyless = id === undefined ? body : body.split(`(${id}L)`).join('(KEY)').split(`"Id":"${id}"`).join('"Id":"KEY"');
  return keyless.replace(/\\\/Date\(\d+\)\\\//g, 'DATE');
}

function extractMessage(body: string): string {
  const m = /"message"\s*:\s*(?:\{[^}]*"value"\s*:\s*)?"([^"]*)"/.exec(body) ?? /<message[^>]*>([^<]*)</.exec(body);
  return m ? m[1]! : body.slice(0, 200);
}

async function main(): Promise<void> {
  const started = performance.now();
  const options = parseArgs(process.argv.slice(2));
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z');
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-bench-'));
  const profileDir = options.cpuProf ? path.join(RESULTS, 'profiles', `${options.engine}-${stamp}`) : undefined;
  const selected = (id: string) => !options.only || options.only.includes(id);
  const cpu = os.cpus();
  console.log(
    [
      `catalogue-service bench (issue 8) — engine ${options.engine}`,
      `  machine: ${cpu.length} × ${cpu[0]?.model.trim() ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`,
      `  load: autocannon, ${options.connections} keep-alive connections, no pipelining, ${options.warmupSeconds} s warm-up + ${options.seconds} s measured per workload`,
      `  each workload runs against its own \`catalogue serve\` process (LOG_LEVEL ${process.env.BENCH_LOG_LEVEL || process.env.LOG_LEVEL || 'info (service default)'}), on its own copy of the seeded database where the engine allows`,
      `  baseline: a bare node:http process answering 300 bytes of JSON, measured right before each workload with the same load (connections, duration, the connector's request headers)`,
      `  catalogue: ${options.products.toLocaleString('en-US')} products seeded by test/support/catalogue-seed.ts (each: 5 specifics, 3 images, 10 variations with 2 specifics and 1 picture)`,
      options.only?.includes('mix')
        ? `  mix: ${options.sellers} sellers × ${options.sellerProducts} products and 5 orders; a closed loop of ${options.connections} workers for the capacity, then open loops at ${options.mixRates.join(', ')}% of it, latency from each request's scheduled time (own load generator, not autocannon)`
        : '',
      options.cpuProf ? `  --cpu-prof: profiles in ${profileDir}` : '',
    ]
      .filter(Boolean)
      .join('\n'),
  );
  let db: BenchDatabase | undefined;
  let bench: Bench | undefined;
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) return;
    interrupted = true;
    console.error('\ninterrupted: stopping the servers');
    void (async () => {
      await bench?.stopAll();
      await db?.dispose();
      if (!options.keep) fs.rmSync(workDir, { recursive: true, force: true });
      process.exit(130);
    })();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    // The mix has sellers of its own: run alone, it needs no big catalogue.
    const mixOnly = options.only !== undefined && options.only.every((id) => id === 'mix');
    const products = mixOnly ? 100 : options.products;
    let sellers: MixSellerAccount[] = [];
    const seedMore: SeedMore | undefined = options.only?.includes('mix')
      ? async (store) => {
          sellers = await seedSellers(store, options.sellers, options.sellerProducts, log);
        }
      : undefined;
    log(`preparing the ${options.engine} database: ${products.toLocaleString('en-US')} products${seedMore ? `, and ${options.sellers} sellers for the mix` : ''}`);
    db = options.engine === 'sqlite' ? await sqliteDatabase(workDir, products, log, seedMore) : await postgresDatabase(products, log, seedMore);
    log(`database: ${db.description}; durability: ${db.durability.setting}${db.durability.durable ? '' : ' — NOT DURABLE'}`);
    if (db.durability.commitMs !== undefined) {
      log(`one durable SQLite commit on this disk (a one-row INSERT, WAL, synchronous=FULL): ${db.durability.commitMs.toFixed(2)} ms (median), so at most ${(1000 / db.durability.commitMs).toFixed(0)} commits/s one after another`);
    }
    bench = new Bench(options, workDir, profileDir, db);

    const rows: Row[] = [];
    const runWorkload = async (w: Workload) => {
      log(w.title);
      let row = await bench!.workload(w);
      if (w.id === 'post-json' && row.result === 'ok' && !db!.durability.durable) {
        row = { ...row, result: 'FAILED', note: `commits are not durable (${db!.durability.setting})` };
      }
      rows.push(row, ...bench!.takeFloorRows());
      const base = row.baselineRequestsPerSecond !== undefined ? ` (baseline ${row.baselineRequestsPerSecond.toFixed(0)} req/s)` : '';
      log(`${w.id}: ${row.result}${row.requestsPerSecond !== undefined ? `, ${row.requestsPerSecond.toFixed(0)} req/s${base}` : ''}${row.note && row.result !== 'ok' ? ` — ${row.note}` : ''}`);
    };
    for (const w of WORKLOADS) if (!w.writes && selected(w.id)) await runWorkload(w);
    // Before the writes: on PostgreSQL every process shares the database, and the export is of
    // the seeded catalogue only.
    // The compressed exports are asked for by name only (each adds a service process and three
    // exports to a run); with them, all the exports run in turns (Bench.exports).
    const exportCodings = (['identity', 'gzip', 'br'] as const).filter((c) => (c === 'identity' ? selected('export') : options.only?.includes(`export-${c}`)));
    let exported: ExportResult | undefined;
    const compressedExports: ExportResult[] = [];
    if (exportCodings.length > 0) {
      log(`full export of ${db.products.toLocaleString('en-US')} products in ${exportCodings.join(', ')} × ${options.exportRuns}${exportCodings.length > 1 ? ', in turns' : ''}`);
      for (const e of await bench.exports(exportCodings)) {
        if (e.coding === 'identity') exported = e;
        else compressedExports.push(e);
      }
    }
    for (const w of WORKLOADS) if (w.writes && selected(w.id)) await runWorkload(w);
    let mix: MixResult | undefined;
    let mixBaseline: MixResult | undefined;
    if (options.only?.includes('mix')) {
      log(`the connector mix: ${options.sellers} sellers, closed loop for the capacity, then open loops at ${options.mixRates.join(', ')}% of it`);
      mix = await bench.mix(sellers);
      if (options.mixBaselineMicros > 0) {
        log(`the connector mix against the baseline computing ${options.mixBaselineMicros} µs per request`);
        mixBaseline = await bench.mixBaseline(options.mixBaselineMicros, sellers.length);
      }
    }
    if (options.calibrate) {
      if (bench.baselines.length === 0) await bench.baseline('the calibration');
      for (const micros of CALIBRATION_MICROS) rows.push(await bench.calibration(micros));
    }
    await bench.stopBaseline();
    const baseline = summariseBaselines(bench.baselines);

    // The rows of the floor and the calibration are for comparison: the targets are the service's.
    const targets = evaluateTargets(options.engine, rows.filter((r) => !r.id.startsWith('floor-') && !r.id.startsWith('calibrate-')), exported, db.durability.commitMs);
    const seconds = (performance.now() - started) / 1000;
    if (rows.length > 0) {
      console.log(`\nResults (${options.engine}; ${options.connections} connections, ${options.seconds} s each; ratios to the baseline's req/s and CPU µs per request):\n`);
      console.log(formatTable(baseline, rows));
    }
    const againstFloor = formatFloorComparison(rows);
    if (againstFloor) console.log('\n' + againstFloor);
    if (exported) console.log('\n' + formatExport(exported));
    for (const e of compressedExports) console.log('\n' + formatExport(e) + (exported ? '\n' + formatCompressedExport(exported, e) : ''));
    if (rows.length > 0 || exported || compressedExports.length > 0) {
      console.log(`\nTargets (${options.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}; printed, not asserted):`);
      console.log(formatTargets(targets));
    }
    const mixGoals = mix ? evaluateMixGoals(mix) : [];
    if (mix) {
      console.log(`\nConnector mix (${options.engine}; ${mix.sellers} sellers × ${mix.productsPerSeller} products; fair share ACCOUNT_MAX_IN_FLIGHT=${mix.accountMaxInFlight}; latencies from each request's scheduled time):`);
      if (mix.result !== 'ok') console.log(`  FAILED: ${mix.note}`);
      else {
        console.log(formatMixPhases(mix));
        for (const phase of mix.phases) console.log(`\n${phase.mode === 'closed' ? 'capacity (closed loop: latency from the send)' : `open loop at ${phase.label} of capacity`}:\n${formatMixKinds(phase)}`);
        console.log(`\nMix goals at 50% of capacity (printed, not asserted):\n${formatMixGoals(options.engine, mixGoals)}`);
      }
    }
    if (mixBaseline) {
      console.log(`\nThe same mix against the baseline computing ${options.mixBaselineMicros} µs per request (no pipeline, no database: what this machine and generator allow at that capacity):`);
      if (mixBaseline.result !== 'ok') console.log(`  FAILED: ${mixBaseline.note}`);
      else {
        console.log(formatMixPhases(mixBaseline));
        for (const phase of mixBaseline.phases.filter((p) => p.mode === 'open')) console.log(`\nbaseline, open loop at ${phase.label} of its capacity:\n${formatMixKinds(phase)}`);
      }
    }
    const profiled = [
      ...rows.filter((r) => r.profile).map((r) => [r.title, r.profile!] as const),
      ...[exported, ...compressedExports].filter((e) => e?.profile).map((e) => [e!.coding === 'identity' ? 'full export' : `full export in ${e!.coding}`, e!.profile!] as const),
    ];
    if (profiled.length) {
      console.log('');
      for (const [title, p] of profiled) console.log(formatProfile(title, p) + '\n');
      console.log(`(profiles for Chrome DevTools / speedscope in ${profileDir})`);
    }
    console.log(`\nbench finished in ${(seconds / 60).toFixed(1)} min (${seconds.toFixed(0)} s; seeding ${db.seedSeconds.toFixed(0)} s)`);

    const resultsDir = options.resultsDir ?? RESULTS;
    fs.mkdirSync(resultsDir, { recursive: true });
    const document = {
      engine: options.engine,
      date: new Date().toISOString(),
      machine: { cpus: cpu.length, cpuModel: cpu[0]?.model.trim(), memoryGiB: os.totalmem() / 2 ** 30, node: process.version, platform: `${os.platform()} ${os.release()}` },
      settings: {
        connections: options.connections,
        pipelining: 1,
        warmupSeconds: options.warmupSeconds,
        measuredSeconds: options.seconds,
        products: options.products,
        exportRuns: options.exportRuns,
        cpuProfiled: options.cpuProf,
        logLevel: process.env.BENCH_LOG_LEVEL || process.env.LOG_LEVEL || 'info',
        loadGenerator: `autocannon ${(require('autocannon/package.json') as { version: string }).version}`,
      },
      database: { description: db.description, durability: db.durability, seedSeconds: db.seedSeconds },
      baseline,
      baselineRuns: bench.baselines,
      workloads: rows,
      export: exported,
      compressedExports,
      targets,
      ...(mix ? { mix: { ...mix, goals: mixGoals } } : {}),
      ...(mixBaseline ? { mixBaseline: { workMicros: options.mixBaselineMicros, ...mixBaseline } } : {}),
      runSeconds: seconds,
    };
    const file = path.join(resultsDir, `${options.engine}-${stamp}.json`);
    fs.writeFileSync(file, JSON.stringify(document, null, 2) + '\n');
    fs.writeFileSync(path.join(resultsDir, `latest-${options.engine}.json`), JSON.stringify(document, null, 2) + '\n');
    console.log(`results: ${path.relative(process.cwd(), file)} (and latest-${options.engine}.json)`);
    const failed = rows.some((r) => r.result === 'FAILED') || exported?.result === 'FAILED' || compressedExports.some((e) => e.result === 'FAILED') || mix?.result === 'FAILED';
    if (failed) {
      console.log('\nSome workloads FAILED (see the result column): their figures are not valid.');
      process.exitCode = 1;
    }
  } finally {
    await bench?.stopAll();
    await db?.dispose();
    if (options.keep) console.log(`work directory kept: ${workDir}`);
    else fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  if (error instanceof BenchSetupError) {
    console.error(`bench: ${error.message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
