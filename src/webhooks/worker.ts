/**
 * The webhook worker, one per server process (each of `--workers`, each machine): a loop that
 * every WEBHOOK_POLL_MS, and soon after any local commit, fans out the new changes of the
 * accounts that have subscriptions (fan-out.ts) and sends their due deliveries. It runs beside
 * the requests, never inside one: a request's cost is the change-log row its transaction writes.
 *
 * Sending is not awaited by the loop: each endpoint with deliveries due gets a lane of its own
 * (one at a time per endpoint and process) that takes a few sending slots, leases a batch of
 * deliveries for them, sends at most one per slot at a time, and records the outcomes. A lane
 * takes at most WEBHOOK_ENDPOINT_CONCURRENCY slots, an account's lanes together at most
 * WEBHOOK_ACCOUNT_CONCURRENCY, and all lanes of the process at most WEBHOOK_CONCURRENCY. So a
 * slow endpoint holds only its own slots, and one seller's slow endpoints, however many it
 * subscribes, hold no more than that seller's share: every other seller's deliveries go on.
 * Several processes
 * share the work through leases (deliveries.ts): each delivery is sent by the process that leased
 * it, and one whose process died is leased again when its lease runs out.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { Store } from '../store/store';
import { WEBHOOK_ACCOUNTS } from '../store/schema';
import { fanOutAccount } from './fan-out';
import { OutboxReader } from './change-log';
import { dueBySubscription, leaseDue, recordDelivered, recordFailure, type LeasedDelivery } from './deliveries';
import { attempt, type AttemptOutcome } from './send';
import { signedHeaders } from './signing';
import type { SigningSubscription } from './subscriptions';
import type { WebhookSettings } from './settings';

export interface WebhookWorkerOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly log: Logger;
  readonly settings: WebhookSettings;
  /** The service root the events' entity URIs start with (e.g. https://host/publicapi/v1/api.svc). */
  readonly serviceRoot: () => string;
}

export interface WebhookWorker {
  /** Run a round soon (a commit may have written changes). */
  nudge(): void;
  /**
   * Stops the loop and waits a moment for the deliveries in flight; those still unanswered then
   * are sent again, by any process, when their lease runs out (at least once).
   */
  stop(): Promise<void>;
}

/** A nudged round waits this long, so that one round takes the commits of a burst together. */
const NUDGE_DELAY_MS = 5;

/**
 * Rounds start at least this far apart however often commits nudge: each round's fan-out is a
 * write transaction of the account (it takes the account's write lock, and on PostgreSQL a
 * durable commit), so under a write load it takes the changes of many requests at once rather
 * than taking turns with them.
 */
const ROUND_GAP_MS = 50;

/**
 * Deliveries one lease takes per endpoint slot: a lane leases, sends and records them together,
 * two writes for the lot instead of two per delivery.
 */
const LEASE_PER_SLOT = 10;

/** How long stop() waits for deliveries in flight: a slow endpoint must not hold up a shutdown. */
const STOP_GRACE_MS = 1_000;

