/**
 * What the service stage works with: the model, the store and the services built on it, the
 * settings, the clock and the log. The composition root (server/app.ts) builds one; every
 * request handler receives it through its ODataRequest.
 */
import type { Logger } from 'pino';
import type { Activity } from '../auth/activity';
import type { SessionService } from '../auth/sessions';
import type { TokenActivity } from '../auth/token-activity';
import type { Clock } from '../clock';
import type { CatalogueOperations } from '../catalogue/operations';
import type { CatalogueWrites } from '../catalogue/writes';
import type { Config } from '../config';
import type { Model } from '../model/types';
import type { EntityStore } from '../store/entities';
import type { EntityReads } from '../store/reads';
import type { Store } from '../store/store';
import type { AccountAdmission } from './admission';

export interface App {
  readonly config: Config;
  readonly model: Model;
  readonly store: Store;
  readonly sessions: SessionService;
  readonly entities: EntityStore;
  readonly reads: EntityReads;
  readonly writes: CatalogueWrites;
  readonly operations: CatalogueOperations;
  readonly clock: Clock;
  readonly log: Logger;
  /** Where the layers report logins and $batch sizes (the metrics, when they are on). */
  readonly activity: Activity;
  /** What each SubscriptionToken did lately (the console's integrations page shows it). */
  readonly tokenActivity: TokenActivity;
  /** How many requests of each account run at once in this process (./admission.ts). */
  readonly admission: AccountAdmission;
  /** Generated once: the model does not change while the service runs. */
  readonly metadataXml: string;
  /** host:port the server listens on, for URIs when a request names no usable Host. */
  listenHost(): string;
}
