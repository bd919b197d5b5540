/**
 * The replicated deployment (deploy/replicated.ts: three PostgreSQL nodes under Patroni with
 * synchronous replication, HAProxy following /primary, two `catalogue serve` processes behind
 * HAProxy's HTTP frontend) while its primary is lost: clients of several accounts write and read
 * through HAProxy (test/support/failover-load.ts) while the primary's postmaster is killed with
 * kill -9, twice in a row (the second time the new primary), and then switched over on purpose.
 * Checked: no answer is a 500 or wrong (only 2xx, and 503 with Retry-After); every write
 * answered 201 is on the final primary exactly once (read as the superuser); the service
 * recovers without a restart; every old primary rejoins as a standby. Reported: time from each
 * fault to the first successful write, 503s, acknowledged writes lost, unacknowledged writes
 * that committed anyway (found by the Idempotency-Key retries), duplicates.
 *
 * Skipped with one line where Patroni is not installed (.ci/run installs it and requires it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { missingForReplicated, startReplicatedDeployment, type PatroniNode, type ReplicatedDeployment } from '../../deploy/replicated';
import { FailoverLoad, type LoadAccount } from '../support/failover-load';
import { reportFigures } from '../support/figures';
import { requireProgram } from '../support/requirements';
import { deploymentAccount } from '../support/serve-process';
import { testEngine } from '../support/test-database';

const ACCOUNTS = 4;
const CLIENTS = 12;
/** How long a fault may take to heal (a new leader, the old one streaming again) before the test fails. */
const HEAL_LIMIT_MS = 90_000;

const missing = testEngine === 'postgres' ? missingForReplicated() : [];
const skip =
  testEngine !== 'postgres'
    ? 'PostgreSQL half only: the deployment runs on PostgreSQL'
    : requireProgram(missing.map((m) => m.what).join(' and '), missing.length === 0, missing.map((m) => m.install).join('; '), { postgres: true });

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the replicated deployment while its primary is lost', { skip, timeout: 420_000 }, () => {
  let deployment: ReplicatedDeployment;
  const accounts: LoadAccount[] = [];

  before(async () => {
    deployment = await startReplicatedDeployment();
    for (let i = 0; i < ACCOUNTS; i++) {
      accounts.push(await deploymentAccount(deployment.origin, deployment.commandEnv, `ha-${i}`));
    }
  });
  after(() => deployment?.stop());

  /** Waits until `formerLeader` is no longer the leader, a leader runs, and every node streams or runs again. */
  const healed = async (formerLeader: PatroniNode): Promise<PatroniNode> => {
    const deadline = Date.now() + HEAL_LIMIT_MS;
    for (;;) {
      const members = await deployment.members();
      const leader = members.find((m) => m.role === 'leader' && m.state === 'running');
      const former = members.find((m) => m.name === formerLeader.name);
      const allUp = members.length === deployment.nodes.length && members.every((m) => m.state === 'running' || m.state === 'streaming');
      if (leader && leader.name !== formerLeader.name && former && former.role !== 'leader' && allUp && members.some((m) => m.role === 'sync_standby')) {
        return deployment.nodes.find((n) => n.name === leader.name)!;
      }
      assert.ok(Date.now() < deadline, `the cluster did not heal after losing ${formerLeader.name}: ${JSON.stringify(members)}`);
      await wait(250);
    }
  };

  test('kill -9 of the primary twice, then a switchover: no 500, no acknowledged write lost or doubled, old primaries rejoin', async (t) => {
    const load = new FailoverLoad(deployment.origin, accounts, CLIENTS);
    load.start();
    await wait(3000);

    const recovery: Record<string, number> = {};
    const formerLeaders: string[] = [];
    for (const fault of ['kill1', 'kill2', 'switchover'] as const) {
      const leader = await deployment.leader();
      assert.ok(leader, 'a leader before the fault');
      formerLeaders.push(leader.name);
      const at = performance.now();
      if (fault === 'switchover') {
        await deployment.switchover();
      } else {
        const pid = leader.postmasterPid();
        assert.ok(pid, `${leader.name}'s postmaster runs`);
        process.kill(pid, 'SIGKILL');
      }
      const next = await healed(leader);
      t.diagnostic(`${fault}: ${leader.name} -> ${next.name}`);
      // Writes go on meanwhile; give them a moment on the new primary before the next fault.
      await wait(3000);
      recovery[fault] = Math.round(load.recoveryMs(at) ?? -1);
    }

    await load.stop();
    await load.settle();
    assert.deepEqual(load.wrong, [], 'no answer was a 500 or wrong');
    assert.equal(load.count(500), 0);
    assert.equal(load.pending.size, 0, 'every POST got its 201 in the end');
    for (const service of deployment.services) assert.equal(service.child.exitCode, null, 'no service process was restarted');
    for (const fault of Object.keys(recovery)) assert.ok(recovery[fault]! >= 0, `writes succeeded again after ${fault}`);

    // The final primary, read as the superuser (past the service and row-level security).
    const finalLeader = await deployment.leader();
    assert.ok(finalLeader);
    const admin = new pg.Client({ connectionString: deployment.superuserUrl(finalLeader) });
    await admin.connect();
    let rows: { account_id: string; id: string; foreign_id: string }[];
    let standbys: { application_name: string; state: string; sync_state: string }[];
    try {
      rows = (await admin.query<{ account_id: string; id: string; foreign_id: string }>(`SELECT account_id::text, id::text, foreign_id FROM products WHERE foreign_id LIKE 'load-%'`)).rows;
      standbys = (await admin.query<{ application_name: string; state: string; sync_state: string }>('SELECT application_name, state, sync_state FROM pg_stat_replication')).rows;
    } finally {
      await admin.end();
    }
    // Every former primary is a standby now, streaming from the final one.
    for (const name of formerLeaders.filter((n) => n !== finalLeader.name)) {
      assert.ok(
        standbys.some((s) => s.application_name === name && s.state === 'streaming'),
        `${name} rejoined as a standby: ${JSON.stringify(standbys)}`,
      );
    }
    assert.ok(standbys.some((s) => s.sync_state === 'sync'), 'a synchronous standby again');
    const byForeignId = new Map<string, typeof rows>();
    for (const row of rows) byForeignId.set(row.foreign_id, [...(byForeignId.get(row.foreign_id) ?? []), row]);
    const duplicates = [...byForeignId].filter(([, r]) => r.length > 1).length;
    let lost = 0;
    for (const [foreignId, write] of load.acknowledged) {
      const row = byForeignId.get(foreignId)?.[0];
      if (!row || row.id !== write.id || Number(row.account_id) !== write.accountId) lost++;
    }
    reportFigures(
      'patroni-failover',
      {
        acknowledgedWrites: load.acknowledged.size,
        answered503: load.count(503),
        cutConnections: load.count(0),
        answered500: load.count(500),
        acknowledgedLost: lost,
        committedUnacknowledged: load.committedUnacknowledged(),
        duplicates,
        firstWriteAfterKill1Ms: recovery.kill1!,
        firstWriteAfterKill2Ms: recovery.kill2!,
        firstWriteAfterSwitchoverMs: recovery.switchover!,
      },
      t,
    );
    assert.equal(duplicates, 0, 'no product was created twice');
    assert.equal(lost, 0, 'no acknowledged write is missing on the final primary');
    assert.equal(rows.length, load.acknowledged.size, 'nothing was stored that no client was told about');
  });
});
