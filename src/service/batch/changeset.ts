/**
 * A changeset of a $batch: all of its operations or none, as OData V2 defines it (docs/protocol.md).
 *
 * First every operation is planned without the database (targets, `$n` references to earlier
 * Content-IDs, methods and query options, version headers, body sizes, and each body read into a
 * write plan: write-plan.ts), so that a changeset that cannot be understood never takes the
 * writer, and the writer never waits on parsing. Then ONE store.write transaction runs the operations in
 * document order, each with its own ODataRequest, and renders each answer. If any operation
 * fails, the error is thrown out of the transaction, so that everything rolls back, and the
 * changeset is answered by that operation's error alone. The answers leave only after COMMIT:
 * the batch is answered when store.write has resolved.
 */
import type { BatchResponsePart, InnerRequest, InnerResponse } from '../../odata/batch';
import { resolveTarget } from '../../odata/batch';
import { quote } from '../../odata/quote';
import { entityId, entityPath, entityUri } from '../../odata/entity';
import { badRequest } from '../../odata/errors';
import { parseResourcePath, type ResourcePath } from '../../odata/uri/resource-path';
import { admitRequest } from '../../odata/uri/uri-kind';
import { deletionScope, type DeletionScope } from '../../store/cascade';
import type { SqlExecutor } from '../../store/store';
import { ReadAheadExecutor } from '../../store/read-ahead';
import { type BatchCaller, type BatchCredentials, echoableContentId, errorResponseOf, innerODataRequest, responseOf } from './request';
import { ChangesetLedger, type EntityRef, linkPair } from './ledger';
import type { ODataRequest, ResourcePathOf } from '../request';
import { idempotencyKeyOf, once, requestHash } from '../idempotency';
import { auditCommitted, operationInTransaction } from '../operations';
import { BufferedResponder, type Reply } from '../responder';
import { resolve } from '../resources';
import { writeResource } from '../write';
import { idsNeeded, planWrite, type WritePlan } from '../write-plan';
import type { EntityTypeDef } from '../../model/types';
import { SERVICE_PATH } from '../request';
import { bodyReferences, resolveBodyReferences, withLaterParents, type PlannedOperation } from './references';

/** A path into the entity sets (not an operation, $metadata, …). */
type SetPath = ResourcePathOf<'resource'>;

/** Where an operation writes: a path parsed beforehand, or `$n` plus the rest, known only once n has run. */
type OperationTarget =
  | { readonly kind: 'path'; readonly path: ResourcePath; readonly rawPath: string }
  | { readonly kind: 'reference'; readonly contentId: string; readonly rest: string };

/** A target resolved: the parsed path, and the path as written below the service root. */
interface Located {
  readonly path: ResourcePath;
  readonly rawPath: string;
}

interface PreparedOperation extends PlannedOperation {
  readonly inner: InnerRequest;
  readonly contentId: string | undefined;
  readonly request: ODataRequest;
  /** The request's responder: the operation's reply is rendered into it inside the transaction. */
  readonly responder: BufferedResponder;
  readonly body: Buffer;
  readonly target: OperationTarget;
  /** What a write of the entity sets does, read from its body; undefined for a service operation. */
  readonly plan: WritePlan | undefined;
  /** The type of the entity a later `$n` naming this operation stands for (none for links and operations). */
  readonly entityType: EntityTypeDef | undefined;
}

interface Outcome {
  readonly reply: Reply;
  /** What a later `$n` naming this operation stands for. */
  readonly entity?: EntityRef;
}

/** Thrown out of the transaction to roll it back, carrying the operation that failed and why. */
class OperationFailed extends Error {
  constructor(
    readonly inner: InnerRequest,
    readonly reason: unknown,
  ) {
    super('a changeset operation failed');
  }
}

const BODYLESS = new Set(['DELETE']);
const NO_CONTENT: Reply = { status: 204 };

