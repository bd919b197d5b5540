/**
 * The real .NET WCF Data Services client (System.Data.Services.Client 4.0, as Mono ships it in
 * Debian: mono-mcs, mono-runtime, libmono-system-data-services-client4.0-cil), run unchanged
 * against the live service: ./wcf-mono/GraphClient.cs builds a product with variations (and their
 * characteristics), an image and a catalog link with AddRelatedObject, AddObject + SetLink and
 * AddLink, saves it in one SaveChanges, with SaveChangesOptions.Batch and without, and reads the
 * graph back through the client. Without Mono the test is skipped, saying what is missing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { asSeller, CONNECTOR_VERSIONS, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { testEngine } from '../support/test-database';
import { MONO_INSTALL, requireProgram } from '../support/requirements';

const run = promisify(execFile);

/** The repository (this file runs from dist/test/clients). */
const REPO = path.resolve(__dirname, '..', '..', '..');
const SOURCE = path.join(REPO, 'test', 'clients', 'wcf-mono', 'GraphClient.cs');
const WORK = path.join(REPO, 'dist', 'wcf-mono', testEngine);
const CLIENT_LIBRARY = '/usr/lib/mono/4.5/System.Data.Services.Client.dll';

/** What is missing to run the client, or undefined when nothing is. */
function missing(): string | undefined {
  const absent = ['mcs', 'mono'].filter((program) => spawnSync(program, ['--version'], { stdio: 'ignore' }).error !== undefined);
  if (!fs.existsSync(CLIENT_LIBRARY)) absent.push(CLIENT_LIBRARY);
  if (absent.length === 0) return undefined;
  return `the .NET client test needs ${absent.join(', ')} (Debian: mono-mcs mono-runtime libmono-system-data-services-client4.0-cil)`;
}

// Named in the run's list of skips, and a failure under REQUIRE_ALL=1 (CI).
const skip = requireProgram('Mono (mcs, mono and System.Data.Services.Client)', missing() === undefined, MONO_INSTALL);

describe('the .NET WCF Data Services client under Mono', { skip }, () => {
  let live: LiveService;
  let seller: Seller;
  let exe: string;

  before(async () => {
    fs.mkdirSync(WORK, { recursive: true });
    exe = path.join(WORK, 'GraphClient.exe');
    await run('mcs', [`-out:${exe}`, '-r:System.Data.Services.Client.dll', '-r:System.Core.dll', SOURCE]);
    live = await startLive();
    seller = await newSeller(live, 'monoclient');
  });
  after(() => live?.close());

  for (const mode of ['single', 'batch'] as const) {
    test(`SaveChanges(${mode === 'batch' ? 'SaveChangesOptions.Batch' : 'SaveChangesOptions.None'}) creates the graph, and the client reads it back`, async () => {
      const made = await asSeller(seller, `${live.root}/Catalogs`, { method: 'POST', headers: { ...CONNECTOR_VERSIONS, 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ Name: `mono ${mode}` }) });
      assert.equal(made.status, 201, made.body);
      const catalog = String((JSON.parse(made.body) as { d: { Id: string } }).d.Id);
      const { stdout } = await run('mono', [exe, live.root, seller.token, seller.cookie, catalog, mode]).catch((e: { stdout?: string; stderr?: string }) => {
        throw new Error(`the .NET client failed:\n${e.stdout ?? ''}\n${e.stderr ?? String(e)}`);
      });
      const lines = stdout.trim().split('\n');
      const product = /^product (\d+)$/.exec(lines[0] ?? '');
      assert.ok(product && product[1] !== '0', `the client learnt the product's key: ${stdout}`);
      const id = product[1]!;
      assert.deepEqual(lines.slice(1), [`variation NET-L ${id} Size=L`, `variation NET-M ${id} Size=M`, `image https://img.example/net.jpg ${id}`, `catalog ${catalog}`]);
    });
  }
});
