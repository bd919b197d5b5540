/**
 * Entity rows: the SQL for every entity set, built once per type from the model, and the
 * conversion between rows and EntityRecords through the engine's codec. Every statement is
 * scoped by account_id and takes its values as bound parameters.
 */
import { compileOver, memberSource } from '../model/compiled-access';
import type { EntityTypeDef, LinkTableRelation, Model, NavigationDef, PropertyDef, ThroughEntityRelation, UniqueKey } from '../model/types';
import type { EdmValue } from '../odata/edm';
import type { ExprType } from '../odata/expr/ast';
import { compareIds, entityId, type EntityRecord } from '../odata/entity';
import { sentBehind, type RunResult, type SqlExecutor, type SqlValue, type Store, type ValueCodec } from './store';
import { ReadAheadExecutor } from './read-ahead';
import { ACCOUNT_COLUMN, comparedColumn, comparedValue, comparisonKeyColumn, uniqueIndexName, uniqueKeyColumns, VERSION_COLUMN, versionBumpFor } from './schema';
import { comparisonKey } from '../model/text';
import { indexName } from './postgres/ddl';
import { columnOf, findProperty, uniqueKeyMessage } from '../model/define';
import { UniqueKeyViolation } from '../model/rule-violation';
import { quote } from '../odata/quote';

const q = (name: string) => `"${name}"`;


/** The select list of an entity read as an array row (see EntityStore.decodeRow). */
export function columnsOf(type: EntityTypeDef, alias = 't'): string {
  // Every read of a collection names them: made once per type (for the usual alias).
  if (alias !== 't') return selectList(type, alias);
  let columns = columnsByType.get(type);
  if (columns === undefined) columnsByType.set(type, (columns = selectList(type, alias)));
  return columns;
}

const columnsByType = new Map<EntityTypeDef, string>();

function selectList(type: EntityTypeDef, alias: string): string {
  return [...type.properties.map((p) => `${alias}.${q(p.column)}`), `${alias}.${q(VERSION_COLUMN)}`].join(', ');
}

/** The UPDATE of one shape of change (EntityStore.update). */
interface UpdateStatement {
  /** Parameters: the changed values, their comparison keys, the account, the id. */
  readonly sql: string;
  /** The same UPDATE verified against the version read before: one more parameter, that version. */
  readonly verifiedSql: string;
  /** The changed properties written with their comparison keys. */
  readonly keyed: readonly PropertyDef[];
}

/** The properties that have a comparison key column beside their own (text rules compare ignoring case). */
const keyedPropertiesCache = new WeakMap<EntityTypeDef, readonly PropertyDef[]>();
/** The properties stored with a comparison key, once per type: every insert of the type writes them. */
function keyedProperties(type: EntityTypeDef): readonly PropertyDef[] {
  let keyed = keyedPropertiesCache.get(type);
  if (!keyed) keyedPropertiesCache.set(type, (keyed = type.properties.filter((p) => comparisonKeyColumn(p) !== undefined)));
  return keyed;
}

/** The comparison key stored for a value (null for null). */
const keyOf = (value: EdmValue | undefined): string | null => (value === null || value === undefined ? null : comparisonKey(String(value)));

/** Columns of that select list: a statement's own extra columns start here. */
export const rowWidth = (type: EntityTypeDef) => type.properties.length + 1;

interface TypeSql {
  /** t."id", t."product_id", … in property order. */
  readonly columns: string;
  readonly table: string;
  readonly byId: string;
  readonly all: string;
  readonly count: string;
  readonly insert: string;
  readonly deleteById: string;
  readonly exists: string;
}

const typeSqlCache = new WeakMap<EntityTypeDef, TypeSql>();

function typeSql(type: EntityTypeDef): TypeSql {
  let sql = typeSqlCache.get(type);
  if (!sql) {
    const table = q(type.table);
    // The properties in model order, then the version: readers decode rows by this layout.
    const columns = [...type.properties.map((p) => `t.${q(p.column)}`), `t.${q(VERSION_COLUMN)}`].join(', ');
    const written = insertColumns(type).names;
    sql = {
      columns,
      table,
      byId: `SELECT ${columns} FROM ${table} t WHERE t.account_id = ? AND t.id = ?`,
      all: `SELECT ${columns} FROM ${table} t WHERE t.account_id = ? ORDER BY t.id`,
      count: `SELECT count(*) AS n FROM ${table} t WHERE t.account_id = ?`,
      insert: `INSERT INTO ${table} (${written.join(', ')}) VALUES (${written.map(() => '?').join(', ')})`,
      deleteById: `DELETE FROM ${table} WHERE account_id = ? AND id = ?`,
      exists: `SELECT 1 AS found FROM ${table} WHERE account_id = ? AND id = ?`,
    };
    typeSqlCache.set(type, sql);
  }
  return sql;
}

