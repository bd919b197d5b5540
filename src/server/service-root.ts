/**
 * The absolute service root every URI in a response is built on: PUBLIC_URL when the service sits
 * behind a proxy, otherwise the Host the client used (checked, so a forged Host cannot inject
 * markup), otherwise the address the service listens on.
 */
import type { IncomingMessage } from 'node:http';
import { SERVICE_PATH } from '../service/request';

const HOST_PATTERN = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

export function serviceRootOf(req: IncomingMessage, publicUrl: string | undefined, fallbackHost: string): string {
  if (publicUrl) return publicUrl + SERVICE_PATH;
  const host = req.headers.host;
  return `http://${host && HOST_PATTERN.test(host) ? host : fallbackHost}${SERVICE_PATH}`;
}
