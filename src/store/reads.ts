/**
 * Executes read plans (../odata/plan.ts) inside one snapshot (Store.read): counts, and
 * collections streamed page by page with their $expand trees filled in.
 *
 * A collection is one statement iterated row by row; every `pageSize` rows the page's
 * expansions are read with one statement per navigation (the parents' ids passed as one list
 * parameter), then the page is handed to the writer and forgotten. Memory therefore depends on
 * the page size and the expansion fan-out, not on the size of the collection.
 *
 * Every statement is scoped by the account (also every join and subquery), and takes values
 * only as bound parameters. Statements that do not depend on a request's expressions (the plain
 * set, each expansion) have a fixed text, so the engine's prepared statement is reused.
 */
import { StatementBudgetExceeded } from './errors';
import type { EntityTypeDef, Model, NavigationDef } from '../model/types';
import type { EdmValue } from '../odata/edm';
import { entityId, type EntityRecord } from '../odata/entity';
import type { ExpandNode, LiteralExpr, OrderByItem } from '../odata/expr/ast';
import type { ReadPlan } from '../odata/plan';
import { invalid } from '../model/rule-violation';
import { columnOf } from '../model/define';
import { columnsOf, rowWidth, type EntityStore } from './entities';
import type { SqlDialect } from './sql/dialect';
import { compileExpression, compileOrderBy, encodeLiteral, storedType, type ExpressionScope } from './sql/expression';
import { SqlParams } from './sql/params';
import { changedIdsSql } from './change-log';
import type { SqlExecutor, Store } from './store';

const q = (name: string) => `"${name}"`;

/** An entity with room for its expansions (EntityRecord.expanded, made when the first is filled in). */
interface MutableRecord extends EntityRecord {
  expanded?: Map<string, EntityRecord | null | readonly EntityRecord[]>;
}

/** A page of a collection, and where it ended (for a $skiptoken). */
export interface Page {
  readonly records: readonly EntityRecord[];
}

export interface StreamOptions {
  /** Rows per page (and per expansion round). */
  readonly pageSize: number;
  /**
   * Server-driven paging: deliver at most this many rows and report the position of the last
   * one, so that a next link can continue after it.
   */
  readonly serverPageSize?: number;
  /**
   * Reads at most one row more than this (LIMIT), and fails with MoreRowsThanProbed, before the
   * first page is handed over, should the collection hold more than this many rows: a read that
   * tries one statement first (see readResource), to be read again as a stream when it fails.
   */
  readonly rowsAtMost?: number;
}

/** The rows of one statement read whole, as its only batch. */
async function* wholeBatch(rows: Promise<unknown[][]>): AsyncIterable<unknown[][]> {
  yield await rows;
}

/** A collection read with StreamOptions.rowsAtMost holds more rows than that. */
export class MoreRowsThanProbed extends Error {
  constructor() {
    super('The collection holds more rows than the read took at most');
  }
}

/** What a streamed read learned at its end. */
export interface StreamEnd {
  /** The position after the last delivered row, when server paging cut the collection short. */
  readonly continueAfter?: readonly LiteralExpr[];
}

/** How one statement is built: its text, its parameters, and the alias of the row. */
class StatementBuilder implements ExpressionScope {
  readonly params = new SqlParams();
  readonly account: string;
  private aliases = 0;

  constructor(
    readonly model: Model,
    readonly dialect: SqlDialect,
    readonly codec: Store['codec'],
    accountId: number,
    readonly alias = 't',
  ) {
    this.account = this.params.add(accountId);
  }

  readonly nextAlias = (): string => `s${++this.aliases}`;
}

/** Names of the columns selected after the properties (read by position; named for the SQL reader). */
const ORDER_COLUMN = (i: number) => `__o${i}`;
const PARENT_COLUMN = '__parent';

export class EntityReads {
  /** Expansion statements by navigation: their text never changes. */
  private readonly expansionSql = new Map<NavigationDef, string>();

  constructor(
    private readonly model: Model,
    private readonly store: Store,
    private readonly entities: EntityStore,
  ) {}

  private builder(accountId: number): StatementBuilder {
    return new StatementBuilder(this.model, this.store.dialect, this.store.codec, accountId);
  }

