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

/**
 * Products per transaction: about 12,000 rows, written type by type in multi-row INSERTs
 * (EntityStore.insertMany), so a transaction costs some tens of statements, not a round trip per row.
 */
const PRODUCTS_PER_TRANSACTION = 250;

export async function seedCatalogue(model: Model, store: Store, entities: EntityStore, accountId: number, count: number, now = Date.UTC(2026, 10, 1)): Promise<void> {
  const type = (name: string) => model.typeByName.get(name)!;
  /** The rows of one transaction, per type in the order parents before children. */
  const batch = () => new Map<string, Record<string, EdmValue>[]>();
  /** A row of the type: the given values, the timestamps now, defaults otherwise; its Id comes later. */
  const row = (rows: Map<string, Record<string, EdmValue>[]>, typeName: string, values: Record<string, EdmValue>): Record<string, EdmValue> => {
    const r: Record<string, EdmValue> = {};
    for (const p of type(typeName).properties) r[p.name] = p.timestamp ? now : p.defaultValue !== undefined ? normalise(p.type, p.defaultValue) : null;
    Object.assign(r, values);
    let list = rows.get(typeName);
    if (!list) rows.set(typeName, (list = []));
    list.push(r);
    return r;
  };
  /** Gives every row its Id (one sequence call), then writes each type's rows at once. */
  const write = async (tx: SqlExecutor, rows: Map<string, Record<string, EdmValue>[]>, assignIds: () => void) => {
    const all = [...rows.values()].flat();
    const ids = await store.nextIds(tx, all.length);
    all.forEach((r, i) => (r.Id = ids[i]!));
    assignIds();
    for (const [typeName, list] of rows) await entities.insertMany(tx, accountId, type(typeName), list);
  };
  const catalogIds = await store.write(accountId, async (tx) => {
    const rows = batch();
    const catalogs = Array.from({ length: SHAPE.catalogs }, (_, c) => row(rows, 'Catalog', { Name: `Katalog ${c}`, IsRootLevel: c === 0 }));
    await write(tx, rows, () => undefined);
    return catalogs.map((c) => c.Id as bigint);
  });
  const catalogsNav = type('Product').navigations.find((n) => n.name === 'Catalogs')!;
  let previousProduct: bigint | undefined;
  for (let start = 0; start < count; start += PRODUCTS_PER_TRANSACTION) {
    previousProduct = await store.write(accountId, async (tx) => {
      const rows = batch();
      // Parents first: each child row takes its parent's Id once the Ids are assigned.
      for (const name of ['Product', 'ProductSpecific', 'ProductImage', 'ProductVariation', 'ProductVariationSpecific', 'ProductVariationImage', 'OptionalProductAttribute', 'DiscountOffer', 'CarPart', 'ProductRelation']) rows.set(name, []);
      const children: { child: Record<string, EdmValue>; key: string; parent: Record<string, EdmValue> }[] = [];
      const child = (typeName: string, key: string, parent: Record<string, EdmValue>, values: Record<string, EdmValue>) => {
        const c = row(rows, typeName, values);
        children.push({ child: c, key, parent });
        return c;
      };
      const products: { product: Record<string, EdmValue>; index: number }[] = [];
      let previousRow: Record<string, EdmValue> | undefined;
      const relations: { relation: Record<string, EdmValue>; parent: Record<string, EdmValue> | bigint }[] = [];
      for (let i = start; i < Math.min(count, start + PRODUCTS_PER_TRANSACTION); i++) {
        const e = expectedProduct(i);
        const product = row(rows, 'Product', { Title: e.title, ForeignId: e.foreignId, Price: e.price, StockAmount: e.stock, Description: `<p>Beschreibung ${i}</p>` });
        products.push({ product, index: i });
        for (const s of e.specifics) child('ProductSpecific', 'ProductId', product, { Name: s.name, Value: s.value });
        for (const img of e.images) child('ProductImage', 'ProductId', product, { Type: img.type, ImageUrl: img.url });
        for (const v of e.variations) {
          const variation = child('ProductVariation', 'ProductId', product, { Sku: v.sku, Price: e.price, StockAmount: v.stock });
          for (const s of v.specifics) child('ProductVariationSpecific', 'ProductVariationId', variation, { Name: s.name, Value: s.value });
          child('ProductVariationImage', 'ProductVariationId', variation, { ImageUrl: v.pictureUrl, ImagePosition: 0 });
        }
        if (e.hasExtras) {
          child('OptionalProductAttribute', 'ProductId', product, { Name: 'Hinweis', Value: `Hinweis ${i}` });
          child('DiscountOffer', 'ProductId', product, { Price: '1.5', Type: 1 });
          child('CarPart', 'ProductId', product, { KType: i, HSN: '0603', TSN: 'AAA' });
        }
        const parent = previousRow ?? previousProduct;
        if (e.childOf !== undefined && parent !== undefined) {
          const relation = child('ProductRelation', 'ChildProductId', product, { Quantity: 1 });
          relations.push({ relation, parent });
        }
        previousRow = product;
      }
      for (const [name, list] of rows) if (list.length === 0) rows.delete(name);
      await write(tx, rows, () => {
        for (const c of children) c.child[c.key] = c.parent.Id!;
        for (const r of relations) r.relation.ParentProductId = typeof r.parent === 'bigint' ? r.parent : r.parent.Id!;
      });
      await entities.addLinks(tx, accountId, catalogsNav, products.map(({ product, index }) => [product.Id as bigint, catalogIds[index % SHAPE.catalogs]!] as const));
      return previousRow?.Id as bigint | undefined;
    });
  }
}

function normalise(type: string, value: string | number | boolean): EdmValue {
  return type === 'Edm.Int64' ? BigInt(value) : value;
}
