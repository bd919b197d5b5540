/**
 * The catalogue's services over one store: entity rows, writes with their rules, and the service
 * operations. The HTTP server and the command-line tool (platform import, demo) build them here,
 * so both write through exactly the same paths.
 */
import type { Clock } from '../clock';
import { model } from '../model/catalogue-model';
import type { Model } from '../model/types';
import { resolveEntityUri } from '../odata/uri/entity-uri';
import { EntityStore } from '../store/entities';
import type { Store } from '../store/store';
import { CatalogueOperations } from './operations';
import { CatalogueWrites } from './writes';

export interface CatalogueServices {
  readonly model: Model;
  readonly store: Store;
  readonly entities: EntityStore;
  readonly writes: CatalogueWrites;
  readonly operations: CatalogueOperations;
  readonly clock: Clock;
}

export function createCatalogueServices(store: Store, clock: Clock): CatalogueServices {
  const entities = new EntityStore(model, store);
  const writes = new CatalogueWrites(model, store, entities, clock, (uri, expected) => resolveEntityUri(model, uri, expected));
  const operations = new CatalogueOperations(model, entities, writes, clock);
  return { model, store, entities, writes, operations, clock };
}
