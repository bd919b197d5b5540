/**
 * The database schema as data, derived from the entity model plus the service's own tables
 * (accounts, tokens, sessions, throttling, the id sequence, order history). Each engine's
 * adapter renders it to DDL; nothing here is SQL text.
 *
 * Tenant tables lead every key and index with account_id, and their foreign keys include it, so
 * a row can only ever point at a row of the same account and the tables can later be distributed
 * by account. The auth directory (accounts, tokens, sessions, throttle) is looked up by what a
 * request presents (a user name or a credential hash) before the account is known.
 */
import type { EdmType, EntityTypeDef, Model, PropertyDef, UniqueKey } from '../model/types';
import { comparisonKey } from '../model/text';

export type ColumnType = 'int64' | 'int32' | 'decimal' | 'text' | 'boolean' | 'datetime';

export interface ColumnDef {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
  /** A constant the engine fills in when an insert names no value (also for rows that exist when the column is added). */
  readonly defaultValue?: number;
  /**
   * A comparison key the store keeps beside a text column (model/text.ts): written with it on
   * every insert and update, and filled in by the migration for rows that lack it (a database
   * from before the column), computed in TypeScript so that both engines hold the same keys.
   */
  readonly keyOf?: { readonly column: string; readonly key: (text: string) => string };
}

export interface ForeignKeyDef {
  readonly columns: readonly string[];
  readonly refTable: string;
  readonly refColumns: readonly string[];
  /** 'setNull' relations are cleared by the catalogue layer before the parent goes. */
  readonly onDelete: 'cascade' | 'noAction';
}

export interface IndexDef {
  readonly name: string;
  readonly columns: readonly string[];
  readonly unique: boolean;
  /** Only this engine creates the index (one that only that engine's queries use). */
  readonly engine?: 'sqlite' | 'postgres';
}

/**
 * What the change log (CHANGES) records of an entity table's rows: each engine renders it as
 * triggers on the table, so that every statement that writes the table writes its change rows in
 * the same transaction, whichever path of the service (or a cascade of the database) sends it.
 */
export interface ChangeCapture {
  /** The entity set the change rows name. */
  readonly entitySet: string;
  /** The Int64 key column. */
  readonly keyColumn: string;
  /**
   * The model properties an update is compared on, in model order: a change row lists those whose
   * value differs, and an update that changes none of them writes no row. The key and the
   * ModificationDate timestamp are left out (a write that changes no value moves only the
   * latter), as are the store's own columns (comparison keys, row_version).
   */
  readonly properties: readonly { readonly name: string; readonly column: string }[];
}

export interface TableDef {
  readonly name: string;
  /** Rows belong to one account (account_id leads the key); row-level security applies. */
  readonly tenant: boolean;
  readonly columns: readonly ColumnDef[];
  readonly primaryKey: readonly string[];
  /** Integer primary key assigned by the engine (only for the accounts table). */
  readonly autoIncrement?: boolean;
  readonly foreignKeys: readonly ForeignKeyDef[];
  readonly indexes: readonly IndexDef[];
  /** Indexes an earlier schema had and this one replaces: the migration drops them. */
  readonly retiredIndexes?: readonly string[];
  /** Entity tables: the change log records their rows' creation, changes and deletion. */
  readonly changeCapture?: ChangeCapture;
}

export const ACCOUNT_COLUMN = 'account_id';

/**
 * Every entity row's version: 1 when inserted, one more on every change. It is the entity's
 * ETag (optimistic concurrency: If-Match), kept out of the model's properties because it is the
 * service's bookkeeping, not data a client writes.
 */
export const VERSION_COLUMN = 'row_version';

/**
 * The SET items that give a changed row a new version (its ETag), or '' when none of the changed
 * properties is a concurrency token: the ETag covers what a seller writes, as WCF Data Services
 * computes it from the ConcurrencyMode="Fixed" properties, so a value the service or the platform
 * sets (a profile id, MarkedAsPayed) leaves a client's If-Match valid.
 */
export function versionBumpFor(changed: readonly PropertyDef[]): string {
  return changed.some((p) => p.concurrencyToken) ? `, "${VERSION_COLUMN}" = "${VERSION_COLUMN}" + 1` : '';
}