/**
 * Bound values per statement at most: below both engines' limits (SQLite 32,766, PostgreSQL
 * 65,535) and large enough that a multi-row INSERT carries some hundreds of rows.
 */
const MAX_BOUND_VALUES = 30_000;
/** Rows per multi-row INSERT beyond which a larger statement saves nothing measurable. */
const MAX_ROWS_PER_INSERT = 1_000;

function rowsPerInsert(type: EntityTypeDef): number {
  return Math.max(1, Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_BOUND_VALUES / (type.properties.length + keyedProperties(type).length + 1))));
}

/** `rows` in consecutive chunks of at most `size`. */
function chunksOf<T>(rows: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < rows.length; start += size) chunks.push(rows.slice(start, start + size));
  return chunks;
}

/** The columns insert() and insertMany() write, in their order, with the type each binds as. */
function insertColumns(type: EntityTypeDef): { readonly names: readonly string[]; readonly types: readonly ExprType[] } {
  const keyed = keyedProperties(type);
  return {
    names: ['account_id', ...type.properties.map((p) => q(p.column)), ...keyed.map((p) => q(comparisonKeyColumn(p)!))],
    types: ['Edm.Int64', ...type.properties.map((p) => p.type), ...keyed.map((): ExprType => 'Edm.String')],
  };
}

/** A query for the entities a navigation leads to from one source entity. */
interface NavigationSql {
  /** Params: account, source id. */
  readonly all: string;
  /** Params: account, source id, target id. */
  readonly one: string;
  readonly count: string;
}

/** The properties an update writes: those `values` holds, the key never. */
export function writtenProperties(type: EntityTypeDef, values: Readonly<Record<string, EdmValue>>): PropertyDef[] {
  return type.properties.filter((p) => p.access !== 'key' && Object.prototype.hasOwnProperty.call(values, p.name));
}

/** Values per statement of findWhereAny: well inside both engines' limits on parameters. */
const VALUES_PER_LOOKUP = 500;

type RowDecoder = (row: readonly unknown[]) => { type: EntityTypeDef; values: Record<string, EdmValue>; version: bigint };

/**
 * The decoder of a type's rows, with each column's value decoder chosen once (a switch on the
 * type per value showed in profiles), compiled once per type into one object literal that names
 * every property in model order (../model/compiled-access.ts): filled in a loop with computed
 * names instead, decoding a product cost five to ten times as much.
 */
function rowDecoder(type: EntityTypeDef, codec: ValueCodec): RowDecoder {
  const members = type.properties.map((p, i) => `${memberSource(type, p)}: decoders[${i}](row[${i}])`);
  return compileOver<RowDecoder>(
    { type, decoders: type.properties.map((p) => codec.decoderOf(p.type)), decodeVersion: codec.decoderOf('Edm.Int64') },
    `(row) => ({ type, values: { ${members.join(', ')} }, version: decodeVersion(row[${type.properties.length}]) })`,
  );
}

export class EntityStore {
  private readonly navigationSqlCache = new Map<NavigationDef, NavigationSql>();
  /** Per type, for this store's codec. */
  private readonly rowDecoders = new Map<EntityTypeDef, RowDecoder>();
  /** Per type, the byId statement for a list of ids (byIdsStatement). */
  private readonly byIdsSql = new Map<EntityTypeDef, string>();
  /** Per type, insertMany()'s statements by their number of rows (the full size and a few remainders). */
  private readonly insertRowsSql = new Map<EntityTypeDef, Map<number, string>>();
  /** UPDATE statements per type, by the columns they set. */
  private readonly updateSqlCache = new Map<EntityTypeDef, Map<string, UpdateStatement>>();

  constructor(
    readonly model: Model,
    readonly store: Store,
  ) {}

