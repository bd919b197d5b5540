/**
 * The management endpoint: registration refuses endpoints that resolve to loopback or private
 * addresses and plain http unless the settings allow them; bad input is a JSON 400, strangers
 * get 401 and another account's subscription is a 404. An endpoint that keeps failing is
 * disabled with its last error shown; enabled again and redelivered by hand, the event arrives
 * with the id it had. The seller console shows the disabled endpoint, its failed deliveries and
 * their errors, and enables it and redelivers with plain forms.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { request } from '../support/http-client';
import { client } from '../batch/support';
import { eventually, Receiver } from './receiver';
import { TEST_WEBHOOK_ENV, WEBHOOKS_PATH, webhooks } from './management';

const errorMessage = (body: string) => (JSON.parse(body) as { error: { message: { value: string } } }).error.message.value;

describe('registration without the private-address and http settings', () => {
  let live: LiveService;
  let seller: Seller;
  before(async () => {
    live = await startLive();
    seller = await newSeller(live, 'ssrf');
  });
  after(() => live.close());

  test('an endpoint naming 127.0.0.1, 10.0.0.1, a name resolving to loopback, a metadata address, or plain http is refused with a 400', async () => {
    const hooks = webhooks(live.origin, seller.auth);
    for (const [url, why] of [
      ['https://127.0.0.1/hooks', /127\.0\.0\.1 is a loopback/],
      ['https://10.0.0.1/hooks', /10\.0\.0\.1 is a loopback, private/],
      ['https://localhost:8443/hooks', /localhost resolves to/],
      ['https://169.254.169.254/latest/meta-data', /169\.254\.169\.254/],
      ['https://[::ffff:7f00:1]/hooks', /is a loopback/],
      ['http://93.184.216.34/hooks', /must be an https:\/\/ URL/],
    ] as const) {
      const res = await hooks.call('POST', '', { url, eventTypes: ['order.created'] });
      assert.equal(res.status, 400, `${url}: ${res.body}`);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.match(errorMessage(res.body), why);
    }
    const list = await hooks.call('GET', '');
    assert.deepEqual((JSON.parse(list.body) as { subscriptions: unknown[] }).subscriptions, []);
  });
});

describe('the management endpoint', () => {
  let live: LiveService;
  let seller: Seller;
  const receiver = new Receiver();
  before(async () => {
    // Three failed attempts disable an endpoint; a delivery is given up after its first (horizon 0).
    live = await startLive({ env: { ...TEST_WEBHOOK_ENV, WEBHOOK_DISABLE_AFTER_FAILURES: '3', WEBHOOK_RETRY_HORIZON_MS: '0' } });
    seller = await newSeller(live, 'manage');
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
    await live.close();
  });

  test('strangers get 401, bad input a JSON 400, another account a 404', async () => {
    const anonymous = await request(`${live.origin}${WEBHOOKS_PATH}`);
    assert.equal(anonymous.status, 401);
    const hooks = webhooks(live.origin, seller.auth);
    const mine = await hooks.subscribe(receiver.url, ['product.changed']);
    for (const [body, why] of [
      [{ url: receiver.url, eventTypes: ['order.exploded'] }, /'order\.exploded' is not an event type/],
      [{ url: receiver.url, eventTypes: [] }, /non-empty array/],
      [{ url: 42, eventTypes: ['order.created'] }, /'url' must be/],
      [{ url: 'not a url', eventTypes: ['order.created'] }, /not an absolute URL/],
    ] as const) {
      const res = await hooks.call('POST', '', body);
      assert.equal(res.status, 400, res.body);
      assert.match(errorMessage(res.body), why);
    }
    const notJson = await request(`${live.origin}${WEBHOOKS_PATH}`, { method: 'POST', headers: { ...seller.auth, 'Content-Type': 'application/json' }, body: '{"url":' });
    assert.equal(notJson.status, 400);
    const other = await newSeller(live, 'manage-other');
    const theirs = webhooks(live.origin, other.auth);
    for (const [method, path] of [
      ['GET', `/${mine.id}`],
      ['DELETE', `/${mine.id}`],
      ['POST', `/${mine.id}/rotate-secret`],
      ['POST', `/${mine.id}/enable`],
      ['GET', `/${mine.id}/deliveries`],
    ] as const) {
      assert.equal((await theirs.call(method, path)).status, 404, `${method} ${path}`);
    }
    assert.equal((await hooks.get(mine.id)).id, mine.id);
    assert.equal((await hooks.call('DELETE', `/${mine.id}`)).status, 204);
    assert.equal((await hooks.call('GET', `/${mine.id}`)).status, 404);
  });

  test('an endpoint that keeps failing is disabled with its last error; enabled and redelivered by hand, the event arrives with its id', async () => {
    const hooks = webhooks(live.origin, seller.auth);
    const created = await hooks.subscribe(receiver.url, ['product.changed']);
    receiver.secrets = [created.secret!];
    receiver.mode = 'fail';
    const api = client(live, seller);
    for (let i = 0; i < 3; i++) await api.create('Products', { Title: `Failing ${i}`, Price: '1', StockAmount: 1 });
    await eventually('the subscription disabled', async () => !(await hooks.get(created.id)).enabled);
    const disabled = await hooks.get(created.id);
    assert.match(disabled.disabledReason!, /disabled after 3 failed attempts in a row; the last: HTTP 500/);
    const deliveries = await hooks.deliveries(created.id);
    assert.equal(deliveries.length, 3);
    assert.ok(deliveries.every((d) => d.state === 'failed' && d.lastStatus === 500), JSON.stringify(deliveries));
    // Disabled: a new change makes no delivery for it.
    await api.create('Products', { Title: 'While disabled', Price: '1', StockAmount: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await hooks.deliveries(created.id)).length, 3);

    receiver.mode = 'ok';
    const enabled = await hooks.call('POST', `/${created.id}/enable`);
    assert.equal(enabled.status, 200, enabled.body);
    assert.equal((await hooks.get(created.id)).enabled, true);
    const again = deliveries[0]!.eventId;
    const redelivered = await hooks.call('POST', `/${created.id}/deliveries/${again}/redeliver`);
    assert.equal(redelivered.status, 202, redelivered.body);
    await eventually('the redelivered event', () => receiver.accepted.some((a) => a.event.id === again));
    await eventually('its delivery recorded', async () => (await hooks.deliveries(created.id)).find((d) => d.eventId === again)?.state === 'delivered');
    assert.equal((await hooks.call('POST', `/${created.id}/deliveries/no-such-event/redeliver`)).status, 404);
  });

  test('the console shows a disabled endpoint with its failed deliveries, and enables it and redelivers with its forms', async () => {
    const hooks = webhooks(live.origin, seller.auth);
    const created = await hooks.subscribe(receiver.url, ['product.changed']);
    receiver.secrets = [created.secret!];
    receiver.mode = 'fail';
    const api = client(live, seller);
    for (let i = 0; i < 3; i++) await api.create('Products', { Title: `Console failing ${i}`, Price: '1', StockAmount: 1 });
    await eventually('the subscription disabled', async () => !(await hooks.get(created.id)).enabled);
    receiver.mode = 'ok';
    const consoleGet = (who: Seller, path: string) => request(`${live.origin}/console${path}`, { headers: { Cookie: `.ASPXAUTH=${who.cookie}` } });
    const consolePost = (who: Seller, path: string, csrf: string) =>
      request(`${live.origin}/console${path}`, { method: 'POST', headers: { Cookie: `.ASPXAUTH=${who.cookie}`, 'Content-Type': 'application/x-www-form-urlencoded', Origin: live.origin }, body: `csrf=${encodeURIComponent(csrf)}` });
    const page = (await consoleGet(seller, '/integrations')).body;
    const section = page.slice(page.indexOf(`id="webhook-${created.id}"`));
    assert.match(section, /<span class="badge bad">disabled<\/span>/);
    assert.match(section, /disabled after 3 failed attempts in a row; the last: HTTP 500/);
    const failed = (await hooks.deliveries(created.id)).filter((d) => d.state === 'failed');
    assert.equal(failed.length, 3);
    for (const d of failed) assert.ok(section.includes(d.eventId), `failed delivery ${d.eventId} is listed`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(section)![1]!;
    // Another seller cannot press these buttons.
    const other = await newSeller(live, 'manage-console');
    const otherCsrf = /name="csrf" value="([^"]+)"/.exec((await consoleGet(other, '/tokens')).body)![1]!;
    assert.equal((await consolePost(other, `/webhooks/${created.id}/enable`, otherCsrf)).status, 404);
    // Without the session's token the form is refused.
    assert.equal((await consolePost(seller, `/webhooks/${created.id}/enable`, 'forged')).status, 403);
    const enabled = await consolePost(seller, `/webhooks/${created.id}/enable`, csrf);
    assert.equal(enabled.status, 303, enabled.body);
    assert.equal((await hooks.get(created.id)).enabled, true);
    const redelivered = await consolePost(seller, `/webhooks/${created.id}/deliveries/${failed[0]!.eventId}/redeliver`, csrf);
    assert.equal(redelivered.status, 303, redelivered.body);
    await eventually('the redelivered event', () => receiver.accepted.some((a) => a.event.id === failed[0]!.eventId));
    assert.match((await consoleGet(seller, '/integrations?webhook=redelivered')).body, /sent again, with the same event id/);
  });
});
