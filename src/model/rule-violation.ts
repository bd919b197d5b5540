/**
 * What a request breaks, as data: a kind and a message, no protocol. The catalogue (its rules,
 * values, writes and operations) and the store throw these; the service edge
 * (service/error-reply.ts) answers each kind with its status in one table. A uniqueness violation names its key, whichever caught it: the generic check
 * before the write, or the unique index of either engine.
 */
import type { EntityTypeDef, UniqueKey } from './types';

export type ViolationKind =
  /** The write's values are not acceptable (answered 400). */
  | 'invalid'
  /** The write conflicts with what is stored (answered 409). */
  | 'conflict'
  /** Something the request names does not exist in the account (answered 404). */
  | 'notFound';

export class RuleViolation extends Error {
  constructor(
    readonly kind: ViolationKind,
    message: string,
  ) {
    super(message);
  }
}

/** A second entity with the same values of a unique key. */
export class UniqueKeyViolation extends RuleViolation {
  constructor(
    readonly type: EntityTypeDef,
    readonly key: UniqueKey,
    message: string,
  ) {
    super('conflict', message);
  }
}

/** An entity the request names by key does not exist in the account (or belongs to another). */
export class EntityMissing extends RuleViolation {
  constructor(
    readonly type: EntityTypeDef,
    readonly id: bigint,
  ) {
    super('notFound', `${type.setName}(${id}L) does not exist.`);
  }
}

export const invalid = (message: string): RuleViolation => new RuleViolation('invalid', message);
export const conflict = (message: string): RuleViolation => new RuleViolation('conflict', message);