  /**
   * A row read as an array in the layout of columnsOf(): the type's properties in order, then
   * the version. Columns a statement selects after those are the caller's (from rowWidth on).
   */
  decodeRow(type: EntityTypeDef, row: readonly unknown[]): { type: EntityTypeDef; values: Record<string, EdmValue>; version: bigint } {
    let decoder = this.rowDecoders.get(type);
    if (decoder === undefined) this.rowDecoders.set(type, (decoder = rowDecoder(type, this.store.codec)));
    return decoder(row);
  }

  private encode(p: PropertyDef, value: EdmValue): SqlValue {
    return this.store.codec.encode(p.type, value);
  }

  async find(exec: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint): Promise<EntityRecord | undefined> {
    // Array rows: better-sqlite3 builds an object per row with a key per column, which cost as
    // much again as the lookup itself (about 11 of 22 µs for a product on the GET hot path).
    const row = (await exec.rows(typeSql(type).byId, [accountId, id]))[0];
    return row ? this.decodeRow(type, row) : undefined;
  }

  /**
   * Reads these entities of one type in one statement, and keeps them in `exec` as the answers
   * find() would get one by one (read-ahead.ts): a changeset's targets, read before its
   * operations run.
   */
  async readAhead(exec: ReadAheadExecutor, accountId: number, type: EntityTypeDef, ids: readonly bigint[]): Promise<void> {
    if (ids.length === 0) return;
    const sentAt = exec.changeCount;
    const rows = await exec.rows(this.byIdsStatement(type), [accountId, this.store.dialect.idsParam(ids)]);
    const decodeId = this.store.codec.decoderOf('Edm.Int64');
    // The key is the first property (columnsOf): the same layout as find()'s statement.
    exec.keep(typeSql(type).byId, accountId, ids, rows, (row) => decodeId(row[0]) as bigint, sentAt);
  }

  /**
   * The entities of a type with these ids, in the layout of columnsOf(). Params: the account, the
   * ids as the dialect's idsParam(). One text per type, so each is prepared once per connection.
   */
  byIdsStatement(type: EntityTypeDef): string {
    let sql = this.byIdsSql.get(type);
    if (sql === undefined) {
      const { columns, table } = typeSql(type);
      this.byIdsSql.set(type, (sql = `SELECT ${columns} FROM ${table} t WHERE t.account_id = ? AND ${this.store.dialect.inIds('t.id', '?')}`));
    }
    return sql;
  }

  /** The current version (ETag) of a row that exists. */
  async versionOf(exec: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint): Promise<bigint> {
    const row = await exec.get<{ v: unknown }>(`SELECT ${q(VERSION_COLUMN)} AS v FROM ${typeSql(type).table} WHERE account_id = ? AND id = ?`, [accountId, id]);
    if (!row) throw new Error(`${type.setName}(${id}) vanished inside its own transaction`);
    return this.store.codec.decode('Edm.Int64', row.v) as bigint;
  }

  async exists(exec: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint): Promise<boolean> {
    return (await exec.get(typeSql(type).exists, [accountId, id])) !== undefined;
  }

  async *iterateAll(exec: SqlExecutor, accountId: number, type: EntityTypeDef): AsyncIterable<EntityRecord> {
    for await (const row of exec.iterateRows(typeSql(type).all, [accountId])) yield this.decodeRow(type, row);
  }

  async countAll(exec: SqlExecutor, accountId: number, type: EntityTypeDef): Promise<bigint> {
    const row = await exec.get<{ n: bigint | number }>(typeSql(type).count, [accountId]);
    return BigInt(row?.n ?? 0);
  }

  /**
   * Every row whose property `name` equals `value`, by id: a small set (an order's items, a
   * product's images, the items of a platform id), read in one statement. A cursor would cost
   * PostgreSQL three round trips (DECLARE, FETCH, CLOSE) for what one answers. The sort key is
   * `+t.id`, an expression, so that SQLite's planner (no statistics) takes the index on the
   * property and sorts the few rows, instead of walking the account's table by primary key to
   * spare the sort: a platform import's lookup of an item by PlatformItemId did that.
   */
  async findWhere(exec: SqlExecutor, accountId: number, type: EntityTypeDef, name: string, value: EdmValue): Promise<EntityRecord[]> {
    const property = findProperty(type, name)!;
    const sql = `SELECT ${typeSql(type).columns} FROM ${typeSql(type).table} t WHERE t.account_id = ? AND t.${q(property.column)} = ? ORDER BY +t.id`;
    return (await exec.rows(sql, [accountId, this.encode(property, value)])).map((row) => this.decodeRow(type, row));
  }

