/**
 * A product's further images (ProductImages of Type 3 to 12) are "numbered consecutively
 * beginning with 3": they form one ordered list, and an image's Type is its place in that list.
 * Every write keeps the list without gaps, by renumbering rather than refusing where the client's
 * intent is clear:
 *
 * - an image that leaves the list (deleted, moved to another product, or given Type 1 or 2)
 *   closes its gap: the images after it move down by one, keeping their order;
 * - an image that enters the list at Type t (created, moved in, or given a further Type) is
 *   inserted there: the images at t and after move up by one. t may be at most one past the last
 *   further image (a Type that would leave a gap is refused with 400 naming the next free Type),
 *   and a product holds at most 10 further images;
 * - changing a further image's Type within its product moves it to that place in the list.
 *
 * Types 1 (list image) and 2 (offer image) stay slots of one image each: a second one is the
 * unique key's 409. Renumbered rows are updated one by one in an order that never lets two rows of
 * a product share a Type, because both engines check the unique index row by row.
 */
import { invalid } from '../model/rule-violation';
import type { EntityTypeDef, Model } from '../model/types';
import type { EdmValue } from '../odata/edm';
import { entityId, type EntityRecord } from '../odata/entity';
import type { RuleRows } from './rule-rows';
import type { SqlExecutor } from '../store/store';

export const FIRST_FURTHER_TYPE = 3;
export const MAX_FURTHER_IMAGES = 10;

/** A Type no image ever has: where an image waits while the others are renumbered around it. */
const PARKED_TYPE = 0;

export interface ImageWrite {
  readonly tx: SqlExecutor;
  readonly accountId: number;
  /** The rows as the write sees them (a deep insert's own not stored yet among them). */
  readonly rows: RuleRows;
  readonly model: Model;
  /** The image as it will be stored (its Id set), or undefined for a delete. */
  readonly row?: Readonly<Record<string, EdmValue>>;
  /** The image before the write (updates and deletes). */
  readonly stored?: EntityRecord;
  /** The write's time, stamped on every renumbered image. */
  readonly at: number;
}

const isFurther = (type: EdmValue | undefined): type is number => typeof type === 'number' && type >= FIRST_FURTHER_TYPE;

const imageType = (model: Model): EntityTypeDef => model.typeByName.get('ProductImage')!;

/** The further images of a product in their order, without the one being written. */
async function furtherImages(w: ImageWrite, productId: bigint, without: bigint | undefined): Promise<EntityRecord[]> {
  const all = await w.rows.findWhere(w.tx, w.accountId, imageType(w.model), 'ProductId', productId);
  return all
    .filter((i) => isFurther(i.values.Type) && entityId(i.values) !== without)
    .sort((a, b) => (a.values.Type as number) - (b.values.Type as number));
}

async function setType(w: ImageWrite, image: EntityRecord, type: number): Promise<void> {
  if (image.values.Type === type) return;
  await w.rows.update(w.tx, w.accountId, imageType(w.model), entityId(image.values), { Type: type, ModificationDate: w.at });
}

/** Gives the listed images Types 3, 4, …, leaving the place `freePlace` (0-based) free for the image being written. */
async function renumber(w: ImageWrite, images: readonly EntityRecord[], freePlace?: number): Promise<void> {
  const target = (index: number) => FIRST_FURTHER_TYPE + (freePlace !== undefined && index >= freePlace ? index + 1 : index);
  // Moving down, lower places first; moving up, higher places first: a target is always free.
  for (let i = 0; i < images.length; i++) if (target(i) < (images[i]!.values.Type as number)) await setType(w, images[i]!, target(i));
  for (let i = images.length - 1; i >= 0; i--) if (target(i) > (images[i]!.values.Type as number)) await setType(w, images[i]!, target(i));
}

/**
 * Before an image is created or updated: closes the gap it leaves and makes room where it
 * enters, or refuses a Type that would leave a gap. The caller then stores the row as it is.
 */
export async function placeImage(w: ImageWrite): Promise<void> {
  const row = w.row!;
  const before = w.stored?.values;
  const id = entityId(row);
  const productId = row.ProductId as bigint;
  const moved = before !== undefined && before.ProductId !== productId;
  const leaves = before !== undefined && isFurther(before.Type) && (moved || before.Type !== row.Type);
  const enters = isFurther(row.Type) && (before === undefined || moved || before.Type !== row.Type);
  if (!leaves && !enters) return;
  if (leaves) {
    // Out of the way first, so that the images after it can move down into its place.
    await w.rows.update(w.tx, w.accountId, imageType(w.model), id, { Type: PARKED_TYPE });
    await renumber(w, await furtherImages(w, before.ProductId as bigint, id));
  }
  if (!enters) return;
  const others = await furtherImages(w, productId, id);
  if (others.length >= MAX_FURTHER_IMAGES) {
    throw invalid(`A product has at most ${MAX_FURTHER_IMAGES} further images (Type 3 to 12); product ${String(productId)} has ${others.length} already.`);
  }
  const place = (row.Type as number) - FIRST_FURTHER_TYPE;
  if (place > others.length) {
    const next = FIRST_FURTHER_TYPE + others.length;
    const has = others.length === 0 ? 'no further image, so a further image takes Type 3' : `Types 3 to ${next - 1}, so a further image takes a Type from 3 to ${next}`;
    throw invalid(`Further images are numbered consecutively beginning with 3: product ${String(productId)} has ${has}; Type ${String(row.Type)} would leave a gap.`);
  }
  await renumber(w, others, place);
}

/** After an image is deleted: the further images after it move down by one. */
export async function closeImageGap(w: ImageWrite): Promise<void> {
  const before = w.stored!.values;
  if (!isFurther(before.Type)) return;
  await renumber(w, await furtherImages(w, before.ProductId as bigint, entityId(before)));
}
