/**
 * Executes write plans (write-plan.ts) inside a transaction: resolves the path against the
 * caller's account, checks the preconditions against the stored version, and calls the catalogue's
 * writes. Nothing here parses a body or judges a method: that was done before the transaction.
 * The reply is sent only after COMMIT.
 */
import type { CatalogueWrites } from '../catalogue/writes';
import type { EntityTypeDef } from '../model/types';
import type { Reply } from './responder';
import { entityId, entityPath, entityUri, etagOf, type EntityPayload, type EntityRecord } from '../odata/entity';
import { badRequest, ODataError } from '../odata/errors';
import { quote } from '../odata/quote';
import type { SqlExecutor } from '../store/store';
import { idempotencyKeyOf, once, requestHash } from './idempotency';
import type { ODataRequest } from './request';
import { entityReply, noContent, resolve, tagsMatch, tagsOf, type ResourcePath } from './resources';
import { idsNeeded, planWrite, type Precondition, type WritePlan } from './write-plan';

/** The entity a write created or changed, for callers that refer to it later ($batch `$n`). */
export interface WriteOutcome {
  readonly reply: Reply;
  readonly entity?: { readonly type: EntityTypeDef; readonly id: bigint };
}

/** If-Match: the client changes only the version it read, else 412 and nothing is written. */
function checkPrecondition(ifMatch: Precondition, record: EntityRecord): void {
  if (ifMatch === undefined || tagsMatch(ifMatch.tags, record.version)) return;
  throw new ODataError(412, `The entity ${entityPath(record.type, entityId(record.values))} has changed: its ETag is ${etagOf(record.version ?? 0n)}, not ${quote(ifMatch.header)}. Read it again and repeat the change.`);
}

/** The precondition an If-Match value (or the ETag a console form carries) states. */
export function preconditionOf(header: string): Precondition {
  return { header, tags: tagsOf(header) };
}

/**
 * A MERGE (or PUT) of one entity already read in `tx`: the If-Match check against the stored
 * version, then the catalogue's update with every rule and follow-up of the set (order history
 * included). The API's MERGE runs this, and so does the console's edit of an entity: one write
 * path. Answers the new version.
 */
export async function updateRecord(writes: CatalogueWrites, tx: SqlExecutor, accountId: number, record: EntityRecord, payload: EntityPayload, mode: 'replace' | 'merge', ifMatch: Precondition): Promise<bigint> {
  checkPrecondition(ifMatch, record);
  return writes.update(tx, accountId, record.type, entityId(record.values), payload, mode, record);
}

/** Runs a plan of `path` inside the caller's transaction `tx`. */
export async function writeResource(r: ODataRequest, tx: SqlExecutor, path: ResourcePath, plan: WritePlan): Promise<WriteOutcome> {
  const { app, accountId } = r;
  const resolved = await resolve(r, tx, path);
  if (plan.kind === 'create') {
    if (resolved.kind !== 'collection') throw badRequest('The path addresses one entity, not a collection.');
    const parent = resolved.source ? { nav: resolved.source.nav, id: entityId(resolved.source.record.values) } : undefined;
    const { record } = await app.writes.create(tx, accountId, plan.type, plan.payload, { parent, checked: plan.checked });
    const id = entityId(record.values);
    return { reply: entityReply(r, 201, record, { Location: entityUri(r.serviceRoot, record.type, id) }), entity: { type: record.type, id } };
  }
  if (resolved.kind !== 'entity') throw badRequest('The path addresses a collection, not one entity.');
  const record = resolved.record;
  const id = entityId(record.values);
  const target = path.target;
  switch (plan.kind) {
    case 'addLink':
    case 'removeLink':
    case 'clearLink':
      if (target.kind !== 'links') throw badRequest('$links belongs to one entity.');
      if (plan.kind === 'addLink') await app.writes.addLink(tx, accountId, record.type, id, target.navigation, plan.uri);
      else if (plan.kind === 'removeLink') await app.writes.removeLink(tx, accountId, record.type, id, target.navigation, plan.key);
      else await app.writes.clearLink(tx, accountId, record.type, id, target.navigation);
      return { reply: noContent(r) };
    case 'setProperty': {
      // A write of one property is a MERGE of that property: the same rules, history and ETag.
      checkPrecondition(plan.ifMatch, record);
      const version = await app.writes.update(tx, accountId, record.type, id, { values: new Map([[plan.property.name, plan.value]]), bindings: new Map() }, 'merge');
      return { reply: noContent(r, { ETag: etagOf(version) }), entity: { type: record.type, id } };
    }
    case 'update': {
      const version = await updateRecord(app.writes, tx, accountId, record, plan.payload, plan.mode, plan.ifMatch);
      return { reply: noContent(r, { ETag: etagOf(version) }), entity: { type: record.type, id } };
    }
    case 'delete':
      checkPrecondition(plan.ifMatch, record);
      await app.writes.delete(tx, accountId, record.type, id);
      return { reply: noContent(r), entity: { type: record.type, id } };
  }
}

const BODYLESS = new Set(['DELETE']);

/** A write on its own: read and plan it, then one transaction executes the plan. */
export async function handleWrite(r: ODataRequest, path: ResourcePath, rawPath: string): Promise<void> {
  const key = r.method === 'POST' ? idempotencyKeyOf(r.header('idempotency-key')) : undefined;
  const body = BODYLESS.has(r.method) ? Buffer.alloc(0) : await r.body();
  const plan = planWrite(r, path, body);
  const reply = await r.app.store.write(
    r.accountId,
    async (tx) => {
      if (key === undefined) return (await writeResource(r, tx, path, plan)).reply;
      const hash = requestHash(r.method, rawPath, body);
      return once(tx, r.app.store.codec, r.accountId, key, hash, r.app.clock.now(), async () => (await writeResource(r, tx, path, plan)).reply);
    },
    // fn touches nothing outside the transaction: it may run again (WriteOptions.repeatable).
    { newIds: idsNeeded(plan), repeatable: true, ...(r.credentialGuard ? { guard: r.credentialGuard } : {}) },
  );
  r.responder.send(reply);
}