  /** findWhere() for many values at once: the rows whose property equals any of them, by id (each row once). */
  async findWhereAny(exec: SqlExecutor, accountId: number, type: EntityTypeDef, name: string, values: readonly EdmValue[]): Promise<EntityRecord[]> {
    const property = findProperty(type, name)!;
    const dialect = this.store.dialect;
    const found: EntityRecord[] = [];
    // rowsWithAnyOf takes distinct values (PostgreSQL's finds a row once per value naming it).
    const distinct = [...new Set(values)];
    for (let start = 0; start < distinct.length; start += VALUES_PER_LOOKUP) {
      const chunk = distinct.slice(start, start + VALUES_PER_LOOKUP);
      // Planned per execution: see PLANNED_PER_EXECUTION (src/store/postgres/statements.ts).
      const sql = dialect.plannedPerExecution(dialect.rowsWithAnyOf(typeSql(type).columns, typeSql(type).table, q(property.column), property.type, chunk.length));
      const params = dialect.lookupParams(accountId, chunk.map((v) => this.encode(property, v)));
      for (const row of await exec.rows(sql, params)) found.push(this.decodeRow(type, row));
    }
    return found.sort((a, b) => compareIds(entityId(a.values), entityId(b.values)));
  }

  /**
   * Counts rows whose properties equal the given values (rule checks: uniqueness, limits), each
   * compared as rules compare it: text with a comparison key by its key (an indexed column).
   */
  async countWhere(exec: SqlExecutor, accountId: number, type: EntityTypeDef, equal: Readonly<Record<string, EdmValue>>, excludeId?: bigint): Promise<number> {
    const names = Object.keys(equal);
    const props = names.map((n) => findProperty(type, n)!);
    const conditions = props.map((p) => (equal[p.name] === null ? `${q(comparedColumn(p))} IS NULL` : `${q(comparedColumn(p))} = ?`));
    const params: SqlValue[] = [accountId, ...props.filter((p) => equal[p.name] !== null).map((p) => this.comparedValue(type, p.name, equal[p.name]))];
    let sql = `SELECT count(*) AS n FROM ${typeSql(type).table} WHERE account_id = ?${conditions.map((c) => ` AND ${c}`).join('')}`;
    if (excludeId !== undefined) {
      sql += ' AND id <> ?';
      params.push(excludeId);
    }
    const row = await exec.get<{ n: bigint | number }>(sql, params);
    return Number(row?.n ?? 0);
  }

  /**
   * The value countWhere() compares for a property's value: text with a comparison key by its
   * key, anything else as the engine stores it (so '1.50' and '1.5' are one Decimal); null for
   * null. Rows not stored yet (a deep insert's, in memory) are compared with it exactly as
   * countWhere() would count them once stored.
   */
  comparedValue(type: EntityTypeDef, name: string, value: EdmValue | undefined): SqlValue {
    if (value === null || value === undefined) return null;
    const p = findProperty(type, name)!;
    return comparisonKeyColumn(p) ? comparedValue(p, String(value)) : this.encode(p, value);
  }

  /** Distinct values of one column over rows matching a condition (rule checks). */
  async distinct(exec: SqlExecutor, sql: string, params: readonly SqlValue[]): Promise<unknown[]> {
    return (await exec.all<{ v: unknown }>(sql, params)).map((r) => r.v);
  }

  async insert(tx: SqlExecutor, accountId: number, type: EntityTypeDef, values: Readonly<Record<string, EdmValue>>): Promise<void> {
    try {
      await tx.run(typeSql(type).insert, [
        accountId,
        ...type.properties.map((p) => this.encode(p, values[p.name] ?? null)),
        ...keyedProperties(type).map((p) => keyOf(values[p.name])),
      ]);
    } catch (error) {
      throw uniqueKeyViolationOf(type, error, values) ?? error;
    }
  }

  /**
   * Many rows of one type in multi-row INSERTs: one statement (one round trip) per
   * ROWS_PER_INSERT rows instead of one per row. The statement texts come from the model like
   * insert()'s, and every value is bound. Full statements have one text per type, so each is
   * prepared once per connection; only the last, shorter one of a call differs.
   */
  async insertMany(tx: SqlExecutor, accountId: number, type: EntityTypeDef, rows: readonly Readonly<Record<string, EdmValue>>[]): Promise<void> {
    for (const chunk of chunksOf(rows, rowsPerInsert(type))) await this.checkedInsert(type, chunk, this.sendInsert(tx, accountId, type, chunk));
  }

