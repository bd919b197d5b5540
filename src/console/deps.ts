/**
 * What the console needs from the running service: the same store, model, reads, writes,
 * operations, session service, clock and log the OData API uses (the server's App has all of them). Declared here so the
 * console depends on the layers below it, not on the server that mounts it.
 */
import type { Logger } from 'pino';
import type { SessionService } from '../auth/sessions';
import type { AuthEndpointOptions } from '../server/auth-endpoints';
import type { TokenActivity } from '../auth/token-activity';
import type { CatalogueOperations } from '../catalogue/operations';
import type { CatalogueWrites } from '../catalogue/writes';
import type { Clock } from '../clock';
import type { Model } from '../model/types';
import type { ReadLimits } from '../odata/read-options';
import type { EntityStore } from '../store/entities';
import type { EntityReads } from '../store/reads';
import type { Store } from '../store/store';

export interface ConsoleDeps {
  readonly model: Model;
  readonly store: Store;
  readonly entities: EntityStore;
  readonly reads: EntityReads;
  readonly writes: CatalogueWrites;
  readonly operations: CatalogueOperations;
  readonly log: Logger;
  readonly tokenActivity: TokenActivity;
  /** The authentication service's settings: the console's form login logs in as its JSON login does. */
  readonly auth: AuthEndpointOptions;
  readonly sessions: SessionService;
  readonly clock: Clock;
  readonly config: { readonly query: ReadLimits };
}
