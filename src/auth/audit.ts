/**
 * The audit trail: one structured log line at info level for each event that changes who may do
 * what (logins and their failures, logouts, tokens issued and revoked, accounts created, changed,
 * disabled, enabled and deleted, an account's data deleted, a seller's change made in the
 * console), with the account and where the request came from (the client address, or the
 * command line). A password, token or cookie is never part of one: only what it was used for.
 */
import type { Logger } from 'pino';

export type AuditEvent =
  | 'login'
  | 'login failed'
  | 'login throttled'
  | 'logout'
  | 'token created'
  | 'token revoked'
  | 'account created'
  | 'account password changed'
  | 'account disabled'
  | 'account enabled'
  | 'account deleted'
  | 'account data deleted'
  | 'database restored'
  /** An operator enabled a seller's webhook endpoint or redelivered one of its events (`catalogue webhook`). */
  | 'webhook enabled'
  | 'webhook redelivered'
  /** A seller changed catalogue data or an order in the console (which entity, which properties). */
  | 'console write';

export interface AuditFields {
  readonly accountId?: number;
  /** The client's address; for the command line, 'command line'. */
  readonly clientAddress: string;
  readonly [detail: string]: unknown;
}

export function audit(log: Logger, event: AuditEvent, fields: AuditFields): void {
  log.info({ audit: event, ...fields }, `audit: ${event}`);
}
