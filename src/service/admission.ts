/**
 * Admission per account: each seller's requests in this process run at most `maxInFlight` at a
 * time, and of them at most `maxHeavyInFlight` expensive ones (weightOf); more wait in a short
 * queue of the account's own, in arrival order, and beyond that queue (or its wait) they are
 * answered 429 with Retry-After. One seller's burst (64 page reads at once, two exports, a run of
 * expensive filters) then takes at most its share of the event loop and of the database pool, and
 * every other seller's request finds slots of its own: it never queues behind another account.
 *
 * Counted per process, with nothing shared: with --workers N or several machines an account gets
 * that share of each process. An in-flight request holds at most one pooled connection at a time
 * (a read its snapshot, a write its batch), so on PostgreSQL maxInFlight is also the account's
 * share of the pool (config.ts keeps it at most half of DATABASE_POOL_SIZE).
 */
import type { AdmissionLimits } from '../config';
import { ODataError } from '../odata/errors';
import type { SystemQueryOption } from '../odata/uri/query-options';

/** Why a request was not admitted, as /metrics counts it (no account in the label). */
export type RefusalReason = 'queue_full' | 'queue_timeout';

interface Waiter {
  readonly admit: () => void;
  readonly timer: NodeJS.Timeout;
}

interface AccountSlots {
  running: number;
  readonly queue: Waiter[];
}

/** Releases the slot a request held; calling it again does nothing. */
export type Release = () => void;

/** Slots of one kind per account: `max` run at once, `limits.maxQueued` wait, in arrival order. */
class SlotsPerAccount {
  private readonly accounts = new Map<number, AccountSlots>();

  constructor(
    private readonly max: number,
    private readonly limits: AdmissionLimits,
    private readonly refusal: (reason: RefusalReason) => ODataError,
  ) {}

  acquire(accountId: number): Release | Promise<Release> {
    if (this.max <= 0) return noRelease;
    let slots = this.accounts.get(accountId);
    if (!slots) this.accounts.set(accountId, (slots = { running: 0, queue: [] }));
    if (slots.running < this.max) {
      slots.running++;
      return this.releaseOf(accountId, slots);
    }
    if (slots.queue.length >= this.limits.maxQueued) throw this.refusal('queue_full');
    const queued = slots;
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        // The slot passes straight from the request that ended (release) to this one.
        admit: () => {
          clearTimeout(waiter.timer);
          resolve(this.releaseOf(accountId, queued));
        },
        timer: setTimeout(() => {
          const at = queued.queue.indexOf(waiter);
          if (at >= 0) queued.queue.splice(at, 1);
          reject(this.refusal('queue_timeout'));
        }, this.limits.queueWaitMs).unref(),
      };
      queued.queue.push(waiter);
    });
  }

  running(accountId: number): number {
    return this.accounts.get(accountId)?.running ?? 0;
  }

  private releaseOf(accountId: number, slots: AccountSlots): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = slots.queue.shift();
      if (next) return next.admit();
      slots.running--;
      // An account with nothing running or queued keeps no entry: the map stays as large as the
      // number of sellers active right now.
      if (slots.running === 0) this.accounts.delete(accountId);
    };
  }
}

/**
 * What a request may cost. 'expressions': a $filter or $orderby that calls text functions (its
 * cost grows with the account's rows and their text; on SQLite it reads on a worker thread,
 * ReadCost 'heavy'); 'export': a collection read with $expand and no $top; 'light': anything
 * else. The first two are the expensive kind an account runs one at a time
 * (ACCOUNT_MAX_HEAVY_IN_FLIGHT). Judged from the request's text before anything is parsed
 * further, so it errs towards expensive: a function name inside a string literal counts too.
 */
export type RequestWeight = 'light' | 'expressions' | 'export';

export function weightOf(path: string, system: ReadonlyMap<SystemQueryOption, string>): RequestWeight {
  for (const name of ['$filter', '$orderby'] as const) {
    const text = system.get(name);
    if (text !== undefined && TEXT_FUNCTION_CALL.test(text)) return 'expressions';
  }
  // A path that ends in a key predicate names one entity: its expansions are bounded.
  return system.has('$expand') && !system.has('$top') && !/\)\s*$/.test(path) ? 'export' : 'light';
}

const TEXT_FUNCTION_CALL = /\b(substringof|startswith|endswith|length|indexof|replace|substring|tolower|toupper|trim|concat)\s*\(/i;

export class AccountAdmission {
  private readonly all: SlotsPerAccount;
  private readonly heavy: SlotsPerAccount;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly refused: (reason: RefusalReason) => void = () => {},
  ) {
    const refusal = (reason: RefusalReason) => this.refusal(reason);
    this.all = new SlotsPerAccount(limits.maxInFlight, limits, refusal);
    this.heavy = new SlotsPerAccount(limits.maxInFlight > 0 ? limits.maxHeavyInFlight : 0, limits, refusal);
  }

  /**
   * A slot for one request of the account, or a 429 once its queue is full or its wait ran out.
   * An expensive request (weightOf) first waits for one of the account's heavy slots, then
   * takes an ordinary one like any other request.
   */
  admit(accountId: number, weight: RequestWeight = 'light'): Release | Promise<Release> {
    if (weight === 'light') return this.all.acquire(accountId);
    return this.admitHeavy(accountId);
  }

  private async admitHeavy(accountId: number): Promise<Release> {
    const heavySlot = await this.heavy.acquire(accountId);
    try {
      const slot = await this.all.acquire(accountId);
      return () => {
        slot();
        heavySlot();
      };
    } catch (error) {
      heavySlot();
      throw error;
    }
  }

  /** Requests of the account running now (for tests and the figures). */
  running(accountId: number): number {
    return this.all.running(accountId);
  }

  private refusal(reason: RefusalReason): ODataError {
    this.refused(reason);
    const retryAfterSeconds = Math.max(1, Math.ceil(this.limits.queueWaitMs / 1000));
    return new ODataError(
      429,
      `Too many requests of this account at once: ${this.limits.maxInFlight} run at a time (${this.limits.maxHeavyInFlight} of them ` +
        `expensive: text functions in $filter or $orderby, or $expand over a whole collection) and ${this.limits.maxQueued} may wait ` +
        `(${reason === 'queue_full' ? 'the queue was full' : `none became free within ${this.limits.queueWaitMs} ms`}). ` +
        'Send fewer requests in parallel, and this one again after Retry-After.',
      '',
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

const noRelease: Release = () => {};
