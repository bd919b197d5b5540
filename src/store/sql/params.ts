/**
 * The bound parameters of a statement built from a request, with numbered placeholders: an
 * operand that a dialect writes twice (a null guard, a suffix test) refers to the same parameter
 * both times, so the SQL text and the parameter list can never drift apart.
 */
import type { SqlValue } from '../store';

export class SqlParams {
  readonly values: SqlValue[] = [];

  /** Adds a value and answers its placeholder. */
  add(value: SqlValue): string {
    this.values.push(value);
    return `?${this.values.length}`;
  }
}
