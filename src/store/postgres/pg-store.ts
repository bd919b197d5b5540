/**
 * The PostgreSQL adapter (node-pg with a Pool). Every read and write of an account is one
 * transaction that also sets the tenant for row-level security (a second fence behind the
 * account_id in every statement):
 * - read: REPEATABLE READ READ ONLY, so every statement sees one snapshot; a read of one
 *   statement (ReadExtent 'one') is an implicit transaction instead, with its tenant setting
 *   (see OneStatementRead);
 * - write: READ COMMITTED, serialised per account by a transaction-scoped advisory lock, so the
 *   rule checks (counts, uniqueness) that run before an insert hold exactly across any number of
 *   processes, as SQLite's single writer guarantees in one; resolved only after COMMIT returned
 *   (synchronous_commit stays on). The writes of one account that arrive together share that
 *   transaction (group commit, as SQLite's writer does): each runs in its own SAVEPOINT, so one
 *   that fails is undone alone, and all are answered after the one COMMIT;
 * - directory statements (auth tables) run with no tenant set.
 * Reads of one statement share a few connections instead (./shared-reads.ts).
 * close() waits for the transactions in flight, then ends the pool.
 *
 * A failover (./connection-loss.ts): a connection that breaks is dropped from the pool and a
 * new one made for the next request; a request that finds no server waits up to failoverWaitMs
 * for one; what was lost on the way is a DatabaseUnreachableError (a 503 with Retry-After), and
 * a COMMIT whose answer was lost is reported as of unknown outcome, never as done.
 */
import type { Pool, PoolClient, PoolConfig } from 'pg';
import pg from './pg-driver';
import { IdsAhead, type MigrationReport, type ReadExtent, type ReadGuard, type RunResult, type SqlExecutor, type SqlValue, type Store, type StoreStats, type WriteOptions } from '../store';
import { schemaGaps, type TableDef } from '../schema';
import { pgCodec, pgTypeParsers } from './values';
import { pgDialect } from './dialect';
import { ID_SEQUENCE, TENANT_SETTING, migratePostgres, postgresTables } from './ddl';
import { ConnectionExecutor } from './executor';
import { OneStatementRead, type ReadSetup } from './one-statement-read';
import { holdWrites } from './held-writes';
import { SharedReadConnections } from './shared-reads';
import { runJobs, sendGuards, type JobOutcome, type WriteJob } from './write-batch';
import { StatementCache } from './statements';
import { ConfigurationError, DatabaseUnavailableError, DatabaseUnreachableError, StoreBusyError, type ConnectionLostAt } from '../errors';
import { asUnreachable, describe, isConnectionLoss, lostDuringCommit } from './connection-loss';
import { compareIds } from '../../odata/entity';

export interface PostgresOptions {
  /** The APP role's connection URL: it serves every request. */
  readonly url: string;
  /** The OWNER role's URL for migrations; without it the app role migrates (and owns the tables). */
  readonly ownerUrl?: string | undefined;
  readonly tables: readonly TableDef[];
  /** Connections at most in this process's pool. */
  readonly poolSize?: number;
  /** Longest a statement may run before the server cancels it (0: no limit). */
  readonly statementTimeoutMs?: number;
  /** The same for the statements of a read (READ_STATEMENT_TIMEOUT_MS), set by the read's setup (0: no limit). */
  readonly readStatementTimeoutMs?: number;
  /**
   * Named statements prepared per connection (the default). False serves through a pooler in
   * transaction mode (pgbouncer): statements go unnamed, and the session settings travel with
   * each transaction instead of the connection's startup (see sessionSettings).
   */
  readonly preparedStatements?: boolean;
  /** Longest wait for a pooled connection when all are busy (then StoreBusyError: a 503). */
  readonly poolWaitMs?: number;
  /** How long a finished read's COMMIT may wait for the connection's next use (see LeftOpen). */
  readonly readEndWaitMs?: number;
  /** How long a batch of writes runs before it leaves the rest to the next (DEFAULT_BATCH_TIME_BUDGET_MS). */
  readonly batchTimeBudgetMs?: number;
  /**
   * Pooled connections that reads of one statement share (./shared-reads.ts); by default one per
   * four of the pool, at most two, and none behind a pooler (it would hand each Sync's
   * transaction to a server connection of its choosing, and the reads share nothing then).
   */
  readonly sharedReadConnections?: number;
  /**
   * How long a request waits for a server to take a connection when none does (refused, closed
   * at once by a balancer with no primary behind it, starting up) before it is answered 503:
   * DATABASE_FAILOVER_WAIT_MS. A switch of primary shorter than this costs waiting, not errors.
   */
  readonly failoverWaitMs?: number;
}

