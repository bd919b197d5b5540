/**
 * What a fuzz case is, and what the generators of every area get to know about the live
 * service (ids that exist, a foreign account's id, where an outside URL points).
 */

/** The format an error answer must be written in; 'any' where the case garbles the very choice. */
export type ErrorFormat = 'json' | 'xml' | 'any';

/** A request sent through Node's HTTP client (well-framed HTTP; anything inside it). */
export interface HttpCase {
  readonly area: string;
  readonly method: string;
  /** Path and query, from the origin ('/publicapi/v1/api.svc/Products?…'). */
  readonly target: string;
  /** Headers of the case; the seller's credentials are added when it is sent. */
  readonly headers: Record<string, string>;
  readonly body?: string | Buffer;
  readonly errorFormat: ErrorFormat;
  /** The status the case must get whatever else happens (a foreign key: 404). */
  readonly mustBe?: number;
  /** A $batch: a 202 must be a complete multipart answer without an inner 5xx. */
  readonly batch?: boolean;
}

/** One write of a raw-socket case, optionally after a pause (slowloris trickles). */
export interface RawStep {
  readonly bytes: Buffer;
  readonly delayMs?: number;
}

/**
 * A request written byte by byte over a raw socket, for what Node's client will not send:
 * broken framing, lying lengths, trickled headers.
 */
export interface RawCase {
  readonly area: string;
  readonly name: string;
  readonly steps: readonly RawStep[];
  /** After the last step: 'end' half-closes, 'destroy' drops the connection, 'keep' leaves it open. */
  readonly finish: 'end' | 'destroy' | 'keep';
  /** 'answer': an HTTP answer must come; 'either': an answer or a plain close; 'none': nothing is awaited. */
  readonly expect: 'answer' | 'either' | 'none';
  /**
   * How long after the last write the answer may take: the hang bound, or more where the answer
   * is the server's own timeout (a request that never completes).
   */
  readonly boundMs: number;
  /** Whether the answer is a timeout by design (counted apart from the other answers). */
  readonly waitsForTimeout?: boolean;
}

export type FuzzCase = HttpCase | RawCase;

export const isRaw = (c: FuzzCase): c is RawCase => 'steps' in c;

/** What the generators may use: the service path, credentials for raw requests, ids. */
export interface FuzzContext {
  readonly servicePath: string;
  /** Header lines that authenticate as the seller (for raw requests). */
  readonly authLines: readonly string[];
  /** Products, catalogs and a specific of the seller. */
  readonly productIds: readonly string[];
  readonly catalogIds: readonly string[];
  readonly specificIds: readonly string[];
  /** A product of another account: must answer exactly like a missing one. */
  readonly foreignProductId: string;
  /** An HTTP URL nobody should ever fetch (the XXE target); hits are counted. */
  readonly trapUrl: string;
  /** The server's headers timeout (slowloris cases outlast it). */
  readonly headersTimeoutMs: number;
  /** The server's request timeout (bodies that never complete outlast it). */
  readonly requestTimeoutMs: number;
}
