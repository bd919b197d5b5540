/** The webhook worker's settings (WEBHOOK_* in src/config.ts; the README's settings table). */
export interface WebhookSettings {
  /** Whether this process runs the fan-out and delivery loops (WEBHOOKS). */
  readonly enabled: boolean;
  /** How often each loop looks for work when it found none (WEBHOOK_POLL_MS). */
  readonly pollMs: number;
  /** How long a receiver has to answer one delivery (WEBHOOK_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /** The first retry's delay; each further one doubles it, with jitter (WEBHOOK_RETRY_BASE_MS). */
  readonly retryBaseMs: number;
  /** The longest delay between two attempts (WEBHOOK_RETRY_MAX_MS). */
  readonly retryMaxMs: number;
  /** How long a delivery is retried before it is given up as failed (WEBHOOK_RETRY_HORIZON_MS). */
  readonly retryHorizonMs: number;
  /**
   * An endpoint is disabled after this many consecutive failed attempts, once it has failed for
   * the whole retry horizon (WEBHOOK_DISABLE_AFTER_FAILURES).
   */
  readonly disableAfterFailures: number;
  /** Deliveries to one endpoint in flight at once, per process (WEBHOOK_ENDPOINT_CONCURRENCY). */
  readonly endpointConcurrency: number;
  /**
   * Deliveries of one account in flight at once, per process, all its endpoints together
   * (WEBHOOK_ACCOUNT_CONCURRENCY): a seller's share, so that its slow endpoints cannot take the
   * whole of WEBHOOK_CONCURRENCY from the other sellers.
   */
  readonly accountConcurrency: number;
  /** Deliveries in flight at once in this process, all endpoints together (WEBHOOK_CONCURRENCY). */
  readonly concurrency: number;
  /** Plain http:// endpoints are accepted (tests, local use) (WEBHOOK_ALLOW_HTTP). */
  readonly allowHttp: boolean;
  /** Endpoints on loopback, private, link-local and metadata addresses are accepted (WEBHOOK_ALLOW_PRIVATE_ADDRESSES). */
  readonly allowPrivateAddresses: boolean;
  /** How long the previous secret still signs after a rotation (WEBHOOK_SECRET_OVERLAP_MS). */
  readonly secretOverlapMs: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  enabled: true,
  pollMs: 200,
  timeoutMs: 10_000,
  retryBaseMs: 10_000,
  retryMaxMs: 3_600_000,
  retryHorizonMs: 24 * 3_600_000,
  disableAfterFailures: 20,
  endpointConcurrency: 4,
  accountConcurrency: 8,
  concurrency: 32,
  allowHttp: false,
  allowPrivateAddresses: false,
  secretOverlapMs: 24 * 3_600_000,
};