  /** Rows are read as arrays in the layout of columnsOf(); a statement's extra columns follow. */
  private decode(type: EntityTypeDef, row: readonly unknown[]): MutableRecord {
    return this.entities.decodeRow(type, row);
  }

  // -------------------------------------------------------------------------------------------
  // The statement of a plan

  /**
   * The key the rows are ordered by last: t.id, or for a many-to-many navigation the pair table's
   * column that equals it. The same values, but written so SQLite's planner (no statistics)
   * starts from the pair table's index on the source, which hands out the targets in that order,
   * instead of walking every row of the target table in id order and probing the pair table.
   */
  private keyColumn(plan: ReadPlan): string {
    return plan.source.kind === 'navigation' ? this.navigationJoin(plan.source.navigation).idColumn : 't.id';
  }

  /** FROM … WHERE … of a plan: the source, the filter and the position to continue after. */
  private fromWhere(b: StatementBuilder, plan: ReadPlan, withAfter: boolean): string {
    const table = q(plan.type.table);
    let from = `${table} t`;
    let where = `t.account_id = ${b.account}`;
    const source = plan.source;
    if (source.kind === 'key') where += ` AND t.id = ${b.params.add(source.id)}`;
    else if (source.kind === 'navigation') {
      const join = this.navigationJoin(source.navigation);
      from += join.join;
      where += ` AND ${join.sourceColumn} = ${b.params.add(source.sourceId)}`;
    } else if (source.kind === 'changes') {
      where += ` AND t.id IN (${changedIdsSql(this.store.engine, b.account, b.params.add(plan.type.setName), source.since, (v) => b.params.add(v))})`;
    }
    // Before the filter, so that it is evaluated for every row, whatever the filter costs.
    if ((plan.filter || plan.orderBy.length > 0) && b.dialect.budgetCheck) where += ` AND ${b.dialect.budgetCheck}`;
    if (source.kind === 'changes' && source.unmatched) where += plan.filter ? ` AND (${compileExpression(b, plan.filter)}) IS NOT TRUE` : ` AND ${b.dialect.falseSql}`;
    else if (plan.filter) where += ` AND ${compileExpression(b, plan.filter)}`;
    if (withAfter && plan.after) where += ` AND ${this.afterCondition(b, plan.orderBy, plan.after, this.keyColumn(plan))}`;
    return `FROM ${from} WHERE ${where}`;
  }

  /**
   * The join that brings the targets of a to-many navigation next to the source's id: the
   * target's foreign key itself, or a link table / relation entity. Returns the column that holds
   * the source's id.
   */
  private navigationJoin(nav: NavigationDef): { join: string; sourceColumn: string; idColumn: string } {
    const r = nav.relation;
    if (r.kind === 'reference') {
      if (!nav.many) throw new Error(`to-one navigation ${nav.name} has no collection`);
      const dependent = this.model.typeByName.get(r.dependent)!;
      return { join: '', sourceColumn: `t.${q(columnOf(dependent, r.foreignKey))}`, idColumn: 't.id' };
    }
    const [sourceColumn, targetColumn, table] = this.pairColumns(nav);
    return { join: ` JOIN ${table} l ON l.account_id = t.account_id AND l.${targetColumn} = t.id`, sourceColumn: `l.${sourceColumn}`, idColumn: `l.${targetColumn}` };
  }

  /** For a many-to-many navigation: [column of the source, column of the target, pair table]. */
  private pairColumns(nav: NavigationDef): [string, string, string] {
    const r = nav.relation;
    if (r.kind === 'reference') throw new Error(`${nav.name} is not many-to-many`);
    // The left navigation leads from a left entity to right ones; names tell self-relations apart.
    const leftToRight = nav.name === r.leftNav;
    if (r.kind === 'linkTable') {
      return leftToRight ? [q(r.leftColumn), q(r.rightColumn), q(r.table)] : [q(r.rightColumn), q(r.leftColumn), q(r.table)];
    }
    const through = this.model.typeByName.get(r.through)!;
    const left = q(columnOf(through, r.leftKey));
    const right = q(columnOf(through, r.rightKey));
    return leftToRight ? [left, right, q(through.table)] : [right, left, q(through.table)];
  }

