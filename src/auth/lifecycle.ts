/**
 * An account's life after it was created, as the operator drives it from the command line:
 * list, change the password, disable and enable, delete. Each change is one transaction.
 */
import type { Clock } from '../clock';
import type { Store } from '../store/store';
import { countAccountData, eraseAccountData } from '../store/account-data';
import { UnknownAccountError, InvalidAccountInputError, passwordProblem } from './accounts';
import { accountIdOf, deleteSessionsOfAccount, listAccountRows, setAccountDisabled, setPasswordHash } from './directory';
import { hashPassword } from './passwords';
import { pairScopePrefix, userScopeKey } from './throttle';

export interface AccountListing {
  readonly accountId: number;
  readonly userName: string;
  /** ISO 8601, UTC. */
  readonly created: string;
  readonly lastLogin: string | null;
  readonly disabled: string | null;
  /** Rows the account holds per table (tables without any left out), and their sum. */
  readonly rows: Record<string, number>;
  readonly totalRows: number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function listAccounts(store: Store): Promise<AccountListing[]> {
  const listing: AccountListing[] = [];
  for (const a of await listAccountRows(store.directory)) {
    const rows = await countAccountData(store, a.accountId);
    listing.push({
      accountId: a.accountId,
      userName: a.userName,
      created: iso(a.createdAt)!,
      lastLogin: iso(a.lastLoginAt),
      disabled: iso(a.disabledAt),
      rows,
      totalRows: Object.values(rows).reduce((n, c) => n + c, 0),
    });
  }
  return listing;
}

async function requireAccount(store: Store, userName: string): Promise<number> {
  const id = await accountIdOf(store.directory, userName);
  if (id === undefined) throw new UnknownAccountError(userName);
  return id;
}

/** Sets a new password and ends every session of the account (they were opened with the old one). */
export async function changePassword(store: Store, userName: string, password: string): Promise<{ accountId: number; sessionsEnded: number }> {
  const problem = passwordProblem(password);
  if (problem) throw new InvalidAccountInputError(problem);
  const accountId = await requireAccount(store, userName);
  // scrypt runs before the transaction: it must not hold the single writer.
  const hash = await hashPassword(password);
  const sessionsEnded = await store.writeDirectory(async (tx) => {
    await setPasswordHash(tx, accountId, hash);
    return deleteSessionsOfAccount(tx, accountId);
  });
  return { accountId, sessionsEnded };
}

/**
 * Disables an account: its sessions end, and from this commit on its tokens and any session are
 * refused (401) and its logins fail, until it is enabled again. Its data stays.
 */
export async function disableAccount(store: Store, clock: Clock, userName: string): Promise<{ accountId: number; changed: boolean; sessionsEnded: number }> {
  const accountId = await requireAccount(store, userName);
  const now = clock.now();
  return store.writeDirectory(async (tx) => {
    const changed = await setAccountDisabled(tx, accountId, now);
    return { accountId, changed, sessionsEnded: await deleteSessionsOfAccount(tx, accountId) };
  });
}

export async function enableAccount(store: Store, userName: string): Promise<{ accountId: number; changed: boolean }> {
  const accountId = await requireAccount(store, userName);
  return { accountId, changed: await store.writeDirectory((tx) => setAccountDisabled(tx, accountId, null)) };
}

/** Erases the account and everything it holds in one transaction; the rows deleted per table. */
export async function deleteAccount(store: Store, userName: string): Promise<{ accountId: number; deleted: Record<string, number> }> {
  const accountId = await requireAccount(store, userName);
  const deleted = await store.write(accountId, async (tx) => {
    const counts = await eraseAccountData(tx, accountId, { userScopeKey: userScopeKey(userName), pairKeyPrefix: pairScopePrefix(userName) });
    // Renamed or deleted by someone else in the meantime: touch nothing.
    if (counts.accounts !== 1) throw new UnknownAccountError(userName);
    return counts;
  });
  return { accountId, deleted };
}
