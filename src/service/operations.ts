/**
 * Service operations over HTTP (docs/protocol.md): the declared method only (405 with Allow
 * otherwise, see odata/uri/uri-kind.ts), no system query option but $format, parameters typed from the query string,
 * and the result as a root element named after the operation (XML by default) or
 * {"d":{"<Operation>":value}} (JSON on Accept or $format), negotiated as for properties.
 *
 * Readers run in one snapshot, the others in one write transaction; the answer goes out only
 * after COMMIT. operationInTransaction() takes the transaction from its caller, so that a $batch
 * changeset can run an operation among its other writes.
 */
import type { ServiceOperationDef } from '../model/types';
import { wireFormatFor, type WireFormat } from '../odata/formats';
import { MEDIA, negotiate } from '../odata/negotiate';
import { parseOperationArguments, type OperationArguments } from '../odata/uri/operation-parameters';
import type { SqlExecutor } from '../store/store';
import type { ODataRequest } from './request';
import type { Reply } from './responder';
import { responseVersion } from './resources';
import { audit } from '../auth/audit';

interface PreparedCall {
  readonly operation: ServiceOperationDef;
  readonly args: OperationArguments;
  readonly format: WireFormat;
}

/** Everything that can be refused before the database is touched (method and options were admitted). */
function prepare(r: ODataRequest, operation: ServiceOperationDef): PreparedCall {
  const args = parseOperationArguments(operation, r.options.custom, r.options.repeated);
  const format = wireFormatFor(negotiate(r.header('accept'), r.options.system.get('$format'), MEDIA.xmlOrJson));
  return { operation, args, format };
}

async function execute(r: ODataRequest, tx: SqlExecutor, call: PreparedCall): Promise<Reply> {
  const version = responseVersion(r, 1);
  const value = await r.app.operations.run(call.operation.name, tx, r.accountId, call.args);
  return { status: 200, contentType: call.format.dataContentType, body: call.format.operationResult(call.operation.name, call.operation.returnType, value), version };
}

/** An operation inside the caller's transaction ($batch changesets). */
export async function operationInTransaction(r: ODataRequest, tx: SqlExecutor, operation: ServiceOperationDef): Promise<Reply> {
  return execute(r, tx, prepare(r, operation));
}

export async function handleOperation(r: ODataRequest, operation: ServiceOperationDef): Promise<void> {
  const call = prepare(r, operation);
  const run = (tx: SqlExecutor) => execute(r, tx, call);
  const reply = operation.httpMethod === 'GET' ? await r.app.store.read(r.accountId, run) : await r.app.store.write(r.accountId, run);
  auditCommitted(r, operation);
  r.responder.send(reply);
}

/** Operations that erase a seller's data go to the audit trail once their transaction committed. */
export function auditCommitted(r: ODataRequest, operation: ServiceOperationDef): void {
  if (operation.name !== 'DeleteAccountData') return;
  audit(r.app.log, 'account data deleted', { accountId: r.accountId, clientAddress: r.clientAddress, type: r.options.custom.get('type') ?? null });
}
