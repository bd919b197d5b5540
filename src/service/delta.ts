/**
 * Change tracking on entity sets (delta links), as Apache Olingo V2 and SAP Gateway add it to
 * OData 2.0 (docs/protocol.md, "Change tracking"):
 *
 * - A feed read asks with `Prefer: odata.track-changes` (OData 4's wording; answered with
 *   `Preference-Applied`) or with an empty `!deltatoken=` (no header needed). Its answer is the
 *   feed as ever, and its last page ends with a delta link: `<link rel="delta" href="…"/>` in
 *   Atom, `"__delta":"…"` beside `results` in JSON.
 * - Following the link (`…?$filter=…&!deltatoken=<token>`) answers the entities of the set
 *   created or changed since, as they are now and through the same $filter, $select and $expand,
 *   then the ones removed since (deleted, or no longer matching the filter): Atom tombstones
 *   (RFC 6721 `at:deleted-entry`), JSON deleted entries; and a new delta link.
 *
 * The entities and the new link's position come from one snapshot (one Store.read), so a change
 * committed before a link was issued is in the delta that link answers (store/change-log.ts).
 * Server-driven paging keeps the context in the next links' tokens; only the last page carries
 * the delta link.
 */
import { badRequest } from '../odata/errors';
import { entityId, entityUri } from '../odata/entity';
import type { RemovedEntity } from '../odata/atom/writer';
import type { ReadSource } from '../odata/plan';
import type { PlannedRead } from '../odata/read-options';
import type { SystemQueryOption } from '../odata/uri/query-options';
import { ChangeLog, currentPosition, type ChangePosition } from '../store/change-log';
import type { SqlExecutor } from '../store/store';
import { DELTA_TOKEN_OPTION, decodeDeltaToken, encodeDeltaToken, optionsHash, type DeltaToken } from './delta-token';
import type { ODataRequest, ResourcePathOf } from './request';

/** The preference a client sends to have a feed tracked (OData 4.0 §8.2.8.5). */
export const TRACK_CHANGES = 'odata.track-changes';

/** The system query options a tracked read takes: those a delta can answer again. */
const TRACKED_OPTIONS: ReadonlySet<SystemQueryOption> = new Set(['$filter', '$select', '$expand', '$format', '$skiptoken']);

const DAY_MS = 86_400_000;

/** Whether the request asks for change tracking, and with which token (undefined: a first read). */
export type TrackingRequest = { readonly token: string | undefined; readonly byPreference: boolean };

function prefersTracking(r: ODataRequest): boolean {
  const prefer = r.header('prefer');
  return prefer !== undefined && prefer.split(',').some((p) => p.split(';')[0]!.trim().toLowerCase() === TRACK_CHANGES);
}

/**
 * What the request asks: undefined when it asks nothing (its answer is exactly what it was
 * before delta links existed). A `!deltatoken` where tracking cannot apply is a 400; a
 * preference that cannot be applied is left unapplied, as preferences are.
 */
export function trackingOf(r: ODataRequest, path: ResourcePathOf<'resource'>): TrackingRequest | undefined {
  const token = r.options.custom.get(DELTA_TOKEN_OPTION);
  const byPreference = token === undefined && prefersTracking(r);
  if (token === undefined && !byPreference) return undefined;
  const isSet = path.key === undefined && path.steps.length === 0 && path.target.kind === 'collection';
  const other = [...r.options.system.keys()].filter((name) => !TRACKED_OPTIONS.has(name));
  if (byPreference) return isSet && other.length === 0 && !r.options.system.has('$skiptoken') ? { token: undefined, byPreference } : undefined;
  if (!isSet) throw badRequest(`${DELTA_TOKEN_OPTION} applies to an entity set read as a whole (Products, not Products(1L) or a navigation).`);
  if (other.length > 0) throw badRequest(`${DELTA_TOKEN_OPTION} takes $filter, $select and $expand only, not ${other.join(', ')}: a delta answers every change of the entities they select.`);
  if (r.options.system.has('$skiptoken') && token === '') throw badRequest(`$skiptoken with change tracking comes only in the next links the service gives, with their ${DELTA_TOKEN_OPTION}.`);
  return { token: token === '' ? undefined : token, byPreference: false };
}

