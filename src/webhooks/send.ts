/**
 * One HTTP attempt of a delivery: a POST of the signed body to the endpoint, connected through
 * the address guard's lookup (so the address checked is the one connected to), bounded by a
 * timeout over the whole exchange. Never throws: the outcome says what happened.
 */
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, refusedHost, type EndpointRules } from './address-guard';

export interface AttemptOutcome {
  /** Any 2xx. */
  readonly ok: boolean;
  /** The HTTP status, or null when none arrived (refused, unreachable, timed out). */
  readonly status: number | null;
  /** What went wrong, for the seller (null on success). */
  readonly error: string | null;
}

/** Keep-alive agents: a busy endpoint's deliveries reuse a connection. */
const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true, maxSockets: 64 }) };

/** The part of a receiver's answer kept for the seller to read. */
const KEPT_ANSWER_CHARS = 200;

export function attempt(url: string, headers: Record<string, string>, body: string, timeoutMs: number, rules: EndpointRules): Promise<AttemptOutcome> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ ok: false, status: null, error: 'the endpoint URL is not valid' });
  }
  const refused = refusedHost(target, rules);
  if (refused) return Promise.resolve({ ok: false, status: null, error: `refused: ${refused}` });
  const secure = target.protocol === 'https:';
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const done = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = (secure ? https : http).request(target, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      lookup: guardedLookup(rules) as unknown as http.RequestOptions['lookup'],
      headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), 'User-Agent': 'catalogue-service-webhooks/1' },
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, status: null, error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => done({ ok: false, status: null, error: error.message.slice(0, KEPT_ANSWER_CHARS) }));
    req.on('response', (res) => {
      let answer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (answer.length < KEPT_ANSWER_CHARS) answer += chunk;
      });
      res.on('error', () => undefined);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        done({ ok, status, error: ok ? null : `HTTP ${status}${answer ? `: ${answer.slice(0, KEPT_ANSWER_CHARS)}` : ''}` });
      });
    });
    req.end(body);
  });
}