function sharedReadConnectionsOf(options: PostgresOptions): number {
  if (options.sharedReadConnections !== undefined) return options.sharedReadConnections;
  if (behindPooler(options)) return 0;
  return Math.min(2, Math.floor((options.poolSize ?? DEFAULT_POOL_SIZE) / 4));
}

/**
 * A finished read's COMMIT waits this long for the connection's next transaction to take it
 * along, then goes on its own: short enough that the snapshot and its table locks are not held
 * noticeably longer, long enough that under load nearly every read's end rides along.
 */
export const DEFAULT_READ_END_WAIT_MS = 5;

const DEFAULT_POOL_SIZE = 10;

/** The default wait for a pooled connection: short, so that overload answers 503 at once. */
export const DEFAULT_POOL_WAIT_MS = 3_000;

/**
 * The server-side limit on each statement of a read (READ_STATEMENT_TIMEOUT_MS): a page of a
 * stream is one FETCH, so an export is held to it page by page, not as a whole. Writes keep
 * statementTimeoutMs (DATABASE_STATEMENT_TIMEOUT_MS).
 */
export const DEFAULT_READ_STATEMENT_TIMEOUT_MS = 5_000;

/** The default of failoverWaitMs: short, so that clients hear back well before their own timeouts. */
export const DEFAULT_FAILOVER_WAIT_MS = 3_000;

/** Pauses between attempts to connect while no server takes connections (then the last, repeated). */
const RECONNECT_PAUSES_MS = [50, 100, 200, 400, 500];

/** What node-pg's pool rejects a waiting connect() with when connectionTimeoutMillis ran out. */
const POOL_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

/**
 * Writes of one account per shared COMMIT at most: bounds the latency one commit adds to the
 * first write in it, and how long the account's lock is held at a time.
 */
const MAX_JOBS_PER_COMMIT = 64;
/**
 * Once a batch has run this long, its remaining writes wait for the next one: every write of a
 * batch is answered after its COMMIT, so without a bound one slow write (a large deep insert)
 * would delay every write that happened to be queued with it, not only those behind it.
 */
const DEFAULT_BATCH_TIME_BUDGET_MS = 20;
/** Ids drawn ahead for one batch at most (WriteOptions.newIds); a write that takes more asks again. */
const MAX_IDS_AHEAD = 4_000;

/** Named statements kept prepared per connection. */
const STATEMENTS_PER_CONNECTION = 300;

const BEGIN_READ = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';
const SET_TENANT = `SELECT set_config('${TENANT_SETTING}', ?, true)`;
/** Sets the tenant and waits for the account's write lock, in one round trip. */
const SET_TENANT_AND_LOCK = `SELECT set_config('${TENANT_SETTING}', ?, true), pg_advisory_xact_lock(CAST(? AS bigint))`;
/** That many values of the id sequence (nextIds, and WriteOptions.newIds drawn with a batch's first statements). */
const DRAW_IDS = `SELECT nextval('"${ID_SEQUENCE}"') AS id FROM generate_series(1, CAST(? AS integer))`;

/** The ids DRAW_IDS answered, in ascending order. */
const drawnIds = (rows: readonly { id: bigint }[]): bigint[] => rows.map((r) => r.id).sort(compareIds);
/** A directory transaction sets no tenant; behind a pooler it sets the session settings alone. */
const SET_NOTHING = `SELECT 1`;

const behindPooler = (options: PostgresOptions) => options.preparedStatements === false;

function connectionConfig(url: string, options: PostgresOptions): PoolConfig {
  return {
    connectionString: url,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    // A request that waits this long for a free connection is answered 503 instead of queueing.
    connectionTimeoutMillis: options.poolWaitMs ?? DEFAULT_POOL_WAIT_MS,
    application_name: 'catalogue-service',
    // ISO dates in UTC: the timestamp parser (./values.ts) reads exactly that. A pooler refuses
    // these startup parameters (pgbouncer: "unsupported startup parameter"), and would not keep
    // them anyway: behind one they are set per transaction (sessionSettings).
    ...(behindPooler(options)
      ? {}
      : { options: '-c datestyle=ISO,MDY -c timezone=UTC', ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}) }),
    types: pgTypeParsers,
    // A server that vanished without closing the connection (a machine that died) is noticed by
    // the operating system's keepalive probes rather than never.
    keepAlive: true,
    // Statements are written to the server without waiting for the answer of the one before
    // (node-pg's pipeline mode): a transaction's BEGIN, its tenant setting and its first
    // statement travel in one round trip; the server still runs them in order.
    pipeline: true,
  } as PoolConfig;
}

