/**
 * The system query options of a read, checked and turned into a ReadPlan: $filter, $orderby,
 * $top, $skip, $skiptoken, $expand, $select and $inlinecount. Which options a resource takes was
 * decided before (uri/uri-kind.ts); an option present here is one its resource takes. A response
 * needs version 2.0 for $select, $inlinecount and $skiptoken (and for server paging, decided by
 * the caller); 1.0 otherwise.
 */
import type { EntityTypeDef, Model } from '../model/types';
import { badRequest } from './errors';
import type { ExpandLimits, ExprLimits, LiteralExpr } from './expr/ast';
import { parseExpand, parseFilter, parseOrderBy, parseSelect, parseUriLiteral } from './expr';
import type { ProtocolVersion } from './negotiate';
import type { ReadPlan, ReadSource } from './plan';
import type { QueryOptions } from './uri/query-options';
import { quote } from './quote';

export interface ReadLimits {
  readonly expr: ExprLimits;
  readonly expand: ExpandLimits;
  /** The largest $top. */
  readonly maxTop: number;
}

export interface PlannedRead {
  readonly plan: ReadPlan;
  readonly select?: ReadonlySet<string>;
  /** $inlinecount=allpages. */
  readonly inlineCount: boolean;
  /** The lowest DataServiceVersion the options need. */
  readonly version: ProtocolVersion;
}

/** A whole number from 0 to max, or a 400 naming the option. */
function wholeNumber(name: string, text: string, max: number): number {
  if (!/^\d{1,16}$/.test(text.trim())) throw badRequest(`The value of ${name} must be a whole number of 0 or more, not '${quote(text)}'.`);
  const n = Number(text.trim());
  if (n > max) throw badRequest(`The value of ${name} is ${n}, more than the limit of ${max}.`);
  return n;
}

/** The literals of a $skiptoken: a comma-separated list, commas inside quotes not counting. */
function readSkipToken(text: string): LiteralExpr[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") quoted = !quoted;
    else if (c === ',' && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  if (parts.length > 64) throw badRequest('The $skiptoken has too many values.');
  return parts.map((part) => {
    try {
      return parseUriLiteral(part.trim());
    } catch {
      throw badRequest(`The $skiptoken '${quote(text)}' is not one this service issued.`);
    }
  });
}

export function planRead(model: Model, type: EntityTypeDef, source: ReadSource, options: QueryOptions, limits: ReadLimits): PlannedRead {
  const o = options.system;
  let version: ProtocolVersion = 1;

  const filterText = o.get('$filter');
  const filter = filterText === undefined ? undefined : parseFilter(model, type, filterText, limits.expr);
  const orderText = o.get('$orderby');
  const orderBy = orderText === undefined ? [] : parseOrderBy(model, type, orderText, limits.expr);
  const topText = o.get('$top');
  const top = topText === undefined ? undefined : wholeNumber('$top', topText, limits.maxTop);
  const skipText = o.get('$skip');
  const skip = skipText === undefined ? undefined : wholeNumber('$skip', skipText, Number.MAX_SAFE_INTEGER);
  const expandText = o.get('$expand');
  const expand = expandText === undefined ? [] : parseExpand(model, type, expandText, limits.expand);
  const selectText = o.get('$select');
  const select = selectText === undefined ? undefined : parseSelect(model, type, selectText, expand);
  if (select) version = 2;

  const inlineText = o.get('$inlinecount');
  let inlineCount = false;
  if (inlineText !== undefined) {
    if (inlineText !== 'allpages' && inlineText !== 'none') throw badRequest(`The value of $inlinecount must be 'allpages' or 'none', not '${quote(inlineText)}'.`);
    inlineCount = inlineText === 'allpages';
    version = 2;
  }

  const tokenText = o.get('$skiptoken');
  let after: LiteralExpr[] | undefined;
  if (tokenText !== undefined) {
    after = readSkipToken(tokenText);
    if (after.length !== orderBy.length + 1) throw badRequest(`The $skiptoken '${quote(tokenText)}' does not fit the ordering of this request.`);
    const last = after[after.length - 1]!;
    if (last.type !== 'Edm.Int64' && last.type !== 'Edm.Int32') throw badRequest(`The $skiptoken '${quote(tokenText)}' does not end with a key.`);
    after[after.length - 1] = { kind: 'literal', type: 'Edm.Int64', value: BigInt(last.value as bigint | number) };
    for (const [i, item] of orderBy.entries()) {
      const l = after[i]!;
      if (l.value !== null && l.type !== item.expr.type) throw badRequest(`The $skiptoken '${quote(tokenText)}' does not fit the ordering of this request.`);
    }
    version = 2;
  }

  const plan: ReadPlan = {
    type,
    source,
    ...(filter ? { filter } : {}),
    orderBy,
    ...(skip !== undefined ? { skip } : {}),
    ...(top !== undefined ? { top } : {}),
    ...(after ? { after } : {}),
    expand,
  };
  return { plan, ...(select ? { select } : {}), inlineCount, version };
}