const columnTypeOf: Record<EdmType, ColumnType> = {
  'Edm.Int64': 'int64',
  'Edm.Int32': 'int32',
  'Edm.Decimal': 'decimal',
  'Edm.String': 'text',
  'Edm.Boolean': 'boolean',
  'Edm.DateTime': 'datetime',
};

const col = (name: string, type: ColumnType, nullable = false): ColumnDef => ({ name, type, nullable });

/** The column holding a property's comparison key, for text that rules compare ignoring case. */
export function comparisonKeyColumn(p: PropertyDef): string | undefined {
  return p.textComparison ? `${p.column}_key` : undefined;
}

/** The column a rule compares for the property: its comparison key where it has one. */
export function comparedColumn(p: PropertyDef): string {
  return comparisonKeyColumn(p) ?? p.column;
}

/** The value a rule compares for the property's value (the comparison key of text that has one). */
export function comparedValue(p: PropertyDef, value: string): string {
  return p.textComparison ? comparisonKey(value) : value;
}

/** The columns of a unique key's index after account_id: each member's compared column. */
export function uniqueKeyColumns(type: EntityTypeDef, key: UniqueKey): string[] {
  return key.properties.map((name) => comparedColumn(type.properties.find((x) => x.name === name)!));
}

function entityTable(model: Model, t: EntityTypeDef): TableDef {
  const columns: ColumnDef[] = [col(ACCOUNT_COLUMN, 'int64')];
  for (const prop of t.properties) {
    // Key columns are never null; others follow the model (timestamps are always set).
    columns.push(col(prop.column, columnTypeOf[prop.type], prop.access !== 'key' && prop.nullable));
    const keyColumn = comparisonKeyColumn(prop);
    // Nullable even beside a required column: a migration adds it to rows that exist.
    if (keyColumn) columns.push({ ...col(keyColumn, 'text', true), keyOf: { column: prop.column, key: comparisonKey } });
  }
  columns.push({ name: VERSION_COLUMN, type: 'int64', nullable: false, defaultValue: 1 });
  const foreignKeys: ForeignKeyDef[] = [];
  const indexes: IndexDef[] = [];
  const retiredIndexes: string[] = [];
  for (const r of model.relations) {
    if (r.kind !== 'reference' || r.dependent !== t.name) continue;
    const fkColumn = t.properties.find((x) => x.name === r.foreignKey)!.column;
    const principal = model.typeByName.get(r.principal)!;
    foreignKeys.push({
      columns: [ACCOUNT_COLUMN, fkColumn],
      refTable: principal.table,
      refColumns: [ACCOUNT_COLUMN, 'id'],
      onDelete: r.onDelete === 'cascade' ? 'cascade' : 'noAction',
    });
    // Ending with id, the index hands out a parent's rows in id order, which every read of them
    // asks for (a navigation, a rule's count or list). Without id in it, SQLite's planner, which
    // has no statistics, walks the whole account's rows by the primary key to avoid a sort: a
    // characteristic's check read every specific of the account.
    indexes.push({ name: `${t.table}_by_${fkColumn}_and_id`, columns: [ACCOUNT_COLUMN, fkColumn, 'id'], unique: false });
    retiredIndexes.push(`${t.table}_by_${fkColumn}`);
  }
  for (const prop of t.properties) {
    // Ending with id for the same reason: the matches come in id order, as lookups list them.
    if (prop.indexed) indexes.push({ name: `${t.table}_by_${prop.column}_and_id`, columns: [ACCOUNT_COLUMN, prop.column, 'id'], unique: false });
  }
  for (const key of t.uniqueKeys) {
    indexes.push({ name: uniqueIndexName(t, key), columns: [ACCOUNT_COLUMN, ...uniqueKeyColumns(t, key)], unique: true });
    // The index over the text itself, from before rules compared comparison keys.
    const exact = `${t.table}_unique_${key.properties.map((name) => t.properties.find((x) => x.name === name)!.column).join('_')}`;
    if (exact !== uniqueIndexName(t, key)) retiredIndexes.push(exact);
  }
  const changeCapture: ChangeCapture = {
    entitySet: t.setName,
    keyColumn: t.properties.find((x) => x.access === 'key')!.column,
    properties: t.properties.filter((x) => x.access !== 'key' && x.timestamp !== 'modified').map((x) => ({ name: x.name, column: x.column })),
  };
  return { name: t.table, tenant: true, columns, primaryKey: [ACCOUNT_COLUMN, 'id'], foreignKeys, indexes, retiredIndexes, changeCapture };
}