/**
 * Behind a transaction-mode pooler a session setting would stay on whichever server connection
 * ran it, for the next client of that connection, and this client's next transaction may run on
 * another. So every transaction sets what the connection's startup sets otherwise, locally
 * (set_config(…, true) ends with the transaction), in the statement that sets the tenant.
 * Directory statements outside a transaction read timestamps in the server's DateStyle, which
 * the start checks (checkServerDateStyle).
 */
function sessionSettings(options: PostgresOptions): string {
  if (!behindPooler(options)) return '';
  return `, set_config('DateStyle', 'ISO, MDY', true), set_config('TimeZone', 'UTC', true), set_config('statement_timeout', '${options.statementTimeoutMs ?? 0}', true)`;
}

export class PostgresStore implements Store {
  readonly engine = 'postgres' as const;
  readonly codec = pgCodec;
  readonly dialect = pgDialect;
  readonly readBudgetMs: number;
  readonly directory: SqlExecutor;
  private readonly pool: Pool;
  private readonly caches = new WeakMap<PoolClient, StatementCache>();
  /** What every transaction sets besides the tenant ('' unless behind a pooler). */
  private readonly settings: string;
  /** What every read's setup sets besides the tenant: the settings and the read's statement_timeout. */
  private readonly readSettings: string;
  private inFlight = 0;
  private drained: (() => void) | undefined;
  private closing: Promise<void> | undefined;
  /** Per account with writes under way: the writes waiting for the next shared COMMIT. */
  private readonly writeQueues = new Map<number, WriteJob[]>();
  /** Told after every COMMIT of queued writes (the metrics, the webhook worker). */
  private readonly commitListeners: ((writes: number) => void)[] = [];
  /** Connections back in the pool whose last read has not been ended yet (see leaveOpen). */
  private readonly leftOpen = new WeakMap<PoolClient, LeftOpen>();
  /** Where reads of one statement run, or undefined where they take a pooled connection each. */
  private readonly sharedReads: SharedReadConnections | undefined;
  /** The Retry-After of a DatabaseUnreachableError: about as long as a request waits for a server. */
  private readonly retryAfterSeconds: number;

  constructor(private readonly options: PostgresOptions) {
    this.pool = new pg.Pool(connectionConfig(options.url, options));
    const shared = sharedReadConnectionsOf(options);
    this.sharedReads = shared > 0 ? new SharedReadConnections(shared, () => this.connect(), behindPooler(options) ? undefined : STATEMENTS_PER_CONNECTION) : undefined;
    this.settings = sessionSettings(options);
    this.readBudgetMs = options.readStatementTimeoutMs ?? DEFAULT_READ_STATEMENT_TIMEOUT_MS;
    // A read's statements get the read budget, set with its tenant (until its transaction ends).
    this.readSettings = `${this.settings}, set_config('statement_timeout', '${this.readBudgetMs}', true)`;
    // An idle connection that the server drops (restart, admin) reports here; the pool discards
    // it and opens a new one when needed. Without a listener the process would exit.
    this.pool.on('error', () => undefined);
    this.directory = new DirectoryExecutor(this);
    this.retryAfterSeconds = Math.max(1, Math.ceil((options.failoverWaitMs ?? DEFAULT_FAILOVER_WAIT_MS) / 1000));
  }

  /**
   * A failure of the store's work as its caller gets it: a lost connection as a
   * DatabaseUnreachableError. 'commit': the work was a statement that commits on its own (a
   * directory write), so a break after it was sent leaves its outcome unknown.
   */
  unreachable(error: unknown, at: ConnectionLostAt = 'transaction', writing = false): unknown {
    if (at === 'commit') return lostDuringCommit(error, this.retryAfterSeconds) ?? asUnreachable(error, 'transaction', this.retryAfterSeconds, true);
    return asUnreachable(error, at, this.retryAfterSeconds, writing);
  }

  async migrate(): Promise<MigrationReport> {
    const appRole = await reachable(this.options.url, () =>
      this.withConnection(async (client) => (await client.query<{ role: string }>('SELECT current_user AS role')).rows[0]!.role),
    );
    if (behindPooler(this.options)) await this.checkServerDateStyle();
    if (!this.options.ownerUrl) {
      try {
        return await this.withConnection((client) => migratePostgres(client, this.options.tables, undefined));
      } catch (error) {
        if ((error as { code?: unknown }).code !== '42501') throw error;
        throw new ConfigurationError(
          `The role of DATABASE_URL (${appRole}) may not change the schema (${(error as Error).message}). ` +
            'Set DATABASE_OWNER_URL to the role that owns the tables, so that it runs the migrations.',
        );
      }
    }
    const owner = new pg.Client({ ...connectionConfig(this.options.ownerUrl, this.options), statement_timeout: 0 });
    await reachable(this.options.ownerUrl, () => owner.connect());
    try {
      const ownerRole = (await owner.query<{ role: string }>('SELECT current_user AS role')).rows[0]!.role;
      return await migratePostgres(owner, this.options.tables, ownerRole === appRole ? undefined : appRole);
    } finally {
      await owner.end();
    }
  }

