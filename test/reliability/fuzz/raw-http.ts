/**
 * The HTTP layer over raw sockets, for what a well-behaved client never sends: garbage request
 * lines, huge and malformed headers, lying or malformed Content-Length, broken chunked encoding,
 * bodies cut short (then a half-close, or a dropped connection), pipelined requests with a bad
 * one, and slowloris: header bytes trickled, either finishing in time (the server answers) or
 * never (the server must time out with 408 and stay up).
 */
import type { FuzzContext, RawCase, RawStep } from './cases';
import { HANG_BOUND_MS } from './runner';
import { Gen, ODD_CHARACTERS, mutate } from './gen';

const bytes = (text: string, encoding: BufferEncoding = 'latin1') => Buffer.from(text, encoding);
const step = (text: string | Buffer, delayMs?: number): RawStep => ({ bytes: typeof text === 'string' ? bytes(text) : text, ...(delayMs ? { delayMs } : {}) });

function head(ctx: FuzzContext, requestLine: string, headers: readonly string[]): string {
  return `${requestLine}\r\nHost: 127.0.0.1\r\n${[...ctx.authLines, ...headers].map((h) => `${h}\r\n`).join('')}\r\n`;
}

const post = (ctx: FuzzContext) => `POST ${ctx.servicePath}/Products HTTP/1.1`;
const json = ['Content-Type: application/json', 'Accept: application/json'];
const PRODUCT = '{"Title":"raw","Price":"1","StockAmount":1}';

