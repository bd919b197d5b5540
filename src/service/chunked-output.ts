/**
 * Text encoded into buffers as it is produced, for streamed bodies. The writers append short
 * pieces (one entity's own members at a time, see ../odata/text-sink.ts); each is encoded
 * straight into a buffer of CHUNK_BYTES, and full buffers wait for drain() to send them with
 * back-pressure. No long concatenated string is ever built: turning one into bytes means
 * flattening it first, which cost more than writing the JSON in the first place.
 */
import type { TextSink } from '../odata/text-sink';
import type { BodyStream } from './responder';

/**
 * A connector's page of 50 products is about 108 KB of JSON verbose: in one buffer it leaves
 * whole, with a Content-Length, in one write. With 64 KiB it went as two chunks of a chunked
 * answer, and the bench's 50-row filter cost about 60 µs more CPU per page (600 against 550).
 */
const CHUNK_BYTES = 128 * 1024;
/**
 * Buffers of CHUNK_BYTES kept for the next answer. Each one allocated is an ArrayBuffer outside
 * V8's heap, and V8 starts a full (mark-compact) collection whenever such external memory has
 * grown by its limit since the last one: with a fresh 128 KiB buffer per answer, the connector
 * mix at 2,000 requests/s ran one every half second, each holding the event loop 7-13 ms while
 * every seller's requests waited (docs/operating.md, "What holds the event loop"). An answer
 * borrows one while it writes and gives it back at its end, keeping an exact copy of what it
 * holds, so the usual answer of a few KB allocates a few KB.
 */
const spareBuffers: Buffer[] = [];
const SPARE_BUFFERS = 16;
/** A last buffer at least this full is sent as it is rather than copied: the copy would cost more than the allocation it saves. */
const SEND_AS_IS_BYTES = CHUNK_BYTES / 2;
/** Small pieces are joined into a string of about this length before encoding: fewer calls. */
const PENDING_CHARS = 4096;
/**
 * Encoding one piece costs a call worth about as much as the slow path's extra cost for some
 * hundred characters, so the text outside ASCII is kept apart only from ASCII longer than these.
 */
const APART_CHARS = 256;
const MIXED_CHARS = 256;
/** UTF-8 needs at most 3 bytes per UTF-16 code unit. */
const MAX_BYTES_PER_UNIT = 3;

/** A buffer of CHUNK_BYTES for an answer to write into: a spare one when there is one. */
function borrowBuffer(): Buffer {
  return spareBuffers.pop() ?? Buffer.allocUnsafe(CHUNK_BYTES);
}

/** What an ended output holds: nothing more can be written into a buffer that went back to the spares. */
const EMPTY = Buffer.alloc(0);

export class ChunkedOutput implements TextSink {
  private buffer = borrowBuffer();
  private used = 0;
  /** Full buffers not yet handed to the stream. */
  private full: Buffer[] = [];
  /** Text appended but not yet encoded. */
  private pending = '';
  /** Whether pending holds text given to appendApart(): then UTF-8 encoding takes the slow path. */
  private pendingMixed = false;

  constructor(private readonly body: BodyStream) {}

  append(text: string): void {
    if (this.pendingMixed && this.pending.length + text.length > MIXED_CHARS) this.encodePending();
    this.pending += text;
    if (this.pending.length >= PENDING_CHARS) this.encodePending();
  }

  /**
   * Text outside ASCII (../odata/text-sink.ts): it joins the pending text, which is encoded first
   * when it is all ASCII and long enough to be worth a call of its own; and ASCII that follows it
   * joins it only up to MIXED_CHARS.
   */
  appendApart(text: string): void {
    if (!this.pendingMixed && this.pending.length >= APART_CHARS) this.encodePending();
    this.pending += text;
    this.pendingMixed = true;
    if (this.pending.length >= PENDING_CHARS) this.encodePending();
  }

  private encodePending(): void {
    const text = this.pending;
    this.pending = '';
    this.pendingMixed = false;
    this.encode(text);
  }

  private encode(text: string): void {
    if (text.length * MAX_BYTES_PER_UNIT > this.buffer.length - this.used) {
      this.seal();
      if (text.length * MAX_BYTES_PER_UNIT > this.buffer.length) {
        this.full.push(Buffer.from(text, 'utf8'));
        return;
      }
    }
    this.used += this.buffer.write(text, this.used, 'utf8');
  }

  /** Moves the current buffer to the full ones; the next text goes into a fresh buffer. */
  private seal(): void {
    if (this.pending !== '') this.encodePending();
    if (this.used === 0) return;
    this.full.push(this.buffer.subarray(0, this.used));
    this.buffer = borrowBuffer();
    this.used = 0;
  }

  /**
   * Whether full buffers wait for drain(). A writer checks this after each entity and awaits
   * drain() only then: most entities fill no buffer, and an await per entity was 50 turns of the
   * microtask queue for a page of 50.
   */
  get filled(): boolean {
    return this.full.length > 0;
  }

  /** Sends the full buffers, waiting while the receiver is full. */
  async drain(): Promise<void> {
    while (this.full.length > 0) {
      const next = this.full.shift()!;
      await this.body.write(next);
    }
  }

  /**
   * Sends everything and ends the stream. The last buffer, when little of it is used, goes as an
   * exact copy and the buffer itself back to the spares (see spareBuffers).
   */
  async end(): Promise<void> {
    if (this.pending !== '') this.encodePending();
    let last: Buffer | undefined;
    if (this.used >= SEND_AS_IS_BYTES) last = this.buffer.subarray(0, this.used);
    else {
      // This buffer was never handed to the stream: only the copy leaves.
      if (this.used > 0) {
        last = Buffer.allocUnsafe(this.used);
        this.buffer.copy(last, 0, 0, this.used);
      } else last = this.full.pop();
      if (this.buffer.length === CHUNK_BYTES && spareBuffers.length < SPARE_BUFFERS) spareBuffers.push(this.buffer);
    }
    this.buffer = EMPTY;
    this.used = 0;
    await this.drain();
    this.body.end(last);
  }
}
