/**
 * A few pooled connections that reads of one statement (ReadExtent 'one': a GET by key, a plain
 * collection page) share.
 *
 * Such a read is one implicit transaction of its own (./one-statement-read.ts): its messages end
 * with a Sync, and PostgreSQL runs each Sync's messages apart from the ones before and after. So
 * many reads can be on one connection at once (node-pg's pipeline mode sends each without
 * waiting for the answers before it), and their answers come back in the order they were sent.
 * The tenant setting of one ends with its Sync and is never seen by the next.
 *
 * What that saves, on two cores, 32 clients and a pool of 10: the reads of one turn of the event
 * loop leave in one write to the socket (the connection is corked until the turn ends) and come
 * back in a few reads, where each had a write and a wake-up of a server process of its own; and
 * they no longer wait for a pooled connection. A GET by key cost about 210 µs of CPU, 140–160 µs
 * shared. A read of one statement is a lookup by key or at most 255 rows of a collection
 * (readResource), so none holds the others up for long.
 *
 * A shared connection takes at most MAX_READS_IN_FLIGHT reads; past that, reads take a pooled
 * connection of their own as before. One that fails (the server or the network dropped it) is
 * given back to the pool to be discarded, and the next read opens another.
 */
import type { PoolClient } from 'pg';
import { holdWrites } from './held-writes';
import { StatementCache } from './statements';

/** Reads in flight on one shared connection before further reads take a pooled connection. */
const MAX_READS_IN_FLIGHT = 64;

class SharedConnection {
  readsInFlight = 0;
  /** Out of use: failed, ended by the server, or given back at close(). */
  broken = false;
  stopListening: () => void = () => undefined;
  /** Whether the socket is corked until the end of this turn of the event loop. */
  private heldBack = false;

  constructor(
    readonly client: PoolClient,
    readonly statements: StatementCache | undefined,
  ) {}

  /**
   * Holds the socket's writes back until the event loop has run every callback of this turn
   * (setImmediate: the requests that arrived together, each in a callback of its own), then
   * sends them in one system call.
   */
  holdBackThisTurn(): void {
    if (this.heldBack) return;
    this.heldBack = holdWrites(this.client, (send) =>
      setImmediate(() => {
        this.heldBack = false;
        send();
      }),
    );
  }
}

export type SharedRead<T> = (client: PoolClient, statements: StatementCache | undefined) => Promise<T>;

export class SharedReadConnections {
  private connections: SharedConnection[] = [];
  private opening: Promise<void> | undefined;
  private closed = false;

  constructor(
    /** How many connections the reads share. */
    private readonly size: number,
    /** A connection from the pool. */
    private readonly connect: () => Promise<PoolClient>,
    /** Named statements each connection keeps; undefined sends every statement unnamed. */
    private readonly statementsPerConnection: number | undefined,
  ) {}

  /**
   * Runs fn on the shared connection with the fewest reads in flight, or answers undefined when
   * each has MAX_READS_IN_FLIGHT (the caller takes a pooled connection then).
   */
  async run<T>(fn: SharedRead<T>): Promise<{ value: T } | undefined> {
    if (this.connections.length < this.size) await this.open();
    let chosen: SharedConnection | undefined;
    for (const connection of this.connections) if (!chosen || connection.readsInFlight < chosen.readsInFlight) chosen = connection;
    if (!chosen || chosen.readsInFlight >= MAX_READS_IN_FLIGHT) return undefined;
    chosen.readsInFlight++;
    chosen.holdBackThisTurn();
    try {
      const value = await fn(chosen.client, chosen.statements);
      if (!chosen.broken && chosen.statements) await chosen.statements.deallocateEvicted(chosen.client);
      return { value };
    } finally {
      chosen.readsInFlight--;
    }
  }

  /** Opens the missing connections; reads that arrive meanwhile wait for the same opening. */
  private open(): Promise<void> {
    this.opening ??= (async () => {
      try {
        while (this.connections.length < this.size && !this.closed) {
          const client = await this.connect();
          const connection = new SharedConnection(client, this.statementsPerConnection === undefined ? undefined : new StatementCache(this.statementsPerConnection));
          connection.stopListening = listenFor(client, (error) => this.discard(connection, error));
          this.connections.push(connection);
        }
      } finally {
        this.opening = undefined;
      }
    })();
    return this.opening;
  }

  /** Takes a connection out of use and gives it back to the pool to be discarded. */
  private discard(connection: SharedConnection, error: Error): void {
    if (connection.broken) return;
    connection.broken = true;
    connection.stopListening();
    this.connections = this.connections.filter((c) => c !== connection);
    connection.client.release(error);
  }

  /** Gives every connection back to the pool; call once no read is in flight. */
  close(): void {
    this.closed = true;
    for (const connection of this.connections) {
      connection.broken = true;
      connection.stopListening();
      connection.client.release();
    }
    this.connections = [];
  }
}

/**
 * Calls `lost` when the connection fails or the server ends it: the reads in flight on it fail
 * with the error, and later ones go elsewhere. A server that ends the session
 * (pg_terminate_backend, a restart) may only close the socket. The stop function it answers.
 */
function listenFor(client: PoolClient, lost: (error: Error) => void): () => void {
  const failed = (error: Error) => lost(error);
  const ended = () => lost(new Error('The server closed the connection'));
  client.on('error', failed);
  client.on('end', ended);
  return () => {
    client.off('error', failed);
    client.off('end', ended);
  };
}
