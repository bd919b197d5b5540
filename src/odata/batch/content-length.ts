/**
 * A Content-Length inside a $batch body (on a part's MIME headers, or on the HTTP request a
 * part holds) is never used for framing: the boundary is authoritative (multipart.ts). But when
 * one is sent it must agree with the bytes the framing gives, in bytes: a body its writer meant
 * to be other bytes than the reader takes is refused with a 400 naming the part, never guessed at.
 *
 * Writers differ in one respect only: whether they count the line break before the next
 * delimiter, which belongs to the delimiter (RFC 2046 5.1.1). The shop connector counts it (its
 * MERGE bodies declare 2 bytes more than they hold). Both counts are accepted; nothing else is.
 */
import { badRequest } from '../errors';
import { quote } from '../quote';

/** Digits only (RFC 9110 8.6), and few enough to be a number of bytes exactly. */
const LENGTH = /^\d{1,15}$/;

/**
 * Throws a 400 when `headers` hold a Content-Length that is neither the length of `body` nor
 * that length plus `lineBreak` (the bytes of the line break between the body and the next
 * delimiter). `where` prefixes messages ("Batch part 2: "); `whose` says whose header it is.
 */
export function checkContentLength(headers: ReadonlyMap<string, string>, body: Buffer, lineBreak: number, where: string, whose: string): void {
  const value = headers.get('content-length');
  if (value === undefined) return;
  // A repeated header arrives joined with ", " and is refused here too.
  if (!LENGTH.test(value)) throw badRequest(`${where}${whose} Content-Length '${quote(value)}' is not a number of bytes.`);
  const declared = Number(value);
  if (declared === body.length || declared === body.length + lineBreak) return;
  throw badRequest(`${where}${whose} Content-Length ${declared} does not match the ${body.length} bytes it frames before the next delimiter.`);
}
