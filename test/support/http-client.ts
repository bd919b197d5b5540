/** A raw HTTP/1.1 client over node:http: any method, exact headers and bytes, nothing added. */
import http from 'node:http';

export interface HttpResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export interface HttpRequest {
  readonly method?: string;
  readonly headers?: Record<string, string | string[]>;
  readonly body?: string | Buffer;
  /** The local address to send from: 127.0.0.x stand for different clients in one test process. */
  readonly localAddress?: string;
  /** Fails the request when no answer has come within this many ms (a port that holds it open). */
  readonly timeoutMs?: number;
}

export function request(url: string, init: HttpRequest = {}): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...(init.headers ?? {}) };
    // Node sends a DELETE body with neither Content-Length nor chunking; say how long it is.
    if (init.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length' || h.toLowerCase() === 'transfer-encoding')) {
      headers['Content-Length'] = String(Buffer.byteLength(init.body));
    }
    const req = http.request(url, { method: init.method ?? 'GET', headers, agent: false, ...(init.localAddress ? { localAddress: init.localAddress } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (init.timeoutMs !== undefined) req.setTimeout(init.timeoutMs, () => req.destroy(new Error(`no answer from ${url} within ${init.timeoutMs} ms`)));
    req.end(init.body);
  });
}