function linkTables(model: Model): TableDef[] {
  const tables: TableDef[] = [];
  for (const r of model.relations) {
    if (r.kind !== 'linkTable') continue;
    const left = model.typeByName.get(r.left)!;
    const right = model.typeByName.get(r.right)!;
    tables.push({
      name: r.table,
      tenant: true,
      columns: [col(ACCOUNT_COLUMN, 'int64'), col(r.leftColumn, 'int64'), col(r.rightColumn, 'int64')],
      primaryKey: [ACCOUNT_COLUMN, r.leftColumn, r.rightColumn],
      foreignKeys: [
        { columns: [ACCOUNT_COLUMN, r.leftColumn], refTable: left.table, refColumns: [ACCOUNT_COLUMN, 'id'], onDelete: 'cascade' },
        { columns: [ACCOUNT_COLUMN, r.rightColumn], refTable: right.table, refColumns: [ACCOUNT_COLUMN, 'id'], onDelete: 'cascade' },
      ],
      // The primary key hands out a left entity's pairs in right order; this index, a right
      // entity's pairs in left order (see the foreign key indexes above).
      indexes: [{ name: `${r.table}_by_${r.rightColumn}_and_${r.leftColumn}`, columns: [ACCOUNT_COLUMN, r.rightColumn, r.leftColumn], unique: false }],
      retiredIndexes: [`${r.table}_by_${r.rightColumn}`],
    });
  }
  return tables;
}

/** Tables the service keeps for itself, not exposed as entity sets. */
const serviceTables: readonly TableDef[] = [
  {
    name: 'accounts',
    tenant: false,
    columns: [
      col('id', 'int64'),
      col('user_name', 'text'),
      col('password_hash', 'text'),
      col('created_at', 'datetime'),
      col('last_login_at', 'datetime', true),
      // Set by `catalogue account disable`: its tokens and sessions are refused while it is set.
      col('disabled_at', 'datetime', true),
    ],
    primaryKey: ['id'],
    autoIncrement: true,
    foreignKeys: [],
    indexes: [{ name: 'accounts_by_user_name', columns: ['user_name'], unique: true }],
  },
  {
    name: 'subscription_tokens',
    tenant: false,
    columns: [
      col('token_hash', 'text'),
      col(ACCOUNT_COLUMN, 'int64'),
      col('created_at', 'datetime'),
      col('revoked_at', 'datetime', true),
      // When the token was last used and by which client (its User-Agent), written at most once a
      // minute per token by each process (auth/token-activity.ts): the seller console shows them.
      col('last_used_at', 'datetime', true),
      col('last_user_agent', 'text', true),
    ],
    primaryKey: ['token_hash'],
    foreignKeys: [{ columns: [ACCOUNT_COLUMN], refTable: 'accounts', refColumns: ['id'], onDelete: 'cascade' }],
    indexes: [{ name: 'subscription_tokens_by_account', columns: [ACCOUNT_COLUMN], unique: false }],
  },
  {
    name: 'sessions',
    tenant: false,
    columns: [
      col('session_hash', 'text'),
      col(ACCOUNT_COLUMN, 'int64'),
      col('created_at', 'datetime'),
      col('last_seen_at', 'datetime'),
      col('expires_at', 'datetime'),
    ],
    primaryKey: ['session_hash'],
    foreignKeys: [{ columns: [ACCOUNT_COLUMN], refTable: 'accounts', refColumns: ['id'], onDelete: 'cascade' }],
    indexes: [{ name: 'sessions_by_account', columns: [ACCOUNT_COLUMN], unique: false }],
  },
  {
    // Failed logins per scope ("user:<name>" or "addr:<ip>"), in the database so that every
    // server process counts the same failures.
    name: 'login_throttle',
    tenant: false,
    columns: [col('scope_key', 'text'), col('failures', 'int32'), col('window_started_at', 'datetime'), col('blocked_until', 'datetime', true)],
    primaryKey: ['scope_key'],
    foreignKeys: [],
    indexes: [],
  },
  {
    // One service-wide sequence: entity ids are unique across every set and never reused.
    name: 'id_sequence',
    tenant: false,
    columns: [col('name', 'text'), col('last_value', 'int64')],
    primaryKey: ['name'],
    foreignKeys: [],
    indexes: [],
  },
];

