/**
 * Content-ID references (`$n`) in the bodies of a changeset's operations, and the required
 * references a changeset sets only after the entity that needs them (docs/protocol.md, "$batch").
 *
 * The .NET WCF Data Services client addresses what it created earlier in the same changeset by
 * Content-ID: as the whole body of a `$links` request (`<uri>$2</uri>`, `{"uri":"$2"}`) and as
 * the href of a binding in a POST or MERGE body (`<link … href="$2"/>`, `__metadata.uri`). Each
 * such `$n` is checked to name an earlier operation before the changeset takes the writer, and
 * replaced by the URI of n's entity when the operation runs.
 *
 * It also sends a graph in the order it was built: a child may be POSTed with its foreign key 0
 * (its generated class holds it as a non-nullable long, 0 until set) and linked to its parent
 * only by a later operation (`PUT $3/$links/Product`, `POST Products(1L)/$links/ProductImages`
 * with `<uri>$3</uri>`, or a MERGE of `$3` binding the parent). The checks of a required
 * reference run over what the changeset leaves: such a create takes the parent that later
 * operation names (which then changes nothing), so every rule runs against the real parent. A
 * create whose parent is created by an operation further down runs right after that operation
 * (service/batch/changeset.ts), as do the operations that refer to it.
 */
import { bindingUris } from '../../catalogue/writes';
import type { EntityTypeDef, Model, ReferenceRelation } from '../../model/types';
import { badRequest } from '../../odata/errors';
import { quote } from '../../odata/quote';
import type { EdmValue } from '../../odata/edm';
import type { EntityPayload } from '../../odata/entity';
import { contentIdReference, resolveEntityUri } from '../../odata/uri/entity-uri';
import type { ResourcePath } from '../../odata/uri/resource-path';
import type { WritePlan } from '../write-plan';
import type { EntityRef } from './ledger';

/** Every URI a payload binds, its inline entities' included. */
function* payloadUris(payload: EntityPayload): Generator<string> {
  for (const uris of payload.bindings.values()) yield* uris;
  for (const children of payload.inline?.values() ?? []) for (const child of children) yield* payloadUris(child);
}

/** The Content-IDs the body of a plan refers to: a `$links` body, bindings, inline entities' bindings. */
export function bodyReferences(plan: WritePlan | undefined): string[] {
  const uris = plan?.kind === 'addLink' ? [plan.uri] : plan?.kind === 'create' || plan?.kind === 'update' ? [...payloadUris(plan.payload)] : [];
  return uris.map(contentIdReference).filter((n): n is string => n !== undefined);
}

/** The payload with each `$n` binding replaced by `uriOf(n)`; the same object when it holds none. */
function resolvePayload(payload: EntityPayload, uriOf: (contentId: string) => string): EntityPayload {
  let changed = false;
  const bindings = new Map<string, readonly string[]>();
  for (const [nav, uris] of payload.bindings) {
    bindings.set(
      nav,
      uris.map((uri) => {
        const n = contentIdReference(uri);
        if (n === undefined) return uri;
        changed = true;
        return uriOf(n);
      }),
    );
  }
  let inline = payload.inline;
  if (payload.inline) {
    const resolved = new Map<string, readonly EntityPayload[]>();
    let inlineChanged = false;
    for (const [nav, children] of payload.inline) {
      const mapped = children.map((child) => resolvePayload(child, uriOf));
      if (mapped.some((child, i) => child !== children[i])) inlineChanged = true;
      resolved.set(nav, mapped);
    }
    if (inlineChanged) {
      inline = resolved;
      changed = true;
    }
  }
  if (!changed) return payload;
  return { values: payload.values, bindings, ...(inline ? { inline } : {}) };
}

/** The plan with every `$n` of its body replaced by `uriOf(n)`, the URI of n's entity. */
export function resolveBodyReferences(plan: WritePlan, uriOf: (contentId: string) => string): WritePlan {
  if (plan.kind === 'addLink') {
    const n = contentIdReference(plan.uri);
    return n === undefined ? plan : { ...plan, uri: uriOf(n) };
  }
  if (plan.kind === 'create' || plan.kind === 'update') {
    const payload = resolvePayload(plan.payload, uriOf);
    return payload === plan.payload ? plan : { ...plan, payload };
  }
  return plan;
}

/** An operation of the changeset as the look-ahead sees it. */
export interface PlannedOperation {
  readonly contentId: string | undefined;
  /** `$n` when the target starts with one. */
  readonly reference: string | undefined;
  /** The path as parsed before the transaction (a `$n` target's with key 0 for n's entity). */
  readonly path: ResourcePath;
  readonly plan: WritePlan | undefined;
}

/** What the look-ahead needs of the changeset so far. */
export interface ChangesetView {
  readonly model: Model;
  /** Whether the operation with this Content-ID has run. */
  ran(contentId: string): boolean;
  /** The entity behind `$n` of an operation that has run; undefined when none has. */
  entityOf(contentId: string): EntityRef | undefined;
}

/** A plan ready to run, or the Content-ID of the operation it must wait for. */
export type Readiness = { readonly plan: WritePlan; readonly waitFor?: undefined } | { readonly waitFor: string };

