/**
 * Reading an OData error answer as a client does, and checking its shape on the way
 * (docs/protocol.md, "Errors"): JSON `{"error":{"code","message":{"lang":"en-US","value"}}}` with
 * nothing else (never wrapped in `d`), or XML `<error>` in the metadata namespace with `<code>` and
 * `<message xml:lang="en-US">`. The one place tests read error documents, over HTTP or inside a
 * `$batch` answer.
 */
import assert from 'node:assert/strict';
import { childElements, parseXml } from '../clients/datajs';
import type { HttpResponse } from './http-client';
import { M } from './spec';

export type ErrorFormat = 'json' | 'xml';

export interface ODataErrorBody {
  readonly format: ErrorFormat;
  readonly code: string;
  readonly message: string;
}

const obj = (v: unknown, what: string): Record<string, unknown> => {
  assert.ok(v !== null && typeof v === 'object' && !Array.isArray(v), `${what} is an object`);
  return v as Record<string, unknown>;
};

/**
 * The error document of an answer with this Content-Type and body, checked for its shape; with
 * `expected`, also that it came in that format.
 */
export function readODataError(contentType: string, body: string, expected?: ErrorFormat): ODataErrorBody {
  const format: ErrorFormat = contentType.startsWith('application/json') ? 'json' : 'xml';
  if (expected) assert.equal(format, expected, `an error in ${expected}, not ${contentType}: ${body.slice(0, 300)}`);
  if (format === 'json') {
    const document = obj(JSON.parse(body), 'the JSON error document');
    assert.deepEqual(Object.keys(document), ['error'], `JSON error document: ${body}`);
    const error = obj(document.error, 'error');
    assert.equal(typeof error.code, 'string');
    const message = obj(error.message, 'error.message');
    assert.equal(message.lang, 'en-US');
    assert.equal(typeof message.value, 'string');
    return { format, code: error.code as string, message: message.value as string };
  }
  assert.match(contentType, /^application\/xml/, `an OData error document, not ${contentType}: ${body.slice(0, 300)}`);
  const root = parseXml(body).documentElement;
  assert.equal(root.localName, 'error');
  assert.equal(root.namespaceURI, M);
  const code = childElements(root, M, 'code')[0];
  const message = childElements(root, M, 'message')[0];
  assert.ok(code, 'XML error has <code>');
  assert.ok(message, 'XML error has <message>');
  assert.equal(message.getAttributeNS('http://www.w3.org/XML/1998/namespace', 'lang'), 'en-US');
  return { format, code: code.textContent ?? '', message: message.textContent ?? '' };
}

/** The error document of an HTTP answer, checked for its shape (and format, when given). */
export function odataError(res: HttpResponse, expected?: ErrorFormat): ODataErrorBody {
  return readODataError(String(res.headers['content-type'] ?? ''), res.body, expected);
}

/** The message of an HTTP answer's error document, checked as odataError does. */
export function errorMessage(res: HttpResponse, expected?: ErrorFormat): string {
  return odataError(res, expected).message;
}
