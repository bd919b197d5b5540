/**
 * A read, planned: which rows of which collection, filtered, ordered, paged and expanded. The
 * protocol layer builds it from a request's options (./read-options.ts); the store executes it
 * (src/store/reads.ts). It holds no text left to parse and no SQL.
 */
import type { EntityTypeDef, NavigationDef } from '../model/types';
import type { ExpandNode, Expr, LiteralExpr, OrderByItem } from './expr/ast';

/** Where the rows of a read come from. */
export type ReadSource =
  /** The whole entity set of the type. */
  | { readonly kind: 'set' }
  /** The entities a navigation leads to from one entity. */
  | { readonly kind: 'navigation'; readonly navigation: NavigationDef; readonly sourceId: bigint }
  /** One entity by key (an entity read with $expand or $filter). */
  | { readonly kind: 'key'; readonly id: bigint }
  /**
   * The entities of the set the change log lists after `since` (a position of the store's
   * engine, see store/change-log.ts): a delta read. `unmatched`: those of them the filter does
   * not hold for (any more), which a delta answers as removed.
   */
  | { readonly kind: 'changes'; readonly since: string; readonly unmatched?: boolean };

export interface ReadPlan {
  readonly type: EntityTypeDef;
  readonly source: ReadSource;
  readonly filter?: Expr;
  /** The client's ordering; the key is always appended as the last tie-breaker. */
  readonly orderBy: readonly OrderByItem[];
  readonly skip?: number;
  readonly top?: number;
  /**
   * Continue after this position ($skiptoken): the values of the ordering keys of the last row
   * already delivered, then its key.
   */
  readonly after?: readonly LiteralExpr[];
  readonly expand: readonly ExpandNode[];
}
