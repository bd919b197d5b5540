/**
 * How delivered items name the catalogue's products (README "The platform API"): a product by
 * its `Id` or by the seller's `ForeignId`, a variation by its `Id` or by its `Sku` within the
 * product. A reference that names nothing in the account, or more than one product, is a 400:
 * a connector learns at once that its ids do not match, instead of finding unlinked orders later.
 */
import type { EntityTypeDef } from '../model/types';
import { badRequest } from '../odata/errors';
import { entityId, type EntityRecord } from '../odata/entity';
import { findBy, typeOf, type RowDelivery } from './delivery';
import { readValues, type Json } from './documents';

export interface CatalogueReference {
  readonly product?: EntityRecord;
  readonly variation?: EntityRecord;
}

/** The one key a reference names, read as its model type (an Int64 beyond the range is a 400 here). */
function referenceKey(type: EntityTypeDef, ref: Json, path: string) {
  return readValues(type, type.properties.filter((p) => Object.prototype.hasOwnProperty.call(ref, p.name)), ref, path);
}

async function resolveProduct(d: RowDelivery, json: Json, path: string): Promise<EntityRecord> {
  const products = typeOf(d, 'Product');
  const ref = referenceKey(products, json, `${path}/Product`);
  if (ref.Id !== undefined) {
    const id = entityId(ref);
    const found = await d.entities.find(d.tx, d.accountId, products, id);
    if (!found) throw badRequest(`'${path}/Product' names the product Id ${id}, which this account does not have.`);
    return found;
  }
  const matches = await findBy(d, products, 'ForeignId', ref.ForeignId!);
  if (matches.length !== 1) {
    const problem = matches.length === 0 ? 'no product of this account has it' : `${matches.length} products of this account have it`;
    throw badRequest(`'${path}/Product' names the ForeignId '${String(ref.ForeignId)}', but ${problem}.`);
  }
  return matches[0]!;
}

async function resolveVariation(d: RowDelivery, json: Json, product: EntityRecord | undefined, path: string): Promise<EntityRecord> {
  const variations = typeOf(d, 'ProductVariation');
  const ref = referenceKey(variations, json, `${path}/ProductVariation`);
  if (ref.Id !== undefined) {
    const id = entityId(ref);
    const found = await d.entities.find(d.tx, d.accountId, variations, id);
    if (!found) throw badRequest(`'${path}/ProductVariation' names the variation Id ${id}, which this account does not have.`);
    if (product && found.values.ProductId !== product.values.Id) {
      throw badRequest(`'${path}/ProductVariation' names variation ${id}, which belongs to another product than ${String(product.values.Id)}.`);
    }
    return found;
  }
  if (!product) throw badRequest(`'${path}/ProductVariation' names a Sku, which needs the product it belongs to: add 'Product'.`);
  const found = (await findBy(d, variations, 'ProductId', product.values.Id!)).find((v) => v.values.Sku === ref.Sku);
  if (!found) throw badRequest(`'${path}/ProductVariation' names the Sku '${String(ref.Sku)}', but product ${String(product.values.Id)} has no such variation.`);
  return found;
}

/**
 * The product and variation that `item.Product` and `item.ProductVariation` name; a variation
 * named by Id brings its product, and `fallback` (a listing's product) stands in where the item
 * names none.
 */
export async function resolveReference(d: RowDelivery, item: Json, path: string, fallback?: EntityRecord): Promise<CatalogueReference> {
  let product = item.Product ? await resolveProduct(d, item.Product as Json, path) : undefined;
  let variation: EntityRecord | undefined;
  if (item.ProductVariation) {
    variation = await resolveVariation(d, item.ProductVariation as Json, product ?? fallback, path);
    product ??= await d.entities.find(d.tx, d.accountId, typeOf(d, 'Product'), variation.values.ProductId as bigint);
  }
  product ??= fallback;
  return { ...(product ? { product } : {}), ...(variation ? { variation } : {}) };
}
