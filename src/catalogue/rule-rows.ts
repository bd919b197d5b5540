import type { CatalogueQueries } from '../store/catalogue-queries';
import type { EntityStore } from '../store/entities';

/**
 * Other rows as a write's rules see them: read to check counts, keys and references, and
 * written where a placement makes room (image numbering). For most writes it is the stored rows
 * (the EntityStore); a deep insert passes a view that also holds the rows of its tree that are
 * not stored yet (tree-rows.ts), with the characteristics query answered over both.
 */
export type RuleRows = Pick<EntityStore, 'exists' | 'find' | 'findWhere' | 'countWhere' | 'update'> & Partial<Pick<CatalogueQueries, 'characteristicsOfProduct'>>;
