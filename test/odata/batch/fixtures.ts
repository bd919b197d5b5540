/**
 * Batch request bodies shared by the batch tests: the connector's product deletion exactly as
 * the connector sends its bytes (docs/protocol.md, "$batch"), and small helpers to build others.
 */
import { connectorBoundary, connectorPieces } from '../../support/connector-batch-reader';

export const SERVICE_PATH = '/publicapi/v1/api.svc';
export const CONNECTOR_ORIGIN = 'https://shop.example.com';
export const CONNECTOR_BATCH_BOUNDARY = 'batch_36522ad7-fc75-4b56-8c71-56071383e77b';
export const CONNECTOR_CHANGESET_BOUNDARY = 'changeset_77162fcd-b8da-41ac-a9f8-9357efbbd621';
/** The connector's request Content-Type: unquoted boundary. */
export const CONNECTOR_CONTENT_TYPE = `multipart/mixed; boundary=${CONNECTOR_BATCH_BOUNDARY}`;

/** What the connector zeroes a variation's stock with; it ends in "\n\r" before the delimiter's CRLF. */
export const ZERO_STOCK_BODY = '{"StockAmount":"0"}\n\r';

export interface ConnectorOperation {
  readonly method: 'DELETE' | 'MERGE';
  /** Below the service root. */
  readonly path: string;
}

/**
 * The 17 operations of the connector's product deletion: each ProductSpecifics DELETE twice, the
 * other parts deleted, each variation's stock zeroed twice, the variation parts deleted and the
 * product last, while variations and catalog links still exist.
 */
export const CONNECTOR_DELETE_PRODUCT: readonly ConnectorOperation[] = [
  { method: 'DELETE', path: '/ProductSpecifics(101L)' },
  { method: 'DELETE', path: '/ProductSpecifics(101L)' },
  { method: 'DELETE', path: '/ProductSpecifics(102L)' },
  { method: 'DELETE', path: '/ProductSpecifics(102L)' },
  { method: 'DELETE', path: '/OptionalProductAttributes(201L)' },
  { method: 'DELETE', path: '/DiscountOffers(301L)' },
  { method: 'DELETE', path: '/ProductImages(401L)' },
  { method: 'DELETE', path: '/ProductImages(402L)' },
  { method: 'MERGE', path: '/ProductVariations(7L)' },
  { method: 'MERGE', path: '/ProductVariations(7L)' },
  { method: 'MERGE', path: '/ProductVariations(8L)' },
  { method: 'MERGE', path: '/ProductVariations(8L)' },
  { method: 'DELETE', path: '/ProductVariationSpecifics(501L)' },
  { method: 'DELETE', path: '/ProductVariationSpecifics(502L)' },
  { method: 'DELETE', path: '/ProductVariationPictures(601L)' },
  { method: 'DELETE', path: '/ProductVariationPictures(602L)' },
  { method: 'DELETE', path: '/Products(1L)' },
];

/**
 * One application/http operation of the connector's changeset, from its delimiter line on. A
 * DELETE ends with its empty line and the next delimiter follows with no CRLF of its own; a
 * MERGE body ends in "\n\r", then the delimiter's CRLF, and its Content-Length counts those
 * four stray bytes too.
 */
export function connectorOperation(operation: ConnectorOperation, contentId: number, lineBreak = '\r\n'): string {
  const n = lineBreak;
  let text =
    `--${CONNECTOR_CHANGESET_BOUNDARY}${n}` +
    `Content-Type: application/http${n}` +
    `Content-Transfer-Encoding: binary${n}` +
    n +
    `${operation.method} ${CONNECTOR_ORIGIN}${SERVICE_PATH}${operation.path} HTTP/1.1${n}` +
    `Accept: application/json${n}` +
    `Content-ID: ${contentId}${n}` +
    `Content-Type: application/json${n}`;
  if (operation.method === 'MERGE') {
    // The connector's count: the body and the line break of the delimiter after it.
    text += `Content-Length: ${Buffer.byteLength(ZERO_STOCK_BODY) + Buffer.byteLength(n)}${n}` + n + ZERO_STOCK_BODY + n;
  } else {
    text += n;
  }
  return text;
}

/** The connector's whole request body; `lineBreak` '\n' makes the bare-LF variant. */
export function connectorBody(operations: readonly ConnectorOperation[] = CONNECTOR_DELETE_PRODUCT, lineBreak = '\r\n'): Buffer {
  const n = lineBreak;
  const changeset =
    operations.map((operation, index) => connectorOperation(operation, index + 1, lineBreak)).join('') +
    `--${CONNECTOR_CHANGESET_BOUNDARY}--${n}`;
  return Buffer.from(
    `--${CONNECTOR_BATCH_BOUNDARY}${n}` +
      `Content-Type: multipart/mixed; boundary=${CONNECTOR_CHANGESET_BOUNDARY}${n}` +
      `Content-Length: ${Buffer.byteLength(changeset)}${n}` +
      n +
      changeset +
      // The extra empty line between the two closings.
      n +
      `--${CONNECTOR_BATCH_BOUNDARY}--${n}`,
    'latin1',
  );
}

/** An application/http part (MIME headers, empty line, request) without its delimiter. */
export function httpPart(requestLine: string, headers: readonly string[] = [], body = '', partHeaders: readonly string[] = []): string {
  return [
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    ...partHeaders,
    '',
    requestLine,
    ...headers,
    '',
    body,
  ].join('\r\n');
}

/** A multipart body of `parts` (each without delimiters) with CRLF framing. */
export function multipart(boundary: string, parts: readonly string[]): string {
  return parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('') + `--${boundary}--\r\n`;
}

/** A changeset part (MIME header, empty line, nested multipart) without its outer delimiter. */
export function changesetPart(boundary: string, operations: readonly string[]): string {
  return `Content-Type: multipart/mixed; boundary=${boundary}\r\n\r\n${multipart(boundary, operations)}`;
}

/** Shorthand for a batch request: boundary `batch_b`, returned with its Content-Type. */
export function batch(parts: readonly string[]): { contentType: string; body: Buffer } {
  return { contentType: 'multipart/mixed; boundary=batch_b', body: Buffer.from(multipart('batch_b', parts), 'utf8') };
}

/** The parts the connector finds in a written answer (../../support/connector-batch-reader.ts). */
export function splitLikeTheConnector(contentType: string, body: Buffer): string[] {
  return connectorPieces(connectorBoundary(contentType), body.toString('utf8'));
}