  /**
   * insertMany() of several types, every statement sent before the first answer is awaited: in
   * the order given (parents before the rows that name them), for one round trip instead of one
   * per type (a deep insert's tree). The first statement to fail is the one reported; a database
   * refuses the rest of a failed transaction anyway.
   */
  async insertManyTogether(tx: SqlExecutor, accountId: number, batches: readonly { readonly type: EntityTypeDef; readonly rows: readonly Readonly<Record<string, EdmValue>>[] }[]): Promise<void> {
    const sent = batches.flatMap(({ type, rows }) => chunksOf(rows, rowsPerInsert(type)).map((chunk) => ({ type, chunk, done: this.sendInsert(tx, accountId, type, chunk) })));
    for (const { done } of sent) done.catch(() => undefined);
    try {
      for (const { type, chunk, done } of sent) await this.checkedInsert(type, chunk, done);
    } finally {
      // Nothing of the transaction may still be on its way when the caller goes on (or rolls back).
      await Promise.allSettled(sent.map((s) => s.done));
    }
  }

  /** Sends one INSERT of `chunk`, rows of `type`, with insertMany()'s statement and parameters. */
  private sendInsert(tx: SqlExecutor, accountId: number, type: EntityTypeDef, chunk: readonly Readonly<Record<string, EdmValue>>[]): Promise<RunResult> {
    const keyed = keyedProperties(type);
    const params: SqlValue[] = [];
    for (const values of chunk) {
      params.push(accountId);
      for (const p of type.properties) params.push(this.encode(p, values[p.name] ?? null));
      for (const p of keyed) params.push(keyOf(values[p.name]));
    }
    return tx.run(this.insertRowsStatement(type, chunk.length), this.store.dialect.rowsParams(params, 1 + type.properties.length + keyed.length));
  }

  /** Awaits an INSERT sent; a unique key it violated is answered as a rule of the model says it. */
  private async checkedInsert(type: EntityTypeDef, chunk: readonly Readonly<Record<string, EdmValue>>[], done: Promise<RunResult>): Promise<void> {
    try {
      await done;
    } catch (error) {
      // Callers check the unique keys first; should a key still collide, the answer names it
      // (with a row of the chunk that collides within it, where one does).
      throw uniqueKeyViolationOf(type, error, this.collidingRow(type, error, chunk) ?? chunk[0]!) ?? error;
    }
  }

  /** INSERT of `rows` rows of a type, in insertColumns() order. */
  private insertRowsStatement(type: EntityTypeDef, rows: number): string {
    let byCount = this.insertRowsSql.get(type);
    if (!byCount) this.insertRowsSql.set(type, (byCount = new Map()));
    let sql = byCount.get(rows);
    if (!sql) {
      const columns = insertColumns(type);
      sql = this.store.dialect.insertRows(q(type.table), columns.names, columns.types, rows);
      // Only the full size and a few remainders are kept: the remainders vary from call to call.
      if (byCount.size < 16) byCount.set(rows, sql);
    }
    return sql;
  }

  /** A row of `rows` whose violated unique key another row of `rows` also holds. */
  private collidingRow(type: EntityTypeDef, error: unknown, rows: readonly Readonly<Record<string, EdmValue>>[]): Readonly<Record<string, EdmValue>> | undefined {
    const key = collidingKey(type, error);
    if (!key) return undefined;
    const seen = new Set<string>();
    return rows.find((row) => {
      const members = key.properties.map((name) => this.comparedValue(type, name, row[name]));
      // A null member never collides (unique indexes hold nulls apart).
      if (members.includes(null)) return false;
      const tuple = JSON.stringify(members.map(String));
      return seen.size === seen.add(tuple).size;
    });
  }

