/**
 * Writes to a connection's socket held back and then sent in one system call: node-pg corks
 * each statement's own messages so, and the store holds several statements (or, on a shared
 * read connection, several requests' reads) together the same way; the holds nest.
 */
import type { ClientBase } from 'pg';

/** node-pg's socket (not public API; absent, nothing is held back and nothing breaks). */
interface WithSocket {
  connection?: { stream?: { cork?: () => void; uncork?: () => void } };
}

/**
 * Holds back the client's writes until `until` calls the function it is given (process.nextTick:
 * the rest of this tick, its promise callbacks included; setImmediate: the rest of this turn of
 * the event loop). Whether they are held.
 */
export function holdWrites(client: ClientBase, until: (send: () => void) => void): boolean {
  const stream = (client as unknown as WithSocket).connection?.stream;
  if (!stream?.cork || !stream.uncork) return false;
  stream.cork();
  until(() => stream.uncork!());
  return true;
}

/**
 * Holds back the client's writes until the returned function is called or this tick ends,
 * whichever comes first: what one piece of work sends while it runs without waiting leaves in
 * one write, and should it wait for an answer, what it sent goes out at once (the tick ends).
 */
export function holdWritesWhile(client: ClientBase): () => void {
  let send: (() => void) | undefined;
  let sent = false;
  const sendOnce = () => {
    if (sent) return;
    sent = true;
    send?.();
  };
  holdWrites(client, (release) => {
    send = release;
    process.nextTick(sendOnce);
  });
  return sendOnce;
}