export const ORDER_HISTORY = {
  table: 'sales_order_history',
  id: 'id',
  orderId: 'sales_order_id',
  platformItemId: 'platform_item_id',
  action: 'action',
  value: 'value',
  recordedAt: 'recorded_at',
} as const;

/** Order history lines (GetSalesOrderHistory); a tenant table that is not an entity set. */
function orderHistoryTable(model: Model): TableDef {
  const orders = model.typeByName.get('SalesOrder')!;
  const H = ORDER_HISTORY;
  return {
    name: H.table,
    tenant: true,
    columns: [
      col(ACCOUNT_COLUMN, 'int64'),
      col(H.id, 'int64'),
      col(H.orderId, 'int64'),
      col(H.platformItemId, 'text'),
      col(H.action, 'text'),
      col(H.value, 'int32'),
      col(H.recordedAt, 'datetime'),
    ],
    primaryKey: [ACCOUNT_COLUMN, H.id],
    foreignKeys: [{ columns: [ACCOUNT_COLUMN, H.orderId], refTable: orders.table, refColumns: [ACCOUNT_COLUMN, 'id'], onDelete: 'cascade' }],
    indexes: [{ name: 'sales_order_history_by_order', columns: [ACCOUNT_COLUMN, H.orderId, H.id], unique: false }],
  };
}

/**
 * The first answer to a POST that carried an Idempotency-Key, written in the same transaction
 * as what the POST created: a retry with the key gets this answer and creates nothing.
 */
export const IDEMPOTENCY = {
  table: 'idempotency_keys',
  key: 'idempotency_key',
  requestHash: 'request_hash',
  status: 'status',
  headers: 'headers',
  body: 'body',
  createdAt: 'created_at',
} as const;

const idempotencyTable: TableDef = {
  name: IDEMPOTENCY.table,
  tenant: true,
  columns: [
    col(ACCOUNT_COLUMN, 'int64'),
    col(IDEMPOTENCY.key, 'text'),
    col(IDEMPOTENCY.requestHash, 'text'),
    col(IDEMPOTENCY.status, 'int32'),
    col(IDEMPOTENCY.headers, 'text'),
    col(IDEMPOTENCY.body, 'text', true),
    col(IDEMPOTENCY.createdAt, 'datetime'),
  ],
  primaryKey: [ACCOUNT_COLUMN, IDEMPOTENCY.key],
  foreignKeys: [],
  indexes: [{ name: 'idempotency_keys_by_age', columns: [ACCOUNT_COLUMN, IDEMPOTENCY.createdAt], unique: false }],
};

/**
 * The change log: one row per entity created, changed or deleted, written by the triggers each
 * engine renders from the entity tables' ChangeCapture, in the transaction of the change. Delta
 * links (service/delta) read it per account and entity set; the webhooks' fan-out reads it past a
 * cursor per account (webhook_cursors).
 */
export const CHANGES = {
  table: 'entity_changes',
  /** Strictly increasing per database in the order rows are written (never reused, also after pruning). */
  seq: 'change_seq',
  entitySet: 'entity_set',
  entityId: 'entity_id',
  /** 'created' | 'changed' | 'deleted' */
  kind: 'change_kind',
  /** For 'changed': the model properties whose values changed, comma-separated; '' otherwise. */
  changedProperties: 'changed_properties',
  /** When the change was written (UTC ms, as every datetime column). */
  changedAt: 'changed_at',
  /**
   * PostgreSQL: the writing transaction's id (pg_current_xact_id() as a bigint), so that a delta
   * read can take every change its snapshot may not have seen; null on SQLite (one writer).
   */
  writerXact: 'writer_xact',
} as const;

/** The sequence change_seq is drawn from (a PostgreSQL sequence; a row of id_sequence on SQLite). */
export const CHANGES_SEQUENCE = 'entity_change_seq';

export type ChangeKind = 'created' | 'changed' | 'deleted';

