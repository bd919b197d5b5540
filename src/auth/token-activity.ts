/**
 * What each SubscriptionToken has been doing, for the seller console's integrations page: when
 * it was last used and by which client (User-Agent), how many requests and errors it had in the
 * last 24 hours, and its last errors with their request ids.
 *
 * Cost on the hot path: one Map lookup and a few integer writes per API request (at the end of
 * its answer), no statement. The last use is written to the token's row at most once a minute
 * per token and process, outside the request (after it answered), as the session's last-seen
 * time is; so the stored "last used" may be up to a minute behind. The counters and the recent
 * errors are this process's own (kept in memory: 24 hourly buckets and a ring of the last
 * errors per token), so they start again when the process restarts and, with several
 * processes, each shows its own share. Memory is bounded: at most MAX_TOKENS tokens are
 * followed (the least recently used is dropped), each with fixed-size arrays.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { Store } from '../store/store';
import { touchSubscriptionToken } from './directory';

const HOUR_MS = 3600_000;
const HOURS = 24;
/** How many recent errors each token keeps. */
export const RECENT_ERRORS = 10;
/** How often a token's last use is written to its row, at most. */
export const PERSIST_INTERVAL_MS = 60_000;
/** Tokens followed at once: more would only be strangers' guesses (well-formed but unknown tokens). */
const MAX_TOKENS = 10_000;
/** A User-Agent is kept this long at most. */
const MAX_USER_AGENT = 200;

export interface TokenError {
  readonly at: number;
  readonly requestId: string;
  readonly status: number;
  readonly method: string;
  /** The path and query of the request, shortened. */
  readonly path: string;
}

export interface TokenUse {
  readonly lastUsedAt: number;
  readonly userAgent: string | null;
  readonly requests24h: number;
  readonly errors24h: number;
  /** Newest first. */
  readonly recentErrors: readonly TokenError[];
}

class TokenState {
  lastUsedAt = 0;
  userAgent: string | null = null;
  persistedAt = 0;
  /** Per hour bucket (hour number mod 24): the hour it counts, its requests and its errors. */
  readonly hourOf = new Float64Array(HOURS).fill(-1);
  readonly requests = new Uint32Array(HOURS);
  readonly errors = new Uint32Array(HOURS);
  readonly recent: TokenError[] = [];
  next = 0;
}

export class TokenActivity {
  private readonly tokens = new Map<string, TokenState>();

  constructor(
    private readonly store: Store | undefined,
    private readonly clock: Clock,
    private readonly log?: Logger,
  ) {}

  /** One finished API request that presented the token (its hash). */
  record(tokenHash: string, request: { readonly userAgent: string | undefined; readonly status: number; readonly requestId: string; readonly method: string; readonly path: string }): void {
    const now = this.clock.now();
    let state = this.tokens.get(tokenHash);
    if (state) {
      // Most recently used last: the first key is the one to drop when full.
      this.tokens.delete(tokenHash);
    } else {
      state = new TokenState();
      if (this.tokens.size >= MAX_TOKENS) this.tokens.delete(this.tokens.keys().next().value!);
    }
    this.tokens.set(tokenHash, state);
    state.lastUsedAt = now;
    state.userAgent = request.userAgent === undefined ? null : request.userAgent.slice(0, MAX_USER_AGENT);
    const hour = Math.floor(now / HOUR_MS);
    const slot = hour % HOURS;
    if (state.hourOf[slot] !== hour) {
      state.hourOf[slot] = hour;
      state.requests[slot] = 0;
      state.errors[slot] = 0;
    }
    state.requests[slot]! += 1;
    if (request.status >= 400) {
      state.errors[slot]! += 1;
      const error = { at: now, requestId: request.requestId, status: request.status, method: request.method, path: request.path.slice(0, 200) };
      if (state.recent.length < RECENT_ERRORS) state.recent.push(error);
      else state.recent[state.next] = error;
      state.next = (state.next + 1) % RECENT_ERRORS;
    }
    if (this.store && now - state.persistedAt >= PERSIST_INTERVAL_MS) {
      state.persistedAt = now;
      const { store } = this;
      const userAgent = state.userAgent;
      // After the answer, outside any request: a failure costs only this record.
      store.writeDirectory((tx) => touchSubscriptionToken(tx, tokenHash, now, userAgent)).catch((error: unknown) => {
        this.log?.warn({ err: error }, 'could not record a token\'s last use');
      });
    }
  }

  /** What this process saw of the token; undefined when it saw nothing. */
  useOf(tokenHash: string): TokenUse | undefined {
    const state = this.tokens.get(tokenHash);
    if (!state) return undefined;
    const hour = Math.floor(this.clock.now() / HOUR_MS);
    let requests24h = 0;
    let errors24h = 0;
    for (let slot = 0; slot < HOURS; slot++) {
      if (state.hourOf[slot]! > hour - HOURS) {
        requests24h += state.requests[slot]!;
        errors24h += state.errors[slot]!;
      }
    }
    const recentErrors = [...state.recent].sort((a, b) => b.at - a.at || (a.requestId < b.requestId ? 1 : -1));
    return { lastUsedAt: state.lastUsedAt, userAgent: state.userAgent, requests24h, errors24h, recentErrors };
  }
}
