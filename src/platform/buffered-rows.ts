/**
 * The rows of many order documents in one transaction, read and written as sets (a file's import,
 * issue 16): what the documents will look up is loaded for all of them at once (preload), the
 * rows they insert are held and written in one multi-row INSERT per set (flush), and their
 * updates are replayed in order after those. The order handler reads and writes through this
 * view as it does through the EntityStore (RowAccess), and every answer is the one the database
 * would give had each write gone to it at once:
 * - a row this view holds (loaded, inserted or updated here) is answered from memory, with the
 *   values of every write so far;
 * - a lookup is answered from memory alone where memory holds every match: the values preloaded
 *   (and those looked up once), and a foreign key naming a row not written yet (no stored row
 *   can name it);
 * - any other lookup asks the database, which holds every row this view does not, and adds the
 *   rows of memory that match.
 *
 * Inserted rows may be sent ahead (writeAhead) while the documents after them are read: the
 * database writes them while this process works on, instead of each waiting for the other. They
 * go on the transaction's connection, so every later statement sees them.
 */
import type { RowAccess } from '../catalogue/order-history';
import { foreignKeysOf } from '../model/define';
import type { EntityTypeDef, Model } from '../model/types';
import type { EdmValue } from '../odata/edm';
import { compareIds, entityId, type EntityRecord } from '../odata/entity';
import { writtenProperties, type EntityStore } from '../store/entities';
import { buildSchema, versionBumpFor } from '../store/schema';
import type { SqlExecutor } from '../store/store';

interface HeldRow {
  readonly type: EntityTypeDef;
  values: Record<string, EdmValue>;
  version: bigint;
  /** For a row inserted here: its values as inserted (its updates are replayed after it). */
  readonly inserted?: Readonly<Record<string, EdmValue>>;
}

interface HeldUpdate {
  readonly type: EntityTypeDef;
  readonly id: bigint;
  readonly values: Readonly<Record<string, EdmValue>>;
}

/**
 * Inserted rows held before they are sent ahead: a few multi-row INSERTs' worth, so that the
 * database has work while the next documents are read, and the last set (waited for at COMMIT)
 * stays small.
 */
export const WRITE_AHEAD_ROWS = 256;

/** Where a lookup of one property may be answered from memory: the values whose matches are all held. */
type CompleteValues = Map<string, Set<EdmValue>>;

function addTo(index: Map<EdmValue, Set<HeldRow>>, value: EdmValue, row: HeldRow): void {
  let rows = index.get(value);
  if (!rows) index.set(value, (rows = new Set()));
  rows.add(row);
}

export class BufferedRows implements RowAccess {
  readonly store: EntityStore['store'];
  /** Every row held, by type and id, with its current values. */
  private readonly held = new Map<EntityTypeDef, Map<bigint, HeldRow>>();
  private readonly complete = new Map<EntityTypeDef, CompleteValues>();
  /** Rows inserted and not yet sent, per type, in the order of the inserts. */
  private readonly inserts = new Map<EntityTypeDef, HeldRow[]>();
  /** How many rows `inserts` holds. */
  private insertsHeld = 0;
  /** The INSERTs sent ahead, not yet waited for. */
  private sentAhead: Promise<void>[] = [];
  /**
   * Ids of the rows inserted here since the last flush, sent ahead or not: every row that names
   * one was inserted or updated here too, so memory holds all of them.
   */
  private readonly unwritten = new Set<bigint>();
  private updates: HeldUpdate[] = [];
  /** Held rows by the value of each property looked up: a lookup costs its matches, not the set. */
  private readonly indexes = new Map<EntityTypeDef, Map<string, Map<EdmValue, Set<HeldRow>>>>();

  constructor(
    private readonly entities: EntityStore,
    private readonly model: Model,
    /** Inserted rows held before writeAhead() sends them. */
    private readonly writeAheadRows = WRITE_AHEAD_ROWS,
  ) {
    this.store = entities.store;
  }

