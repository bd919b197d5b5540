/** The webhooks management endpoint as a seller's script calls it, over real HTTP. */
import assert from 'node:assert/strict';
import { request, type HttpResponse } from '../support/http-client';

export const WEBHOOKS_PATH = '/publicapi/v1/webhooks';

export interface SubscriptionAnswer {
  readonly id: string;
  readonly url: string;
  readonly eventTypes: string[];
  readonly enabled: boolean;
  readonly failureCount: number;
  readonly disabledReason: string | null;
  readonly secret?: string;
}

export function webhooks(origin: string, auth: Record<string, string>) {
  const call = (method: string, path: string, body?: unknown): Promise<HttpResponse> =>
    request(`${origin}${WEBHOOKS_PATH}${path}`, {
      method,
      headers: { ...auth, Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  return {
    call,
    async subscribe(url: string, eventTypes: string[]): Promise<SubscriptionAnswer> {
      const res = await call('POST', '', { url, eventTypes });
      assert.equal(res.status, 201, res.body);
      return JSON.parse(res.body) as SubscriptionAnswer;
    },
    async get(id: string): Promise<SubscriptionAnswer> {
      const res = await call('GET', `/${id}`);
      assert.equal(res.status, 200, res.body);
      return JSON.parse(res.body) as SubscriptionAnswer;
    },
    async deliveries(id: string): Promise<Array<{ eventId: string; state: string; attempts: number; lastError: string | null; lastStatus: number | null; type: string }>> {
      const res = await call('GET', `/${id}/deliveries?top=200`);
      assert.equal(res.status, 200, res.body);
      return (JSON.parse(res.body) as { deliveries: [] }).deliveries;
    },
  };
}

export const ALL_EVENT_TYPES = ['order.created', 'order.paid', 'order.shipping_status_changed', 'order.deleted', 'listing.changed', 'listing_item.changed', 'product.changed', 'product.deleted', 'stock.changed'];

/** The settings the tests run with: a receiver on loopback over http, short waits and backoff. */
export const TEST_WEBHOOK_ENV: Record<string, string> = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_BASE_MS: '100',
  WEBHOOK_RETRY_MAX_MS: '400',
};
