/**
 * A bound on what the query parts of one $batch may hold in memory. On its own a collection is
 * streamed to the socket with bounded memory; inside a batch every answer is held until the
 * whole batch is answered, so a hundred GETs of a whole catalogue would otherwise sit in memory
 * at once. A part that would pass the bound is answered with an error instead.
 */
import { badRequest } from '../../odata/errors';
import { BufferedResponder, type BodyStream, type Reply, type StreamHead } from '../responder';

export class ResponseBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Whether `bytes` more fit beside what finished parts hold. */
  fits(bytes: number): boolean {
    return this.used + bytes <= this.limit;
  }

  /** A finished part keeps its bytes. */
  keep(bytes: number): void {
    this.used += bytes;
  }

  exceeded() {
    return badRequest(
      `The answers of this batch's query parts would be larger than ${this.limit} bytes. ` +
        'Send this request on its own, where the answer is streamed, or page it with $top and $skip.',
    );
  }
}

/** A BufferedResponder that refuses (throws) as soon as its body would not fit in the budget. */
export class BudgetedResponder extends BufferedResponder {
  private bytes = 0;

  constructor(private readonly budget: ResponseBudget) {
    super();
  }

  /** Bytes of body collected so far. */
  get size(): number {
    return this.bytes;
  }

  private spend(chunk: string | Buffer | undefined): void {
    if (chunk === undefined) return;
    const bytes = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (!this.budget.fits(this.bytes + bytes)) throw this.budget.exceeded();
    this.bytes += bytes;
  }

  override send(reply: Reply): void {
    if (this.started) return;
    this.spend(reply.body);
    super.send(reply);
  }

  override stream(head: StreamHead): BodyStream {
    const body = super.stream(head);
    return {
      write: async (chunk: Buffer) => {
        this.spend(chunk);
        await body.write(chunk);
      },
      end: (chunk?: Buffer) => {
        this.spend(chunk);
        body.end(chunk);
      },
    };
  }
}