  /**
   * Rows after a position in the order (orderBy, then the key ascending), with nulls first
   * ascending and last descending: for each key i, "equal on every earlier key and after on
   * key i".
   */
  private afterCondition(b: StatementBuilder, orderBy: readonly OrderByItem[], after: readonly LiteralExpr[], keyColumn: string): string {
    const keys = [...orderBy.map((o) => ({ sql: compileExpression(b, o.expr), descending: o.descending })), { sql: keyColumn, descending: false }];
    if (after.length !== keys.length) throw invalid(`The $skiptoken has ${after.length} values; this request orders by ${keys.length} keys.`);
    const value = (i: number) => b.dialect.typed(after[i]!.type, b.params.add(encodeLiteral(this.store.codec, after[i]!.type, after[i]!.value)));
    const equal = (i: number) => (after[i]!.value === null ? `${keys[i]!.sql} IS NULL` : `${keys[i]!.sql} = ${value(i)}`);
    const beyond = (i: number) => {
      const k = keys[i]!;
      if (after[i]!.value === null) return k.descending ? b.dialect.falseSql : `${k.sql} IS NOT NULL`;
      return k.descending ? `(${k.sql} < ${value(i)} OR ${k.sql} IS NULL)` : `${k.sql} > ${value(i)}`;
    };
    const alternatives = keys.map((_, i) => [...keys.slice(0, i).map((__, j) => equal(j)), beyond(i)].join(' AND '));
    return `(${alternatives.map((a) => `(${a})`).join(' OR ')})`;
  }

  private columns(type: EntityTypeDef): string {
    return columnsOf(type);
  }

  // -------------------------------------------------------------------------------------------
  // Counts

  /**
   * The number of rows the plan selects. With `paged`, $skip and $top apply (`/$count`);
   * without, the count ignores them ($inlinecount=allpages).
   */
  async count(tx: SqlExecutor, accountId: number, plan: ReadPlan, paged: boolean): Promise<bigint> {
    const b = this.builder(accountId);
    const fromWhere = this.fromWhere(b, plan, false);
    let sql: string;
    if (paged && (plan.top !== undefined || plan.skip !== undefined)) {
      sql = `SELECT count(*) AS n FROM (SELECT 1 AS one ${fromWhere}${b.dialect.limitOffset(plan.top, plan.skip, b.params)}) c`;
    } else {
      sql = `SELECT count(*) AS n ${fromWhere}`;
    }
    const row = await this.run(b, () => tx.get<{ n: bigint | number | string }>(sql, b.params.values));
    return BigInt(row?.n ?? 0);
  }

  // -------------------------------------------------------------------------------------------
  // Streams