  /** Writes the given values; answers the row's version after it (undefined: nothing to write, or no such row). */
  async update(
    tx: SqlExecutor,
    accountId: number,
    type: EntityTypeDef,
    id: bigint,
    values: Readonly<Record<string, EdmValue>>,
    /** The row as this transaction read it: columns that already hold their new value are not written. */
    stored?: Readonly<Record<string, EdmValue>>,
    /**
     * The row's version as this transaction read it. Where the executor takes statements behind
     * (SqlExecutor.writesBehind), the UPDATE then goes out without being waited for, and the new
     * version is answered from this one (see UpdateStatement.verifiedSql).
     */
    storedVersion?: bigint,
  ): Promise<bigint | undefined> {
    const written = writtenProperties(type, values);
    if (written.length === 0) return undefined;
    // A column set to the value it holds still costs SQLite its index entries and, for a foreign
    // key, a lookup of the parent: a MERGE of one property would pay for every other one.
    // The version still moves by what the client wrote (versionBumpFor), as an ETag must.
    const changed = stored === undefined ? written : written.filter((p) => (values[p.name] ?? null) !== (stored[p.name] ?? null));
    const bumpVersion = versionBumpFor(written) !== '';
    const statement = this.updateStatement(type, changed, bumpVersion);
    if (statement === undefined) return undefined;
    const params = [...changed.map((p) => this.encode(p, values[p.name]!)), ...statement.keyed.map((p) => keyOf(values[p.name])), accountId, id];
    // Under a read-ahead, this statement changes this one row only: the rows kept of others stay.
    const sentAt = tx instanceof ReadAheadExecutor ? tx.changeCount : 0;
    if (storedVersion !== undefined && tx.writesBehind?.()) {
      await sentBehind(tx, tx.run(statement.verifiedSql, [...params, storedVersion]));
      if (tx instanceof ReadAheadExecutor) tx.rowUpdated(typeSql(type).byId, accountId, id, sentAt);
      return bumpVersion ? storedVersion + 1n : storedVersion;
    }
    try {
      const row = await tx.get<{ v: unknown }>(statement.sql, params);
      if (tx instanceof ReadAheadExecutor) tx.rowUpdated(typeSql(type).byId, accountId, id, sentAt);
      return row ? (this.store.codec.decode('Edm.Int64', row.v) as bigint) : undefined;
    } catch (error) {
      throw uniqueKeyViolationOf(type, error, values) ?? error;
    }
  }

  /** The UPDATE of these columns (with their comparison keys) and maybe the version, once per shape. */
  private updateStatement(type: EntityTypeDef, changed: readonly PropertyDef[], bumpVersion: boolean): UpdateStatement | undefined {
    let byShape = this.updateSqlCache.get(type);
    if (byShape === undefined) this.updateSqlCache.set(type, (byShape = new Map()));
    const shape = (bumpVersion ? '+' : '') + changed.map((p) => p.name).join(',');
    let statement = byShape.get(shape);
    if (statement === undefined) {
      // A property with a comparison key is written together with its key.
      const keyed = changed.filter((p) => comparisonKeyColumn(p) !== undefined);
      const assignments = [...changed.map((p) => `${q(p.column)} = ?`), ...keyed.map((p) => `${q(comparisonKeyColumn(p)!)} = ?`)];
      if (bumpVersion) assignments.push(`${q(VERSION_COLUMN)} = ${q(VERSION_COLUMN)} + 1`);
      if (assignments.length === 0) return undefined;
      const update = `UPDATE ${typeSql(type).table} SET ${assignments.join(', ')} WHERE account_id = ? AND id = ?`;
      statement = {
        // RETURNING the version saves reading it back in another round trip.
        sql: `${update} RETURNING ${q(VERSION_COLUMN)} AS v`,
        // Changes the row only while it holds the version the write read, and otherwise fails
        // (a division by zero): PostgreSQL then aborts the transaction at this statement, so a
        // write that went on without its answer runs again, waiting for it (write-batch.ts).
        // A data-modifying WITH is PostgreSQL's; only its executor takes statements behind.
        verifiedSql: `WITH changed AS (${update} AND ${q(VERSION_COLUMN)} = ? RETURNING 1) SELECT 1 / count(*) AS verified FROM changed`,
        keyed,
      };
      // The shapes are the subsets of properties clients change together: few, but not bounded.
      if (byShape.size >= 256) byShape.clear();
      byShape.set(shape, statement);
    }
    return statement;
  }

  /**
   * Deletes one entity. Owned children go with it (ON DELETE CASCADE); platform rows that point
   * at it or at any of its cascaded descendants (order items, listings) have the pointer cleared
   * first, as the model's 'setNull' relations say.
   */
  async delete(tx: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint): Promise<boolean> {
    await this.clearPointers(tx, accountId, type, 'id = ?', [id], new Set());
    return (await tx.run(typeSql(type).deleteById, [accountId, id])).changes > 0;
  }

