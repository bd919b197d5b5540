/**
 * A client driven by the service's OpenAPI document alone: it builds each request from the
 * document's server URL, path template and declared parameters, sends the credentials where the
 * security schemes say (a header, a cookie), and checks each answer against the response schema
 * the document declares for that status (with ajv, which takes OpenAPI 3.0's `nullable`).
 */
import Ajv, { type ValidateFunction } from 'ajv';
import { request, type HttpResponse } from '../support/http-client';

type Obj = Record<string, any>;

/** A value for each security scheme of the document, by the scheme's name. */
export type Credentials = Readonly<Record<string, string>>;

export interface Answer {
  readonly res: HttpResponse;
  readonly body: Obj;
}

export class OpenApiClient {
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    readonly doc: Obj,
    private readonly origin: string,
    private readonly credentials: Credentials,
  ) {
    // strict off: OpenAPI keywords such as `example` are not JSON Schema. The formats the
    // document uses are checked for what they say.
    this.ajv = new Ajv({ strict: false, allErrors: true });
    this.ajv.addFormat('int64', { type: 'string', validate: /^-?[0-9]+$/ });
    this.ajv.addFormat('decimal', { type: 'string', validate: /^-?[0-9]+(\.[0-9]+)?$/ });
    this.ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  }

  /** The operation object of `method` on the path template, or a failure naming what is missing. */
  operation(path: string, method: string): Obj {
    const op = this.doc.paths[path]?.[method];
    if (!op) throw new Error(`the document has no ${method.toUpperCase()} ${path}`);
    return op;
  }

  /** Every parameter of the operation (path-level ones included), with $refs resolved. */
  parameters(path: string, method: string): Obj[] {
    const all = [...(this.doc.paths[path].parameters ?? []), ...(this.operation(path, method).parameters ?? [])];
    return all.map((p: Obj) => (p.$ref ? this.resolve(p.$ref) : p));
  }

  private resolve(pointer: string): Obj {
    let node: any = this.doc;
    for (const part of pointer.replace(/^#\//, '').split('/')) node = node[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (node === undefined) throw new Error(`the document has no ${pointer}`);
    return node;
  }

  /** Headers that carry the credentials as the document's security requirement says. */
  private securityHeaders(op: Obj): Record<string, string> {
    const headers: Record<string, string> = {};
    const cookies: string[] = [];
    for (const requirement of op.security ?? this.doc.security ?? []) {
      for (const name of Object.keys(requirement)) {
        const scheme = this.doc.components.securitySchemes[name];
        const value = this.credentials[name];
        if (value === undefined) throw new Error(`no credential given for the security scheme ${name}`);
        if (scheme.type !== 'apiKey') throw new Error(`security scheme ${name} is ${scheme.type}, which this client does not speak`);
        if (scheme.in === 'header') headers[scheme.name] = value;
        else if (scheme.in === 'cookie') cookies.push(`${scheme.name}=${value}`);
        else throw new Error(`security scheme ${name} is in ${scheme.in}`);
      }
    }
    if (cookies.length) headers.Cookie = cookies.join('; ');
    return headers;
  }

  /**
   * Sends `method` on the path template with the given parameter values. Every value must be a
   * parameter the operation declares; every required one must be given.
   */
  async call(path: string, method: string, values: Readonly<Record<string, string | number>> = {}, body?: unknown): Promise<Answer> {
    const op = this.operation(path, method);
    const declared = this.parameters(path, method);
    for (const name of Object.keys(values)) {
      if (!declared.some((p) => p.name === name)) throw new Error(`${method.toUpperCase()} ${path} declares no parameter ${name}`);
    }
    let target = path;
    const query = new URLSearchParams();
    for (const p of declared) {
      const value = values[p.name];
      if (value === undefined) {
        if (p.required) throw new Error(`${method.toUpperCase()} ${path} requires ${p.name}`);
        continue;
      }
      if (p.in === 'path') target = target.replace(`{${p.name}}`, encodeURIComponent(String(value)));
      else if (p.in === 'query') query.set(p.name, String(value));
    }
    const media = Object.keys(op.requestBody?.content ?? {})[0];
    const headers: Record<string, string> = { Accept: 'application/json', ...this.securityHeaders(op), ...(media && body !== undefined ? { 'Content-Type': media } : {}) };
    const qs = query.toString();
    const url = `${this.origin}${this.doc.servers[0].url}${target}${qs ? `?${qs.replace(/\+/g, '%20')}` : ''}`;
    const res = await request(url, { method: method.toUpperCase(), headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { res, body: res.body && /json/.test(String(res.headers['content-type'])) ? (JSON.parse(res.body) as Obj) : {} };
  }

  /**
   * The errors of `answer` against the schema the document declares for its status (the
   * `default` response otherwise), or [] when it conforms.
   */
  check(path: string, method: string, answer: Answer): string[] {
    const responses = this.operation(path, method).responses;
    const status = String(answer.res.status);
    const declared = responses[status] ? status : 'default';
    const response = responses[declared].$ref ? this.resolve(responses[declared].$ref) : responses[declared];
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return [];
    const key = `${method} ${path} ${declared}`;
    let validate = this.validators.get(key);
    if (!validate) {
      // The schema with the document's components beside it, so its local $refs resolve.
      validate = this.ajv.compile({ ...schema, components: this.doc.components });
      this.validators.set(key, validate);
    }
    return validate(answer.body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  }
}