export async function runChangeset(caller: BatchCaller, requests: readonly InnerRequest[]): Promise<BatchResponsePart> {
  const prepared: PreparedOperation[] = [];
  const earlierContentIds = new Map<string, EntityTypeDef | undefined>();
  for (const inner of requests) {
    let operation: PreparedOperation;
    try {
      operation = await prepareOperation(caller, inner, earlierContentIds);
    } catch (error) {
      return failed(caller, inner, error);
    }
    prepared.push(operation);
    if (inner.contentId !== undefined) earlierContentIds.set(inner.contentId, operation.entityType);
  }

  // Nothing to run: no transaction either.
  if (prepared.length === 0) return { kind: 'changeset', responses: [] };
  // Only writes of the entity sets, no service operation: they run nothing before their
  // transaction's first statement and touch nothing outside it.
  const entitySetWritesOnly = prepared.every((p) => p.plan !== undefined);
  const guard = await credentialGuardOf(caller, entitySetWritesOnly);
  try {
    const newIds = prepared.reduce((n, p) => n + (p.plan ? idsNeeded(p.plan) : 0), 0);
    // Such a changeset may run again (WriteOptions.repeatable); a service operation may not run twice.
    const responses = await caller.app.store.write(caller.accountId, (tx) => executeAll(caller, tx, prepared), { newIds, repeatable: entitySetWritesOnly, ...(guard ? { guard } : {}) });
    for (const p of prepared) if (p.target.kind === 'path' && p.target.path.kind === 'operation') auditCommitted(p.request, p.target.path.operation);
    return { kind: 'changeset', responses };
  } catch (error) {
    // Nothing ran before the credential check: whatever failed is the whole batch's answer, a
    // 401 unless the credentials hold (publicapi.ts), never a part for a stranger to read.
    if (guard !== undefined && !guard.passed) throw error;
    if (error instanceof OperationFailed) return failed(caller, error.inner, error.reason);
    // The transaction itself failed (COMMIT, say): nothing of the changeset was kept. A fault,
    // logged and answered in the format of the first operation, which names no single one.
    const { contentId: _unnamed, ...first } = requests[0]!;
    return failed(caller, first, error);
  }
}

/**
 * The credential check the changeset's transaction carries, when the batch came on a claim whose
 * check has not passed yet: only if every operation writes the entity sets, whose writes run
 * nothing before their transaction's first statement. A service operation is confirmed first.
 */
async function credentialGuardOf(caller: BatchCaller, entitySetWritesOnly: boolean): Promise<BatchCredentials['guard'] | undefined> {
  const credentials = caller.credentials;
  if (credentials === undefined || credentials.guard.passed) return undefined;
  if (entitySetWritesOnly) return credentials.guard;
  await credentials.confirm();
  return undefined;
}

/** The single error part that answers a failed changeset in place of its nested multipart. */
function failed(caller: BatchCaller, inner: InnerRequest, error: unknown): BatchResponsePart {
  return { kind: 'response', response: errorResponseOf(caller, inner, error) };
}