  /** Deletes every entity of a type in one account, exactly as delete() does one (DeleteAccountData). */
  async deleteAll(tx: SqlExecutor, accountId: number, type: EntityTypeDef): Promise<number> {
    await this.clearPointers(tx, accountId, type, '1 = 1', [], new Set());
    return (await tx.run(`DELETE FROM ${typeSql(type).table} WHERE account_id = ?`, [accountId])).changes;
  }

  /** Clears 'setNull' references to the rows of `type` selected by `where`, and to their cascaded children. */
  private async clearPointers(tx: SqlExecutor, accountId: number, type: EntityTypeDef, where: string, params: SqlValue[], seen: Set<string>): Promise<void> {
    if (seen.has(type.name)) return;
    seen.add(type.name);
    const selected = `SELECT id FROM ${typeSql(type).table} WHERE account_id = ? AND ${where}`;
    for (const r of this.model.relations) {
      if (r.kind !== 'reference' || r.principal !== type.name) continue;
      const dependent = this.model.typeByName.get(r.dependent)!;
      const fkProperty = findProperty(dependent, r.foreignKey)!;
      const fk = q(fkProperty.column);
      if (r.onDelete === 'setNull') {
        await tx.run(`UPDATE ${typeSql(dependent).table} SET ${fk} = NULL${versionBumpFor([fkProperty])} WHERE account_id = ? AND ${fk} IN (${selected})`, [accountId, accountId, ...params]);
      } else if (r.onDelete === 'cascade') {
        await this.clearPointers(tx, accountId, dependent, `${fk} IN (${selected})`, [accountId, ...params], seen);
      }
    }
    seen.delete(type.name);
  }

  /** The entities a navigation leads to from (sourceType, sourceId); one when `key` is given. */
  async *related(exec: SqlExecutor, accountId: number, nav: NavigationDef, sourceId: bigint, key?: bigint): AsyncIterable<EntityRecord> {
    const target = this.model.typeByName.get(nav.target)!;
    const sql = this.navigationSql(nav);
    const rows = key === undefined ? exec.iterateRows(sql.all, [accountId, sourceId]) : exec.iterateRows(sql.one, [accountId, sourceId, key]);
    for await (const row of rows) yield this.decodeRow(target, row);
  }

  async countRelated(exec: SqlExecutor, accountId: number, nav: NavigationDef, sourceId: bigint): Promise<bigint> {
    const row = await exec.get<{ n: bigint | number }>(this.navigationSql(nav).count, [accountId, sourceId]);
    return BigInt(row?.n ?? 0);
  }

  private navigationSql(nav: NavigationDef): NavigationSql {
    let sql = this.navigationSqlCache.get(nav);
    if (!sql) {
      sql = this.buildNavigationSql(nav);
      this.navigationSqlCache.set(nav, sql);
    }
    return sql;
  }

  private buildNavigationSql(nav: NavigationDef): NavigationSql {
    const target = this.model.typeByName.get(nav.target)!;
    const { columns, table } = typeSql(target);
    const r = nav.relation;
    let from: string;
    let where: string;
    // Pairs come out of the pair table's index on the source in target order: ordered by that
    // column (equal to t.id), SQLite starts there instead of walking the whole target table.
    let key = 't.id';
    if (r.kind === 'reference') {
      const dependent = this.model.typeByName.get(r.dependent)!;
      const fk = q(columnOf(dependent, r.foreignKey));
      if (nav.many) {
        // From the principal to its dependents.
        from = `${table} t`;
        where = `t.account_id = ? AND t.${fk} = ?`;
      } else {
        // From a dependent to its principal, through the dependent's foreign key.
        from = `${table} t JOIN ${typeSql(dependent).table} s ON s.account_id = t.account_id AND s.${fk} = t.id`;
        where = `s.account_id = ? AND s.id = ?`;
      }
    } else {
      const [sourceColumn, targetColumn, linkTable] = this.pairColumns(r, nav);
      from = `${table} t JOIN ${linkTable} l ON l.account_id = t.account_id AND l.${targetColumn} = t.id`;
      where = `l.account_id = ? AND l.${sourceColumn} = ?`;
      key = `l.${targetColumn}`;
    }
    return {
      all: `SELECT ${columns} FROM ${from} WHERE ${where} ORDER BY ${key}`,
      one: `SELECT ${columns} FROM ${from} WHERE ${where} AND t.id = ?`,
      count: `SELECT count(*) AS n FROM ${from} WHERE ${where}`,
    };
  }

