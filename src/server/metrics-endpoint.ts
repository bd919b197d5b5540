/**
 * GET /metrics: the Prometheus text exposition of the metrics. It exists only when the operator
 * asks for it: with METRICS_TOKEN every scrape must carry `Authorization: Bearer <token>` (compared
 * in constant time); with METRICS_PORT it is served on a port of its own, which the operator
 * keeps off the public network (with both, that port asks for the token too).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { Logger } from 'pino';
import type { Limits } from '../config';
import { methodNotAllowed, ODataError } from '../odata/errors';
import { headerOf, type Handler } from './context';
import { createHttpServer } from './http';
import { send } from './respond';

export const METRICS_PATH = '/metrics';

/** The exposition text and its content type (text/plain; version=0.0.4). */
export type MetricsSource = () => Promise<{ readonly text: string; readonly contentType: string }>;

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Whether the Authorization header carries the token. Both sides are hashed first, so that the
 * comparison takes the same time whatever the length or content of what was sent.
 */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  return timingSafeEqual(digest(m?.[1] ?? ''), digest(token)) && m !== null;
}

export function metricsHandler(source: MetricsSource, token: string | undefined): Handler {
  return async (ctx, rest) => {
    const method = ctx.req.method ?? '';
    if (rest !== '' || (method !== 'GET' && method !== 'HEAD')) throw methodNotAllowed(method, ['GET', 'HEAD']);
    if (token !== undefined && !bearerMatches(headerOf(ctx, 'authorization'), token)) {
      throw new ODataError(401, 'The metrics need the bearer token configured as METRICS_TOKEN.', '', { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    }
    const { text, contentType } = await source();
    send(ctx.res, { status: 200, contentType, ...(method === 'HEAD' ? {} : { body: text }) });
  };
}

/** A server of its own on METRICS_PORT that answers /metrics and nothing else. */
export async function startMetricsServer(host: string, port: number, handler: Handler, limits: Limits, log: Logger): Promise<http.Server> {
  const server = createHttpServer([{ prefix: METRICS_PATH, handler }], limits, log);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