  /**
   * The plan's rows in pages, expansions filled. `end` is completed when the iteration is done.
   * Errors of the client's expression (an overflow, say) surface before the first page.
   */
  async *stream(tx: SqlExecutor, accountId: number, plan: ReadPlan, options: StreamOptions, end: { result?: StreamEnd } = {}): AsyncIterable<Page> {
    const b = this.builder(accountId);
    const orderItems = compileOrderBy(b, plan.orderBy);
    const paging = options.serverPageSize;
    // Ordering values are selected only when a next link may need them.
    const orderColumns = paging === undefined ? '' : plan.orderBy.map((o, i) => `, ${compileExpression(b, o.expr)} AS ${q(ORDER_COLUMN(i))}`).join('');
    const fromWhere = this.fromWhere(b, plan, true);
    const planned = paging === undefined ? plan.top : Math.min(plan.top ?? Number.MAX_SAFE_INTEGER, paging + 1);
    // Rows beyond rowsAtMost are left unread only where the plan itself would read them.
    const probe = options.rowsAtMost !== undefined && (planned === undefined || planned > options.rowsAtMost + 1) ? options.rowsAtMost : undefined;
    const take = probe === undefined ? planned : probe + 1;
    const offset = plan.skip === undefined || plan.after ? undefined : plan.skip;
    const sql =
      `SELECT ${this.columns(plan.type)}${orderColumns} ${fromWhere} ` +
      `ORDER BY ${[...orderItems, this.keyColumn(plan)].join(', ')}${b.dialect.limitOffset(take, offset, b.params)}`;

    let page: MutableRecord[] = [];
    let delivered = 0;
    let lastRow: readonly unknown[] | undefined;
    // One page ahead when pages are expanded: a page's expansions are sent before the page before
    // it is handed over, so the database works on them while the consumer writes that page (on
    // PostgreSQL their answers arrive meanwhile; a full export waited for them otherwise, about a
    // sixth of its time). Without expansions there is nothing to wait for, and no page is held.
    const lookAhead = plan.expand.length > 0;
    let ahead: { readonly records: MutableRecord[]; readonly expanded: Promise<void> } | undefined;
    /**
     * Starts the expansions of `records` (none: the end of the rows) and answers the page to hand
     * over now: looking ahead, the one started before; otherwise this one.
     */
    const handOver = (records: MutableRecord[] | undefined) => {
      const previous = ahead;
      ahead = undefined;
      if (records !== undefined) {
        const expanded = this.expand(tx, accountId, records, plan.expand);
        expanded.catch(() => undefined);
        ahead = { records, expanded };
      }
      if (lookAhead) return previous;
      const current = ahead;
      ahead = undefined;
      return current;
    };
    // Rows the LIMIT keeps within one page are read whole: stepping a cursor row by row costs
    // more per row (better-sqlite3's iterate() against all(): about a third more for 50 rows).
    const batches = (take !== undefined && take <= options.pageSize ? wholeBatch(tx.rows(sql, b.params.values)) : tx.iterateRowBatches(sql, b.params.values, options.pageSize))[Symbol.asyncIterator]();
    // A consumer that stops early (its client went away, an error) ends this generator at a
    // yield: the statement must end with it, or its connection stays busy for the next reader.
    try {
      rows: for (;;) {
        const next = await this.run(b, () => batches.next());
        if (next.done) break;
        for (const row of next.value) {
          if (paging !== undefined && delivered === paging) {
            // One row more than a page exists: the collection continues after the last delivered row.
            end.result = { continueAfter: this.position(plan, lastRow!) };
            break rows;
          }
          if (delivered === probe) throw new MoreRowsThanProbed();
          page.push(this.decode(plan.type, row));
          lastRow = row;
          delivered++;
          if (page.length >= options.pageSize) {
            const ready = handOver(page);
            page = [];
            if (ready) {
              await ready.expanded;
              yield { records: ready.records };
            }
          }
        }
      }
      for (const records of [page.length > 0 ? page : undefined, undefined]) {
        const ready = handOver(records);
        if (ready) {
          await ready.expanded;
          yield { records: ready.records };
        }
      }
    } finally {
      // Left early: the expansions still in flight end before the statement does, so that none
      // runs after the transaction it belongs to.
      await ahead?.expanded.catch(() => undefined);
      await batches.return?.();
    }
    end.result ??= {};
  }

  /** The ordering position of a row, as typed literals (for a $skiptoken). */
  private position(plan: ReadPlan, row: readonly unknown[]): LiteralExpr[] {
    // The ordering values follow the entity's own columns; the key is the first property.
    const first = rowWidth(plan.type);
    const values: LiteralExpr[] = plan.orderBy.map((o, i) => {
      const raw = row[first + i];
      const type = o.expr.type;
      const stored = storedType(type);
      if (raw === null || raw === undefined || stored === undefined) return { kind: 'literal', type, value: null };
      return { kind: 'literal', type, value: this.store.codec.decode(stored, raw) } as LiteralExpr;
    });
    values.push({ kind: 'literal', type: 'Edm.Int64', value: this.store.codec.decode('Edm.Int64', row[0]) as bigint });
    return values;
  }