  /**
   * Behind a pooler, statements outside a transaction read timestamps in the server's DateStyle
   * (the connection cannot set its own): refuse to start on one the timestamp parser cannot read.
   */
  private async checkServerDateStyle(): Promise<void> {
    const style = await this.withConnection(async (client) => (await client.query<{ DateStyle: string }>('SHOW DateStyle')).rows[0]!.DateStyle);
    if (!/^ISO\b/i.test(style)) {
      throw new ConfigurationError(
        `DATABASE_PREPARED_STATEMENTS=false (behind a pooler) needs the server's DateStyle to be ISO, not '${style}': ` +
          `ALTER ROLE <app role> SET DateStyle = 'ISO, MDY' (or set datestyle in postgresql.conf).`,
      );
    }
  }

  read<T>(accountId: number, fn: (tx: SqlExecutor) => Promise<T>, guard?: ReadGuard, extent: ReadExtent = 'any'): Promise<T> {
    const setup = this.readSetup(accountId, guard);
    const read = extent === 'one' ? this.readOneStatement(setup, fn) : this.transaction(BEGIN_READ, setup.sql, setup.params, 'pipelined', fn, setup.check);
    return read.catch((error: unknown) => {
      throw this.unreachable(error);
    });
  }

  /** The statement that sets a read's tenant: from the guard's own row when there is a guard. */
  private readSetup(accountId: number, guard: ReadGuard | undefined): ReadSetup {
    if (!guard) return { sql: SET_TENANT + this.readSettings, params: [String(accountId)] };
    // A refused check leaves the tenant unset, so the read's first statement, already on its
    // way, finds no row under row-level security either.
    const sql = `SELECT set_config('${TENANT_SETTING}', CAST(g.account_id AS text), true) AS tenant, g.*${this.readSettings} FROM (${guard.sql}) g`;
    return { sql, params: guard.params, check: (row) => guard.check(row) };
  }

  /**
   * A read of one statement: sent with its setup in one implicit transaction (OneStatementRead),
   * one node-pg query and no BEGIN or COMMIT. A refused check is the error it reports, even
   * when fn failed first or ran no statement.
   */
  private async readOneStatement<T>(setup: ReadSetup, fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const read = async (client: PoolClient, cache: StatementCache | undefined) => {
      const tx = new OneStatementRead(client, cache, setup);
      let value: T;
      try {
        value = await fn(tx);
      } catch (failure) {
        throw (await tx.settled().then(() => undefined, (refusal: unknown) => refusal)) ?? failure;
      }
      await tx.settled();
      return value;
    };
    if (this.sharedReads) {
      if (this.closing) throw new Error('The store is closed');
      this.inFlight++;
      try {
        const shared = await this.sharedReads.run(read);
        if (shared) return shared.value;
      } finally {
        if (--this.inFlight === 0) this.drained?.();
      }
    }
    return this.withConnection(read);
  }

  write<T>(accountId: number, fn: (tx: SqlExecutor) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    if (this.closing) return Promise.reject(new Error('The store is closed'));
    // Counted from now: close() waits for writes that are queued as for those that run.
    this.inFlight++;
    return new Promise<T>((resolve, reject) => {
      const settled = () => {
        if (--this.inFlight === 0) this.drained?.();
      };
      const job: WriteJob = {
        run: fn,
        guard: options.guard,
        newIds: Math.max(0, Math.min(MAX_IDS_AHEAD, Math.floor(options.newIds ?? 0))),
        repeatable: options.repeatable === true,
        resolve: (value) => {
          settled();
          resolve(value as T);
        },
        reject: (error) => {
          settled();
          reject(error);
        },
      };
      const queue = this.writeQueues.get(accountId);
      // A batch of this account is running or about to: this write goes with the next one.
      if (queue) {
        queue.push(job);
        return;
      }
      this.writeQueues.set(accountId, [job]);
      // The first write of a turn waits for the check phase: the writes of the same account that
      // the same poll phase read are queued by then and share its COMMIT.
      setImmediate(() => void this.drainAccount(accountId));
    });
  }

