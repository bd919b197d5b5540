/**
 * The bench's setup requests and probes (not the load itself): the tests' raw HTTP client, and
 * the headers a connector sends.
 */
import { request } from '../../test/support/http-client';

export { request };
export type { HttpResponse as Response } from '../../test/support/http-client';

export const SERVICE_PATH = '/publicapi/v1/api.svc';

/** Logs in as the connector does; the .ASPXAUTH cookie value. */
export async function login(origin: string, userName: string, password: string): Promise<string> {
  const res = await request(`${origin}/Authentication_JSON_AppService.axd/Login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ userName, password, createPersistentCookie: false }),
  });
  const m = /\.ASPXAUTH=([^;]+)/.exec(res.headers['set-cookie']?.[0] ?? '');
  if (res.status !== 200 || !m) throw new Error(`login as ${userName} failed: ${res.status} ${res.body.slice(0, 300)}`);
  return m[1]!;
}

export interface Credentials {
  readonly subscriptionToken: string;
  readonly cookie: string;
}

/** What the connector sends on every request. */
export function connectorHeaders(c: Credentials): Record<string, string> {
  return {
    SubscriptionToken: c.subscriptionToken,
    Cookie: `.ASPXAUTH=${c.cookie}`,
    Accept: 'application/json',
    'Content-Type': 'application/json',
    DataServiceVersion: '2.0',
    MaxDataServiceVersion: '3.0',
  };
}

/** What the Atom-only .NET WCF Data Services client sends on a read. */
export function atomHeaders(c: Credentials): Record<string, string> {
  return {
    SubscriptionToken: c.subscriptionToken,
    Cookie: `.ASPXAUTH=${c.cookie}`,
    Accept: 'application/atom+xml,application/xml',
    DataServiceVersion: '1.0;NetFx',
    MaxDataServiceVersion: '2.0;NetFx',
  };
}
