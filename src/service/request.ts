/**
 * One OData request as the resource handlers see it, whether it came over HTTP or as a part of a
 * $batch: its parsed path and options, its headers and body, who it acts for, and where its
 * answer goes.
 */
import type { RequestWeight } from './admission';
import { ODataError } from '../odata/errors';
import type { VersionHeaders } from '../odata/negotiate';
import type { QueryOptions } from '../odata/uri/query-options';
import type { ResourcePath } from '../odata/uri/resource-path';
import type { App } from './app';
import type { ReadGuard } from '../store/store';
import type { Responder } from './responder';
import { charsetOf } from '../odata/batch/media-type';

export type ResourcePathOf<K extends ResourcePath['kind']> = Extract<ResourcePath, { kind: K }>;

export interface ODataRequest {
  readonly app: App;
  readonly accountId: number;
  /** What the request may cost (admission.ts weightOf); light when absent (a $batch part). */
  readonly weight?: RequestWeight;
  /**
   * When set, accountId is only claimed: the read or write of the resource runs this credential
   * check as its first statement (ReadGuard, WriteOptions.guard), and nothing else may take
   * effect before it passed.
   */
  readonly credentialGuard?: ReadGuard;
  /** Where the request came from (the audit trail names it). */
  readonly clientAddress: string;
  /** The verb the request stands for (after X-HTTP-Method tunnelling). */
  readonly method: string;
  readonly options: QueryOptions;
  readonly versions: VersionHeaders;
  /** Absolute, without a trailing slash: http://host/publicapi/v1/api.svc */
  readonly serviceRoot: string;
  /** A request header by lower-case name (the first, when sent more than once). */
  header(name: string): string | undefined;
  /** The body, read once, refused above the limit. */
  body(): Promise<Buffer>;
  readonly responder: Responder;
}

/** The media type of the request body, lower-case and without parameters ('' when absent). */
export function bodyMediaTypeOf(r: ODataRequest): string {
  return (r.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The charset parameter of the request body's Content-Type, as sent; undefined without one. */
export function bodyCharsetOf(r: ODataRequest): string | undefined {
  return charsetOf(r.header('content-type'));
}

/** Where the OData service answers, below the origin. */
export const SERVICE_PATH = '/publicapi/v1/api.svc';

/** A body above the limit: the same answer over HTTP and inside a $batch. */
export function tooLarge(limit: number): ODataError {
  return new ODataError(413, `The request body is larger than the limit of ${limit} bytes.`);
}