  /** Commits one batch of the account's queue; the next batch follows in a later turn. */
  private async drainAccount(accountId: number): Promise<void> {
    const queue = this.writeQueues.get(accountId)!;
    try {
      const left = await this.commitBatch(accountId, queue.splice(0, MAX_JOBS_PER_COMMIT));
      // Writes the time budget left out go first in the next batch, in their order.
      queue.unshift(...left);
    } finally {
      if (queue.length > 0) setImmediate(() => void this.drainAccount(accountId));
      else this.writeQueues.delete(accountId);
    }
  }

  /**
   * One transaction for the batch: BEGIN, the tenant and the account's lock, then each write in
   * its own SAVEPOINT, one after the other (each sees the writes before it), then one COMMIT.
   * Answers the writes left for the next batch (DEFAULT_BATCH_TIME_BUDGET_MS).
   * Every write is answered only after the COMMIT returned; if the transaction fails (the
   * COMMIT, the connection, the pool's wait), every write of the batch fails and none is kept.
   */
  private async commitBatch(accountId: number, queued: readonly WriteJob[]): Promise<WriteJob[]> {
    let outcomes: JobOutcome[] = [];
    // Until the jobs have run, none is known to be left out: a failure fails them all.
    let ran = queued.length;
    try {
      await this.withConnection(
        async (client, cache, discard) => {
          const tx = new ConnectionExecutor(client, cache, true);
          sendTogether(client);
          const begun = client.query('BEGIN');
          const locked = tx.query(SET_TENANT_AND_LOCK + this.settings, [String(accountId), accountId]);
          // Sent behind the lock, before the prelude is set: each verdict is awaited in its job's turn.
          const verdicts = sendGuards(tx, queued);
          tx.after(Promise.all([begun, locked]));
          // The ids the batch's writes expect, drawn in the same round trip, once the lock is held.
          const idsWanted = Math.min(MAX_IDS_AHEAD, queued.reduce((sum, job) => sum + job.newIds, 0));
          const drawn = idsWanted > 0 ? tx.query(DRAW_IDS, [idsWanted]) : undefined;
          // It carries the lock's answer too (pipelined: see ConnectionExecutor.query) and is
          // awaited below; marked handled so that a failure is never left unobserved meanwhile.
          drawn?.catch(() => undefined);
          try {
            // The first write starts once the account's lock is held, so that everything it does
            // (reading the clock for timestamps included) happens in the order writes are serialised.
            await tx.settled();
            if (drawn) tx.idsAhead = new IdsAhead(drawnIds((await drawn).rows));
            outcomes = await runJobs(tx, queued, verdicts, this.options.batchTimeBudgetMs ?? DEFAULT_BATCH_TIME_BUDGET_MS);
            ran = outcomes.length;
            await commit(client, tx, this.retryAfterSeconds);
          } catch (error) {
            tx.end();
            // A connection to a standby (reached before the balancer noticed a switch) stays
            // usable for reads, yet no write of this process belongs on it.
            if (isConnectionLoss(error, true)) discard(error as Error);
            await client.query('ROLLBACK').catch((rollbackError: Error) => discard(rollbackError));
            throw error;
          }
        },
        { draining: true },
      );
    } catch (error) {
      // The writes that ran are lost with the transaction (or, after a COMMIT whose answer was
      // lost, of unknown outcome); those left out never ran.
      const failure = this.unreachable(error, 'transaction', true);
      for (const job of queued.slice(0, ran)) job.reject(failure);
      return queued.slice(ran);
    }
    const batch = queued.slice(0, outcomes.length);
    for (const listener of this.commitListeners) listener(batch.length);
    batch.forEach((job, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.value);
    });
    return queued.slice(outcomes.length);
  }

  writeDirectory<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.transaction('BEGIN', this.settings ? SET_NOTHING + this.settings : undefined, [], 'pipelined', fn).catch((error: unknown) => {
      throw this.unreachable(error, 'transaction', true);
    });
  }

  /**
   * Whether the server this process reaches takes writes: false on a standby (the old primary
   * of a failover, reached before the balancer noticed). One attempt to connect, no failover
   * wait: a readiness check answers at once. Throws DatabaseUnreachableError when none answers.
   */
  async acceptsWrites(): Promise<boolean> {
    try {
      return await this.withConnection(
        async (client) => !(await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')).rows[0]!.standby,
        { waitForServer: false },
      );
    } catch (error) {
      throw this.unreachable(error, 'connect');
    }
  }

  async missingSchema(): Promise<string[]> {
    const rows = await this.directory.all<{ name: string }>(
      `SELECT table_name || '.' || column_name AS name FROM information_schema.columns WHERE table_schema = current_schema()`,
    );
    return schemaGaps(postgresTables(this.options.tables), new Set(rows.map((r) => r.name)));
  }

  /** The pool's own public counts (node-pg's totalCount, idleCount, waitingCount). */
  stats(): StoreStats {
    const { totalCount, idleCount, waitingCount } = this.pool;
    return { writeQueueDepth: 0, pool: { inUse: totalCount - idleCount, idle: idleCount, waiting: waitingCount } };
  }

  observeCommits(listener: (writes: number) => void): void {
    this.commitListeners.push(listener);
  }

  async nextId(tx: SqlExecutor): Promise<bigint> {
    const ahead = tx.idsAhead?.take();
    if (ahead !== undefined) return ahead;
    const row = await tx.get<{ id: bigint }>(`SELECT nextval('"${ID_SEQUENCE}"') AS id`);
    if (!row) throw new Error('The id sequence is missing: run the migrations');
    return row.id;
  }

  async nextIds(tx: SqlExecutor, count: number): Promise<bigint[]> {
    if (count <= 0) return [];
    // Ids are taken in ascending order within a transaction: those drawn ahead first (a deep
    // insert's, drawn with its BEGIN), then as many more as are missing, which come after them.
    const ahead = tx.idsAhead?.takeUpTo(count) ?? [];
    if (ahead.length === count) return ahead;
    return [...ahead, ...drawnIds(await tx.all<{ id: bigint }>(DRAW_IDS, [count - ahead.length]))];
  }

  /**
   * One pooled connection for fn, counted as in flight, with its named statements (none behind a
   * pooler). It goes back to the pool with evicted statements deallocated, or is discarded when fn reports it unusable (node-pg's pool also
   * discards a connection that the server or the network dropped).
   */
  async withConnection<T>(
    fn: (client: PoolClient, statements: StatementCache | undefined, discard: (why: Error) => void) => Promise<T>,
    /**
     * draining: a batch of writes queued before close(): it still runs, and close() waits for it.
     * waitForServer: false makes one attempt to connect, without the failover wait.
     */
    options: { readonly draining?: boolean; readonly waitForServer?: boolean } = {},
  ): Promise<T> {
    if (this.closing && !options.draining) throw new Error('The store is closed');
    this.inFlight++;
    try {
      const client = await this.connect(options.waitForServer ?? true);
      let cache = this.caches.get(client);
      if (!cache && !behindPooler(this.options)) {
        cache = new StatementCache(STATEMENTS_PER_CONNECTION);
        this.caches.set(client, cache);
      }
      let broken: Error | undefined;
      // A checked-out connection that the server drops (a crash, a restart) emits 'error' on
      // the client as well as failing the statement in flight; unheard, it would end the process.
      const dropped = (error: Error) => (broken = error);
      client.on('error', dropped);
      this.endLeftOpen(client);
      try {
        return await fn(client, cache, dropped);
      } finally {
        if (!broken && cache) await cache.deallocateEvicted(client).catch(dropped);
        client.off('error', dropped);
        client.release(broken);
      }
    } finally {
      if (--this.inFlight === 0) this.drained?.();
    }
  }

  /**
   * A connection from the pool: a StoreBusyError (503) after the longest wait for a free one.
   * While no server takes a new connection (a failover under way), attempts are repeated for up
   * to failoverWaitMs, then it is a DatabaseUnreachableError (503): nothing was sent yet, so
   * trying again is safe.
   */
  private async connect(waitForServer = true): Promise<PoolClient> {
    const deadline = performance.now() + (waitForServer ? (this.options.failoverWaitMs ?? DEFAULT_FAILOVER_WAIT_MS) : 0);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.pool.connect();
      } catch (error) {
        if ((error as Error).message === POOL_TIMEOUT_MESSAGE) throw new StoreBusyError(this.options.poolWaitMs ?? DEFAULT_POOL_WAIT_MS);
        if (!isConnectionLoss(error)) throw error;
        const left = deadline - performance.now();
        if (left <= 0 || this.closing) throw new DatabaseUnreachableError('connect', this.retryAfterSeconds, describe(error));
        const pause = RECONNECT_PAUSES_MS[Math.min(attempt, RECONNECT_PAUSES_MS.length - 1)]!;
        await new Promise((resolve) => setTimeout(resolve, Math.min(left, pause)));
      }
    }
  }

  /**
   * BEGIN and the setup (tenant, lock) are sent at once. 'pipelined': not awaited here; the
   * executor sends fn's first statement right behind them and waits for all three together (one
   * round trip), and uses its answer only if BEGIN and the setup succeeded. The server runs them in order, so
   * no statement of fn runs before the tenant is set (and, for a write, the lock is held).
   */
  private transaction<T>(
    begin: string,
    setup: string | undefined,
    setupParams: readonly SqlValue[],
    /** 'awaited': fn starts only after BEGIN and the setup answered (one round trip of their own). */
    start: 'pipelined' | 'awaited',
    fn: (tx: SqlExecutor) => Promise<T>,
    /** Judges the setup's row (a ReadGuard): fn's statements are answered only if it accepts. */
    checkSetup?: (row: Record<string, unknown> | undefined) => void,
  ): Promise<T> {
    return this.withConnection(async (client, cache, discard) => {
      const tx = new ConnectionExecutor(client, cache, true);
      // The statements sent in this turn of the event loop (BEGIN, the setup, fn's first) leave
      // in one write to the socket rather than one system call each.
      sendTogether(client);
      const begun = client.query(begin);
      const answered = setup ? tx.query(setup, setupParams) : undefined;
      const checked = answered && checkSetup ? answered.then((result) => checkSetup(result.rows[0])) : undefined;
      checked?.catch(() => undefined);
      const setupDone = checked ?? answered;
      tx.after(setupDone ? Promise.all([begun, setupDone]) : begun);
      try {
        if (start === 'awaited') await tx.settled();
        const value = await fn(tx);
        // A read has nothing to make durable: its end (the COMMIT, and a cursor's CLOSE) can
        // travel with the connection's next statements instead of costing a write of its own.
        if (begin === BEGIN_READ) await this.leaveOpen(client, tx);
        else await commit(client, tx, this.retryAfterSeconds);
        return value;
      } catch (failure) {
        // fn may fail before its first statement took the check's answer (a query it refused):
        // a refused check is then the error to report, so nothing but it reaches a stranger.
        const refused = checked ? await checked.then(() => undefined, (error: unknown) => error) : undefined;
        const error = refused ?? failure;
        tx.end();
        if (isConnectionLoss(error, begin !== BEGIN_READ)) discard(error as Error);
        // After a failed COMMIT there is no transaction left, and ROLLBACK only warns. A ROLLBACK
        // that fails leaves the connection in an unknown state: it is not reused.
        await client.query('ROLLBACK').catch((rollbackError: Error) => discard(rollbackError));
        throw error;
      }
    });
  }

  /**
   * Returns a finished read's connection with its transaction still open: the statements that
   * end it are sent first by the connection's next user (endLeftOpen, in the same write as that
   * user's own), or after readEndWaitMs by a timer. Nothing can run inside the old snapshot:
   * every use of a pooled connection goes through withConnection, which ends it first.
   */
  private async leaveOpen(client: PoolClient, tx: ConnectionExecutor): Promise<void> {
    const ending = [...tx.takeDeferred(), 'COMMIT'];
    // The guard's answer (fn may have run no statement) decides the read's outcome.
    await tx.settled();
    tx.end();
    const timer = setTimeout(() => this.endLeftOpen(client), this.options.readEndWaitMs ?? DEFAULT_READ_END_WAIT_MS);
    timer.unref();
    this.leftOpen.set(client, { statements: ending, timer });
  }

  /**
   * Sends what ends the read left open on this connection, if any. Its outcome does not
   * matter to anyone (the read was answered; it wrote nothing); a connection that fails it fails
   * the statements sent behind it too, and their callers learn that.
   */
  private endLeftOpen(client: PoolClient): void {
    const left = this.leftOpen.get(client);
    if (!left) return;
    this.leftOpen.delete(client);
    clearTimeout(left.timer);
    sendTogether(client);
    for (const sql of left.statements) client.query(sql).catch(() => undefined);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.sharedReads?.close();
      await this.pool.end();
    })();
    return this.closing;
  }
}

