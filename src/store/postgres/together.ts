/**
 * Several statements sent as one sequence of extended-protocol messages with a single Sync at
 * the end. PostgreSQL runs everything before a Sync in one implicit transaction: a setting made
 * with set_config(…, true) by the first statement holds for the next, and the Sync ends it
 * (COMMIT, or ROLLBACK after an error, which also skips the statements after the failed one).
 * So a read of one statement needs no BEGIN and no COMMIT to run with its tenant set, and costs
 * node-pg one query instead of four.
 *
 * It is a node-pg Query (node-pg's pipeline mode accepts no other kind) whose submit writes the
 * messages of every statement; node-pg's own handlers collect one result per statement.
 */
import type { ClientBase, QueryResult } from 'pg';
import pg from './pg-driver';
import { prepared, type StatementCache } from './statements';
import type { SqlValue } from '../store';

/** node-pg's conversion of a parameter to its text form (what its own Query binds with). */
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

export interface StatementToSend {
  readonly sql: string;
  readonly params: readonly SqlValue[];
}

/** The parts of node-pg's connection (pg/lib/connection.js) that writing the messages uses. */
interface WireConnection {
  readonly parsedStatements: Record<string, string>;
  readonly submittedNamedStatements: Record<string, string>;
  parse(message: { text: string; name: string }): void;
  bind(message: { statement: string; values: readonly unknown[]; valueMapper: (value: unknown) => unknown }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string }): void;
  sync(): void;
  on(event: 'parseComplete', listener: () => void): void;
  off(event: 'parseComplete', listener: () => void): void;
}

/** node-pg's Query as far as this subclass touches it. */
interface QueryBase {
  new (config: { text: string; rowMode?: 'array' }, values: undefined, callback: (error: Error | null, results: unknown) => void): {
    prepare(connection: WireConnection): void;
    requiresPreparation(): boolean;
    handleError(error: Error, connection: WireConnection): void;
    handleReadyForQuery(connection: WireConnection): void;
  };
}

/** The query node-pg is receiving answers for (not public API, as the rest of the wire). */
interface WithActiveQuery {
  _getActiveQuery(): unknown;
}

class StatementsTogether extends (pg.Query as unknown as QueryBase) {
  /**
   * The names of the Parse messages sent ('' for an unnamed one), in order, until the server
   * confirms each with ParseComplete. node-pg records a confirmed name for a query of one
   * statement only; this one records its own, so that after an error it knows exactly which
   * were prepared (those confirmed before it) and which were not (the rest: after an error the
   * server skips every message up to the Sync).
   */
  private readonly unconfirmed: string[] = [];
  private connection: WireConnection | undefined;

  constructor(
    private readonly client: WithActiveQuery,
    private readonly statements: readonly StatementToSend[],
    private readonly cache: StatementCache | undefined,
    asArrays: boolean,
    callback: (error: Error | null, results: unknown) => void,
  ) {
    super({ text: statements.map((s) => s.sql).join('; '), ...(asArrays ? { rowMode: 'array' as const } : {}) }, undefined, callback);
  }

  override requiresPreparation(): boolean {
    return true;
  }

  override prepare(connection: WireConnection): void {
    for (const statement of this.statements) {
      const p = prepared(statement.sql);
      const name = this.cache && !p.perExecution ? p.name : '';
      if (name) this.cache!.use(p);
      if (!name || (connection.parsedStatements[name] === undefined && connection.submittedNamedStatements[name] === undefined)) {
        connection.parse({ text: p.text, name });
        if (name) connection.submittedNamedStatements[name] = p.text;
        this.unconfirmed.push(name);
      }
      connection.bind({ statement: name, values: statement.params, valueMapper: prepareValue });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '' });
    }
    connection.sync();
    if (this.unconfirmed.length > 0) {
      this.connection = connection;
      connection.on('parseComplete', this.parsed);
    }
  }

  /** A ParseComplete: for this query's next Parse only while its answers are being received. */
  private readonly parsed = (): void => {
    if (this.client._getActiveQuery() !== this) return;
    const name = this.unconfirmed.shift();
    const connection = this.connection!;
    if (!name) return;
    connection.parsedStatements[name] = connection.submittedNamedStatements[name]!;
    delete connection.submittedNamedStatements[name];
  };

  private stopListening(): void {
    this.connection?.off('parseComplete', this.parsed);
    this.connection = undefined;
  }

  override handleReadyForQuery(connection: WireConnection): void {
    this.stopListening();
    super.handleReadyForQuery(connection);
  }

  override handleError(error: Error, connection: WireConnection): void {
    // The Parses not confirmed were skipped (or failed): those names are not prepared.
    for (const name of this.unconfirmed) if (name) delete connection.submittedNamedStatements[name];
    this.stopListening();
    super.handleError(error, connection);
  }
}

/** Sends the statements together (one write, one Sync) and answers their results in order. */
export function runTogether(client: ClientBase, statements: readonly StatementToSend[], cache: StatementCache | undefined, asArrays: boolean): Promise<QueryResult[]> {
  return new Promise((resolve, reject) => {
    const query = new StatementsTogether(client as unknown as WithActiveQuery, statements, cache, asArrays, (error, results) => {
      if (error) reject(error);
      else resolve((Array.isArray(results) ? results : [results]) as QueryResult[]);
    });
    client.query(query as never);
  });
}
