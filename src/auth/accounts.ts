/**
 * Operator actions on accounts and subscription tokens (called by the command-line tool; nothing
 * creates an account anonymously). The plain token is returned once, to be handed to the seller;
 * only its hash is stored.
 */
import type { Clock } from '../clock';
import type { Store } from '../store/store';
import { isWellFormedSubscriptionToken, newSubscriptionToken, subscriptionTokenHash } from './credentials';
import {
  countAccountRows,
  findUserNameOfAccount,
  insertAccount,
  insertSubscriptionToken,
  insertSubscriptionTokenForUser,
  listSubscriptionTokens,
  revokeSubscriptionToken,
  revokeSubscriptionTokenOfAccount,
  type TokenRow,
} from './directory';
import { hashPassword } from './passwords';

export class AccountExistsError extends Error {
  override readonly name = 'AccountExistsError';
  constructor(readonly userName: string) {
    super(`An account with the user name '${userName}' already exists`);
  }
}

export class InvalidAccountInputError extends Error {
  override readonly name = 'InvalidAccountInputError';
}

export class UnknownAccountError extends Error {
  override readonly name = 'UnknownAccountError';
  constructor(readonly userName: string) {
    super(`There is no account with the user name '${userName}'`);
  }
}

export const USER_NAME_MAX_LENGTH = 100;
export const PASSWORD_MIN_LENGTH = 8;
/** Bounds the work one login can ask of scrypt's input stage. */
export const PASSWORD_MAX_LENGTH = 1024;

const CONTROL_CHARACTER = /\p{Cc}/u;
/** A lone UTF-16 surrogate: text that is not valid Unicode (and cannot be stored as UTF-8). */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why a user name is unacceptable, or undefined when it is fine. */
export function userNameProblem(userName: unknown): string | undefined {
  if (typeof userName !== 'string' || userName.length === 0) return 'The user name must not be empty';
  if (userName.length > USER_NAME_MAX_LENGTH) return `The user name must be at most ${USER_NAME_MAX_LENGTH} characters`;
  if (CONTROL_CHARACTER.test(userName)) return 'The user name must not contain control characters';
  if (LONE_SURROGATE.test(userName)) return 'The user name must be valid Unicode text';
  // Leading/trailing blanks would make two accounts that look identical when written down.
  if (userName.trim() !== userName) return 'The user name must not begin or end with white space';
  return undefined;
}

export function passwordProblem(password: unknown): string | undefined {
  if (typeof password !== 'string' || password.length < PASSWORD_MIN_LENGTH) {
    return `The password must be at least ${PASSWORD_MIN_LENGTH} characters`;
  }
  if (password.length > PASSWORD_MAX_LENGTH) return `The password must be at most ${PASSWORD_MAX_LENGTH} characters`;
  // A NUL would be invisible to scrypt at the end of a password (see passwords.ts).
  if (password.includes('\u0000')) return 'The password must not contain NUL characters';
  return undefined;
}

export interface NewAccountInput {
  readonly userName: string;
  readonly password: string;
}

export interface CreatedAccount {
  readonly accountId: number;
  readonly userName: string;
  /** The account's first subscription token, in plain text: shown once, never stored. */
  readonly subscriptionToken: string;
}

export async function createAccount(store: Store, clock: Clock, input: NewAccountInput): Promise<CreatedAccount> {
  const problem = userNameProblem(input.userName) ?? passwordProblem(input.password);
  if (problem) throw new InvalidAccountInputError(problem);
  // scrypt runs before the transaction: it must not hold the single writer.
  const passwordHash = await hashPassword(input.password);
  const subscriptionToken = newSubscriptionToken();
  const now = clock.now();
  const accountId = await store.writeDirectory(async (tx) => {
    const id = await insertAccount(tx, input.userName, passwordHash, now);
    if (id === undefined) throw new AccountExistsError(input.userName);
    await insertSubscriptionToken(tx, subscriptionTokenHash(subscriptionToken), id, now);
    return id;
  });
  return { accountId, userName: input.userName, subscriptionToken };
}

/** How many accounts exist (the server creates a demo account only into an empty database). */
export async function countAccounts(store: Store): Promise<number> {
  return countAccountRows(store.directory);
}

/** Issues another subscription token for an account (e.g. one per connector, or for rotation). */
export async function createToken(store: Store, clock: Clock, userName: string): Promise<string> {
  const token = newSubscriptionToken();
  const now = clock.now();
  const added = await store.writeDirectory((tx) => insertSubscriptionTokenForUser(tx, subscriptionTokenHash(token), userName, now));
  if (!added) throw new UnknownAccountError(userName);
  return token;
}

/**
 * Revokes a token; true if it was live (false if unknown, malformed or already revoked).
 * Lenient about surrounding blanks (an operator may paste it from anywhere); its case does not
 * matter, as everywhere a token is compared.
 */
export async function revokeToken(store: Store, clock: Clock, token: string): Promise<boolean> {
  return (await revokeTokenReturningAccount(store, clock, token)) !== undefined;
}

/** revokeToken(), answering with the account the token was of (undefined when none was live). */
export async function revokeTokenReturningAccount(store: Store, clock: Clock, token: string): Promise<number | undefined> {
  const trimmed = typeof token === 'string' ? token.trim() : token;
  if (!isWellFormedSubscriptionToken(trimmed)) return undefined;
  const now = clock.now();
  return store.writeDirectory((tx) => revokeSubscriptionToken(tx, subscriptionTokenHash(trimmed), now));
}

// ---------------------------------------------------------------------------------------------
// A seller's own tokens, for the seller console: the account comes from the seller's session,
// so a seller can only ever see, issue and revoke tokens of their own account.

export type { TokenRow } from './directory';

/** The account's tokens (hashes only: a token's plain text is never stored), newest first. */
export async function tokensOfAccount(store: Store, accountId: number): Promise<TokenRow[]> {
  return listSubscriptionTokens(store.directory, accountId);
}

/** Issues a token for the account; the plain text is returned once. */
export async function createTokenForAccount(store: Store, clock: Clock, accountId: number): Promise<string> {
  const token = newSubscriptionToken();
  const now = clock.now();
  await store.writeDirectory((tx) => insertSubscriptionToken(tx, subscriptionTokenHash(token), accountId, now));
  return token;
}

/** Revokes one of the account's live tokens by its hash; false when the account has no such live token. */
export async function revokeTokenOfAccount(store: Store, clock: Clock, accountId: number, tokenHash: string): Promise<boolean> {
  const now = clock.now();
  return store.writeDirectory((tx) => revokeSubscriptionTokenOfAccount(tx, accountId, tokenHash, now));
}

/** The user name of an account (the console shows whom it is logged in as). */
export async function userNameOf(store: Store, accountId: number): Promise<string | undefined> {
  return findUserNameOfAccount(store.directory, accountId);
}