/** A read's transaction left open on a pooled connection, and how it will be ended. */
interface LeftOpen {
  readonly statements: readonly string[];
  readonly timer: NodeJS.Timeout;
}

/**
 * Ends a transaction with COMMIT. What it left unanswered (a cursor's CLOSE, a RELEASE) travels
 * with the COMMIT; should that have failed, the server answers the COMMIT with a rollback and its
 * error is thrown here. COMMIT returns once the commit is durable (synchronous_commit is on, and
 * with synchronous replication once a standby holds it): only then may a write be acknowledged.
 * Should the connection break after the COMMIT went out, its outcome is unknown, and that is
 * what is thrown (lostDuringCommit), whichever statement reported the break first.
 */
async function commit(client: PoolClient, tx: ConnectionExecutor, retryAfterSeconds: number): Promise<void> {
  // A COMMIT whose wait for the synchronous standby was cancelled (statement_timeout while no
  // standby confirms) answers success with only a warning: committed here, perhaps on no
  // standby. A failover could lose it, so it is not a success either.
  let unreplicated: string | undefined;
  const heard = (notice: { message?: string }) => {
    if (notice.message && SYNC_WAIT_CANCELLED.test(notice.message)) unreplicated = notice.message;
  };
  client.on('notice', heard);
  try {
    sendTogether(client);
    tx.sendDeferred();
    const committed = client.query('COMMIT');
    const commitFailure = committed.then(
      () => undefined,
      (error: unknown) => error,
    );
    try {
      await tx.settled();
    } catch (error) {
      throw lostDuringCommit(await commitFailure, retryAfterSeconds) ?? error;
    }
    tx.end();
    const failure = await commitFailure;
    if (failure !== undefined) throw lostDuringCommit(failure, retryAfterSeconds) ?? failure;
  } finally {
    client.off('notice', heard);
  }
  if (unreplicated !== undefined) throw new DatabaseUnreachableError('commit', retryAfterSeconds, unreplicated);
}