const changeLogTable: TableDef = {
  name: CHANGES.table,
  tenant: true,
  columns: [
    col(ACCOUNT_COLUMN, 'int64'),
    col(CHANGES.seq, 'int64'),
    col(CHANGES.entitySet, 'text'),
    col(CHANGES.entityId, 'int64'),
    col(CHANGES.kind, 'text'),
    col(CHANGES.changedProperties, 'text'),
    col(CHANGES.changedAt, 'datetime'),
    col(CHANGES.writerXact, 'int64', true),
  ],
  // The triggers number the rows from a database-wide sequence (CHANGES_SEQUENCE): increasing in
  // the order rows are written and never handed out twice, also after pruning.
  primaryKey: [ACCOUNT_COLUMN, CHANGES.seq],
  foreignKeys: [],
  // Each index costs every write of an entity one more B-tree insert (as much as the row itself),
  // so there are few: a delta read on SQLite and the housekeeping go by the primary key (an
  // account's changes in change_seq order, which is also their time order).
  indexes: [
    // PostgreSQL's delta read goes by the writing transaction's id (see CHANGES.writerXact).
    { name: 'entity_changes_by_set_and_xact', columns: [ACCOUNT_COLUMN, CHANGES.entitySet, CHANGES.writerXact], unique: false, engine: 'postgres' },
  ],
  // The first schema of the change log had these; measured, they doubled what a change row cost.
  retiredIndexes: ['entity_changes_by_set_and_seq', 'entity_changes_by_age', 'entity_changes_unpublished'],
};

/**
 * The accounts that have at least one webhook subscription (a directory table, read across
 * accounts): the webhook worker visits only these, so a service without webhooks pays one small
 * query per poll, and an account without them never has its change log touched.
 */
export const WEBHOOK_ACCOUNTS = 'webhook_accounts';

const webhookAccountsTable: TableDef = {
  name: WEBHOOK_ACCOUNTS,
  tenant: false,
  columns: [col(ACCOUNT_COLUMN, 'int64')],
  primaryKey: [ACCOUNT_COLUMN],
  foreignKeys: [{ columns: [ACCOUNT_COLUMN], refTable: 'accounts', refColumns: ['id'], onDelete: 'cascade' }],
  indexes: [],
};

/**
 * A seller's webhook endpoints (src/webhooks/). Times are UTC milliseconds (int64), computed by
 * the caller from its Clock. `secret` signs every delivery; during a rotation `previous_secret`
 * signs them too until `previous_secret_until`, so a receiver can switch over without a gap.
 * `failure_count` counts consecutive failed attempts since `failing_since`; a subscription that
 * keeps failing is disabled (`disabled_reason`) and gets no new events until it is enabled.
 */
export const WEBHOOK_SUBSCRIPTIONS = 'webhook_subscriptions';

const webhookSubscriptionsTable: TableDef = {
  name: WEBHOOK_SUBSCRIPTIONS,
  tenant: true,
  columns: [
    col(ACCOUNT_COLUMN, 'int64'),
    col('id', 'text'),
    col('url', 'text'),
    // Comma-separated event types (src/webhooks/event-types.ts).
    col('event_types', 'text'),
    col('secret', 'text'),
    col('previous_secret', 'text', true),
    col('previous_secret_until', 'int64', true),
    { ...col('enabled', 'int32'), defaultValue: 1 },
    { ...col('failure_count', 'int32'), defaultValue: 0 },
    col('failing_since', 'int64', true),
    col('disabled_reason', 'text', true),
    col('created_at', 'int64'),
  ],
  primaryKey: [ACCOUNT_COLUMN, 'id'],
  foreignKeys: [],
  indexes: [],
};

/**
 * One event for one subscription: written by the fan-out in the same transaction that moves the
 * account's cursor past the change (webhook_cursors), so an event exists exactly when its change was committed. `event_id` is the
 * receiver's key for deduplication (the same on every attempt). A delivery is leased
 * (`lease_owner`, `lease_until`) by the process that sends it; a lease that runs out (the process
 * died) leaves it to another. `state`: 'pending', 'delivered', or 'failed' (its retry horizon
 * passed; redelivered only by hand).
 */
export const WEBHOOK_DELIVERIES = 'webhook_deliveries';