export function startWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { store, clock, log, settings } = options;
  const owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  // A lease outlives the lane's attempts (each slot sends LEASE_PER_SLOT in turn, each within
  // the timeout) with room to record the outcomes; then another process may take them.
  const leaseMs = LEASE_PER_SLOT * settings.timeoutMs + 1_000;
  /** The endpoints ("account/subscription") with a lane running in this process. */
  const lanes = new Set<string>();
  const outbox = new OutboxReader(store.codec);
  const running = new Set<Promise<void>>();
  /** Sending slots the running lanes hold: all of them, and by account. */
  let slotsTaken = 0;
  const slotsByAccount = new Map<number, number>();
  /** Slots a new lane of the account may take now: the least of its three bounds. */
  const slotsFree = (accountId: number): number =>
    Math.min(settings.endpointConcurrency, settings.accountConcurrency - (slotsByAccount.get(accountId) ?? 0), settings.concurrency - slotsTaken);
  const takeSlots = (accountId: number, slots: number): void => {
    slotsTaken += slots;
    slotsByAccount.set(accountId, (slotsByAccount.get(accountId) ?? 0) + slots);
  };
  const giveBackSlots = (accountId: number, slots: number): void => {
    slotsTaken -= slots;
    const left = (slotsByAccount.get(accountId) ?? 0) - slots;
    if (left > 0) slotsByAccount.set(accountId, left);
    else slotsByAccount.delete(accountId);
  };
  let stopped = false;
  let round: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let timerDue = 0;
  let again = false;
  let lastRoundAt = 0;

  const schedule = (delayMs: number) => {
    if (stopped || round) return;
    const due = Date.now() + delayMs;
    // A round due as soon is already coming: commits arriving one after another must not keep
    // putting it off.
    if (timer && timerDue <= due) return;
    if (timer) clearTimeout(timer);
    timerDue = due;
    timer = setTimeout(runRound, delayMs);
    timer.unref();
  };

  function runRound(): void {
    timer = undefined;
    again = false;
    lastRoundAt = Date.now();
    round = visitAccounts()
      .catch((error: unknown) => log.warn({ err: error }, 'webhook round failed; it runs again at the next poll'))
      .finally(() => {
        round = undefined;
        schedule(again ? Math.max(NUDGE_DELAY_MS, lastRoundAt + ROUND_GAP_MS - Date.now()) : settings.pollMs);
      });
  }

  async function visitAccounts(): Promise<void> {
    const rows = await store.directory.all<{ account_id: unknown }>(`SELECT account_id FROM ${WEBHOOK_ACCOUNTS}`);
    for (const row of rows) {
      if (stopped) return;
      const accountId = Number(row.account_id);
      try {
        await fanOutAccount(store, outbox, accountId, options.serviceRoot(), () => clock.now());
        await dispatch(accountId);
      } catch (error) {
        log.warn({ err: error, accountId }, 'webhook fan-out or lease failed for an account; retried at the next poll');
      }
    }
  }

  /**
   * Starts a lane for each of the account's endpoints with deliveries due and none running here,
   * while the account and the process have slots free. The slots are taken before the lease, and
   * the lease takes only as many deliveries as they send within it.
   */
  async function dispatch(accountId: number): Promise<void> {
    if (slotsFree(accountId) <= 0) return;
    for (const [subscriptionId] of await dueBySubscription(store, accountId, clock.now())) {
      const key = `${accountId}/${subscriptionId}`;
      const slots = slotsFree(accountId);
      if (lanes.has(key) || slots <= 0) continue;
      lanes.add(key);
      takeSlots(accountId, slots);
      let leased: Awaited<ReturnType<typeof leaseDue>>;
      let used = 0;
      try {
        leased = await leaseDue(store, accountId, subscriptionId, owner, clock.now(), leaseMs, slots * LEASE_PER_SLOT);
        used = Math.min(slots, leased?.deliveries.length ?? 0);
      } finally {
        // Fewer due than the slots could send (or the lease failed): the slots left over go back
        // for the next endpoint, and a lane with nothing to send ends here.
        giveBackSlots(accountId, slots - used);
        if (used === 0) lanes.delete(key);
      }
      if (!leased || used === 0) continue;
      const lane: Promise<void> = runLane(accountId, leased.subscription, leased.deliveries, used)
        .catch((error: unknown) => log.warn({ err: error, accountId, subscription: subscriptionId }, 'webhook lane failed; its deliveries are retried when their lease ends'))
        .finally(() => {
          lanes.delete(key);
          giveBackSlots(accountId, used);
          running.delete(lane);
          // The endpoint may have more due, or another waited for the slots: a lane may start now.
          nudge();
        });
      running.add(lane);
    }
  }

  /**
   * Sends one endpoint's leased deliveries, one per slot at a time, then records them: the
   * delivered ones in one transaction, each failure with its retry schedule.
   */
  async function runLane(accountId: number, subscription: SigningSubscription, deliveries: LeasedDelivery[], slots: number): Promise<void> {
    const queue = [...deliveries];
    const delivered: { eventId: string; status: number | null }[] = [];
    const slot = async () => {
      for (let next = queue.shift(); next !== undefined && !stopped; next = queue.shift()) {
        const outcome: AttemptOutcome = await send(subscription, next);
        if (outcome.ok) {
          delivered.push({ eventId: next.eventId, status: outcome.status });
          continue;
        }
        const { disabled } = await recordFailure(store, accountId, subscription.id, next, owner, outcome, clock.now(), settings);
        if (disabled) {
          log.warn({ accountId, subscription: subscription.id, error: outcome.error }, 'webhook subscription disabled after repeated failures');
          queue.length = 0;
        }
      }
    };
    await Promise.all(Array.from({ length: slots }, slot));
    // Unsent (the process is stopping, or the endpoint was disabled): their lease runs out.
    await recordDelivered(store, accountId, subscription.id, delivered, clock.now());
  }

  function send(subscription: SigningSubscription, delivery: LeasedDelivery): Promise<AttemptOutcome> {
    const now = clock.now();
    const secrets = [subscription.secret, ...(subscription.previousSecret && (subscription.previousSecretUntil ?? 0) > now ? [subscription.previousSecret] : [])];
    const headers = signedHeaders(secrets, delivery.eventId, Math.floor(now / 1000), delivery.payload);
    return attempt(subscription.url, headers, delivery.payload, settings.timeoutMs, settings);
  }

  function nudge(): void {
    if (round) again = true;
    else schedule(Math.max(NUDGE_DELAY_MS, lastRoundAt + ROUND_GAP_MS - Date.now()));
  }

  schedule(0);
  return {
    nudge,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await round;
      await Promise.race([Promise.allSettled([...running]), new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
    },
  };
}
