/**
 * The `catalogue` command: serve, migrate, account create | list | password | disable | enable |
 * delete, token create, token revoke, backup, restore, platform import, demo, copy.
 * Argument parsing is node:util's parseArgs; every command reads the same configuration as
 * the server (DATABASE_URL and friends).
 */
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../config';
import { ConfigurationError, openStore } from '../store/open';
import { systemClock } from '../clock';
import { AccountExistsError, InvalidAccountInputError, UnknownAccountError, createAccount, createToken, revokeTokenReturningAccount } from '../auth/accounts';
import { applyHeapPolicy } from './heap-policy';
import { serve } from './serve';
import { fillDemoAccount, importPlatformFile } from './platform-commands';
import { DocumentFileError } from '../platform/document-file';
import { DemoDataExistsError } from '../platform/demo';
import { serveWorkers } from './workers';
import { CopyError, copyDatabase } from '../store/copy';
import { accountCommand, backupCommand, cliAudit, restoreCommand } from './operator-commands';
import { BackupError } from '../store/sqlite/backup';
import { accountIdOf } from '../auth/directory';
import { WebhookCommandError, webhookCommand } from './webhook-commands';

const USAGE = `Usage: catalogue <command>

Commands:
  serve [--workers N]                           serve the OData service (what npm start runs); with
                                                --workers, N processes share the port (node:cluster)
  migrate                                       create or update the database schema
  account create --user NAME --password PW      create a seller account; prints {"accountId","userName","subscriptionToken"}
  account list                                  every account: id, name, created, last login, disabled, rows per table
  account password --user NAME                  set a new password, read from standard input; ends every session
  account disable --user NAME                   refuse the account's tokens, sessions and logins (its data stays)
  account enable --user NAME                    undo account disable
  account delete --user NAME                    erase the account and all its data in one transaction; prints the counts
  token create --user NAME                      issue another SubscriptionToken for an account
  token revoke --token TOKEN                    revoke a SubscriptionToken
  backup FILE                                   copy the SQLite database to FILE while it serves, and check the copy
  restore FILE                                  put the backup FILE in place of the SQLite database (refused while in use)
  platform import FILE --user NAME              deliver the platform documents in FILE (JSON, JSON array or NDJSON) to an account
  demo --user NAME                              fill an account with demonstration products, listings and orders
  webhook list --user NAME                      the account's webhook subscriptions: state, failures, why disabled
  webhook deliveries --user NAME --id ID        an endpoint's latest deliveries: state, attempts, last status and error
  webhook enable --user NAME --id ID            enable an endpoint that was disabled after repeated failures
  webhook redeliver --user NAME --id ID --event EVENT_ID   send one delivery again (same event id)
  copy --from sqlite:FILE --to postgres://…     copy a whole SQLite database into an empty PostgreSQL database,
                                                then verify the row count and a content hash of every table

Configuration comes from the environment (PORT, HOST, DATABASE_URL, …): see the README.`;

class UsageError extends Error {}

/** The named options (each required) and `positionalCount` positional arguments. */
function options(args: string[], names: readonly string[], positionalCount = 0): [Record<string, string>, string[]] {
  const { values, positionals } = parseArgs({
    args,
    options: Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])),
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > positionalCount) throw new UsageError(`Unexpected argument '${positionals[positionalCount]}'.`);
  if (positionals.length < positionalCount) throw new UsageError('A FILE argument is required.');
  const result: Record<string, string> = {};
  for (const n of names) {
    const v = values[n];
    if (typeof v !== 'string' || v === '') throw new UsageError(`--${n} is required.`);
    result[n] = v;
  }
  return [result, positionals];
}

function openStoreFromConfig(): ReturnType<typeof openStore> {
  const config = loadConfig();
  return openStore(config.databaseUrl, config.database);
}

/** The optional `--workers N` of serve (1 to 64), or undefined for a single process. */
function workerCount(args: string[]): number | undefined {
  const { values, positionals } = parseArgs({ args, options: { workers: { type: 'string' } }, strict: true, allowPositionals: true });
  if (positionals.length) throw new UsageError(`Unexpected argument '${positionals[0]}'.`);
  if (values.workers === undefined) return undefined;
  if (!/^\d+$/.test(values.workers) || Number(values.workers) < 1 || Number(values.workers) > 64) {
    throw new UsageError(`--workers must be a whole number from 1 to 64, not '${values.workers}'.`);
  }
  return Number(values.workers);
}