async function prepareOperation(caller: BatchCaller, inner: InnerRequest, earlierContentIds: ReadonlyMap<string, EntityTypeDef | undefined>): Promise<PreparedOperation> {
  const { model } = caller.app;
  const contentId = echoableContentId(inner);
  const resolved = resolveTarget(inner.target, SERVICE_PATH);
  const responder = new BufferedResponder();
  const request = innerODataRequest(caller, inner, resolved.query, responder);
  // A DELETE's body is ignored, as on its own.
  const body = BODYLESS.has(request.method) ? Buffer.alloc(0) : await request.body();
  let target: OperationTarget;
  let path: ResourcePath;
  if (resolved.reference === undefined) {
    path = parseResourcePath(model, resolved.path);
    target = { kind: 'path', path, rawPath: resolved.path };
  } else {
    // resolveTarget only recognises `$n`; that n names an EARLIER operation of THIS changeset is checked here.
    if (!earlierContentIds.has(resolved.reference)) {
      throw badRequest(
        `The target '${quote(inner.target)}' refers to Content-ID '${quote(resolved.reference)}', which no earlier operation of this changeset carries.`,
      );
    }
    const type = earlierContentIds.get(resolved.reference);
    if (type === undefined) throw standsForNoEntity(resolved.reference);
    // n's entity is not known yet, its type is: the rest of the path is read against that type.
    path = parseResourcePath(model, `/${entityPath(type, 0n)}${resolved.path}`);
    target = { kind: 'reference', contentId: resolved.reference, rest: resolved.path };
  }
  admitRequest(model, path, request.method, request.options);
  // The framing refuses a GET in a changeset; a HEAD is as much a read.
  if (request.method === 'HEAD') throw badRequest('A HEAD request may not be inside a changeset; send it as a part of its own.');
  const plan = path.kind === 'resource' ? planWrite(request, path, body) : undefined;
  // A `$n` in the body ($links body, binding) names an earlier operation that stands for an entity.
  for (const reference of bodyReferences(plan)) {
    if (!earlierContentIds.has(reference)) {
      throw badRequest(`The body refers to Content-ID '${quote(reference)}' ('$${quote(reference)}'), which no earlier operation of this changeset carries.`);
    }
    if (earlierContentIds.get(reference) === undefined) throw standsForNoEntity(reference);
  }
  const entityType = plan?.kind === 'create' || plan?.kind === 'update' || plan?.kind === 'delete' || plan?.kind === 'setProperty' ? plan.type : undefined;
  return { inner, contentId, reference: target.kind === 'reference' ? target.contentId : undefined, path, request, responder, body, target, plan, entityType };
}

function standsForNoEntity(contentId: string): Error {
  return badRequest(`'$${quote(contentId)}' names an operation that created or changed no entity, so it cannot stand for one.`);
}

/**
 * Runs every operation inside the transaction `tx`, in document order, except that an operation
 * that must wait for a later one (a create whose parent a later operation creates, and whatever
 * refers to it: references.ts) runs as soon as that one has. The answers keep document order.
 * The first failure is thrown as OperationFailed.
 */
async function executeAll(caller: BatchCaller, transaction: SqlExecutor, prepared: readonly PreparedOperation[]): Promise<InnerResponse[]> {
  const tx = new ReadAheadExecutor(transaction);
  // A run before this one (the changeset runs again: WriteOptions.repeatable) answered nothing.
  for (const operation of prepared) operation.responder.clear();
  await readTargetsAhead(caller, tx, prepared);
  const ledger = new ChangesetLedger();
  const view = { model: caller.app.model, ran: (contentId: string) => ledger.ran(contentId), entityOf: (contentId: string) => ledger.entityOf(contentId) };
  const uriOf = (contentId: string) => {
    const entity = ledger.entityOf(contentId);
    if (!entity) throw standsForNoEntity(contentId);
    return entityUri(caller.serviceRoot, entity.type, entity.id);
  };
  const responses: InnerResponse[] = new Array<InnerResponse>(prepared.length);

  /** Runs operation `index` unless it must wait; answers the Content-ID it waits for. */
  const run = async (index: number): Promise<string | undefined> => {
    const operation = prepared[index]!;
    try {
      const unmet = referencesOf(operation).find((contentId) => !ledger.ran(contentId));
      if (unmet !== undefined) return unmet;
      let plan = operation.plan && resolveBodyReferences(operation.plan, uriOf);
      if (plan) {
        // A required key sent as 0 takes the parent a later operation links.
        const readiness = withLaterParents(view, prepared, index, plan);
        if (readiness.waitFor !== undefined) return readiness.waitFor;
        plan = readiness.plan;
      }
      const outcome = await execute(operation, plan, tx, locate(caller, operation.target, ledger), ledger);
      operation.responder.send(outcome.reply);
      responses[index] = responseOf(operation.responder, operation.contentId);
      if (operation.contentId !== undefined) ledger.recordOutcome(operation.contentId, outcome.entity);
      return undefined;
    } catch (error) {
      throw new OperationFailed(operation.inner, error);
    }
  };

  const waiting = new Map<number, string>();
  for (const index of prepared.keys()) {
    const waitFor = await run(index);
    if (waitFor !== undefined) {
      waiting.set(index, waitFor);
      continue;
    }
    // What waited may run now, in document order, until nothing more can.
    for (let progress = true; progress; ) {
      progress = false;
      for (const [later, awaited] of waiting) {
        if (!ledger.ran(awaited)) continue;
        const next = await run(later);
        if (next === undefined) {
          waiting.delete(later);
          progress = true;
        } else waiting.set(later, next);
      }
    }
  }
  const [stuck] = waiting;
  if (stuck !== undefined) {
    const [index, awaited] = stuck;
    const operation = prepared[index]!;
    const who = operation.contentId === undefined ? 'An operation' : `The operation with Content-ID '${quote(operation.contentId)}'`;
    throw new OperationFailed(operation.inner, badRequest(`${who} needs what Content-ID '${quote(awaited)}' creates, which cannot run before it: the operations of the changeset wait for each other.`));
  }
  return responses;
}