export function rawHttpCases(seed: number, count: number, ctx: FuzzContext): RawCase[] {
  const g = new Gen(seed);
  const cases: RawCase[] = [];
  const add = (name: string, steps: RawStep[], expect: RawCase['expect'], finish: RawCase['finish'] = 'keep', extra: Partial<RawCase> = {}) =>
    cases.push({ area: 'http', name, steps, expect, finish, boundMs: HANG_BOUND_MS, ...extra });
  for (let i = 0; i < count; i++) {
    switch (g.int(0, 21)) {
      case 0: {
        // Garbage request lines.
        const line = g.pick([
          'GET', 'GET /', 'GET / HTTP/9.9', 'GET / HTTP/1.1 extra', 'get / HTTP/1.1', 'G\u0000T / HTTP/1.1', `${'X'.repeat(g.int(10, 5000))} / HTTP/1.1`, 'GET  / HTTP/1.1', 'GET /\u00e9 HTTP/1.1',
          'PRI * HTTP/2.0', 'CONNECT 127.0.0.1:1 HTTP/1.1', 'GET http://evil/ HTTP/1.1', 'GET * HTTP/1.1', '/ HTTP/1.1', 'HTTP/1.1 200 OK', '\u0016\u0003\u0001\u0000', 'GET /\r HTTP/1.1',
          `GET ${ctx.servicePath}/Products?$filter=${'('.repeat(5000)} HTTP/1.1`, `GET ${ctx.servicePath}/${'a'.repeat(g.int(4000, 20000))} HTTP/1.1`, 'GET /%00 HTTP/1.1', 'GET /%zz HTTP/1.1',
          'DELETE /health HTTP/1.1', 'OPTIONS * HTTP/1.1', 'TRACE / HTTP/1.1', 'M-SEARCH * HTTP/1.1', 'GET /health HTTP/1.0',
        ]);
        const text = g.chance(0.3) ? mutate(g, line) : line;
        add(`request line ${JSON.stringify(text.slice(0, 40))}`, [step(`${text}\r\nHost: x\r\n\r\n`)], 'either');
        break;
      }
      case 1: {
        // Random bytes, sometimes after a valid start.
        const junk = Buffer.from(Array.from({ length: g.int(1, 400) }, () => g.int(0, 255)));
        add('random bytes', [step(g.chance(0.5) ? Buffer.concat([bytes('GET /health HTTP/1.1\r\n'), junk, bytes('\r\n\r\n')]) : Buffer.concat([junk, bytes('\r\n\r\n')]))], 'either');
        break;
      }
      case 2: {
        // Huge or malformed headers.
        const header = g.pick([
          `X-Big: ${'y'.repeat(g.int(17_000, 60_000))}`, ...['X-Many: z'], `Cookie: ${'a=b; '.repeat(5000)}`, 'NoColon', ': empty-name', 'Bad Name: x', 'X-Null: a\u0000b', ' folded: x', 'X-Ctl: \u0001',
          'Content-Type: application/json\r\nContent-Type: text/xml', `Accept: ${'application/json;q=0.5,'.repeat(1000)}`, 'Host: a\r\nHost: b', `DataServiceVersion: ${'9'.repeat(500)}.0`,
          `SubscriptionToken: ${'\u00ff'.repeat(50)}`, 'Transfer-Encoding: chunked, identity', 'Expect: 100-continue', 'Connection: upgrade\r\nUpgrade: websocket',
        ]);
        const many = header === 'X-Many: z' ? Array.from({ length: g.int(2000, 5000) }, (_, k) => `X-H${k}: z`) : [header];
        add(`headers ${JSON.stringify(header.slice(0, 30))}`, [step(head(ctx, `GET ${ctx.servicePath}/Products?$top=1 HTTP/1.1`, [...many, 'Accept: application/json']))], 'either');
        break;
      }
      case 3: {
        // Bad Content-Length values.
        const value = g.pick(['-1', 'abc', '1e3', '0x10', ' 5', '5 5', '99999999999999999999', '18446744073709551616', '', '+5', '5,6', '１']);
        add(`Content-Length ${JSON.stringify(value)}`, [step(head(ctx, post(ctx), [...json, `Content-Length: ${value}`]) + PRODUCT)], 'either', 'end');
        break;
      }
      case 4: {
        // Two differing lengths, or a length with chunking.
        const pair = g.pick([[`Content-Length: ${PRODUCT.length}`, 'Content-Length: 3'], [`Content-Length: ${PRODUCT.length}`, 'Transfer-Encoding: chunked']]);
        add(`framing ${pair.join(' + ')}`, [step(head(ctx, post(ctx), [...json, ...pair]) + PRODUCT)], 'either', 'end');
        break;
      }
      case 5: {
        // Bad chunked encoding.
        const body = g.pick([
          `zz\r\n${PRODUCT}\r\n0\r\n\r\n`, `${PRODUCT.length.toString(16)}\r\n${PRODUCT}0\r\n\r\n`, `ffffffffffffffff\r\n${PRODUCT}\r\n0\r\n\r\n`, `-5\r\nabc\r\n0\r\n\r\n`, `5;${'x'.repeat(10_000)}\r\nabcde\r\n0\r\n\r\n`,
          `${PRODUCT.length.toString(16)}\r\n${PRODUCT}\r\n`, `100\r\n${PRODUCT}`, `${PRODUCT.length.toString(16)}\n${PRODUCT}\n0\n\n`, `0\r\nX-Trailer: ${'t'.repeat(20_000)}\r\n\r\n`, `1\r\n{\r\n1\r\n"\r\n0\r\n\r\n`,
          `${(2_000_000).toString(16)}\r\n${'x'.repeat(1000)}`,
        ]);
        // Kept open, a body whose chunks promise more than is sent never completes: the request timeout answers it.
        const finish = g.pick(['end', 'end', 'destroy', 'keep'] as const);
        add(`chunked ${JSON.stringify(body.slice(0, 20))}`, [step(head(ctx, post(ctx), [...json, 'Transfer-Encoding: chunked']) + body)], 'either', finish,
          finish === 'keep' ? { boundMs: ctx.requestTimeoutMs + 2000, waitsForTimeout: true } : {});
        break;
      }
      case 6: {
        // A body shorter than its Content-Length, then a half-close: the server answers 400 or closes.
        const cut = g.int(0, PRODUCT.length - 1);
        add(`truncated body, half-close at ${cut}`, [step(head(ctx, post(ctx), [...json, `Content-Length: ${PRODUCT.length + g.int(1, 1000)}`]) + PRODUCT.slice(0, cut))], 'either', 'end');
        break;
      }
      case 7: {
        // A body shorter than its Content-Length, then the connection dropped: nothing to answer.
        add('truncated body, dropped', [step(head(ctx, post(ctx), [...json, `Content-Length: ${g.int(100, 1_000_000)}`]) + PRODUCT.slice(0, g.int(0, 20)))], 'none', 'destroy');
        break;
      }
      case 8: {
        // Headers cut off, then dropped or half-closed.
        const text = head(ctx, `GET ${ctx.servicePath}/Products HTTP/1.1`, json);
        add('headers cut', [step(text.slice(0, g.int(1, text.length - 2)))], g.chance(0.5) ? 'either' : 'none', g.pick(['end', 'destroy']));
        break;
      }
      case 9: {
        // Pipelined: a good request, then a bad one; the good one is answered.
        const good = head(ctx, `GET ${ctx.servicePath}/Products?$top=1 HTTP/1.1`, json);
        add('pipelined good then bad', [step(good + g.pick(['GARBAGE\r\n\r\n', `${post(ctx)}\r\nContent-Length: x\r\n\r\n`, '\u0000\u0001\u0002']))], 'answer');
        break;
      }
      case 10: {
        // Slowloris that finishes in time: header lines trickled, then the request completes.
        const text = head(ctx, `GET ${ctx.servicePath}/Products?$top=1 HTTP/1.1`, json);
        const pieces = Math.min(g.int(3, 6), text.length);
        const size = Math.ceil(text.length / pieces);
        const steps = Array.from({ length: pieces }, (_, k) => step(text.slice(k * size, (k + 1) * size), k === 0 ? 0 : Math.floor((ctx.headersTimeoutMs * 0.4) / pieces)));
        add('slowloris completing in time', steps, 'answer');
        break;
      }
      case 11: {
        // Slowloris that never finishes: a byte at a time past the headers timeout; the server must answer 408.
        const text = head(ctx, `GET ${ctx.servicePath}/Products HTTP/1.1`, [`X-Slow: ${g.repeat(40, () => g.pick(ODD_CHARACTERS.filter((c) => c > ' ' && c < '\u007f')))}`]);
        const trickle = Math.ceil((ctx.headersTimeoutMs * 2.5) / 100);
        const steps = [step(text.slice(0, 20)), ...Array.from({ length: trickle }, (_, k) => step(text.slice(20 + k, 21 + k), 100))];
        add('slowloris never finishing', steps, 'answer', 'keep', { boundMs: ctx.headersTimeoutMs * 2 + 1000, waitsForTimeout: true });
        break;
      }
      default: {
        // The cheap kinds again, more often: a bad request line, a bad length, a cut body.
        const kind = g.int(0, 2);
        if (kind === 0) add('request line junk', [step(`${mutate(g, `GET ${ctx.servicePath}/Products HTTP/1.1`)}\r\nHost: x\r\n\r\n`)], 'either');
        else if (kind === 1) add('Content-Length junk', [step(head(ctx, post(ctx), [...json, `Content-Length: ${mutate(g, String(PRODUCT.length))}`]) + PRODUCT)], 'either', 'end');
        else add('body cut, half-close', [step(head(ctx, post(ctx), [...json, `Content-Length: ${PRODUCT.length + 5}`]) + PRODUCT)], 'either', 'end');
      }
    }
  }
  return cases;
}
