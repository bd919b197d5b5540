/**
 * Clients that write and read through the service while its database fails over, and what they
 * saw. Each client belongs to one of several accounts and, in a loop, creates a product (a POST
 * with an Idempotency-Key, sent again with the same key until it gets a final answer) or reads
 * one it created. What a client accepts:
 * - 201 for a POST (a replay says Idempotent-Replayed: the first attempt had committed after all);
 * - 200 with the product it created for a GET;
 * - 503 with Retry-After and an OData error body: the request is sent again shortly;
 * - a connection that a balancer cut (no answer): sent again too.
 * Anything else (a 500, a 503 without Retry-After, another product, a 404 of an acknowledged
 * product) is noted as wrong. Afterwards, `settle` sends every POST without a final answer again
 * until it has one, so that the database can be compared with what was acknowledged.
 */
import { request, type HttpResponse } from './http-client';

const SERVICE = '/publicapi/v1/api.svc';
/** A client's pause after a 503 or a cut connection: short, so that recovery is seen promptly. */
const RETRY_PAUSE_MS = 100;

export interface LoadAccount {
  readonly accountId: number;
  /** The headers that authenticate its requests (SubscriptionToken, Cookie). */
  readonly auth: Readonly<Record<string, string>>;
}

export interface AcknowledgedWrite {
  readonly accountId: number;
  readonly id: string;
  /** Whether its 201 was a replay: an earlier attempt, not acknowledged, had committed. */
  readonly replayed: boolean;
}

export class FailoverLoad {
  /** ForeignId -> the product its 201 named. */
  readonly acknowledged = new Map<string, AcknowledgedWrite>();
  /** POSTs sent and not yet answered 201: ForeignId -> its account. */
  readonly pending = new Map<string, LoadAccount>();
  readonly wrong: string[] = [];
  /** Answers by status (0: the connection was cut with no answer). */
  readonly statuses = new Map<number, number>();
  /** When each write was answered 201 (performance.now()), with when it was sent. */
  private readonly writeTimes: { sent: number; answered: number }[] = [];
  /** When each answer that was not a success came (performance.now()). */
  private readonly failureTimes: number[] = [];
  private running = false;
  private clients: Promise<void>[] = [];

  constructor(
    /** Where requests go: a balancer, or one service process. */
    private origin: string,
    private readonly accounts: readonly LoadAccount[],
    private readonly clientCount: number,
  ) {}

  /** Sends later requests elsewhere (another service process, another balancer). */
  setOrigin(origin: string): void {
    this.origin = origin;
  }

  start(): void {
    this.running = true;
    this.clients = Array.from({ length: this.clientCount }, (_, c) => this.client(c));
  }

  /** Stops the loops (each finishes its request, retries included). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.clients);
  }

  /** Every POST left without a final answer, sent again (same key) until it has one. */
  async settle(maxAttempts = 100): Promise<void> {
    for (const [foreignId, account] of [...this.pending]) await this.create(account, foreignId, maxAttempts);
  }

  count(status: number): number {
    return this.statuses.get(status) ?? 0;
  }

  /** 201s that were replays: writes answered 503 (or cut) that had committed anyway. */
  committedUnacknowledged(): number {
    return [...this.acknowledged.values()].filter((w) => w.replayed).length;
  }

  /**
   * Milliseconds from `since` (performance.now() of a fault) to the first write answered 201
   * that was sent after the first failure that followed `since`; 0 when no request failed.
   */
  recoveryMs(since: number): number | undefined {
    const firstFailure = this.failureTimes.filter((t) => t >= since).sort((a, b) => a - b)[0];
    if (firstFailure === undefined) return 0;
    const recovered = this.writeTimes.filter((w) => w.sent >= firstFailure).sort((a, b) => a.answered - b.answered)[0];
    return recovered === undefined ? undefined : recovered.answered - since;
  }

  /**
   * Milliseconds from `since` (the server came back) to the first write answered 201 after it,
   * or undefined when none was: requests that were waiting for a server count.
   */
  firstWriteAfter(since: number): number | undefined {
    const first = this.writeTimes.filter((w) => w.answered >= since).sort((a, b) => a.answered - b.answered)[0];
    return first === undefined ? undefined : first.answered - since;
  }

  private async client(c: number): Promise<void> {
    const account = this.accounts[c % this.accounts.length]!;
    const mine: { foreignId: string; id: string }[] = [];
    for (let op = 0; this.running; op++) {
      if (mine.length === 0 || op % 2 === 0) {
        const foreignId = `load-${c}-${op}`;
        const id = await this.create(account, foreignId, Infinity);
        if (id !== undefined) mine.push({ foreignId, id });
      } else {
        const target = mine[op % mine.length]!;
        await this.read(account, target.foreignId, target.id);
      }
    }
  }

  /** Sends the POST of `foreignId` until it is answered 201 (or `maxAttempts`, or the load stops). */
  private async create(account: LoadAccount, foreignId: string, maxAttempts: number): Promise<string | undefined> {
    this.pending.set(foreignId, account);
    const body = JSON.stringify({ Title: `Produkt ${foreignId}`, Price: '9.90', StockAmount: 1, ForeignId: foreignId });
    for (let n = 0; n < maxAttempts && (this.running || maxAttempts !== Infinity); n++) {
      const sent = performance.now();
      const res = await this.send('POST', '/Products', account, { 'Idempotency-Key': `key-${foreignId}`, 'Content-Type': 'application/json' }, body);
      if (res?.status === 201) {
        const id = String((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
        this.writeTimes.push({ sent, answered: performance.now() });
        this.acknowledged.set(foreignId, { accountId: account.accountId, id, replayed: res.headers['idempotent-replayed'] === 'true' });
        this.pending.delete(foreignId);
        return id;
      }
      if (res) {
        this.wrong.push(`POST ${foreignId}: ${res.status} ${res.body.slice(0, 200)}`);
        return undefined;
      }
    }
    return undefined;
  }

  private async read(account: LoadAccount, foreignId: string, id: string): Promise<void> {
    const res = await this.send('GET', `/Products(${id}L)`, account, {});
    if (!res) return;
    const found = res.status === 200 ? (JSON.parse(res.body) as { d: { ForeignId: string } }).d.ForeignId : undefined;
    if (found !== foreignId) this.wrong.push(`GET ${id} (${foreignId}): ${res.status} ${res.body.slice(0, 200)}`);
  }

  /**
   * One attempt: the answer, or undefined when it is to be sent again (a 503 with Retry-After,
   * or a connection cut without an answer). A 503 without Retry-After is wrong.
   */
  private async send(method: string, path: string, account: LoadAccount, headers: Record<string, string>, body?: string): Promise<HttpResponse | undefined> {
    let res: HttpResponse;
    try {
      res = await request(this.origin + SERVICE + path, { method, headers: { ...account.auth, Accept: 'application/json', ...headers }, ...(body === undefined ? {} : { body }) });
    } catch {
      this.note(0);
      await pause();
      return undefined;
    }
    this.note(res.status);
    if (res.status !== 503) return res;
    if (!res.headers['retry-after'] || !/"message"/.test(res.body)) this.wrong.push(`${method} ${path}: 503 without Retry-After or an OData error: ${res.body.slice(0, 200)}`);
    await pause();
    return undefined;
  }

  private note(status: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    if (status < 200 || status >= 300) this.failureTimes.push(performance.now());
  }
}

const pause = () => new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