  /** Loads every row of `type` whose property `name` equals one of `values`, for the lookups to come. */
  async preload(tx: SqlExecutor, accountId: number, type: EntityTypeDef, name: string, values: readonly EdmValue[]): Promise<void> {
    const wanted = [...new Set(values)].filter((v) => v !== null && !this.isComplete(type, name, v));
    if (wanted.length === 0) return;
    for (const record of await this.entities.findWhereAny(tx, accountId, type, name, wanted)) this.hold(record);
    for (const v of wanted) this.completeFor(type, name).add(v);
  }

  async find(tx: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint): Promise<EntityRecord | undefined> {
    const row = this.rowsOf(type).get(id);
    if (row) return copyOf(row);
    // Not held: nothing here changed it, so the database's row is the current one.
    const stored = await this.entities.find(tx, accountId, type, id);
    if (stored) this.hold(stored);
    return stored;
  }

  async findWhere(tx: SqlExecutor, accountId: number, type: EntityTypeDef, name: string, value: EdmValue): Promise<EntityRecord[]> {
    const pointsAtUnwritten = typeof value === 'bigint' && this.unwritten.has(value) && foreignKeysOf(this.model, type).has(name);
    if (!this.isComplete(type, name, value) && !pointsAtUnwritten) {
      // hold() keeps a row held already as it is: memory has its current values.
      for (const record of await this.entities.findWhere(tx, accountId, type, name, value)) this.hold(record);
      if (value !== null) this.completeFor(type, name).add(value);
    }
    const matches = [...(this.indexOf(type, name).get(value) ?? [])];
    return matches.sort((a, b) => compareIds(idOf(a), idOf(b))).map(copyOf);
  }

  async insert(_tx: SqlExecutor, _accountId: number, type: EntityTypeDef, values: Readonly<Record<string, EdmValue>>): Promise<void> {
    // One copy serves both: update() replaces `values` with a new object, never changes it.
    const copy = { ...values };
    const row: HeldRow = { type, values: copy, version: 1n, inserted: copy };
    const id = idOf(row);
    this.rowsOf(type).set(id, row);
    this.indexRow(row);
    this.unwritten.add(id);
    let list = this.inserts.get(type);
    if (!list) this.inserts.set(type, (list = []));
    list.push(row);
    this.insertsHeld++;
  }

  async update(tx: SqlExecutor, accountId: number, type: EntityTypeDef, id: bigint, values: Readonly<Record<string, EdmValue>>): Promise<bigint | undefined> {
    const written = writtenProperties(type, values);
    if (written.length === 0) return undefined;
    if (!this.rowsOf(type).has(id) && !(await this.find(tx, accountId, type, id))) return undefined;
    const row = this.rowsOf(type).get(id)!;
    const before = row.values;
    row.values = { ...row.values, ...values };
    this.indexRow(row, before);
    // The version moves as EntityStore.update moves it: the replayed UPDATE does exactly that.
    if (versionBumpFor(written) !== '') row.version += 1n;
    this.updates.push({ type, id, values: { ...values } });
    return row.version;
  }

  /**
   * Sends the inserted rows held, once there are writeAheadRows of them, without waiting for
   * the answer (written() and flush() wait for it). Rows are inserted with the values they were
   * inserted with, and updates are held for flush(), so the statements keep the order that
   * single writes would have: every row before the rows that name it, every update after.
   */
  writeAhead(tx: SqlExecutor, accountId: number): void {
    if (this.insertsHeld < this.writeAheadRows) return;
    const sent = this.entities.insertManyTogether(tx, accountId, this.takeInserts());
    sent.catch(() => undefined);
    this.sentAhead.push(sent);
  }

