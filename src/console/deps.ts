/**
 * What the console needs from the running service: the same store, model, reads, session
 * service and clock the OData API uses (the server's App has all of them). Declared here so the
 * console depends on the layers below it, not on the server that mounts it.
 */
import type { SessionService } from '../auth/sessions';
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
  readonly sessions: SessionService;
  readonly clock: Clock;
  readonly config: { readonly query: ReadLimits };
}
