/**
 * A query part of a $batch: one GET, served exactly as the same GET on its own would be (its own
 * snapshot, service operations of method GET included), its answer collected in memory. Whatever
 * goes wrong is this part's error response only.
 */
import { type BatchResponsePart, type InnerRequest, resolveTarget } from '../../odata/batch';
import { quote } from '../../odata/quote';
import { badRequest } from '../../odata/errors';
import { parseResourcePath } from '../../odata/uri/resource-path';
import { type BatchCaller, echoableContentId, errorResponseOf, innerODataRequest, responseOf } from './request';
import { BudgetedResponder, type ResponseBudget } from './budget';
import { serveRequest } from '../dispatch';
import { SERVICE_PATH } from '../request';

export async function runQueryPart(caller: BatchCaller, inner: InnerRequest, budget: ResponseBudget): Promise<BatchResponsePart> {
  try {
    const contentId = echoableContentId(inner);
    const target = resolveTarget(inner.target, SERVICE_PATH);
    if (target.reference !== undefined) {
      throw badRequest(`'$${quote(target.reference)}' refers to an operation of a changeset; a query part stands alone and can refer to none.`);
    }
    const responder = new BudgetedResponder(budget);
    const request = innerODataRequest(caller, inner, target.query, responder);
    const path = parseResourcePath(caller.app.model, target.path);
    if (path.kind === 'batch') throw badRequest('A $batch request cannot be nested inside another.');
    await serveRequest(request, path, target.path);
    const response = responseOf(responder, contentId);
    budget.keep(responder.size);
    return { kind: 'response', response };
  } catch (error) {
    return { kind: 'response', response: errorResponseOf(caller, inner, error) };
  }
}
