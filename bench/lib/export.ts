/**
 * The connector's full catalogue export: every product of the account in one JSON response with
 * the nine expansions (the connector loads every product so). The client only counts while the
 * answer streams in, so that it never holds the server back: bytes, the start of each product
 * entity, and the document's first and last bytes. (test/query/full-export.test.ts checks every
 * row of the same export.) With `coding` gzip (or br) the client asks for a compressed answer, as
 * pyodata, the SAP Cloud SDK and browsers do, and counts the bytes on the wire and, after decoding, the rest.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { connectorHeaders, SERVICE_PATH, type Credentials } from './http';

export const EXPORT_EXPAND =
  'CarParts,Catalogs,ChildProducts,DiscountOffers,OptionalProductAttributes,ProductImages,ProductSpecifics,' +
  'ProductVariations/ProductVariationSpecifics,ProductVariations/ProductVariationPictures';

export const EXPORT_PATH = `${SERVICE_PATH}/Products?$expand=${EXPORT_EXPAND}`;

export interface ExportRun {
  readonly seconds: number;
  /** Time to the first byte of the body. */
  readonly firstByteSeconds: number;
  /** Bytes of the body (decoded). */
  readonly bytes: number;
  /** Bytes of the body as they came over the wire (the same as bytes without a coding). */
  readonly wireBytes: number;
  /** The answer's Content-Encoding ('identity' without one). */
  readonly coding: string;
  /** Product entities in the answer: the account's products plus those inlined as ChildProducts. */
  readonly productEntities: number;
  readonly status: number;
  readonly dataServiceVersion: string | undefined;
  /** The start of the body when the status is not 200. */
  readonly errorBody?: string;
}

export type ExportCoding = 'identity' | 'gzip' | 'br';

const DECODED_PIECE_BYTES = 64 * 1024;

export function runExport(origin: string, credentials: Credentials, coding: ExportCoding = 'identity'): Promise<ExportRun> {
  // An entity's __metadata comes first, so this marks the start of each product entity (a
  // deferred link's uri has another prefix).
  const marker = Buffer.from(`{"__metadata":{"uri":"${origin}${SERVICE_PATH}/Products(`);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByte = 0;
    let wireBytes = 0;
    let bytes = 0;
    let entities = 0;
    let head = '';
    let errorBody = '';
    let carry = Buffer.alloc(0);
    const headers = { ...connectorHeaders(credentials), ...(coding === 'identity' ? {} : { 'Accept-Encoding': coding }) };
    const req = http.get(`${origin}${EXPORT_PATH}`, { headers, agent: false }, (res) => {
      const answered = res.headers['content-encoding'] ?? 'identity';
      res.on('data', (chunk: Buffer) => {
        if (wireBytes === 0) firstByte = performance.now();
        wireBytes += chunk.length;
      });
      const onBody = (chunk: Buffer) => {
        if (res.statusCode !== 200 && errorBody.length < 1000) errorBody += chunk.subarray(0, 1000).toString('utf8');
        if (head.length < 16) head += chunk.subarray(0, 16).toString('latin1');
        bytes += chunk.length;
        // Markers may straddle two chunks: keep the last marker-length bytes for the next one.
        const text = carry.length ? Buffer.concat([carry, chunk]) : chunk;
        for (let i = text.indexOf(marker); i !== -1; i = text.indexOf(marker, i + marker.length)) entities++;
        carry = Buffer.from(text.subarray(Math.max(0, text.length - marker.length + 1)));
      };
      const onEnd = () => {
        const seconds = (performance.now() - started) / 1000;
        const tail = carry.toString('latin1').trimEnd();
        if (res.statusCode === 200 && (!head.startsWith('{"d":') || !tail.endsWith('}'))) {
          return reject(new Error(`the export is not one complete JSON document: starts ${JSON.stringify(head)}, ends ${JSON.stringify(tail.slice(-16))}`));
        }
        if (res.statusCode === 200 && answered !== coding) return reject(new Error(`the export was asked for in ${coding} and came in ${answered}`));
        resolve({
          seconds,
          firstByteSeconds: firstByte ? (firstByte - started) / 1000 : seconds,
          bytes,
          wireBytes,
          coding: answered,
          productEntities: entities,
          status: res.statusCode ?? 0,
          dataServiceVersion: res.headers['dataserviceversion'] as string | undefined,
          ...(errorBody ? { errorBody: errorBody.slice(0, 1000) } : {}),
        });
      };
      res.on('error', reject);
      if (answered === 'gzip' || answered === 'br') {
        // Decoded into pieces of 64 KiB, the size of the socket's reads that an identity answer
        // arrives in, so that the counting above costs the same per byte in every coding. zlib's
        // default of 16 KiB made four times the pieces, and the client's CPU per export grew by
        // about half a second (0.2 s of it zlib's own overhead per piece), on the same machine
        // as the server.
        const options = { chunkSize: DECODED_PIECE_BYTES };
        const gunzip = res.pipe(answered === 'gzip' ? zlib.createGunzip(options) : zlib.createBrotliDecompress(options));
        gunzip.on('data', onBody);
        gunzip.on('end', onEnd);
        gunzip.on('error', reject);
      } else {
        res.on('data', onBody);
        res.on('end', onEnd);
      }
    });
    req.on('error', reject);
  });
}
