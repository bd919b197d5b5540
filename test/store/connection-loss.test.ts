/**
 * Which failures of node-pg the PostgreSQL store treats as a lost connection (a 503 with
 * Retry-After at the service's edge) and which stay what they are. The driver's own failures
 * are made for real: a port nobody listens on, and a server that accepts and closes at once (as
 * HAProxy does while no node is primary). The server's SQLSTATEs are given as node-pg reports
 * them (an Error with `code`).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import pg from 'pg';
import { asUnreachable, isConnectionLoss, lostDuringCommit } from '../../src/store/postgres/connection-loss';
import { DatabaseUnreachableError } from '../../src/store/errors';
import { errorReply } from '../../src/service/error-reply';

const withCode = (code: string, message = 'server said so') => Object.assign(new Error(message), { code });

async function failureOfConnecting(port: number): Promise<unknown> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'nobody', database: 'nothing' });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    return error;
  }
  await client.end();
  throw new Error('connected');
}

describe('connection loss', () => {
  test('a refused connection and one accepted and closed at once are losses', async () => {
    const closer = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => closer.listen(0, '127.0.0.1', resolve));
    const port = (closer.address() as net.AddressInfo).port;
    try {
      const closed = await failureOfConnecting(port);
      assert.equal((closed as Error).message, 'Connection terminated unexpectedly');
      assert.ok(isConnectionLoss(closed));
    } finally {
      await new Promise((resolve) => closer.close(resolve));
    }
    const refused = await failureOfConnecting(port);
    assert.equal((refused as { code?: string }).code, 'ECONNREFUSED');
    assert.ok(isConnectionLoss(refused));
  });

  test('the server going away, starting up, or being a standby is a loss; an error of the statement is not', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300']) assert.ok(isConnectionLoss(withCode(code)), code);
    // A refusal to write: a standby when writing, the store's own read-only transaction when reading.
    assert.ok(isConnectionLoss(withCode('25006'), true));
    assert.ok(!isConnectionLoss(withCode('25006')));
    for (const code of ['23505', '42601', '57014', '40001', '22003', '42501']) assert.ok(!isConnectionLoss(withCode(code)), code);
    assert.ok(isConnectionLoss(new Error('Client has encountered a connection error and is not queryable')));
    assert.ok(!isConnectionLoss(new Error('timeout exceeded when trying to connect')), "the pool's own wait is overload (StoreBusyError)");
    assert.ok(!isConnectionLoss('Connection terminated unexpectedly'));
  });

  test('a COMMIT never sent is lost with its transaction; one sent on a connection that broke is of unknown outcome', () => {
    assert.equal(lostDuringCommit(new Error('Client has encountered a connection error and is not queryable'), 2), undefined);
    assert.equal(lostDuringCommit(withCode('23505'), 2), undefined);
    assert.equal(lostDuringCommit(undefined, 2), undefined);
    const unknown = lostDuringCommit(new Error('Connection terminated unexpectedly'), 2);
    assert.ok(unknown instanceof DatabaseUnreachableError);
    assert.equal(unknown.at, 'commit');
    const kept = asUnreachable(unknown, 'transaction', 9);
    assert.equal(kept, unknown, 'what is known of the COMMIT is kept');
    const other = withCode('23505');
    assert.equal(asUnreachable(other, 'transaction', 2), other);
  });

  test('answered 503 with Retry-After in the request format, saying what became of the request', () => {
    for (const at of ['connect', 'transaction', 'commit'] as const) {
      const error = new DatabaseUnreachableError(at, 3, 'Connection terminated unexpectedly');
      const json = errorReply(error, 'json', 'req-1');
      assert.equal(json.status, 503);
      assert.equal(json.headers?.['Retry-After'], '3');
      const message = (JSON.parse(String(json.body)) as { error: { message: { value: string } } }).error.message.value;
      assert.match(message, at === 'commit' ? /may or may not have been stored/ : /nothing was done|no change was committed/);
      assert.doesNotMatch(message, /terminated|req-1/, 'nothing internal');
      const xml = errorReply(error, 'xml', 'req-1');
      assert.equal(xml.status, 503);
      assert.match(String(xml.contentType), /xml/);
      assert.match(String(xml.body), /<message xml:lang="en-US">The (database|connection)/);
    }
  });
});
