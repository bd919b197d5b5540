/**
 * A TCP proxy on 127.0.0.1 between the service and its PostgreSQL, standing in for what sits
 * there in a replicated deployment (HAProxy following the primary), so that a test can make the
 * faults of a failover happen exactly:
 * - 'forward': connections go through to the server;
 * - 'close': connections are accepted and closed at once, as HAProxy does while no node is
 *   the primary; switching to it also cuts the connections open now (HAProxy's
 *   on-marked-down shutdown-sessions);
 * - cutAtCommit('before'): the next COMMIT a client sends is not passed on, and its connection
 *   is cut: the transaction is rolled back, the client never hears;
 * - cutAtCommit('after'): the next COMMIT is passed on, and the connection is cut as the
 *   server's answer to it comes back: the transaction is committed, the client never hears.
 * A COMMIT is recognised by its text in the client's bytes (a simple Query "COMMIT"), and its
 * answer by the CommandComplete tag "COMMIT" in the server's.
 */
import net from 'node:net';

export type ProxyMode = 'forward' | 'close';

export interface TcpProxy {
  readonly port: number;
  /** Switches mode; 'close' also cuts every connection open now. */
  setMode(mode: ProxyMode): void;
  /** Cuts every connection open now. */
  cutAll(): void;
  /** Arms a cut at the next COMMIT; resolves once it happened. */
  cutAtCommit(when: 'before' | 'after'): Promise<void>;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

const COMMIT_QUERY = Buffer.from('COMMIT\0');

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let mode: ProxyMode = 'forward';
  let accepted = 0;
  const open = new Set<net.Socket>();
  let armed: { when: 'before' | 'after'; fired: () => void } | undefined;

  const server = net.createServer((client) => {
    accepted++;
    if (mode === 'close') {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    open.add(client);
    open.add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', () => {
      open.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      open.delete(upstream);
      client.destroy();
    });
    client.on('error', cut);
    upstream.on('error', cut);
    // Set on this connection once its client sent the armed COMMIT ('after'): the server's answer to it is never passed back.
    let commitSent: (() => void) | undefined;
    client.on('data', (chunk: Buffer) => {
      if (armed && chunk.includes(COMMIT_QUERY)) {
        const { when, fired } = armed;
        armed = undefined;
        if (when === 'before') {
          cut();
          fired();
          return;
        }
        commitSent = fired;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (commitSent && chunk.includes(COMMIT_QUERY)) {
        const fired = commitSent;
        commitSent = undefined;
        cut();
        fired();
        return;
      }
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cutAll = () => {
    for (const socket of open) socket.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    setMode(next) {
      mode = next;
      if (next === 'close') cutAll();
    },
    cutAll,
    cutAtCommit(when) {
      return new Promise<void>((resolve) => (armed = { when, fired: resolve }));
    },
    accepted: () => accepted,
    close() {
      cutAll();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