const referencesByType = new WeakMap<EntityTypeDef, readonly ReferenceRelation[]>();

/** The references a `type` must have: its non-nullable foreign keys. */
function requiredReferences(model: Model, type: EntityTypeDef): readonly ReferenceRelation[] {
  let found = referencesByType.get(type);
  if (!found) {
    found = model.relations.filter(
      (r): r is ReferenceRelation => r.kind === 'reference' && r.dependent === type.name && type.properties.some((p) => p.name === r.foreignKey && !p.nullable),
    );
    referencesByType.set(type, found);
  }
  return found;
}

/** Whether a create of `path` names the principal of `r` by its URI (POST Products(1L)/ProductImages). */
function parentInUri(path: ResourcePath, r: ReferenceRelation): boolean {
  if (path.kind !== 'resource') return false;
  const last = path.steps[path.steps.length - 1];
  return last !== undefined && last.navigation.relation.name === r.name;
}

function boundIn(payload: EntityPayload, r: ReferenceRelation): boolean {
  return r.dependentNav !== undefined && bindingUris(payload.bindings.get(r.dependentNav) ?? []).length > 0;
}

/**
 * The create plan of `operations[index]` with each required foreign key it sends as 0 (the .NET
 * client's "not set"), with no parent named by its URI or a binding, taken from the later
 * operation of the changeset that links it (see the module comment); or, when that parent is
 * created by an operation that has not run yet, the Content-ID of that operation to wait for.
 * A 400 naming the operation's Content-ID and the property when no later operation links it.
 */
export function withLaterParents(view: ChangesetView, operations: readonly PlannedOperation[], index: number, plan: WritePlan): Readiness {
  const operation = operations[index]!;
  if (plan.kind !== 'create') return { plan };
  let values: Map<string, EdmValue> | undefined;
  for (const r of requiredReferences(view.model, plan.type)) {
    if (plan.payload.values.get(r.foreignKey) !== 0n || parentInUri(operation.path, r) || boundIn(plan.payload, r)) continue;
    const principal = view.model.typeByName.get(r.principal)!;
    const named = operation.contentId === undefined ? undefined : laterParent(view, operations, index, operation.contentId, r, principal);
    const who = operation.contentId === undefined ? 'This operation' : `The operation with Content-ID '${quote(operation.contentId, 40)}'`;
    if (named === undefined) {
      throw badRequest(
        `${who} creates a ${plan.type.name} with ${r.foreignKey} 0, which names no ${principal.name}, and no operation of the changeset links it to one: name the ${principal.name} in the URI, by a binding, or by a later $links request of the same changeset.`,
      );
    }
    if (typeof named !== 'bigint') return named;
    (values ??= new Map(plan.payload.values)).set(r.foreignKey, named);
  }
  return { plan: values === undefined ? plan : { ...plan, payload: { ...plan.payload, values } } };
}

type WaitFor = { readonly waitFor: string };

/** The id of the principal a later operation links `$contentId` to through `r`, or the operation that creates it. */
function laterParent(view: ChangesetView, operations: readonly PlannedOperation[], index: number, contentId: string, r: ReferenceRelation, principal: EntityTypeDef): bigint | WaitFor | undefined {
  const idOf = (uri: string): bigint | WaitFor => {
    const n = contentIdReference(uri);
    if (n === undefined) return resolveEntityUri(view.model, uri, principal);
    if (!view.ran(n)) return { waitFor: n };
    const entity = view.entityOf(n);
    if (entity === undefined || entity.type !== principal) throw badRequest(`'$${quote(n, 40)}' links Content-ID '${quote(contentId, 40)}' to something that is no ${principal.name}.`);
    return entity.id;
  };
  for (const later of operations.slice(index + 1)) {
    const { path, plan } = later;
    if (path.kind !== 'resource' || path.steps.length > 0 || plan === undefined) continue;
    const target = path.target;
    // PUT $n/$links/Product with the product's URI: the dependent's to-one link.
    if (later.reference === contentId && plan.kind === 'addLink' && target.kind === 'links' && !target.navigation.many && target.navigation.relation.name === r.name) {
      return idOf(plan.uri);
    }
    // POST Products(1L)/$links/ProductImages with <uri>$n</uri>: the principal's to-many link.
    if (plan.kind === 'addLink' && contentIdReference(plan.uri) === contentId && target.kind === 'links' && target.navigation.many && target.navigation.relation.name === r.name) {
      if (later.reference === undefined) return path.key;
      if (!view.ran(later.reference)) return { waitFor: later.reference };
      return view.entityOf(later.reference)?.id;
    }
    // MERGE (PUT) of $n binding the parent, or sending its key.
    if (later.reference === contentId && plan.kind === 'update' && target.kind === 'entity') {
      const bound = r.dependentNav === undefined ? undefined : bindingUris(plan.payload.bindings.get(r.dependentNav) ?? [])[0];
      if (bound !== undefined) return idOf(bound);
      const sent = plan.payload.values.get(r.foreignKey);
      if (typeof sent === 'bigint' && sent !== 0n) return sent;
    }
  }
  return undefined;
}
