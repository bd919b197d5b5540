/**
 * `catalogue platform import FILE --user NAME` and `catalogue demo --user NAME`: the platform's
 * documents and the demonstration data, written into one account through the same services as
 * the running server.
 */
import { readFile } from 'node:fs/promises';
import { ManualClock, systemClock } from '../clock';
import { UnknownAccountError } from '../auth/accounts';
import { findAccountByUserName } from '../auth/directory';
import { createCatalogueServices } from '../catalogue/services';
import { DEMO_SPAN_MS, DemoFiller, type DemoReport } from '../platform/demo';
import { DocumentFileError, importDocuments, readDocumentFile } from '../platform/document-file';
import { PlatformIntake, type DeliveryOutcome } from '../platform/intake';
import type { Store } from '../store/store';

async function accountIdOf(store: Store, userName: string): Promise<number> {
  const account = await findAccountByUserName(store.directory, userName);
  if (!account) throw new UnknownAccountError(userName);
  return account.accountId;
}

export async function importPlatformFile(store: Store, file: string, userName: string): Promise<DeliveryOutcome[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new DocumentFileError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const accountId = await accountIdOf(store, userName);
  return importDocuments(new PlatformIntake(createCatalogueServices(store, systemClock)), accountId, readDocumentFile(text));
}

export async function fillDemoAccount(store: Store, userName: string): Promise<DemoReport & { readonly accountId: number }> {
  const accountId = await accountIdOf(store, userName);
  // The demo's own clock runs through the last 30 days, so its orders have a believable past.
  const clock = new ManualClock(systemClock.now() - DEMO_SPAN_MS);
  const services = createCatalogueServices(store, clock);
  const report = await new DemoFiller(services, new PlatformIntake(services), clock, accountId).fill();
  return { accountId, ...report };
}
