/**
 * How the shop connector reads a $batch answer, replayed exactly (no MIME library, no leniency):
 * - the boundary is what the regex `boundary=(.*)` takes from the Content-Type;
 * - the body is split on `--<boundary>`, optionally followed by `--`, followed by one line break
 *   (CRLF, LF or CR);
 * - pieces that are empty are dropped; every other piece, even a lone CRLF, is a part.
 * It reads the whole answer with the batch boundary, then the body of each changeset part (what
 * follows the part's empty line) with the boundary of that part's Content-Type. An extra line
 * break anywhere between delimiters therefore becomes one more part, or one more operation.
 */
import assert from 'node:assert/strict';

/** A part as the connector sees it: its MIME headers (lower-case names) and what follows them. */
export interface ConnectorPart {
  /** The piece exactly as the split left it. */
  readonly piece: string;
  readonly headers: ReadonlyMap<string, string>;
  /** After the empty line that ends the MIME headers; '' when the piece has no such line. */
  readonly content: string;
  /** The pieces of a changeset part's body, split by its own boundary; undefined for other parts. */
  readonly operations?: readonly string[];
}

/** The boundary as the connector's regex takes it. */
export function connectorBoundary(contentType: string): string {
  const match = /boundary=(.*)/.exec(contentType);
  assert.ok(match, `boundary= in '${contentType}'`);
  return match[1]!;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The connector's split: on every delimiter and close delimiter with its one line break, empties dropped. */
export function connectorPieces(boundary: string, body: string): string[] {
  const delimiter = new RegExp(`--${escapeRegExp(boundary)}(?:--)?(?:\\r\\n|\\n|\\r)`);
  return body.split(delimiter).filter((piece) => piece !== '');
}

/** The MIME headers of a piece, up to its first empty line. */
function mimeHeaders(piece: string): { headers: Map<string, string>; content: string } {
  const end = piece.indexOf('\r\n\r\n');
  const headers = new Map<string, string>();
  if (end < 0) return { headers, content: '' };
  for (const line of piece.slice(0, end).split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, content: piece.slice(end + 4) };
}

/** The whole answer read the connector's way: one entry per piece, changeset bodies split too. */
export function readLikeTheConnector(contentType: string, body: string): ConnectorPart[] {
  return connectorPieces(connectorBoundary(contentType), body).map((piece) => {
    const { headers, content } = mimeHeaders(piece);
    const type = headers.get('content-type') ?? '';
    if (!type.startsWith('multipart/mixed')) return { piece, headers, content };
    return { piece, headers, content, operations: connectorPieces(connectorBoundary(type), content) };
  });
}
