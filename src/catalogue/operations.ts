/**
 * The effects of the seven service operations (README "Service operations"),
 * each inside the caller's transaction: a snapshot for the two readers, one write transaction for
 * the others. Entities an operation names are looked up in the caller's account only, so another
 * account's id is answered exactly like a missing one (404). Changes of catalogue data go through
 * the same writes and rules as the entity sets.
 */
import type { Clock } from '../clock';
import type { EntityTypeDef, LinkTableRelation, Model } from '../model/types';
import { EntityMissing, invalid } from '../model/rule-violation';
import type { EdmValue } from '../odata/edm';
import { entityId, type EntityRecord } from '../odata/entity';
import type { OperationArguments } from '../odata/uri/operation-parameters';
import { CatalogueQueries } from '../store/catalogue-queries';
import type { EntityStore } from '../store/entities';
import type { SqlExecutor } from '../store/store';
import { orderHistoryText } from './order-history';
import type { CatalogueWrites } from './writes';

interface OperationCall {
  readonly tx: SqlExecutor;
  readonly accountId: number;
  readonly args: OperationArguments;
}

type Implementation = (call: OperationCall) => Promise<EdmValue>;

/** SetProductProfile / SetCatalogProfile: the profile property each `type` sets. */
const PROFILE_PROPERTY: Readonly<Record<number, string>> = { 1: 'PaymentProfileId', 2: 'ReturnProfileId', 3: 'ShippingProfileId' };

/** DeleteAccountData: what each bit of `type` empties; owned rows follow by cascade. */
const DELETED_BY_BIT: readonly (readonly [number, readonly string[]])[] = [
  [2, ['Product']],
  [4, ['Catalog']],
  [8, ['SalesOrder', 'Buyer']],
];
/**
 * Type 0 empties everything, Listings included. Sets are emptied in this order: orders before
 * the buyers and addresses they restrict, orders and listings before the products whose
 * pointers they would otherwise need cleared.
 */
const EVERYTHING = ['SalesOrder', 'Buyer', 'Listing', 'Product', 'Catalog'];
const DELETE_TYPES = new Set([0, 2, 4, 6, 8, 10, 12]);

/** The Type of the strike-through ("was") price that ReviseInventoryStatus maintains. */
const STRIKE_THROUGH_OFFER = 1;

const noBindings = new Map<string, readonly string[]>();

export class CatalogueOperations {
  private readonly implementations: Readonly<Record<string, Implementation>>;
  private readonly queries: CatalogueQueries;

  constructor(
    private readonly model: Model,
    private readonly entities: EntityStore,
    private readonly writes: CatalogueWrites,
    private readonly clock: Clock,
  ) {
    this.queries = new CatalogueQueries(model);
    this.implementations = {
      GetSalesOrderHistory: (c) => this.getSalesOrderHistory(c),
      ProductIsListed: (c) => this.productIsListed(c),
      SetEbayCategory: (c) => this.setEbayCategory(c),
      SetProductProfile: (c) => this.setProductProfile(c),
      SetCatalogProfile: (c) => this.setCatalogProfile(c),
      ReviseInventoryStatus: (c) => this.reviseInventoryStatus(c),
      DeleteAccountData: (c) => this.deleteAccountData(c),
    };
    // The model declares the operations; one without an implementation must not start.
    const missing = model.operations.filter((o) => !this.implementations[o.name]).map((o) => o.name);
    if (missing.length) throw new Error(`service operations without an implementation: ${missing.join(', ')}`);
  }

  /** Runs one operation with its typed arguments inside `tx`; its result value. */
  run(operation: string, tx: SqlExecutor, accountId: number, args: OperationArguments): Promise<EdmValue> {
    return this.implementations[operation]!({ tx, accountId, args });
  }

  private type(name: string): EntityTypeDef {
    return this.model.typeByName.get(name)!;
  }

