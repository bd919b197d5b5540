/**
 * GET /health for load balancers and orchestrators: 200 when this process can reach its
 * database (one trivial statement), 503 when it cannot or when it is shutting down, so that a
 * balancer stops sending it requests. No credentials, and nothing about accounts in the answer.
 */
import type { Store } from '../store/store';
import type { Handler } from './context';
import { methodNotAllowed } from '../odata/errors';
import { send } from './respond';

export const HEALTH_PATH = '/health';

export function healthHandler(store: Store, draining: () => boolean): Handler {
  return async (ctx, rest) => {
    if (rest !== '') throw methodNotAllowed(ctx.req.method ?? '', ['GET', 'HEAD']);
    if (ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw methodNotAllowed(ctx.req.method ?? '', ['GET', 'HEAD']);
    let status = 200;
    let state = 'ok';
    if (draining()) {
      status = 503;
      state = 'draining';
    } else {
      try {
        await store.directory.get('SELECT 1 AS ok');
      } catch (error) {
        ctx.log.warn({ reqId: ctx.id, err: error }, 'health check: the database is unreachable');
        status = 503;
        state = 'database unavailable';
      }
    }
    const body = JSON.stringify({ status: state, database: store.engine });
    send(ctx.res, { status, contentType: 'application/json;charset=utf-8', ...(ctx.req.method === 'HEAD' ? {} : { body }) });
  };
}
