/**
 * Health checks for load balancers and orchestrators; no credentials, and nothing in the answer
 * but one word of state (what went wrong is logged, not told).
 * - GET /health: liveness. 200 whenever the process answers at all: restarting it would not help
 *   with a database that is down or a shutdown in progress.
 * - GET /health/ready: readiness. 200 when this process should get requests: the database answers
 *   and takes writes (a primary, not a standby reached during a failover), it has every table and
 *   column the model needs (the migrations are current), and the process is not draining for a
 *   shutdown; 503 otherwise, so the balancer sends requests elsewhere. The database is asked
 *   once, without the failover wait (DATABASE_FAILOVER_WAIT_MS) that requests get: while no
 *   primary is reachable the check says so at once.
 */
import type { Store } from '../store/store';
import type { Handler, RequestContext } from './context';
import { methodNotAllowed } from '../odata/errors';
import { send } from './respond';

export const HEALTH_PATH = '/health';

function answer(ctx: RequestContext, status: number, state: string): void {
  const body = JSON.stringify({ status: state });
  send(ctx.res, {
    status,
    contentType: 'application/json;charset=utf-8',
    headers: { 'Cache-Control': 'no-store' },
    ...(ctx.req.method === 'HEAD' ? {} : { body }),
  });
}

/** Why this process should not get requests now, or undefined when it is ready. */
async function notReady(ctx: RequestContext, store: Store, draining: () => boolean): Promise<string | undefined> {
  if (draining()) return 'draining';
  try {
    if (!(await store.acceptsWrites())) {
      ctx.log.warn({ reqId: ctx.id }, 'readiness check: the database is a standby (read-only); waiting for the primary');
      return 'database read-only';
    }
    const missing = await store.missingSchema();
    if (missing.length === 0) return undefined;
    ctx.log.warn({ reqId: ctx.id, missing: missing.slice(0, 20) }, 'readiness check: the database lacks tables or columns; run catalogue migrate');
    return 'not migrated';
  } catch (error) {
    ctx.log.warn({ reqId: ctx.id, err: error }, 'readiness check: the database is unreachable');
    return 'database unavailable';
  }
}

export function healthHandler(store: Store, draining: () => boolean): Handler {
  return async (ctx, rest) => {
    const method = ctx.req.method ?? '';
    const check = rest.toLowerCase();
    if ((check !== '' && check !== '/ready') || (method !== 'GET' && method !== 'HEAD')) throw methodNotAllowed(method, ['GET', 'HEAD']);
    if (check === '') return answer(ctx, 200, 'alive');
    const problem = await notReady(ctx, store, draining);
    answer(ctx, problem === undefined ? 200 : 503, problem ?? 'ready');
  };
}