/** How readCollection reads and ends a tracked feed. */
export interface TrackedRead {
  readonly source: ReadSource;
  /** Response headers (Preference-Applied). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * What follows the page's entries: the token of its next link when `more`, else the removed
   * entities (of a delta) and the delta link.
   */
  end(tx: SqlExecutor, planned: PlannedRead, more: boolean): Promise<{ readonly nextToken?: string; readonly removed: readonly RemovedEntity[]; readonly link?: string }>;
}

/** The address of a delta link: the set, the options that select what it answers, and the token. */
function deltaLink(r: ODataRequest, setName: string, token: DeltaToken): string {
  const parts: string[] = [];
  for (const name of ['$filter', '$select', '$expand', '$format'] as const) {
    const value = r.options.system.get(name);
    if (value !== undefined) parts.push(`${name}=${encodeURIComponent(value)}`);
  }
  parts.push(`${DELTA_TOKEN_OPTION}=${encodeDeltaToken(token)}`);
  return `${r.serviceRoot}/${setName}?${parts.join('&')}`;
}

/**
 * Starts a tracked read inside its snapshot: the position is read first, so that it and the
 * entities come from the same snapshot.
 */
export async function trackedRead(r: ODataRequest, tx: SqlExecutor, path: ResourcePathOf<'resource'>, request: TrackingRequest): Promise<TrackedRead> {
  const { app } = r;
  const setName = path.set.setName;
  const base = { accountId: r.accountId, setName, engine: app.store.engine, options: optionsHash(r.options) };
  const now = app.clock.now();
  const token = request.token === undefined ? undefined : decodeDeltaToken(request.token, { ...base, now, retentionMs: app.config.changeRetentionDays * DAY_MS });
  const position = await currentPosition(app.store, tx);
  const headers: Record<string, string> = request.byPreference ? { 'Preference-Applied': TRACK_CHANGES } : {};

  if (token === undefined || token.phase === 'feed') {
    // The first read, whole: its delta link takes the changes after its first page's snapshot.
    const since = token?.since ?? position;
    const sinceAt = token?.sinceAt ?? now;
    return {
      source: { kind: 'set' },
      headers,
      async end(_tx, _planned, more) {
        if (more) return { nextToken: encodeDeltaToken({ ...base, phase: 'feed', since, sinceAt }), removed: [] };
        return { removed: [], link: deltaLink(r, setName, { ...base, phase: 'delta', since, sinceAt }) };
      },
    };
  }

  // A delta: the changes after the token's position; its own link carries this first page's.
  const until = token.until ?? { position, at: now };
  return {
    source: { kind: 'changes', since: token.since },
    headers,
    async end(endTx, planned, more) {
      if (more) return { nextToken: encodeDeltaToken({ ...base, phase: 'delta', since: token.since, sinceAt: token.sinceAt, until }), removed: [] };
      const removed = await removedSince(r, endTx, planned, token.since);
      return { removed, link: deltaLink(r, setName, { ...base, phase: 'delta', since: until.position, sinceAt: until.at }) };
    },
  };
}

/**
 * The entities a delta answers as removed: deleted since the position, and (with a $filter)
 * changed since so that the filter no longer holds for them. In id order, each once.
 */
async function removedSince(r: ODataRequest, tx: SqlExecutor, planned: PlannedRead, since: ChangePosition): Promise<RemovedEntity[]> {
  const { app } = r;
  const type = planned.plan.type;
  const log = new ChangeLog(app.store.codec);
  const removed = new Map<bigint, number>();
  for (const d of await log.deletedSince(app.store, tx, r.accountId, type, since)) removed.set(d.id, d.deletedAt);
  if (planned.plan.filter) {
    const modified = type.properties.find((p) => p.timestamp === 'modified');
    const unmatched = { type, source: { kind: 'changes', since, unmatched: true }, filter: planned.plan.filter, orderBy: [], expand: [] } as const;
    for await (const page of app.reads.stream(tx, r.accountId, unmatched, { pageSize: 256 })) {
      for (const rec of page.records) {
        const id = entityId(rec.values);
        const when = modified ? (rec.values[modified.name] as number | null) : null;
        removed.set(id, when ?? app.clock.now());
      }
    }
  }
  return [...removed.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((id) => ({ uri: entityUri(r.serviceRoot, type, id), when: removed.get(id)! }));
}
