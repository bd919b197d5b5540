/** Reads a request body into memory, refusing it as soon as it passes the limit. */
import type { IncomingMessage } from 'node:http';
import { ODataError } from '../odata/errors';

export function tooLarge(limit: number): ODataError {
  return new ODataError(413, `The request body is larger than the limit of ${limit} bytes.`);
}

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}