/** The Content-IDs an operation refers to: its target's `$n` and those of its body. */
function referencesOf(operation: PreparedOperation): string[] {
  const body = bodyReferences(operation.plan);
  return operation.target.kind === 'reference' ? [operation.target.contentId, ...body] : body;
}

/**
 * The entities the operations address by key, read in one statement per type before the first
 * operation runs (store/read-ahead.ts). Each operation reads its entity first; that read is then
 * answered without a statement as long as nothing ran since but the operations' own updates of
 * one row each. A changeset of ten MERGEs costs PostgreSQL eleven round trips instead of twenty.
 */
async function readTargetsAhead(caller: BatchCaller, tx: ReadAheadExecutor, prepared: readonly PreparedOperation[]): Promise<void> {
  const idsByType = new Map<EntityTypeDef, Set<bigint>>();
  let targets = 0;
  for (const { target } of prepared) {
    if (target.kind !== 'path' || target.path.kind !== 'resource' || target.path.key === undefined) continue;
    let ids = idsByType.get(target.path.set);
    if (!ids) idsByType.set(target.path.set, (ids = new Set()));
    ids.add(target.path.key);
    targets++;
  }
  // One entity is read by its own operation just as cheaply.
  if (targets < 2) return;
  await Promise.all([...idsByType].map(([type, ids]) => caller.app.entities.readAhead(tx, caller.accountId, type, [...ids])));
}

/** The operation's path; a `$n` target becomes the canonical path of n's entity plus the rest. */
function locate(caller: BatchCaller, target: OperationTarget, ledger: ChangesetLedger): Located {
  if (target.kind === 'path') return target;
  const entity = ledger.entityOf(target.contentId);
  if (!entity) throw standsForNoEntity(target.contentId);
  const rawPath = `/${entityPath(entity.type, entity.id)}${target.rest}`;
  return { path: parseResourcePath(caller.app.model, rawPath), rawPath };
}

async function execute(operation: PreparedOperation, plan: WritePlan | undefined, tx: SqlExecutor, { path, rawPath }: Located, ledger: ChangesetLedger): Promise<Outcome> {
  const r = operation.request;
  switch (path.kind) {
    case 'resource':
      if (!plan) throw new Error('a write of the entity sets without a plan');
      if (r.method === 'DELETE') return deleteInChangeset(r, tx, path, plan, ledger);
      if (r.method === 'POST') return postOnce(r, tx, path, rawPath, operation.body, plan);
      return writeResource(r, tx, path, plan);
    case 'operation':
      return { reply: await operationInTransaction(r, tx, path.operation) };
    case 'batch':
      throw badRequest('A $batch request cannot be nested inside a changeset.');
    case 'serviceDocument':
    case 'metadata':
      // Admitted for reads only; a changeset holds no reads.
      throw new Error(`${r.method} of ${path.kind} was admitted`);
  }
}

