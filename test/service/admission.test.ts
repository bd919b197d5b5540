/**
 * AccountAdmission (src/service/admission.ts): each account's share of a process. Slots are per
 * account (one account's requests never take another's), a full queue or a wait that runs out is
 * a 429 with Retry-After that names the limits, a slot passes to the next in arrival order, and
 * expensive requests run one at a time per account. weightOf tells them apart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountAdmission, weightOf, type Release } from '../../src/service/admission';
import { ODataError } from '../../src/odata/errors';
import type { SystemQueryOption } from '../../src/odata/uri/query-options';

const limits = { maxInFlight: 2, maxHeavyInFlight: 1, maxQueued: 2, queueWaitMs: 60_000 };

/** Settled or not, without waiting: the promise's state after the microtasks already queued ran. */
async function settled(value: Release | Promise<Release>): Promise<boolean> {
  let done = false;
  void Promise.resolve(value).then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

function refusal(run: () => unknown): ODataError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ODataError);
    return error;
  }
  assert.fail('expected a refusal');
}

test('an account runs maxInFlight at once; the next waits, one more than the queue is a 429 with Retry-After', async () => {
  const refused: string[] = [];
  const admission = new AccountAdmission(limits, (reason) => refused.push(reason));
  const first = (await admission.admit(1)) as Release;
  await admission.admit(1);
  assert.equal(admission.running(1), 2);
  const third = admission.admit(1);
  const fourth = admission.admit(1);
  assert.equal(await settled(third), false, 'the third waits');
  const error = refusal(() => admission.admit(1));
  assert.equal(error.status, 429);
  assert.equal(error.headers['Retry-After'], '60');
  assert.match(error.message, /2 run at a time .* and 2 may wait \(the queue was full\)/);
  assert.deepEqual(refused, ['queue_full']);
  // Another account is not held back by this one.
  assert.equal(await settled(admission.admit(2)), true);
  // A slot passes to the request that waited longest.
  first();
  first();
  assert.equal(await settled(third), true);
  assert.equal(await settled(fourth), false);
  assert.equal(admission.running(1), 2);
});

test('a wait that runs out is a 429 naming it, and leaves the queue', async () => {
  const refused: string[] = [];
  const admission = new AccountAdmission({ ...limits, maxInFlight: 1, queueWaitMs: 20 }, (reason) => refused.push(reason));
  const held = (await admission.admit(7)) as Release;
  // The queue's timer does not keep a process alive (it is unref'd): this test's does.
  const alive = setTimeout(() => {}, 5_000);
  await assert.rejects(Promise.resolve(admission.admit(7)), (error: unknown) => {
    assert.ok(error instanceof ODataError);
    assert.equal(error.status, 429);
    assert.match(error.message, /none became free within 20 ms/);
    return true;
  });
  clearTimeout(alive);
  assert.deepEqual(refused, ['queue_timeout']);
  held();
  assert.equal(admission.running(7), 0, 'the slot was not handed to the request that gave up');
  assert.equal(await settled(admission.admit(7)), true);
});

test('expensive requests of an account run one at a time, and still count among its slots', async () => {
  const admission = new AccountAdmission(limits);
  const export1 = (await admission.admit(3, 'export')) as Release;
  const expression = admission.admit(3, 'expressions');
  assert.equal(await settled(expression), false, 'a second expensive request waits for the first');
  assert.equal(await settled(admission.admit(3)), true, 'a light request takes the other slot');
  assert.equal(await settled(admission.admit(4, 'expressions')), true, 'another account has its own heavy slot');
  export1();
  assert.equal(await settled(expression), true, 'the export gave back both its slots: the expression takes them');
  assert.equal(await settled(admission.admit(3, 'export')), false, 'and the next expensive request waits again');
});

test('maxInFlight 0 admits everything', async () => {
  const admission = new AccountAdmission({ ...limits, maxInFlight: 0 });
  for (let i = 0; i < 100; i++) assert.equal(await settled(admission.admit(1, i % 2 ? 'export' : 'light')), true);
});

test('weightOf: text functions in $filter or $orderby, and $expand over a whole collection, are expensive', () => {
  const weight = (path: string, options: Record<string, string>) => weightOf(path, new Map(Object.entries(options)) as Map<SystemQueryOption, string>);
  assert.equal(weight('Products', {}), 'light');
  assert.equal(weight('Products', { $filter: "Id gt 5 and Title eq 'x'" }), 'light');
  assert.equal(weight('Products', { $filter: "substringof('x', Title)" }), 'expressions');
  assert.equal(weight('Products', { $orderby: 'tolower (Title)' }), 'expressions');
  assert.equal(weight('SalesOrders', { $filter: "(ForeignOrderId eq null) or (ForeignOrderId eq '')", $expand: 'SalesOrderItems' }), 'export');
  assert.equal(weight('Products', { $expand: 'ProductImages', $top: '50' }), 'light');
  assert.equal(weight('Products(5L)', { $expand: 'ProductImages' }), 'light');
  assert.equal(weight('Products(5L)/ProductVariations', { $expand: 'ProductVariationSpecifics' }), 'export');
});