/** Runs a command that needs the migrated store, then closes it. */
async function withStore<T>(fn: (store: ReturnType<typeof openStore>) => Promise<T>): Promise<T> {
  const store = openStoreFromConfig();
  try {
    await store.migrate();
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function run(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  const grouped = command === 'account' || command === 'token' || command === 'platform' || command === 'webhook';
  const key = grouped ? `${command} ${sub ?? ''}` : command;
  const args = grouped ? rest : argv.slice(1);
  switch (key) {
    case 'serve': {
      applyHeapPolicy();
      const workers = workerCount(args);
      return workers === undefined ? serve(loadConfig()) : serveWorkers(loadConfig(), workers);
    }
    case 'migrate': {
      options(args, []);
      const store = openStoreFromConfig();
      try {
        const report = await store.migrate();
        process.stdout.write(JSON.stringify(report) + '\n');
      } finally {
        await store.close();
      }
      return;
    }
    case 'account create': {
      const [o] = options(args, ['user', 'password']);
      const created = await withStore((store) => createAccount(store, systemClock, { userName: o.user!, password: o.password! }));
      cliAudit('account created', { accountId: created.accountId, userName: created.userName });
      process.stdout.write(JSON.stringify(created) + '\n');
      return;
    }
    case 'account list':
    case 'account password':
    case 'account disable':
    case 'account enable':
    case 'account delete': {
      const [o] = options(args, sub === 'list' ? [] : ['user']);
      for (const line of await withStore((store) => accountCommand(store, sub!, o.user))) process.stdout.write(JSON.stringify(line) + '\n');
      return;
    }
    case 'webhook list':
    case 'webhook deliveries':
    case 'webhook enable':
    case 'webhook redeliver': {
      const [o] = options(args, sub === 'list' ? ['user'] : sub === 'redeliver' ? ['user', 'id', 'event'] : ['user', 'id']);
      for (const line of await withStore((store) => webhookCommand(store, sub!, o))) process.stdout.write(JSON.stringify(line) + '\n');
      return;
    }
    case 'token create': {
      const [o] = options(args, ['user']);
      const [token, accountId] = await withStore(async (store) => [await createToken(store, systemClock, o.user!), await accountIdOf(store.directory, o.user!)] as const);
      cliAudit('token created', { accountId, userName: o.user! });
      process.stdout.write(token + '\n');
      return;
    }
    case 'token revoke': {
      const [o] = options(args, ['token']);
      const accountId = await withStore((store) => revokeTokenReturningAccount(store, systemClock, o.token!));
      if (accountId === undefined) throw new UsageError('No live token matches; nothing was revoked.');
      cliAudit('token revoked', { accountId });
      process.stdout.write('revoked\n');
      return;
    }
    case 'backup': {
      const [, [file]] = options(args, [], 1);
      process.stdout.write(JSON.stringify(await backupCommand(loadConfig(), file!)) + '\n');
      return;
    }
    case 'restore': {
      const [, [file]] = options(args, [], 1);
      process.stdout.write(JSON.stringify(await restoreCommand(loadConfig(), file!)) + '\n');
      return;
    }
    case 'platform import': {
      const [o, [file]] = options(args, ['user'], 1);
      for (const outcome of await withStore((store) => importPlatformFile(store, file!, o.user!))) process.stdout.write(JSON.stringify(outcome) + '\n');
      return;
    }
    case 'demo': {
      const [o] = options(args, ['user']);
      process.stdout.write(JSON.stringify(await withStore((store) => fillDemoAccount(store, o.user!))) + '\n');
      return;
    }
    case 'copy': {
      const [o] = options(args, ['from', 'to']);
      const config = loadConfig();
      for (const table of await copyDatabase({ from: o.from!, to: o.to!, database: config.database })) process.stdout.write(JSON.stringify(table) + '\n');
      return;
    }
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(USAGE + '\n');
      return;
    default:
      throw new UsageError(`Unknown command '${argv.slice(0, 2).join(' ')}'.`);
  }
}

/** Errors the user can act on are printed plainly; anything else is a fault with its stack. */
const userErrors = [UsageError, CopyError, ConfigError, ConfigurationError, AccountExistsError, InvalidAccountInputError, UnknownAccountError, DocumentFileError, DemoDataExistsError, BackupError, WebhookCommandError];

export function main(argv: string[]): void {
  run(argv).catch((error: unknown) => {
    if (userErrors.some((E) => error instanceof E)) {
      process.stderr.write(`catalogue: ${(error as Error).message}\n`);
      if (error instanceof UsageError) process.stderr.write(`\n${USAGE}\n`);
      process.exitCode = 2;
    } else if (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`catalogue: ${error.message}\n\n${USAGE}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`catalogue: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    }
  });
}
