/**
 * `catalogue webhook …`: an operator's view of a seller's webhook subscriptions, for support
 * (the seller manages them through /publicapi/v1/webhooks): list them with their state and last
 * errors, list an endpoint's deliveries, enable a disabled endpoint, redeliver one event. Changes
 * are written to the audit trail.
 */
import { systemClock } from '../clock';
import { accountIdOf } from '../auth/directory';
import { UnknownAccountError } from '../auth/accounts';
import type { Store } from '../store/store';
import { enableSubscription, listDeliveries, listSubscriptions, redeliver } from '../webhooks/subscriptions';
import { cliAudit } from './operator-commands';

export class WebhookCommandError extends Error {}

async function accountOf(store: Store, userName: string): Promise<number> {
  const accountId = await accountIdOf(store.directory, userName);
  if (accountId === undefined) throw new UnknownAccountError(userName);
  return accountId;
}

/** webhook list | deliveries | enable | redeliver; the JSON lines to print. */
export async function webhookCommand(store: Store, sub: string, o: Record<string, string | undefined>): Promise<unknown[]> {
  const accountId = await accountOf(store, o.user!);
  switch (sub) {
    case 'list':
      return listSubscriptions(store, accountId);
    case 'deliveries':
      return listDeliveries(store, accountId, o.id!, 50);
    case 'enable': {
      if (!(await enableSubscription(store, accountId, o.id!, systemClock.now()))) throw new WebhookCommandError(`no webhook subscription '${o.id}' of ${o.user}`);
      cliAudit('webhook enabled', { accountId, userName: o.user, subscription: o.id });
      return [{ id: o.id, enabled: true }];
    }
    case 'redeliver': {
      if (!(await redeliver(store, accountId, o.id!, o.event!, systemClock.now()))) throw new WebhookCommandError(`no delivery '${o.event}' of webhook subscription '${o.id}'`);
      cliAudit('webhook redelivered', { accountId, userName: o.user, subscription: o.id, eventId: o.event });
      return [{ id: o.id, eventId: o.event, state: 'pending' }];
    }
    default:
      throw new WebhookCommandError(`no webhook command '${sub}'`);
  }
}
