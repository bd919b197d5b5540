/**
 * The two wire formats behind one interface, so request handlers never branch on JSON vs Atom:
 * negotiation picks a WireFormat, and everything written goes through it.
 */
import type { EdmType } from '../model/types';
import type { EdmValue } from './edm';
import type { EntityRecord, WriteContext } from './entity';
import type { TextSink } from './text-sink';
import * as atom from './atom/writer';
import * as json from './json/writer';

export interface FeedOptions {
  readonly title: string;
  /** Absolute URI of the collection. */
  readonly id: string;
  /** Relative to the service root. */
  readonly selfHref: string;
  readonly count?: bigint;
  /** The feed tracks changes (see FeedDelta). */
  readonly tracking?: boolean;
}

/** The end of a feed that tracks changes: removed entities, and on the last page the delta link. */
export interface FeedEndDelta extends atom.FeedDelta {
  readonly setName: string;
}

export interface WireFormat {
  readonly json: boolean;
  /** Content-Type of entities and feeds. */
  readonly entityContentType: string;
  /** Content-Type of properties, links and operation results. */
  readonly dataContentType: string;
  /** A single-entity document, as the UTF-8 bytes of a response body. */
  entry(ctx: WriteContext, rec: EntityRecord): Buffer;
  feedStart(ctx: WriteContext, opts: FeedOptions): string;
  /** One entity of a feed, written to a sink; `first` tells whether a separator is needed. */
  feedEntry(ctx: WriteContext, rec: EntityRecord, first: boolean, sink: TextSink): void;
  feedEnd(ctx: WriteContext, next?: string, delta?: FeedEndDelta): string;
  property(name: string, type: EdmType, value: EdmValue): string;
  link(uri: string): string;
  links(ctx: WriteContext, uris: readonly string[], count?: bigint): string;
  operationResult(name: string, type: EdmType, value: EdmValue): string;
}

export const JSON_FORMAT: WireFormat = {
  json: true,
  entityContentType: 'application/json;charset=utf-8',
  dataContentType: 'application/json;charset=utf-8',
  entry: json.jsonEntityDocumentBytes,
  feedStart: (ctx, opts) => json.jsonFeedStart(ctx, opts.count === undefined ? {} : { count: opts.count }),
  feedEntry: (ctx, rec, first, sink) => {
    if (!first) sink.append(json.jsonFeedSeparator);
    json.jsonEntityTo(ctx, rec, sink);
  },
  feedEnd: (ctx, next, delta) => json.jsonFeedEnd(ctx, { ...(next === undefined ? {} : { next }), ...(delta ? { delta } : {}) }),
  property: json.jsonPropertyDocument,
  link: json.jsonLinkDocument,
  links: (ctx, uris, count) => json.jsonLinksDocument(ctx, uris, count === undefined ? {} : { count }),
  operationResult: json.jsonOperationResult,
};

function atomFormat(entityType: string, dataType: string): WireFormat {
  return {
    json: false,
    entityContentType: `${entityType};charset=utf-8`,
    dataContentType: `${dataType};charset=utf-8`,
    entry: atom.atomEntryDocumentBytes,
    feedStart: (ctx, opts) => atom.atomFeedStart(ctx, opts),
    feedEntry: (ctx, rec, _first, sink) => atom.atomEntryTo(ctx, rec, sink),
    feedEnd: (_ctx, next, delta) => atom.atomFeedEnd({ ...(next === undefined ? {} : { next }), ...(delta ? { delta } : {}) }),
    property: atom.xmlPropertyDocument,
    link: atom.xmlLinkDocument,
    links: (_ctx, uris, count) => atom.xmlLinksDocument(uris, count === undefined ? {} : { count }),
    operationResult: atom.xmlOperationResult,
  };
}

const ATOM = atomFormat('application/atom+xml', 'application/xml');
const APPLICATION_XML = atomFormat('application/xml', 'application/xml');
const TEXT_XML = atomFormat('text/xml', 'text/xml');

/** The format for a negotiated media type (one of MEDIA.entity or MEDIA.xmlOrJson). */
export function wireFormatFor(mediaType: string): WireFormat {
  switch (mediaType) {
    case 'application/json':
      return JSON_FORMAT;
    case 'application/xml':
      return APPLICATION_XML;
    case 'text/xml':
      return TEXT_XML;
    default:
      return ATOM;
  }
}
