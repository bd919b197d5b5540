/**
 * Delta tokens: what a delta link (`…?!deltatoken=<token>`) carries, as opaque base64url text.
 *
 * A token names the account and the entity set it was issued for, a hash of the query options
 * the feed was read with ($filter, $select, $expand: following the link must send the same), a
 * position in the change log (store/change-log.ts ChangePosition) and when that position was
 * taken. It is no secret and not signed: it only ever reads the account's own change log, which
 * the request's credentials open anyway, and a token altered by hand reads the wrong changes of
 * the caller's own data.
 *
 * Tokens also carry the paging of a tracked read: a next link of the first feed keeps the
 * position its first page was read at (the delta link at its end carries that one), and a next
 * link of a delta keeps both where the delta started and the position its delta link will carry.
 */
import { createHash } from 'node:crypto';
import { ODataError, badRequest } from '../odata/errors';
import { quote } from '../odata/quote';
import type { QueryOptions } from '../odata/uri/query-options';
import { isPosition, type ChangePosition } from '../store/change-log';

/** The custom query option that carries a token (Apache Olingo's and SAP Gateway's name). */
export const DELTA_TOKEN_OPTION = '!deltatoken';

export interface DeltaToken {
  readonly accountId: number;
  readonly setName: string;
  readonly engine: 'sqlite' | 'postgres';
  /** optionsHash() of the read that issued it. */
  readonly options: string;
  /**
   * 'feed': a next link of the first, whole feed (`since` is the position of its first page);
   * 'delta': the changes after `since`.
   */
  readonly phase: 'feed' | 'delta';
  readonly since: ChangePosition;
  /** UTC ms when `since` was taken: a token older than the change log's retention is gone. */
  readonly sinceAt: number;
  /** A next link of a delta: the position (and its time) the delta link on its last page carries. */
  readonly until?: { readonly position: ChangePosition; readonly at: number };
}

interface Wire {
  v: 1;
  a: number;
  s: string;
  e: 's' | 'p';
  o: string;
  k: 'f' | 'd';
  p: string;
  t: number;
  u?: [string, number];
}

export function encodeDeltaToken(t: DeltaToken): string {
  const wire: Wire = { v: 1, a: t.accountId, s: t.setName, e: t.engine === 'postgres' ? 'p' : 's', o: t.options, k: t.phase === 'feed' ? 'f' : 'd', p: t.since, t: t.sinceAt };
  if (t.until) wire.u = [t.until.position, t.until.at];
  return Buffer.from(JSON.stringify(wire), 'utf8').toString('base64url');
}

const shown = (text: string) => quote(text.length > 80 ? `${text.slice(0, 80)}…` : text);

/** What a token may be, or undefined when it is not one (malformed). */
function decodeWire(text: string): DeltaToken | undefined {
  if (!/^[A-Za-z0-9_-]{1,8192}$/.test(text)) return undefined;
  let w: Partial<Wire>;
  try {
    w = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<Wire>;
  } catch {
    return undefined;
  }
  // JSON that is not an object (`null` above all) is no token: checked before reading a field.
  if (typeof w !== 'object' || w === null) return undefined;
  const engine = w.e === 'p' ? 'postgres' : 'sqlite';
  const integer = (v: unknown) => typeof v === 'string' && isPosition(engine, v);
  if (
    typeof w !== 'object' || w === null || w.v !== 1 || !Number.isSafeInteger(w.a) || typeof w.s !== 'string' || (w.e !== 's' && w.e !== 'p') ||
    typeof w.o !== 'string' || (w.k !== 'f' && w.k !== 'd') || !integer(w.p) || !Number.isSafeInteger(w.t)
  ) {
    return undefined;
  }
  if (w.u !== undefined && !(Array.isArray(w.u) && w.u.length === 2 && integer(w.u[0]) && Number.isSafeInteger(w.u[1]))) return undefined;
  return {
    accountId: w.a!,
    setName: w.s,
    engine,
    options: w.o,
    phase: w.k === 'f' ? 'feed' : 'delta',
    since: w.p!,
    sinceAt: w.t!,
    ...(w.u ? { until: { position: w.u[0], at: w.u[1] } } : {}),
  };
}

/** What a token is checked against: the request that follows it. */
export interface TokenExpectation {
  readonly accountId: number;
  readonly setName: string;
  readonly engine: 'sqlite' | 'postgres';
  readonly options: string;
  readonly now: number;
  readonly retentionMs: number;
}

/**
 * The token a request sent, checked: malformed, another account's, another set's or issued with
 * other options is a 400 naming it; older than the retention (or from a database on the other
 * engine, whose change log positions mean something else) a 410 Gone.
 */
export function decodeDeltaToken(text: string, expect: TokenExpectation): DeltaToken {
  const token = decodeWire(text);
  // Another account's token reads as no token at all: nothing tells the caller it exists.
  if (!token || token.accountId !== expect.accountId) throw badRequest(`The ${DELTA_TOKEN_OPTION} '${shown(text)}' is not a delta token of this account.`);
  if (token.setName !== expect.setName) throw badRequest(`The ${DELTA_TOKEN_OPTION} '${shown(text)}' was issued for ${token.setName}, not ${expect.setName}.`);
  if (token.options !== expect.options) {
    throw badRequest(`The ${DELTA_TOKEN_OPTION} '${shown(text)}' was issued with other $filter, $select or $expand options: follow the link as it was given.`);
  }
  if (token.engine !== expect.engine || expect.now - token.sinceAt > expect.retentionMs) {
    throw new ODataError(
      410,
      `The ${DELTA_TOKEN_OPTION} '${shown(text)}' is older than the ${Math.round(expect.retentionMs / 86_400_000)} days the service keeps changes: read the feed again in full for a new delta link.`,
    );
  }
  return token;
}

/** The options a token binds: those that choose which entities and which of their parts a delta answers. */
export function optionsHash(options: QueryOptions): string {
  const parts = (['$filter', '$select', '$expand'] as const).map((name) => `${name}=${options.system.get(name) ?? ''}`);
  return createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, 16);
}
