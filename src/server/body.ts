/** Reads a request body into memory, refusing it as soon as it passes the limit. */
import type { IncomingMessage } from 'node:http';
import { ODataError } from '../odata/errors';
import { tooLarge } from '../service/request';

function incomplete(): ODataError {
  return new ODataError(400, 'The request body did not arrive completely: the connection was closed or timed out.');
}

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      chunks.push(chunk);
    }
  } catch (error) {
    // A client that hangs up or stalls past the request timeout mid-body is no fault of ours:
    // an ODataError, so it is neither logged with a stack nor answered as a 500.
    if (error instanceof ODataError) throw error;
    if ((error as { code?: string }).code === 'ECONNRESET' || req.destroyed) throw incomplete();
    throw error;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}
