/**
 * Where the marketplace's documents come in, over the platform API or from a file: each is
 * validated against its schema and then applied in one write transaction of the account it is
 * for, answered only after COMMIT. A document that fails anywhere stores nothing.
 */
import type { CatalogueServices } from '../catalogue/services';
import { IdBlock, type Delivery, type DeliveryOutcome } from './delivery';
import { DocumentValidator, type DocumentKind, type Json, type PlatformDocument } from './documents';
import { deliverPayment, deliverShipment } from './events';
import { deliverListing } from './listings';
import { deliverOrder, preloadOrders } from './orders';
import { BufferedRows } from './buffered-rows';

export type { DeliveryOutcome } from './delivery';

const HANDLERS: Readonly<Record<DocumentKind, (d: Delivery, body: Json) => Promise<DeliveryOutcome>>> = {
  listing: deliverListing,
  order: deliverOrder,
  payment: deliverPayment,
  shipment: deliverShipment,
};

export interface IntakeOptions {
  /** Inserted rows an import holds before it sends them ahead (BufferedRows.writeAhead). */
  readonly writeAheadRows?: number;
}

export class PlatformIntake {
  readonly validator: DocumentValidator;

  constructor(
    private readonly services: CatalogueServices,
    private readonly options: IntakeOptions = {},
  ) {
    this.validator = new DocumentValidator(services.model);
  }

  /** The document, or a 400 naming what is wrong with it; nothing is stored. */
  validate(body: unknown): PlatformDocument {
    return this.validator.validate(body);
  }

  /** Applies a validated document to one account in one transaction. */
  apply(accountId: number, doc: PlatformDocument): Promise<DeliveryOutcome> {
    return this.services.store.write(accountId, (tx) => this.handle(tx, accountId, doc));
  }

  /** One document inside the caller's transaction, at the service clock's time. */
  private handle(tx: Delivery['tx'], accountId: number, doc: PlatformDocument, ids?: IdBlock): Promise<DeliveryOutcome> {
    const { entities, model, writes, clock } = this.services;
    return HANDLERS[doc.kind]({ tx, accountId, entities, model, writes, now: clock.now(), ...(ids ? { ids } : {}) }, doc.body);
  }

  /**
   * Applies validated documents to one account in order, all in one transaction (a file's
   * import: one COMMIT for many documents). A document that fails undoes them all; the error
   * says which one it was (DocumentFailure).
   *
   * Order documents read and write as a set (BufferedRows): their lookups are loaded for all of
   * them at once and their rows written in multi-row INSERTs, sent ahead as the documents go
   * (BufferedRows.writeAhead): the database writes one set while the next is read. Should
   * writing a set fail where single writes would have failed at one document, the transaction
   * is undone and the documents are applied again one by one, which names that document.
   */
  async applyAll(accountId: number, docs: readonly PlatformDocument[]): Promise<DeliveryOutcome[]> {
    try {
      return await this.applyTogether(accountId, docs, true);
    } catch (error) {
      if (error instanceof DocumentFailure) throw error;
      return this.applyTogether(accountId, docs, false);
    }
  }

  private applyTogether(accountId: number, docs: readonly PlatformDocument[], asSet: boolean): Promise<DeliveryOutcome[]> {
    const { store, entities, model, clock } = this.services;
    return store.write(accountId, async (tx) => {
      const outcomes: DeliveryOutcome[] = [];
      const ids = new IdBlock(store, tx, docs.reduce((n, doc) => n + rowsExpectedOf(doc), 0));
      let rows: BufferedRows | undefined;
      const newSet = () => new BufferedRows(entities, model, this.options.writeAheadRows);
      if (asSet) {
        rows = newSet();
        await preloadOrders(rows, tx, accountId, model, docs.filter((doc) => doc.kind === 'order').map((doc) => doc.body));
      }
      for (const [index, doc] of docs.entries()) {
        if (rows && doc.kind !== 'order') {
          // Other documents write through the store itself, and may change what the set holds.
          // (A failure to write the set is no document's: applyAll goes one by one then.)
          await rows.flush(tx, accountId);
          rows = newSet();
        }
        try {
          if (rows && doc.kind === 'order') outcomes.push(await deliverOrder({ tx, accountId, entities: rows, model, now: clock.now(), ids }, doc.body));
          else outcomes.push(await this.handle(tx, accountId, doc, ids));
        } catch (error) {
          // Rows sent ahead that failed to write failed every statement after them: that is no
          // document's failure (written() throws it). Nothing may still be on its way either
          // when the transaction rolls back.
          await rows?.written();
          throw new DocumentFailure(index, error);
        }
        rows?.writeAhead(tx, accountId);
      }
      await rows?.flush(tx, accountId);
      return outcomes;
    });
  }

  deliver(accountId: number, body: unknown): Promise<DeliveryOutcome> {
    return this.apply(accountId, this.validate(body));
  }
}

/**
 * New rows a document may insert: an order its buyer, two addresses, itself and its items; a
 * listing itself and its items; an event at most one. A guess for drawing ids ahead, never a limit.
 */
function rowsExpectedOf(doc: PlatformDocument): number {
  const items = (doc.body.SalesOrderItems ?? doc.body.ListingItems) as readonly unknown[] | undefined;
  return (doc.kind === 'order' ? 4 : 1) + (Array.isArray(items) ? items.length : 0);
}

/** The document at `index` of an applyAll() failed with `cause`; nothing of the call was stored. */
export class DocumentFailure extends Error {
  constructor(
    readonly index: number,
    override readonly cause: unknown,
  ) {
    super(`document ${index + 1} of the transaction failed`);
  }
}
