/**
 * Admission per account: each seller's requests in this process run at most `maxInFlight` at a
 * time; more wait in a short queue of the account's own, in arrival order, and beyond that queue
 * (or its wait) they are answered 429 with Retry-After. One seller's burst (64 page reads at once,
 * two exports) then takes at most its share of the event loop and of the database pool, and every
 * other seller's request still finds a free slot: nothing another account does makes it wait.
 *
 * Counted per process, with nothing shared: with --workers N or several machines an account gets
 * that share of each process. An in-flight request holds at most one pooled connection at a time
 * (a read its snapshot, a write its batch), so on PostgreSQL maxInFlight is also the account's
 * share of the pool (config.ts keeps it at most half of DATABASE_POOL_SIZE).
 */
import type { AdmissionLimits } from '../config';
import { ODataError } from '../odata/errors';


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

export class AccountAdmission {
  private readonly accounts = new Map<number, AccountSlots>();

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly refused: (reason: RefusalReason) => void = () => {},
  ) {}

  /** A slot for one request of the account, or a 429 once the queue is full or its wait ran out. */
  admit(accountId: number): Release | Promise<Release> {
    if (this.limits.maxInFlight <= 0) return noRelease;
    let slots = this.accounts.get(accountId);
    if (!slots) this.accounts.set(accountId, (slots = { running: 0, queue: [] }));
    if (slots.running < this.limits.maxInFlight) {
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
        }, this.limits.queueWaitMs),
      };
      queued.queue.push(waiter);
    });
  }

  /** Requests of the account running now (for tests and the figures). */
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

  private refusal(reason: RefusalReason): ODataError {
    this.refused(reason);
    const retryAfterSeconds = Math.max(1, Math.ceil(this.limits.queueWaitMs / 1000));
    return new ODataError(
      429,
      `Too many requests of this account at once: ${this.limits.maxInFlight} run at a time and ${this.limits.maxQueued} may wait ` +
        `(${reason === 'queue_full' ? 'the queue was full' : `none became free within ${this.limits.queueWaitMs} ms`}). ` +
        'Send fewer requests in parallel, and this one again after Retry-After.',
      '',
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

const noRelease: Release = () => {};