  /** The entity of the caller's account, or the 404 a missing one gets. */
  private async mustFind(call: OperationCall, typeName: string, id: bigint): Promise<EntityRecord> {
    const type = this.type(typeName);
    const record = await this.entities.find(call.tx, call.accountId, type, id);
    if (!record) throw new EntityMissing(type, id);
    return record;
  }

  private async getSalesOrderHistory(call: OperationCall): Promise<EdmValue> {
    const order = await this.mustFind(call, 'SalesOrder', call.args.get('salesOrderId') as bigint);
    return orderHistoryText(call.tx, this.entities, call.accountId, entityId(order.values));
  }

  /** True when an active listing (Status 1) is of the product, or lists it as one of its items. */
  private async productIsListed(call: OperationCall): Promise<EdmValue> {
    const product = await this.mustFind(call, 'Product', call.args.get('productId') as bigint);
    return this.queries.productIsListed(call.tx, call.accountId, entityId(product.values));
  }

  /** Only for a product whose DisableAutomatch is true; otherwise the matching process decides. */
  private async setEbayCategory(call: OperationCall): Promise<EdmValue> {
    // The second category is an additional one: naming the first again is a mistake, not a choice.
    const second = call.args.get('categoryId2');
    if (second !== undefined && second === call.args.get('categoryId1')) {
      throw invalid(`The parameter 'categoryId2' of SetEbayCategory must differ from categoryId1 (${String(second)}).`);
    }
    const product = await this.mustFind(call, 'Product', call.args.get('productId') as bigint);
    if (product.values.DisableAutomatch !== true) return false;
    await this.entities.update(call.tx, call.accountId, product.type, entityId(product.values), {
      EbayCategoryId1: call.args.get('categoryId1')!,
      EbayCategoryId2: call.args.get('categoryId2') ?? null,
      AutoMatched: call.args.get('autoMatched') ?? null,
      ModificationDate: this.clock.now(),
    });
    return true;
  }

  private profileProperty(call: OperationCall): string {
    const type = call.args.get('type') as number;
    const property = PROFILE_PROPERTY[type];
    if (!property) throw invalid(`The parameter 'type' must be 1 (payment), 2 (return) or 3 (shipping) profile; ${type} is none of them.`);
    return property;
  }

  private async setProductProfile(call: OperationCall): Promise<EdmValue> {
    const property = this.profileProperty(call);
    const product = await this.mustFind(call, 'Product', call.args.get('productId') as bigint);
    await this.entities.update(call.tx, call.accountId, product.type, entityId(product.values), {
      [property]: call.args.get('profileId') ?? null,
      ModificationDate: this.clock.now(),
    });
    return true;
  }

  /** Sets the catalog's profile and the same profile on every product linked to the catalog. */
  private async setCatalogProfile(call: OperationCall): Promise<EdmValue> {
    const property = this.profileProperty(call);
    const catalog = await this.mustFind(call, 'Catalog', call.args.get('catalogId') as bigint);
    const catalogId = entityId(catalog.values);
    const profileId = call.args.get('profileId') ?? null;
    const now = this.clock.now();
    await this.entities.update(call.tx, call.accountId, catalog.type, catalogId, { [property]: profileId, ModificationDate: now });
    const links = catalog.type.navigations.find((n) => n.name === 'Products')!.relation as LinkTableRelation;
    await this.queries.setProfileOfCatalogProducts(call.tx, this.entities.store.codec, call.accountId, links, catalogId, property, profileId as bigint | null, now);
    return true;
  }