/**
 * A POST, with its Idempotency-Key honoured as on its own (idempotency.ts): the key and the
 * answer are stored in the changeset's transaction, so they are kept only if the whole changeset
 * is. A replayed create still stands for its entity (named by the replayed Location) for `$n`.
 */
async function postOnce(r: ODataRequest, tx: SqlExecutor, path: SetPath, rawPath: string, body: Buffer, plan: WritePlan): Promise<Outcome> {
  const key = idempotencyKeyOf(r.header('idempotency-key'));
  if (key === undefined) return writeResource(r, tx, path, plan);
  let written: Outcome | undefined;
  const reply = await once(tx, r.app.store.codec, r.accountId, key, requestHash(r.method, rawPath, body), r.app.clock.now(), async () => (written = await writeResource(r, tx, path, plan)).reply);
  return { reply, entity: written?.entity ?? entityAt(r, reply.headers?.Location) };
}

/** The entity a canonical entity URI names (a Location of ours); undefined for anything else. */
function entityAt(r: ODataRequest, uri: string | undefined): EntityRef | undefined {
  if (uri === undefined) return undefined;
  const path = parseResourcePath(r.app.model, resolveTarget(uri, SERVICE_PATH).path);
  return path.kind === 'resource' && path.key !== undefined && path.steps.length === 0 && path.target.kind === 'entity' ? { type: path.set, id: path.key } : undefined;
}

/**
 * A DELETE, with the repeated-delete rule of changeset-ledger.ts: an entity (or a link) that an
 * earlier operation of this changeset removed, directly or by a cascade, answers 204 again. It
 * applies to canonical addresses (`ProductSpecifics(5L)`, `Products(1L)/$links/Catalogs(2L)`),
 * which is what clients send (every entity's __metadata.uri); a DELETE through a navigation path
 * (`Products(1L)/ProductImages(5L)`) of something already gone fails like any missing entity.
 * A DELETE of something that never existed fails too, and rolls the changeset back.
 */
async function deleteInChangeset(r: ODataRequest, tx: SqlExecutor, path: SetPath, plan: WritePlan, ledger: ChangesetLedger): Promise<Outcome> {
  if (path.key !== undefined && path.steps.length === 0) {
    if (path.target.kind === 'entity' && ledger.wasRemoved(path.set, path.key)) return { reply: NO_CONTENT, entity: { type: path.set, id: path.key } };
    const link = path.target.kind === 'links' && path.target.key !== undefined ? linkPair(path.target.navigation, path.key, path.target.key) : undefined;
    if (link && ledger.wasLinkRemoved(link.relation, link.left, link.right)) return { reply: NO_CONTENT };
  }
  // What the delete will take along must be read before it is gone.
  const scope = path.target.kind === 'entity' ? await scopeOfDelete(r, tx, path) : undefined;
  const outcome = await writeResource(r, tx, path, plan);
  if (scope) ledger.recordDeletion(scope);
  if (path.target.kind === 'links' && path.target.key !== undefined && path.key !== undefined && path.steps.length === 0) {
    const link = linkPair(path.target.navigation, path.key, path.target.key);
    if (link) ledger.recordRemovedLink(link.relation, link.left, link.right);
  }
  return outcome;
}

async function scopeOfDelete(r: ODataRequest, tx: SqlExecutor, path: SetPath): Promise<DeletionScope | undefined> {
  const resolved = await resolve(r, tx, path);
  if (resolved.kind !== 'entity') return undefined;
  return deletionScope(tx, r.app.model, r.accountId, resolved.record.type, entityId(resolved.record.values));
}
