/**
 * The console's reads, all through the OData API's own read path: each is a ReadPlan built from
 * OData query options (planRead checks them as it checks a client's), executed by EntityReads
 * in one snapshot of the seller's account. Every statement is therefore scoped by the account
 * exactly as the API's are, and the console holds no SQL of its own. Text from a form reaches a
 * $filter only as an OData string literal (quotes doubled), never as expression syntax.
 */
import { orderHistoryText } from '../catalogue/order-history';
import type { EntityTypeDef } from '../model/types';
import type { EntityRecord } from '../odata/entity';
import type { ReadSource } from '../odata/plan';
import { planRead } from '../odata/read-options';
import type { SystemQueryOption } from '../odata/uri/query-options';
import type { SqlExecutor } from '../store/store';
import type { ConsoleDeps } from './deps';

export type Options = Partial<Record<SystemQueryOption, string>>;

/** An OData string literal: the text between single quotes, each quote doubled. */
export function stringLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** An OData DateTime literal for an instant. */
export function dateTimeLiteral(ms: number): string {
  return `datetime'${new Date(ms).toISOString().replace(/Z$/, '')}'`;
}

export class ConsoleReads {
  constructor(
    private readonly deps: ConsoleDeps,
    private readonly tx: SqlExecutor,
    private readonly accountId: number,
  ) {}

  type(name: string): EntityTypeDef {
    const type = this.deps.model.typeByName.get(name);
    if (!type) throw new Error(`the model has no entity type ${name}`);
    return type;
  }

  private plan(type: EntityTypeDef, source: ReadSource, options: Options) {
    const system = new Map(Object.entries(options) as [SystemQueryOption, string][]);
    return planRead(this.deps.model, type, source, { system, custom: new Map() }, this.deps.config.query).plan;
  }

  /** The rows of a set (or of one entity's navigation) the options select, expansions filled. */
  async list(typeName: string, options: Options, source: ReadSource = { kind: 'set' }): Promise<EntityRecord[]> {
    const plan = this.plan(this.type(typeName), source, options);
    const out: EntityRecord[] = [];
    for await (const page of this.deps.reads.stream(this.tx, this.accountId, plan, { pageSize: 100 })) out.push(...page.records);
    return out;
  }

  /** How many rows the filter selects (paging ignored). */
  async count(typeName: string, filter?: string, source: ReadSource = { kind: 'set' }): Promise<number> {
    const plan = this.plan(this.type(typeName), source, filter === undefined ? {} : { $filter: filter });
    return Number(await this.deps.reads.count(this.tx, this.accountId, plan, false));
  }

  /** One entity of the seller's account with its expansions, or undefined (another seller's id included). */
  async one(typeName: string, id: bigint, expand?: string): Promise<EntityRecord | undefined> {
    const [record] = await this.list(typeName, expand === undefined ? {} : { $expand: expand }, { kind: 'key', id });
    return record;
  }

  /** The order's history lines, as GetSalesOrderHistory returns them ('' when there are none). */
  orderHistory(orderId: bigint): Promise<string> {
    return orderHistoryText(this.tx, this.deps.entities, this.accountId, orderId);
  }

  /** Where a navigation of one entity leads (a catalog's products), as a read source. */
  navigationSource(typeName: string, navigation: string, id: bigint): ReadSource {
    const nav = this.type(typeName).navigations.find((n) => n.name === navigation);
    if (!nav) throw new Error(`${typeName} has no navigation ${navigation}`);
    return { kind: 'navigation', navigation: nav, sourceId: id };
  }

  /** How many entities one navigation of an entity leads to (a catalog's products). */
  async countRelated(typeName: string, navigation: string, id: bigint): Promise<number> {
    const nav = this.type(typeName).navigations.find((n) => n.name === navigation);
    if (!nav) throw new Error(`${typeName} has no navigation ${navigation}`);
    return Number(await this.deps.entities.countRelated(this.tx, this.accountId, nav, id));
  }
}

/** Runs console reads in one snapshot of the account, as the API runs one request. */
export function readAccount<T>(deps: ConsoleDeps, accountId: number, fn: (reads: ConsoleReads) => Promise<T>): Promise<T> {
  return deps.store.read(accountId, (tx) => fn(new ConsoleReads(deps, tx, accountId)));
}

/** Expanded navigation of a record: a list (to-many) or a record/null (to-one). */
export function expandedList(record: EntityRecord, navigation: string): readonly EntityRecord[] {
  const value = record.expanded?.get(navigation);
  return Array.isArray(value) ? value : [];
}

export function expandedOne(record: EntityRecord, navigation: string): EntityRecord | undefined {
  const value = record.expanded?.get(navigation);
  return value && !Array.isArray(value) ? (value as EntityRecord) : undefined;
}
