/**
 * The connector's full catalogue export: every product of the account in one JSON response with
 * the nine expansions (the connector loads every product so). The client only counts while the
 * answer streams in, so that it never holds the server back: bytes, the start of each product
 * entity, and the document's first and last bytes. (test/query/full-export.test.ts checks every
 * row of the same export.)
 */
import http from 'node:http';
import { connectorHeaders, SERVICE_PATH, type Credentials } from './http';

export const EXPORT_EXPAND =
  'CarParts,Catalogs,ChildProducts,DiscountOffers,OptionalProductAttributes,ProductImages,ProductSpecifics,' +
  'ProductVariations/ProductVariationSpecifics,ProductVariations/ProductVariationPictures';

export const EXPORT_PATH = `${SERVICE_PATH}/Products?$expand=${EXPORT_EXPAND}`;

export interface ExportRun {
  readonly seconds: number;
  /** Time to the first byte of the body. */
  readonly firstByteSeconds: number;
  readonly bytes: number;
  /** Product entities in the answer: the account's products plus those inlined as ChildProducts. */
  readonly productEntities: number;
  readonly status: number;
  readonly dataServiceVersion: string | undefined;
  /** The start of the body when the status is not 200. */
  readonly errorBody?: string;
}

export function runExport(origin: string, credentials: Credentials): Promise<ExportRun> {
  // An entity's __metadata comes first, so this marks the start of each product entity (a
  // deferred link's uri has another prefix).
  const marker = Buffer.from(`{"__metadata":{"uri":"${origin}${SERVICE_PATH}/Products(`);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByte = 0;
    let bytes = 0;
    let entities = 0;
    let head = '';
    let errorBody = '';
    let carry = Buffer.alloc(0);
    const req = http.get(`${origin}${EXPORT_PATH}`, { headers: connectorHeaders(credentials), agent: false }, (res) => {
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstByte = performance.now();
        if (res.statusCode !== 200 && errorBody.length < 1000) errorBody += chunk.subarray(0, 1000).toString('utf8');
        if (head.length < 16) head += chunk.subarray(0, 16).toString('latin1');
        bytes += chunk.length;
        // Markers may straddle two chunks: keep the last marker-length bytes for the next one.
        const text = carry.length ? Buffer.concat([carry, chunk]) : chunk;
        for (let i = text.indexOf(marker); i !== -1; i = text.indexOf(marker, i + marker.length)) entities++;
        carry = Buffer.from(text.subarray(Math.max(0, text.length - marker.length + 1)));
      });
      res.on('end', () => {
        const seconds = (performance.now() - started) / 1000;
        const tail = carry.toString('latin1').trimEnd();
        if (res.statusCode === 200 && (!head.startsWith('{"d":') || !tail.endsWith('}'))) {
          return reject(new Error(`the export is not one complete JSON document: starts ${JSON.stringify(head)}, ends ${JSON.stringify(tail.slice(-16))}`));
        }
        resolve({
          seconds,
          firstByteSeconds: firstByte ? (firstByte - started) / 1000 : seconds,
          bytes,
          productEntities: entities,
          status: res.statusCode ?? 0,
          dataServiceVersion: res.headers['dataserviceversion'] as string | undefined,
          ...(errorBody ? { errorBody: errorBody.slice(0, 1000) } : {}),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}