/** PostgreSQL's warning when a COMMIT stopped waiting for its synchronous standby (syncrep.c). */
const SYNC_WAIT_CANCELLED = /^canceling (the )?wait for synchronous replication/;

/** Sends what the connection is given in the rest of this tick (its promise callbacks included) in one write. */
function sendTogether(client: PoolClient): void {
  holdWrites(client, process.nextTick);
}

/** Errors of connecting: the server is not there, or refuses the role or the database. */
function isConnectError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return true;
  // 08: connection exception; 28: invalid authorization; 3D000: no such database; 57P03: starting up.
  return !/^[0-9A-Z]{5}$/.test(code) || code.startsWith('08') || code.startsWith('28') || code === '3D000' || code === '57P03';
}

/** Runs the first statement against a URL, turning a failure to connect into a plain message. */
async function reachable<T>(url: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (!isConnectError(error)) throw error;
    let where = 'the configured address';
    try {
      // Host, port, role and database only: never the password.
      const u = new URL(url);
      where = `${u.hostname}:${u.port || '5432'}${u.pathname} as ${decodeURIComponent(u.username) || 'the default role'}`;
    } catch {
      // An unparsable URL: node-pg failed on it too, and its message says why.
    }
    throw new DatabaseUnavailableError(`Cannot use PostgreSQL at ${where}: ${(error as Error).message}`);
  }
}