const webhookDeliveriesTable: TableDef = {
  name: WEBHOOK_DELIVERIES,
  tenant: true,
  columns: [
    col(ACCOUNT_COLUMN, 'int64'),
    col('event_id', 'text'),
    col('subscription_id', 'text'),
    col('sequence', 'int64'),
    col('event_type', 'text'),
    col('payload', 'text'),
    col('state', 'text'),
    { ...col('attempts', 'int32'), defaultValue: 0 },
    col('created_at', 'int64'),
    col('next_attempt_at', 'int64'),
    col('lease_owner', 'text', true),
    col('lease_until', 'int64', true),
    col('last_status', 'int32', true),
    col('last_error', 'text', true),
    col('last_attempt_at', 'int64', true),
    col('delivered_at', 'int64', true),
  ],
  primaryKey: [ACCOUNT_COLUMN, 'event_id'],
  foreignKeys: [{ columns: [ACCOUNT_COLUMN, 'subscription_id'], refTable: WEBHOOK_SUBSCRIPTIONS, refColumns: [ACCOUNT_COLUMN, 'id'], onDelete: 'cascade' }],
  indexes: [
    // The due deliveries of one endpoint, oldest first: what the deliverer leases.
    { name: 'webhook_deliveries_due', columns: [ACCOUNT_COLUMN, 'subscription_id', 'state', 'next_attempt_at'], unique: false },
    { name: 'webhook_deliveries_by_sequence', columns: [ACCOUNT_COLUMN, 'sequence'], unique: false },
  ],
};

/**
 * How far the webhook fan-out has read each account's change log: the last change_seq it turned
 * into deliveries (or passed over, with no subscription wanting it), advanced in the transaction
 * that wrote those deliveries. One row per account instead of a flag on every change row: a
 * flag's UPDATE would rewrite each change row once more (on PostgreSQL a new row version and
 * index entry each, for the vacuum to clear), which a write load paid for in throughput.
 */
export const WEBHOOK_CURSORS = 'webhook_cursors';

const webhookCursorsTable: TableDef = {
  name: WEBHOOK_CURSORS,
  tenant: true,
  columns: [col(ACCOUNT_COLUMN, 'int64'), col('last_seq', 'int64')],
  primaryKey: [ACCOUNT_COLUMN],
  foreignKeys: [],
  indexes: [],
};

/** Every table, parents before children (the order DDL must run in). */
export function buildSchema(model: Model): TableDef[] {
  const entityTables = orderByDependencies(model.entityTypes.map((t) => entityTable(model, t)));
  return [...serviceTables, ...entityTables, ...linkTables(model), orderHistoryTable(model), idempotencyTable, changeLogTable, webhookAccountsTable, webhookSubscriptionsTable, webhookDeliveriesTable, webhookCursorsTable];
}

function orderByDependencies(tables: TableDef[]): TableDef[] {
  const byName = new Map(tables.map((t) => [t.name, t] as const));
  const done = new Set<string>();
  const ordered: TableDef[] = [];
  const visit = (t: TableDef, path: Set<string>) => {
    if (done.has(t.name)) return;
    if (path.has(t.name)) throw new Error(`Foreign keys form a cycle through ${t.name}`);
    path.add(t.name);
    for (const fk of t.foreignKeys) {
      const parent = byName.get(fk.refTable);
      if (parent && parent !== t) visit(parent, path);
    }
    path.delete(t.name);
    done.add(t.name);
    ordered.push(t);
  };
  for (const t of tables) visit(t, new Set());
  return ordered;
}

/** The unique index of a key (before PostgreSQL shortens a long name, see postgres/ddl.ts). */
export function uniqueIndexName(type: EntityTypeDef, key: UniqueKey): string {
  return `${type.table}_unique_${uniqueKeyColumns(type, key).join('_')}`;
}

/** What `needed` has that the database's "table.column" names lack: whole tables, or columns. */
export function schemaGaps(needed: readonly TableDef[], existing: ReadonlySet<string>): string[] {
  const tables = new Set([...existing].map((name) => name.slice(0, name.indexOf('.'))));
  return needed.flatMap((t) => (tables.has(t.name) ? t.columns.filter((c) => !existing.has(`${t.name}.${c.name}`)).map((c) => `${t.name}.${c.name}`) : [t.name]));
}
