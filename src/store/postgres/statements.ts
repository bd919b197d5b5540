/**
 * Named prepared statements: PostgreSQL parses and plans a statement once per connection and
 * then only binds values. Each SQL text gets a name derived from its hash, so the same text has
 * the same name on every connection.
 *
 * $filter and $orderby make new texts without end, so each connection keeps a bounded number
 * (LRU). A statement pushed out is DEALLOCATEd when its connection goes back to the pool, outside
 * any transaction (a transaction that failed cannot run DEALLOCATE); if it is used again before
 * that, it simply comes back into the LRU, still prepared.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { ClientBase } from 'pg';
import { numberPlaceholders } from './placeholders';

export interface Prepared {
  /** The SQL with numbered placeholders. */
  readonly text: string;
  readonly name: string;
  /** Sent unnamed, planned for the values of each execution (PLANNED_PER_EXECUTION). */
  readonly perExecution: boolean;
}

/**
 * The start of a statement that is never prepared. A connection's prepared statement switches to
 * a generic plan after five executions and keeps it for as long as the connection lives. Where
 * that plan was made for a table with few rows and no statistics (a new account's first
 * import), it may scan the whole account for every value of a list, long after the table has
 * grown. Planned for its values each time, the statement costs a plan per execution instead.
 */
export const PLANNED_PER_EXECUTION = '/* planned per execution */ ';

/** Translations are the same for every connection: one shared, bounded cache. */
const translations = new LRUCache<string, Prepared>({ max: 2000 });

export function prepared(sql: string): Prepared {
  let p = translations.get(sql);
  if (!p) {
    p = { text: numberPlaceholders(sql), name: 's' + createHash('sha1').update(sql).digest('hex').slice(0, 30), perExecution: sql.startsWith(PLANNED_PER_EXECUTION) };
    translations.set(sql, p);
  }
  return p;
}

/**
 * node-pg remembers which names a connection has parsed (to skip Parse next time) in
 * `connection.parsedStatements`; it has no public way to forget one, so after DEALLOCATE the
 * entry is removed there, or node-pg would Bind a statement that no longer exists.
 */
interface ParsedStatements {
  connection?: { parsedStatements?: Record<string, string> };
}

export class StatementCache {
  private readonly evicted = new Set<string>();
  private readonly names: LRUCache<string, true>;

  constructor(max: number) {
    this.names = new LRUCache<string, true>({
      max,
      dispose: (_value, name, reason) => {
        if (reason === 'evict') this.evicted.add(name);
      },
    });
  }

  /** Notes that `p` is used on this connection now (keeps it from being deallocated). */
  use(p: Prepared): void {
    this.evicted.delete(p.name);
    this.names.set(p.name, true);
  }

  /** Deallocates what was pushed out; call only outside a transaction. */
  async deallocateEvicted(client: ClientBase): Promise<void> {
    if (this.evicted.size === 0) return;
    const parsed = (client as unknown as ParsedStatements).connection?.parsedStatements ?? {};
    for (const name of [...this.evicted]) {
      this.evicted.delete(name);
      // A statement whose Parse failed was never prepared: there is nothing to deallocate.
      if (parsed[name] === undefined) continue;
      // Forgotten before the DEALLOCATE is sent: a statement sent behind it on a shared
      // connection (./shared-reads.ts) parses the name again instead of binding to it.
      delete parsed[name];
      await client.query(`DEALLOCATE "${name}"`);
    }
  }

  /** Statement names this connection currently keeps (for tests). */
  get size(): number {
    return this.names.size;
  }
}