/** Directory statements: each on any pooled connection, outside a transaction, with no tenant. */
class DirectoryExecutor implements SqlExecutor {
  constructor(private readonly store: PostgresStore) {}
  /** `writes`: a statement that may change rows, each committed on its own (autocommit). */
  private on<T>(fn: (e: ConnectionExecutor) => Promise<T>, writes = false): Promise<T> {
    const run = (client: PoolClient, cache: StatementCache | undefined, discard: (why: Error) => void) =>
      fn(new ConnectionExecutor(client, cache, false)).catch((error: unknown) => {
        // Not given back to the pool: it broke, or it leads to a standby.
        if (isConnectionLoss(error, writes)) discard(error as Error);
        throw error;
      });
    return this.store.withConnection(run).catch((error: unknown) => {
      throw this.store.unreachable(error, writes ? 'commit' : 'transaction');
    });
  }
  all<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    return this.on((e) => e.all<Row>(sql, params));
  }
  get<Row>(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined> {
    return this.on((e) => e.get<Row>(sql, params));
  }
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult> {
    return this.on((e) => e.run(sql, params), true);
  }
  async *iterate<Row>(sql: string, params?: readonly SqlValue[]): AsyncIterable<Row> {
    yield* await this.all<Row>(sql, params);
  }
  rows(sql: string, params?: readonly SqlValue[]): Promise<unknown[][]> {
    return this.on((e) => e.rows(sql, params));
  }
  async *iterateRows(sql: string, params?: readonly SqlValue[]): AsyncIterable<unknown[]> {
    yield* await this.rows(sql, params);
  }
  async *iterateRowBatches(sql: string, params: readonly SqlValue[], batchRows: number): AsyncIterable<unknown[][]> {
    const rows = await this.rows(sql, params);
    for (let i = 0; i < rows.length; i += batchRows) yield rows.slice(i, i + batchRows);
  }
}
