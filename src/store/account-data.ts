/**
 * Everything a database holds of one account, by table, for `catalogue account list` (counts)
 * and `catalogue account delete` (erasure). Model-driven: the tenant tables are those the schema
 * derives from the model (every entity set, link table, the order history and the idempotency
 * keys), so a table added to the model is counted and erased without a change here.
 */
import { model } from '../model/catalogue-model';
import { ACCOUNT_COLUMN, buildSchema, CHANGES } from './schema';
import type { SqlExecutor, Store } from './store';

/**
 * Tenant tables, children before parents: the order that deletes them without breaking a foreign
 * key. The change log first, so that its count is what the account had: deleting the entities
 * then logs their deletion there, which eraseAccountData deletes again at the end.
 */
const TENANT_TABLES_CHILDREN_FIRST = [
  CHANGES.table,
  ...buildSchema(model)
    .filter((t) => t.tenant && t.name !== CHANGES.table)
    .map((t) => t.name)
    .reverse(),
];

/** The service's own tables that refer to an account by its id (children of `accounts`). */
const DIRECTORY_TABLES = ['sessions', 'subscription_tokens', 'webhook_accounts'] as const;

const quote = (name: string) => `"${name}"`;

/** Rows of the account in each tenant table (tables without any are left out). */
export async function countAccountData(store: Store, accountId: number): Promise<Record<string, number>> {
  return store.read(accountId, async (tx) => {
    const counts: Record<string, number> = {};
    for (const table of [...TENANT_TABLES_CHILDREN_FIRST].reverse()) {
      const row = await tx.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${quote(table)} WHERE ${ACCOUNT_COLUMN} = ?`, [accountId]);
      const n = Number(row?.n ?? 0);
      if (n > 0) counts[table] = n;
    }
    return counts;
  });
}

/**
 * Deletes every row of the account: its data in every tenant table, its sessions and tokens,
 * the login-throttle rows of its user name (the name's own, and one per address it was tried
 * from: keys starting with `pairKeyPrefix`), and the account itself; inside the caller's
 * transaction (which must be the account's own write, so that row-level security lets it see
 * its rows). Returns the rows deleted per table.
 */
export async function eraseAccountData(
  tx: SqlExecutor,
  accountId: number,
  throttleKeys: { readonly userScopeKey: string; readonly pairKeyPrefix: string },
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of [...TENANT_TABLES_CHILDREN_FIRST, ...DIRECTORY_TABLES]) {
    counts[table] = (await tx.run(`DELETE FROM ${quote(table)} WHERE ${ACCOUNT_COLUMN} = ?`, [accountId])).changes;
  }
  // The deletions above, logged by the change log's triggers: nothing of the account may stay.
  await tx.run(`DELETE FROM ${quote(CHANGES.table)} WHERE ${ACCOUNT_COLUMN} = ?`, [accountId]);
  // substr counts characters on both engines, so the prefix's length is given in code points.
  const { userScopeKey, pairKeyPrefix } = throttleKeys;
  counts.login_throttle = (
    await tx.run(`DELETE FROM login_throttle WHERE scope_key = ? OR substr(scope_key, 1, ?) = ?`, [userScopeKey, [...pairKeyPrefix].length, pairKeyPrefix])
  ).changes;
  counts.accounts = (await tx.run(`DELETE FROM accounts WHERE id = ?`, [accountId])).changes;
  return counts;
}
