/**
 * A webhook subscription for fixtures that must reach the webhook tables: registered to a
 * documentation address (TEST-NET-2), which the address guard lets through and nothing answers,
 * so its deliveries stay pending; and the wait until the worker has fanned an event out to it.
 */
import assert from 'node:assert/strict';
import { asSeller, type LiveService, type Seller } from './live-service';

/** Registers an endpoint for order.created; its id. */
export async function registerPendingWebhook(live: LiveService, s: Seller): Promise<string> {
  const hook = await asSeller(s, `${live.origin}/publicapi/v1/webhooks`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ url: 'https://198.51.100.1/hooks', eventTypes: ['order.created'] }),
  });
  assert.equal(hook.status, 201, hook.body);
  return (JSON.parse(hook.body) as { id: string }).id;
}

/** Waits until the endpoint has a delivery (the worker fans out within a poll or two). */
export async function awaitDelivery(live: LiveService, s: Seller, hookId: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    const res = await asSeller(s, `${live.origin}/publicapi/v1/webhooks/${hookId}/deliveries`);
    if ((JSON.parse(res.body) as { deliveries: unknown[] }).deliveries.length > 0) return;
    assert.ok(tries < 200, 'the order event was not fanned out');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