  /**
   * Waits for every INSERT sent ahead; the first failure among them, if any. A statement sent
   * after a failed one fails only because the transaction is aborted: its caller reports this
   * failure instead.
   */
  async written(): Promise<void> {
    const sent = this.sentAhead;
    this.sentAhead = [];
    const failed = (await Promise.allSettled(sent)).find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * Writes what is held: the inserted rows, one multi-row INSERT per set in the model's order
   * (parents before the rows that name them) sent together, then every update in the order it
   * was made.
   */
  async flush(tx: SqlExecutor, accountId: number): Promise<void> {
    await this.written();
    // Inserted with the values they were inserted with: later updates follow as UPDATEs, so
    // that every version ends where single writes would have left it. All sent at once.
    await this.entities.insertManyTogether(tx, accountId, this.takeInserts());
    for (const update of this.updates) await this.entities.update(tx, accountId, update.type, update.id, update.values);
    this.unwritten.clear();
    this.updates = [];
  }

  /** The inserted rows held, as insertManyTogether's batches in the model's order; none held after. */
  private takeInserts(): { type: EntityTypeDef; rows: Readonly<Record<string, EdmValue>>[] }[] {
    const batches = typesInWriteOrder(this.model).flatMap((type) => {
      const rows = this.inserts.get(type);
      return rows ? [{ type, rows: rows.map((row) => row.inserted ?? row.values) }] : [];
    });
    this.inserts.clear();
    this.insertsHeld = 0;
    return batches;
  }

  private rowsOf(type: EntityTypeDef): Map<bigint, HeldRow> {
    let rows = this.held.get(type);
    if (!rows) this.held.set(type, (rows = new Map()));
    return rows;
  }

  private hold(record: EntityRecord): void {
    const id = entityId(record.values);
    const rows = this.rowsOf(record.type);
    if (rows.has(id)) return;
    const row: HeldRow = { type: record.type, values: { ...record.values }, version: record.version ?? 1n };
    rows.set(id, row);
    this.indexRow(row);
  }

  /** The held rows of a type by the value of one property, built on the first lookup by it. */
  private indexOf(type: EntityTypeDef, name: string): Map<EdmValue, Set<HeldRow>> {
    let byName = this.indexes.get(type);
    if (!byName) this.indexes.set(type, (byName = new Map()));
    let index = byName.get(name);
    if (!index) {
      byName.set(name, (index = new Map()));
      for (const row of this.rowsOf(type).values()) addTo(index, row.values[name] ?? null, row);
    }
    return index;
  }

  /** Files a row held anew, or one whose values changed from `before`, in its type's indexes. */
  private indexRow(row: HeldRow, before?: Readonly<Record<string, EdmValue>>): void {
    for (const [name, index] of this.indexes.get(row.type) ?? []) {
      if (before) {
        if ((before[name] ?? null) === (row.values[name] ?? null)) continue;
        index.get(before[name] ?? null)?.delete(row);
      }
      addTo(index, row.values[name] ?? null, row);
    }
  }

  private completeFor(type: EntityTypeDef, name: string): Set<EdmValue> {
    let byName = this.complete.get(type);
    if (!byName) this.complete.set(type, (byName = new Map()));
    let values = byName.get(name);
    if (!values) byName.set(name, (values = new Set()));
    return values;
  }

  private isComplete(type: EntityTypeDef, name: string, value: EdmValue): boolean {
    return this.complete.get(type)?.get(name)?.has(value) ?? false;
  }
}

const idOf = (row: { values: Readonly<Record<string, EdmValue>> }) => entityId(row.values);

const copyOf = (row: HeldRow): EntityRecord => ({ type: row.type, values: { ...row.values }, version: row.version });

const writeOrders = new WeakMap<Model, readonly EntityTypeDef[]>();

/** The model's types in the order their tables are created: parents before the rows that name them. */
function typesInWriteOrder(model: Model): readonly EntityTypeDef[] {
  let ordered = writeOrders.get(model);
  if (!ordered) {
    const byTable = new Map(model.entityTypes.map((type) => [type.table, type] as const));
    ordered = buildSchema(model).flatMap((table) => byTable.get(table.name) ?? []);
    writeOrders.set(model, ordered);
  }
  return ordered;
}
