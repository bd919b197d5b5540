/**
 * The operator's commands beyond creating accounts: an account's lifecycle (list, password,
 * disable, enable, delete) and backups of the SQLite database. Every change is written to the
 * audit trail (on standard error, as structured log lines; standard output keeps the result).
 */
import os from 'node:os';
import pino from 'pino';
import { audit, type AuditEvent } from '../auth/audit';
import type { Config } from '../config';
import { systemClock } from '../clock';
import { changePassword, deleteAccount, disableAccount, enableAccount, listAccounts } from '../auth/lifecycle';
import { InvalidAccountInputError } from '../auth/accounts';
import { isPostgresUrl, sqliteFileOf } from '../store/open';
import type { Store } from '../store/store';
import { BackupError, backupSqlite, restoreSqlite, type CopyReport } from '../store/sqlite/backup';
import { logTime } from '../server/log-time';

const auditLog = pino({ level: process.env.LOG_LEVEL || 'info', base: undefined, timestamp: logTime }, pino.destination(2));

/** An audit event of the command line: where it came from is this machine's operator. */
export function cliAudit(event: AuditEvent, fields: Record<string, unknown>): void {
  audit(auditLog, event, { clientAddress: 'command line', operator: os.userInfo().username, ...fields });
}

/** The password on standard input: its first line (a trailing line break is not part of it). */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('New password (then Enter and Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const password = text.replace(/\r?\n$/, '');
  if (/[\r\n]/.test(password)) throw new InvalidAccountInputError('The password on standard input must be one line');
  return password;
}

/** account list | password | disable | enable | delete; the JSON lines to print. */
export async function accountCommand(store: Store, sub: string, userName: string | undefined): Promise<unknown[]> {
  const user = userName!;
  switch (sub) {
    case 'list':
      return listAccounts(store);
    case 'password': {
      const result = await changePassword(store, user, await passwordFromStdin());
      cliAudit('account password changed', { accountId: result.accountId, userName: user, sessionsEnded: result.sessionsEnded });
      return [result];
    }
    case 'disable': {
      const result = await disableAccount(store, systemClock, user);
      cliAudit('account disabled', { accountId: result.accountId, userName: user, sessionsEnded: result.sessionsEnded });
      return [result];
    }
    case 'enable': {
      const result = await enableAccount(store, user);
      cliAudit('account enabled', { accountId: result.accountId, userName: user });
      return [result];
    }
    case 'delete': {
      const result = await deleteAccount(store, user);
      cliAudit('account deleted', { accountId: result.accountId, userName: user, deleted: result.deleted });
      return [result];
    }
    default:
      throw new Error(`no account command '${sub}'`);
  }
}

const POSTGRES_BACKUPS = 'On PostgreSQL, back up and restore with pg_dump and pg_restore: see docs/operating.md.';

function sqliteFile(config: Config): string {
  if (isPostgresUrl(config.databaseUrl)) throw new BackupError(POSTGRES_BACKUPS);
  return sqliteFileOf(config.databaseUrl);
}

export async function backupCommand(config: Config, file: string): Promise<CopyReport> {
  return backupSqlite(sqliteFile(config), file);
}

export async function restoreCommand(config: Config, file: string): Promise<CopyReport> {
  const report = await restoreSqlite(file, sqliteFile(config));
  cliAudit('database restored', { from: file });
  return report;
}
