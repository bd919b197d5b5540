/**
 * The webhook worker, one per server process (each of `--workers`, each machine): a loop that
 * every WEBHOOK_POLL_MS, and soon after any local commit, fans out the new changes of the
 * accounts that have subscriptions (fan-out.ts) and sends their due deliveries. It runs beside
 * the requests, never inside one: a request's cost is the change-log row its transaction writes.
 *
 * Sending is not awaited by the loop: each endpoint has at most WEBHOOK_ENDPOINT_CONCURRENCY
 * deliveries in flight in this process and all endpoints together WEBHOOK_CONCURRENCY, so a slow
 * endpoint holds only its own slots and every other seller's deliveries go on. Several processes
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
import { dueBySubscription, leaseDue, recordOutcome, type LeasedDelivery } from './deliveries';
import { attempt } from './send';
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
  /** Stops the loop and waits for the deliveries in flight (each ends within the timeout). */
  stop(): Promise<void>;
}

/** A nudged round waits this long, so that one round takes the commits of a burst together. */
const NUDGE_DELAY_MS = 5;

export function startWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { store, clock, log, settings } = options;
  const owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  // A lease outlives the attempt's timeout with room to record the outcome.
  const leaseMs = settings.timeoutMs * 2 + 1_000;
  const inFlight = new Map<string, number>();
  const sending = new Set<Promise<void>>();
  let total = 0;
  let stopped = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let again = false;

  const schedule = (delayMs: number) => {
    if (stopped || running) return;
    if (timer) {
      if (delayMs >= settings.pollMs) return;
      clearTimeout(timer);
    }
    timer = setTimeout(round, delayMs);
    timer.unref();
  };

  function round(): void {
    timer = undefined;
    again = false;
    running = visitAccounts()
      .catch((error: unknown) => log.warn({ err: error }, 'webhook round failed; it runs again at the next poll'))
      .finally(() => {
        running = undefined;
        schedule(again ? NUDGE_DELAY_MS : settings.pollMs);
      });
  }

  async function visitAccounts(): Promise<void> {
    const rows = await store.directory.all<{ account_id: unknown }>(`SELECT account_id FROM ${WEBHOOK_ACCOUNTS}`);
    for (const row of rows) {
      if (stopped) return;
      const accountId = Number(row.account_id);
      try {
        await fanOutAccount(store, accountId, options.serviceRoot(), () => clock.now());
        await dispatch(accountId);
      } catch (error) {
        log.warn({ err: error, accountId }, 'webhook fan-out or lease failed for an account; retried at the next poll');
      }
    }
  }

  async function dispatch(accountId: number): Promise<void> {
    if (total >= settings.concurrency) return;
    const now = clock.now();
    for (const [subscriptionId, due] of await dueBySubscription(store, accountId, now)) {
      const key = `${accountId}/${subscriptionId}`;
      const free = Math.min(due, settings.endpointConcurrency - (inFlight.get(key) ?? 0), settings.concurrency - total);
      if (free <= 0) continue;
      const leased = await leaseDue(store, accountId, subscriptionId, owner, clock.now(), leaseMs, free);
      if (!leased) continue;
      for (const delivery of leased.deliveries) {
        inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
        total++;
        const sent: Promise<void> = send(accountId, leased.subscription, delivery).finally(() => {
          inFlight.set(key, inFlight.get(key)! - 1);
          if (inFlight.get(key) === 0) inFlight.delete(key);
          total--;
          sending.delete(sent);
          // Its slot is free: the endpoint's next delivery may go now.
          nudge();
        });
        sending.add(sent);
      }
    }
  }

  async function send(accountId: number, subscription: SigningSubscription, delivery: LeasedDelivery): Promise<void> {
    const now = clock.now();
    const secrets = [subscription.secret, ...(subscription.previousSecret && (subscription.previousSecretUntil ?? 0) > now ? [subscription.previousSecret] : [])];
    const headers = signedHeaders(secrets, delivery.eventId, Math.floor(now / 1000), delivery.payload);
    const outcome = await attempt(subscription.url, headers, delivery.payload, settings.timeoutMs, settings);
    try {
      const { disabled } = await recordOutcome(store, accountId, subscription.id, delivery, owner, outcome, clock.now(), settings);
      if (disabled) log.warn({ accountId, subscription: subscription.id, error: outcome.error }, 'webhook subscription disabled after repeated failures');
    } catch (error) {
      // The lease runs out and the delivery is sent again: at least once.
      log.warn({ err: error, accountId, eventId: delivery.eventId }, 'webhook outcome not recorded; the delivery is retried when its lease ends');
    }
  }

  function nudge(): void {
    if (running) again = true;
    else schedule(NUDGE_DELAY_MS);
  }

  schedule(0);
  return {
    nudge,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await Promise.allSettled([...sending]);
    },
  };
}