  /**
   * Stock and price of the product, or of its variation when one is named, through the same
   * update as a MERGE (so the same limits hold); discountOfferPrice creates or updates the
   * strike-through DiscountOffer at the same level.
   */
  private async reviseInventoryStatus(call: OperationCall): Promise<EdmValue> {
    const { args } = call;
    const changes = new Map<string, EdmValue>();
    if (args.has('stockAmount')) changes.set('StockAmount', args.get('stockAmount')!);
    if (args.has('price')) changes.set('Price', args.get('price')!);
    const offerPrice = args.get('discountOfferPrice');
    if (changes.size === 0 && offerPrice === undefined) {
      throw invalid('ReviseInventoryStatus needs at least one of the parameters stockAmount, price and discountOfferPrice.');
    }
    const product = await this.mustFind(call, 'Product', args.get('productId') as bigint);
    const productId = entityId(product.values);
    let target = product;
    const variationId = args.get('productVariationId') as bigint | undefined;
    if (variationId !== undefined) {
      target = await this.mustFind(call, 'ProductVariation', variationId);
      if (target.values.ProductId !== productId) {
        throw invalid(`The parameter 'productVariationId': variation ${variationId} does not belong to product ${productId}.`);
      }
    }
    if (changes.size > 0) {
      await this.writes.update(call.tx, call.accountId, target.type, entityId(target.values), { values: changes, bindings: noBindings }, 'merge');
    }
    if (offerPrice !== undefined) await this.setStrikeThroughPrice(call, productId, variationId ?? null, offerPrice);
    return true;
  }

  /**
   * The strike-through price of a product (variationId null) or of one of its variations, as
   * ReviseInventoryStatus sets it: the Type 1 DiscountOffer at that level, created or updated
   * through the same writes as a POST or MERGE of it; null deletes it as a DELETE would. The
   * console's edits call this (the product and the variation were found in the account before).
   */
  async reviseStrikeThroughPrice(tx: SqlExecutor, accountId: number, productId: bigint, variationId: bigint | null, price: EdmValue): Promise<void> {
    const call = { tx, accountId, args: new Map() as OperationArguments };
    if (price !== null) return this.setStrikeThroughPrice(call, productId, variationId, price);
    const existing = await this.strikeThroughOffer(call, productId, variationId);
    if (existing) await this.writes.delete(tx, accountId, existing.type, entityId(existing.values));
  }

  /** The Type 1 DiscountOffer of the product (variationId null) or of the variation, if any. */
  async strikeThroughOffer(call: { readonly tx: SqlExecutor; readonly accountId: number }, productId: bigint, variationId: bigint | null): Promise<EntityRecord | undefined> {
    return (await this.entities.findWhere(call.tx, call.accountId, this.type('DiscountOffer'), 'ProductId', productId)).find(
      (offer) => (offer.values.ProductVariationId ?? null) === variationId && offer.values.Type === STRIKE_THROUGH_OFFER,
    );
  }

  private async setStrikeThroughPrice(call: OperationCall, productId: bigint, variationId: bigint | null, price: EdmValue): Promise<void> {
    const offers = this.type('DiscountOffer');
    const existing = await this.strikeThroughOffer(call, productId, variationId);
    if (existing) {
      await this.writes.update(call.tx, call.accountId, offers, entityId(existing.values), { values: new Map([['Price', price]]), bindings: noBindings }, 'merge');
      return;
    }
    const values = new Map<string, EdmValue>([
      ['ProductId', productId],
      ['ProductVariationId', variationId],
      ['Price', price],
      ['Type', STRIKE_THROUGH_OFFER],
    ]);
    await this.writes.create(call.tx, call.accountId, offers, { values, bindings: noBindings });
  }

  /** Empties the sets `type` selects, in this one transaction, in the caller's account only. */
  private async deleteAccountData(call: OperationCall): Promise<EdmValue> {
    const type = call.args.get('type') as number;
    if (!DELETE_TYPES.has(type)) throw invalid(`The parameter 'type' must be one of ${[...DELETE_TYPES].join(', ')}; ${type} is not.`);
    const selected = type === 0 ? EVERYTHING : DELETED_BY_BIT.filter(([bit]) => (type & bit) !== 0).flatMap(([, names]) => names);
    for (const name of EVERYTHING) {
      if (selected.includes(name)) await this.entities.deleteAll(call.tx, call.accountId, this.type(name));
    }
    return true;
  }
}