  /** For a many-to-many navigation: [column of the source, column of the target, pair table]. */
  private pairColumns(r: LinkTableRelation | ThroughEntityRelation, nav: NavigationDef): [string, string, string] {
    // The left navigation leads from a left entity to right ones; names tell self-relations apart.
    const leftToRight = nav.name === r.leftNav;
    if (r.kind === 'linkTable') {
      return leftToRight ? [q(r.leftColumn), q(r.rightColumn), q(r.table)] : [q(r.rightColumn), q(r.leftColumn), q(r.table)];
    }
    const through = this.model.typeByName.get(r.through)!;
    const col = (name: string) => q(columnOf(through, name));
    return leftToRight ? [col(r.leftKey), col(r.rightKey), q(through.table)] : [col(r.rightKey), col(r.leftKey), q(through.table)];
  }

  /** Adds a pair to a link table; false when it was there already. */
  async addLink(tx: SqlExecutor, accountId: number, nav: NavigationDef, sourceId: bigint, targetId: bigint): Promise<boolean> {
    const r = nav.relation as LinkTableRelation;
    const [source, target, table] = this.pairColumns(r, nav);
    const result = await tx.run(
      `INSERT INTO ${table} (account_id, ${source}, ${target}) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
      [accountId, sourceId, targetId],
    );
    return result.changes > 0;
  }

  /** Adds many pairs to a link table, in multi-row INSERTs (pairs there already are kept). */
  async addLinks(tx: SqlExecutor, accountId: number, nav: NavigationDef, pairs: readonly (readonly [sourceId: bigint, targetId: bigint])[]): Promise<void> {
    const r = nav.relation as LinkTableRelation;
    const [source, target, table] = this.pairColumns(r, nav);
    const perInsert = Math.floor(MAX_BOUND_VALUES / 3);
    for (let start = 0; start < pairs.length; start += perInsert) {
      const chunk = pairs.slice(start, start + perInsert);
      await tx.run(
        `INSERT INTO ${table} (account_id, ${source}, ${target}) VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')} ON CONFLICT DO NOTHING`,
        chunk.flatMap(([s, t]) => [accountId, s, t]),
      );
    }
  }

  async removeLink(tx: SqlExecutor, accountId: number, nav: NavigationDef, sourceId: bigint, targetId: bigint): Promise<boolean> {
    const r = nav.relation as LinkTableRelation;
    const [source, target, table] = this.pairColumns(r, nav);
    const result = await tx.run(`DELETE FROM ${table} WHERE account_id = ? AND ${source} = ? AND ${target} = ?`, [accountId, sourceId, targetId]);
    return result.changes > 0;
  }
}

/**
 * Which of the type's unique keys a write collided with, from either engine's error: SQLite's
 * SQLITE_CONSTRAINT_UNIQUE names the index's columns in its message ("UNIQUE constraint failed:
 * t.account_id, t.sku"); PostgreSQL's 23505 names the index (its detail, which would show the
 * values, is withheld under row-level security). Undefined for any other error.
 */
function collidingKey(type: EntityTypeDef, error: unknown): UniqueKey | undefined {
  const e = error as { code?: unknown; message?: unknown; constraint?: unknown };
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' && typeof e.message === 'string') {
    const columns = /UNIQUE constraint failed: (.*)$/.exec(e.message)?.[1]?.split(',').map((c) => c.trim().replace(/^.*\./, ''));
    if (!columns) return undefined;
    return type.uniqueKeys.find((key) => {
      const keyColumns = [ACCOUNT_COLUMN, ...uniqueKeyColumns(type, key)];
      return keyColumns.length === columns.length && keyColumns.every((c, i) => c === columns[i]);
    });
  }
  if (e.code === '23505' && typeof e.constraint === 'string') {
    return type.uniqueKeys.find((key) => indexName(uniqueIndexName(type, key)) === e.constraint);
  }
  return undefined;
}

/**
 * A collision with one of the type's unique keys, as the same violation the generic check
 * (catalogue/rules.ts) throws, so a key that no check caught still answers with its status and
 * message (409 naming the key), never a 500.
 */
function uniqueKeyViolationOf(type: EntityTypeDef, error: unknown, values: Readonly<Record<string, EdmValue>>): UniqueKeyViolation | undefined {
  const key = collidingKey(type, error);
  return key && new UniqueKeyViolation(type, key, uniqueKeyMessage(key, values, (v) => quote(v)));
}
