/**
 * Several statements sent as one sequence of extended-protocol messages with a single Sync at
 * the end. PostgreSQL runs everything before a Sync in one implicit transaction: a setting made
 * with set_config(…, true) by the first statement holds for the next, and the Sync ends it
 * (COMMIT, or ROLLBACK after an error, which also skips the statements after the failed one).
 * So a read of one statement needs no BEGIN and no COMMIT to run with its tenant set, and costs
 * node-pg one query instead of four.
 *
 * It is a node-pg Query (node-pg's pipeline mode accepts no other kind) that writes the messages
 * of every statement and collects one result per statement itself: node-pg's own Result builds,
 * for every row description, an object with a key per column to copy rows from, which cost a
 * GET by key about 8% of its CPU even where rows are read as arrays.
 */
import type { ClientBase, FieldDef } from 'pg';
import pg from './pg-driver';
import { prepared, type StatementCache } from './statements';
import { pgTypeParsers } from './values';
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

/** node-pg's Query as far as this subclass touches it: the client calls these handlers. */
interface QueryBase {
  new (config: { text: string }): {
    prepare(connection: WireConnection): void;
    requiresPreparation(): boolean;
    handleRowDescription(message: { fields: FieldDef[] }): void;
    handleDataRow(message: { fields: (string | null)[] }): void;
    handleCommandComplete(message: { text: string }, connection: WireConnection): void;
    handleEmptyQuery(connection: WireConnection): void;
    handleError(error: Error, connection: WireConnection): void;
    handleReadyForQuery(connection: WireConnection): void;
  };
}

/** One statement's answer: its rows (arrays or objects, as asked), columns and row count. */
export interface StatementResult {
  readonly fields: readonly FieldDef[];
  readonly rows: unknown[];
  rowCount: number;
}

type Parser = (text: string) => unknown;

/** The text node-pg's Query is made with (it never sends it: prepare() is this class's own). */
const STATEMENTS_TOGETHER = 'statements sent together';

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

  private readonly results: StatementResult[] = [];
  /** How many statements the server completed (each one's result is whole). */
  private completed = 0;
  /** The result rows are being added to, and how its columns are parsed. */
  private current: { result: StatementResult; parsers: Parser[]; asArrays: boolean } | undefined;
  /** A value that failed to parse: reported once the server is done with the sequence. */
  private parseFailure: Error | undefined;

  constructor(
    private readonly client: WithActiveQuery,
    private readonly statements: readonly StatementToSend[],
    private readonly cache: StatementCache | undefined,
    /** Which statements' rows are arrays of column values (the others are objects by column name). */
    private readonly asArrays: (index: number) => boolean,
    private readonly answer: (error: Error | null, results?: readonly StatementResult[]) => void,
  ) {
    // node-pg wants a text; the statements' own texts go out in prepare().
    super({ text: STATEMENTS_TOGETHER });
  }

  override handleRowDescription(message: { fields: FieldDef[] }): void {
    const result: StatementResult = { fields: message.fields, rows: [], rowCount: 0 };
    const parsers = message.fields.map((field) => pgTypeParsers.getTypeParser(field.dataTypeID, field.format === 'binary' ? 'binary' : 'text'));
    this.current = { result, parsers, asArrays: this.asArrays(this.results.length) };
    this.results.push(result);
  }

  override handleDataRow(message: { fields: (string | null)[] }): void {
    const current = this.current;
    if (!current || this.parseFailure) return;
    try {
      const raw = message.fields;
      if (current.asArrays) {
        const row = new Array<unknown>(raw.length);
        for (let i = 0; i < raw.length; i++) row[i] = raw[i] === null ? null : current.parsers[i]!(raw[i]!);
        current.result.rows.push(row);
      } else {
        const row: Record<string, unknown> = {};
        const fields = current.result.fields;
        for (let i = 0; i < raw.length; i++) row[fields[i]!.name] = raw[i] === null ? null : current.parsers[i]!(raw[i]!);
        current.result.rows.push(row);
      }
    } catch (error) {
      this.parseFailure = error as Error;
    }
  }

  override handleCommandComplete(message: { text: string }): void {
    // A statement that returns no rows (no row description) still has a result.
    if (!this.current) this.results.push({ fields: [], rows: [], rowCount: 0 });
    this.completed++;
    const result = this.results[this.results.length - 1]!;
    const count = /(\d+)$/.exec(message.text);
    result.rowCount = count ? Number(count[1]) : result.rows.length;
    this.current = undefined;
  }

  override handleEmptyQuery(): void {
    this.results.push({ fields: [], rows: [], rowCount: 0 });
    this.completed++;
  }

  override requiresPreparation(): boolean {
    return true;
  }

  override prepare(connection: WireConnection): void {
    // Every Parse before the first Execute: a statement that fails skips the rest of the
    // sequence, and a Parse skipped so would leave its name unprepared for the sequences sent
    // behind this one on the same connection (reads share connections: ./shared-reads.ts),
    // which do not parse it again. An unnamed statement is parsed right before its Bind, since
    // each Parse of one replaces the last.
    const names = this.statements.map((statement) => {
      const p = prepared(statement.sql);
      const name = this.cache && !p.perExecution ? p.name : '';
      if (name) {
        this.cache!.use(p);
        if (connection.parsedStatements[name] === undefined && connection.submittedNamedStatements[name] === undefined) {
          connection.parse({ text: p.text, name });
          connection.submittedNamedStatements[name] = p.text;
          this.unconfirmed.push(name);
        }
      }
      return { name, text: p.text };
    });
    for (const [i, { name, text }] of names.entries()) {
      if (!name) {
        connection.parse({ text, name });
        this.unconfirmed.push(name);
      }
      connection.bind({ statement: name, values: this.statements[i]!.params, valueMapper: prepareValue });
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

  override handleReadyForQuery(): void {
    this.stopListening();
    if (this.parseFailure) this.answer(this.parseFailure, this.results.slice(0, this.completed));
    else this.answer(null, this.results);
  }

  override handleError(error: Error, connection: WireConnection): void {
    // The Parses not confirmed were skipped (or failed): those names are not prepared.
    for (const name of this.unconfirmed) if (name) delete connection.submittedNamedStatements[name];
    this.stopListening();
    this.answer(error, this.results.slice(0, this.completed));
  }
}

/** Per error runTogether rejected with, the results of the statements completed before it. */
const completedBeforeFailure = new WeakMap<Error, readonly StatementResult[]>();

/**
 * The results of the statements that completed before the one that failed with `error` (empty
 * when it is not runTogether's): a sequence's first statements may have answered what decides
 * how the failure is reported.
 */
export function completedBefore(error: unknown): readonly StatementResult[] {
  return error instanceof Error ? (completedBeforeFailure.get(error) ?? []) : [];
}

/**
 * Sends the statements together (one write, one Sync) and answers their results in order.
 * `asArrays(i)`: whether statement i's rows come as arrays of column values, or as objects.
 */
export function runTogether(
  client: ClientBase,
  statements: readonly StatementToSend[],
  cache: StatementCache | undefined,
  asArrays: (index: number) => boolean,
): Promise<readonly StatementResult[]> {
  return new Promise((resolve, reject) => {
    const query = new StatementsTogether(client as unknown as WithActiveQuery, statements, cache, asArrays, (error, results) => {
      if (error) {
        completedBeforeFailure.set(error, results ?? []);
        reject(error);
      } else resolve(results!);
    });
    client.query(query as never);
  });
}
