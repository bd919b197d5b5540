/**
 * Serves one OData request whose resource path is resolved and whose caller is known: the
 * service document, $metadata, an entity-set resource or a service operation. The same for a
 * request that came over HTTP (publicapi.ts) and for a query part of a $batch (batch-query.ts),
 * so that a GET answers alike in both.
 */
import { MEDIA, negotiate } from '../odata/negotiate';
import { renderServiceDocumentJson, renderServiceDocumentXml } from '../odata/service-document';
import type { ResourcePath } from '../odata/uri/resource-path';
import { admitRequest } from '../odata/uri/uri-kind';
import type { ODataRequest } from './request';
import { handleOperation } from './operations';
import { readResource, responseVersion } from './resources';
import { handleWrite } from './write';

/** Every path but $batch, which is a container of requests rather than a resource. */
export type ServedPath = Exclude<ResourcePath, { kind: 'batch' }>;

function serviceDocument(r: ODataRequest): void {
  const type = negotiate(r.header('accept'), r.options.system.get('$format'), MEDIA.serviceDocument);
  const body = type === 'application/json' ? renderServiceDocumentJson(r.app.model) : renderServiceDocumentXml(r.app.model, r.serviceRoot);
  // The same document in both versions: only its DataServiceVersion header follows the request.
  r.responder.send({ status: 200, contentType: `${type};charset=utf-8`, body, version: responseVersion(r, 1) });
}

function metadata(r: ODataRequest): void {
  // $metadata exists only as XML; an explicit $format asking for anything else is refused.
  if (r.options.system.has('$format')) negotiate(undefined, r.options.system.get('$format'), MEDIA.metadata);
  // Always 1.0, whatever the request asks: a $metadata answer's DataServiceVersion must equal the
  // m:DataServiceVersion the document declares.
  r.responder.send({ status: 200, contentType: 'application/xml;charset=utf-8', body: r.app.metadataXml });
}

/** `rawPath` is the path below the service root as sent (an Idempotency-Key covers it). */
export async function serveRequest(r: ODataRequest, path: ServedPath, rawPath: string): Promise<void> {
  // Which methods and query options the path takes: decided here, before anything runs.
  admitRequest(r.app.model, path, r.method, r.options);
  switch (path.kind) {
    case 'serviceDocument':
      return serviceDocument(r);
    case 'metadata':
      return metadata(r);
    case 'resource':
      // Awaited: an async function that returns a promise adopts it two turns of the microtask queue later.
      return await (r.method === 'GET' || r.method === 'HEAD' ? readResource(r, path) : handleWrite(r, path, rawPath));
    case 'operation':
      return handleOperation(r, path.operation);
  }
}
