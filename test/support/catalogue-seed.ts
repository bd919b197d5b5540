/**
 * A large, deterministic catalogue written straight through the store (as the platform import
 * does), for tests and benchmarks that need tens of thousands of products: the connector's shape
 * of 5 specifics, 3 images and 10 variations with 2 specifics and 1 picture per product, plus
 * catalogs, optional attributes, discount offers, car parts and product relations on some.
 * Every value is a function of the product's index, so a reader can check each row it receives.
 */
import type { Model } from '../../src/model/types';
import type { EdmValue } from '../../src/odata/edm';
import type { EntityStore } from '../../src/store/entities';
import type { SqlExecutor, Store } from '../../src/store/store';

export const SHAPE = { specifics: 5, images: 3, variations: 10, variationSpecifics: 2, variationPictures: 1, catalogs: 20 } as const;

/** What product i looks like (the parts that are optional exist on some products only). */
export function expectedProduct(i: number) {
  return {
    title: `Produkt ${i} – Größe`,
    foreignId: `F-${i}`,
    price: `${i % 1000}.99`,
    stock: i % 50,
    specifics: Array.from({ length: SHAPE.specifics }, (_, k) => ({ name: `Merkmal ${k}`, value: `Wert ${k}/${i}` })),
    images: Array.from({ length: SHAPE.images }, (_, k) => ({ type: k + 1, url: `https://img.example.com/${i}/${k + 1}.jpg` })),
    variations: Array.from({ length: SHAPE.variations }, (_, k) => ({
      sku: `S-${i}-${k}`,
      stock: k,
      specifics: [
        { name: 'Farbe', value: `Farbe ${k % 5}` },
        { name: 'Größe', value: `Größe ${Math.floor(k / 5)}` },
      ],
      pictureUrl: `https://img.example.com/${i}/v${k}.jpg`,
    })),
    catalog: `Katalog ${i % SHAPE.catalogs}`,
    hasExtras: i % 10 === 0,
    childOf: i % 100 === 1 ? i - 1 : undefined,
  };
}

/** Products per transaction: one commit per batch keeps seeding fast without a huge transaction. */
const PRODUCTS_PER_TRANSACTION = 250;

export async function seedCatalogue(model: Model, store: Store, entities: EntityStore, accountId: number, count: number, now = Date.UTC(2026, 10, 1)): Promise<void> {
  const type = (name: string) => model.typeByName.get(name)!;
  const insert = async (tx: SqlExecutor, typeName: string, values: Record<string, EdmValue>): Promise<bigint> => {
    const t = type(typeName);
    const id = await store.nextId(tx);
    const row: Record<string, EdmValue> = {};
    for (const p of t.properties) row[p.name] = p.timestamp ? now : (p.defaultValue !== undefined ? normalise(p.type, p.defaultValue) : null);
    Object.assign(row, values, { Id: id });
    await entities.insert(tx, accountId, t, row);
    return id;
  };
  const catalogIds = await store.write(accountId, async (tx) => {
    const ids: bigint[] = [];
    for (let c = 0; c < SHAPE.catalogs; c++) ids.push(await insert(tx, 'Catalog', { Name: `Katalog ${c}`, IsRootLevel: c === 0 }));
    return ids;
  });
  const catalogsNav = type('Product').navigations.find((n) => n.name === 'Catalogs')!;
  let previousProduct: bigint | undefined;
  for (let start = 0; start < count; start += PRODUCTS_PER_TRANSACTION) {
    previousProduct = await store.write(accountId, async (tx) => {
      let previous = previousProduct;
      for (let i = start; i < Math.min(count, start + PRODUCTS_PER_TRANSACTION); i++) {
        const e = expectedProduct(i);
        const productId = await insert(tx, 'Product', { Title: e.title, ForeignId: e.foreignId, Price: e.price, StockAmount: e.stock, Description: `<p>Beschreibung ${i}</p>` });
        for (const s of e.specifics) await insert(tx, 'ProductSpecific', { ProductId: productId, Name: s.name, Value: s.value });
        for (const img of e.images) await insert(tx, 'ProductImage', { ProductId: productId, Type: img.type, ImageUrl: img.url });
        for (const v of e.variations) {
          const variationId = await insert(tx, 'ProductVariation', { ProductId: productId, Sku: v.sku, Price: e.price, StockAmount: v.stock });
          for (const s of v.specifics) await insert(tx, 'ProductVariationSpecific', { ProductVariationId: variationId, Name: s.name, Value: s.value });
          await insert(tx, 'ProductVariationImage', { ProductVariationId: variationId, ImageUrl: v.pictureUrl, ImagePosition: 0 });
        }
        await entities.addLink(tx, accountId, catalogsNav, productId, catalogIds[i % SHAPE.catalogs]!);
        if (e.hasExtras) {
          await insert(tx, 'OptionalProductAttribute', { ProductId: productId, Name: 'Hinweis', Value: `Hinweis ${i}` });
          await insert(tx, 'DiscountOffer', { ProductId: productId, Price: '1.5', Type: 1 });
          await insert(tx, 'CarPart', { ProductId: productId, KType: i, HSN: '0603', TSN: 'AAA' });
        }
        if (e.childOf !== undefined && previous !== undefined) {
          await insert(tx, 'ProductRelation', { ParentProductId: previous, ChildProductId: productId, Quantity: 1 });
        }
        previous = productId;
      }
      return previous;
    });
  }
}

function normalise(type: string, value: string | number | boolean): EdmValue {
  return type === 'Edm.Int64' ? BigInt(value) : value;
}