  /** Runs a step of a statement, turning an error of the client's expression into a 400. */
  private async run<T>(b: StatementBuilder, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      const message = b.dialect.expressionError(error);
      if (message !== undefined) throw invalid(message);
      if (b.dialect.isTimeout(error)) throw new StatementBudgetExceeded(this.store.readBudgetMs);
      throw error;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Expansions

  /** Fills the $expand tree into records of one type (a page, or one entity). */
  async expand(tx: SqlExecutor, accountId: number, parents: readonly EntityRecord[], nodes: readonly ExpandNode[]): Promise<void> {
    if (parents.length === 0) return;
    // The expansions of one level go out together: on PostgreSQL, whose connection pipelines
    // statements, the connector's nine cost one round trip instead of nine. Each parent's
    // expansions keep the order of the request (the writers emit them in that order), whatever
    // order the answers are handled in.
    for (const parent of parents as readonly MutableRecord[]) {
      const expanded = (parent.expanded ??= new Map());
      for (const node of nodes) if (!expanded.has(node.name)) expanded.set(node.name, node.navigation.many ? [] : null);
    }
    const children = await Promise.all(nodes.map((node) => this.expandOne(tx, accountId, parents as readonly MutableRecord[], node)));
    await Promise.all(nodes.map((node, i) => (node.children.length > 0 ? this.expand(tx, accountId, children[i]!, node.children) : undefined)));
  }

  /** Attaches one navigation's targets to every parent; answers the distinct targets. */
  private async expandOne(tx: SqlExecutor, accountId: number, parents: readonly MutableRecord[], node: ExpandNode): Promise<MutableRecord[]> {
    const nav = node.navigation;
    const target = this.model.typeByName.get(nav.target)!;
    const r = nav.relation;
    if (!nav.many) {
      // To-one: the parents' foreign keys name the targets.
      if (r.kind !== 'reference') throw new Error(`to-one navigation ${nav.name} is not a reference`);
      const fk = r.foreignKey;
      const ids = distinctIds(parents.map((p) => p.values[fk] ?? null));
      const byId = new Map<bigint, MutableRecord>();
      if (ids.length > 0) {
        for (const row of await tx.rows(this.expansionStatement(nav), [accountId, this.store.dialect.idsParam(ids)])) {
          const rec = this.decode(target, row);
          byId.set(entityId(rec.values), rec);
        }
      }
      for (const parent of parents) {
        const id = parent.values[fk];
        (parent.expanded ??= new Map()).set(node.name, typeof id === 'bigint' ? (byId.get(id) ?? null) : null);
      }
      return [...byId.values()];
    }
    // To-many: the targets carry their parent's id in an extra column, ordered by it.
    const byParent = new Map<bigint, MutableRecord[]>();
    const ids = parents.map((p) => entityId(p.values));
    const all: MutableRecord[] = [];
    const parentColumn = rowWidth(target);
    for (const row of await tx.rows(this.expansionStatement(nav), [accountId, this.store.dialect.idsParam(ids)])) {
      const parentId = this.store.codec.decode('Edm.Int64', row[parentColumn]) as bigint;
      const rec = this.decode(target, row);
      let list = byParent.get(parentId);
      if (!list) byParent.set(parentId, (list = []));
      list.push(rec);
      all.push(rec);
    }
    for (const parent of parents) (parent.expanded ??= new Map()).set(node.name, byParent.get(entityId(parent.values)) ?? []);
    return all;
  }

  /** Params: ?1 account, ?2 the list of parent ids (to-many) or target ids (to-one). */
  private expansionStatement(nav: NavigationDef): string {
    let sql = this.expansionSql.get(nav);
    if (sql === undefined) {
      const target = this.model.typeByName.get(nav.target)!;
      const columns = this.columns(target);
      const d = this.store.dialect;
      const r = nav.relation;
      if (!nav.many) {
        // The targets by their ids: the statement a changeset's read-ahead uses too.
        sql = this.entities.byIdsStatement(target);
      } else if (r.kind === 'reference') {
        const fk = `t.${q(columnOf(target, r.foreignKey))}`;
        sql = `SELECT ${columns}, ${fk} AS ${q(PARENT_COLUMN)} FROM ${q(target.table)} t WHERE t.account_id = ?1 AND ${d.inIds(fk, '?2')} ORDER BY ${fk}, t.id`;
      } else {
        const [source, targetColumn, table] = this.pairColumns(nav);
        sql =
          `SELECT ${columns}, l.${source} AS ${q(PARENT_COLUMN)} FROM ${q(target.table)} t ` +
          `JOIN ${table} l ON l.account_id = t.account_id AND l.${targetColumn} = t.id ` +
          `WHERE l.account_id = ?1 AND ${d.inIds(`l.${source}`, '?2')} ORDER BY l.${source}, l.${targetColumn}`;
      }
      this.expansionSql.set(nav, sql);
    }
    return sql;
  }
}

function distinctIds(values: readonly EdmValue[]): bigint[] {
  const ids = new Set<bigint>();
  for (const v of values) if (typeof v === 'bigint') ids.add(v);
  return [...ids];
}
