/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that verifies every delivery as a
 * seller's receiver would, with the Standard Webhooks reference verifier (`standardwebhooks`),
 * and can be told to fail (500), to hold requests open without answering, or to be down.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedEvent {
  readonly id: string;
  readonly type: string;
  readonly time: string;
  readonly account: number;
  readonly sequence: number;
  readonly entity: { readonly set: string; readonly key: number; readonly uri: string };
  readonly version: number;
  readonly data?: { readonly change: string; readonly properties: readonly string[] };
}

export interface Arrival {
  readonly event: ReceivedEvent;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** Which of the receiver's secrets verified it. */
  readonly verifiedWith: readonly string[];
  /** Answered 204 (false: held open, mode 'hold'). */
  readonly answered: boolean;
}

export type ReceiverMode = 'ok' | 'fail' | 'hold';

export class Receiver {
  /** Deliveries verified: answered 2xx, or held open unanswered (mode 'hold'). */
  readonly accepted: Arrival[] = [];
  /** Requests answered 500 (mode 'fail'). */
  failedAnswers = 0;
  /** Verified requests held open without an answer (mode 'hold'). */
  held = 0;
  /** Requests whose signature did not verify with any secret (answered 401). */
  readonly unverified: string[] = [];
  mode: ReceiverMode = 'ok';
  /** The subscription's secrets the receiver knows (a rotation adds one). */
  secrets: string[] = [];
  private server: http.Server | undefined;
  private readonly sockets = new Set<import('node:net').Socket>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async start(port = 0): Promise<void> {
    const server = http.createServer((req, res) => this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Down: the port refuses connections (and held requests are cut off). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (this.mode === 'fail') {
        this.failedAnswers++;
        res.writeHead(500).end('receiver is failing on purpose');
        return;
      }
      const headers = { 'webhook-id': String(req.headers['webhook-id']), 'webhook-timestamp': String(req.headers['webhook-timestamp']), 'webhook-signature': String(req.headers['webhook-signature']) };
      const verifiedWith = this.secrets.filter((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      if (verifiedWith.length === 0) {
        this.unverified.push(body);
        res.writeHead(401).end();
        return;
      }
      this.accepted.push({ event: JSON.parse(body) as ReceivedEvent, headers: req.headers, body, verifiedWith, answered: this.mode !== 'hold' });
      // Received, but the answer never comes: the sender cannot know it arrived.
      if (this.mode === 'hold') this.held++;
      else res.writeHead(204).end();
    });
  }

  /** The accepted events, one per event id (a redelivered event counts once). */
  distinct(): ReceivedEvent[] {
    return [...new Map(this.accepted.map((a) => [a.event.id, a.event])).values()];
  }
}

/** Waits until `check` holds, polling every 25 ms; fails with `what` after `timeoutMs`. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
