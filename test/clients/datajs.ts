/**
 * Microsoft datajs (npm datajs@1.0.3) driven from Node: jsdom
 * supplies DOMParser / XMLSerializer / document, xhr2 supplies XMLHttpRequest, and
 * `require('datajs')` puts its API on globalThis.OData. Also a jsdom-backed XML parser for tests
 * that inspect XML payloads themselves.
 *
 * The repo has no DOM lib or jsdom typings, so the few DOM and datajs members the tests use are
 * typed here.
 */

// ---------------------------------------------------------------------------------------------
// Minimal DOM typing (jsdom objects)

export interface XmlElement {
  readonly localName: string;
  readonly namespaceURI: string | null;
  readonly textContent: string | null;
  readonly children: ArrayLike<XmlElement>;
  readonly parentElement: XmlElement | null;
  readonly attributes: ArrayLike<{ readonly name: string; readonly namespaceURI: string | null }>;
  getAttribute(name: string): string | null;
  getAttributeNS(namespace: string | null, localName: string): string | null;
  hasAttribute(name: string): boolean;
  getElementsByTagNameNS(namespace: string, localName: string): ArrayLike<XmlElement>;
}

export interface XmlDocument {
  readonly documentElement: XmlElement;
  getElementsByTagNameNS(namespace: string, localName: string): ArrayLike<XmlElement>;
}

interface JsdomWindow {
  readonly DOMParser: new () => { parseFromString(text: string, type: string): XmlDocument };
  readonly XMLSerializer: unknown;
  readonly document: unknown;
}

let jsdomWindow: JsdomWindow | undefined;

function getWindow(): JsdomWindow {
  if (!jsdomWindow) {
    const { JSDOM } = require('jsdom') as { JSDOM: new (html: string) => { window: JsdomWindow } };
    jsdomWindow = new JSDOM('').window;
  }
  return jsdomWindow;
}

/** Parses XML with jsdom's DOMParser; throws when the text is not well-formed. */
export function parseXml(text: string): XmlDocument {
  const doc = new (getWindow().DOMParser)().parseFromString(text, 'application/xml');
  const errors = doc.getElementsByTagNameNS('*', 'parsererror');
  if (errors.length > 0) {
    throw new Error(`not well-formed XML: ${errors[0]?.textContent ?? ''}`);
  }
  return doc;
}

/** Element children of `parent` with the given namespace and local name (direct children only). */
export function childElements(parent: XmlElement, namespace: string, localName: string): XmlElement[] {
  return Array.from(parent.children).filter((c) => c.namespaceURI === namespace && c.localName === localName);
}

// ---------------------------------------------------------------------------------------------
// datajs

/** A response as datajs hands it to handlers and callbacks. */
export interface ODataResponse {
  requestUri?: string;
  statusCode?: number;
  statusText?: string;
  headers: Record<string, string>;
  body: string | null;
  data?: unknown;
}

export interface ODataRequest {
  requestUri: string;
  method?: string;
  headers?: Record<string, string>;
  data?: unknown;
  user?: string;
  password?: string;
  recognizeDates?: boolean;
  timeoutMS?: number;
}

export interface ODataHandler {
  readonly accept: string;
  readonly maxDataServiceVersion: string;
  /** Parses response.body into response.data; true when it did. */
  read(response: ODataResponse, context?: unknown): boolean;
  write(request: ODataRequest, context?: unknown): boolean;
}

export interface ODataHttpClient {
  request(
    request: ODataRequest,
    success: (response: ODataResponse) => void,
    error: (err: ODataError) => void,
  ): unknown;
}

/** What datajs passes to error callbacks (a plain object, not an Error). */
export interface ODataError {
  message: string;
  request?: ODataRequest;
  response?: ODataResponse;
}

export interface ODataGlobal {
  request(
    request: ODataRequest,
    success: (data: unknown, response: ODataResponse) => void,
    error: (err: ODataError) => void,
    handler?: ODataHandler,
    httpClient?: ODataHttpClient,
    metadata?: unknown,
  ): unknown;
  readonly defaultHttpClient: ODataHttpClient;
  readonly defaultHandler: ODataHandler;
  readonly atomHandler: ODataHandler;
  readonly jsonHandler: ODataHandler;
  readonly metadataHandler: ODataHandler;
  readonly batchHandler: ODataHandler;
}

let odata: ODataGlobal | undefined;
let fixedHttpClient: ODataHttpClient | undefined;

/** The global OData object of datajs, loaded (with its browser polyfills) on first use. */
export function loadDatajs(): ODataGlobal {
  if (odata) return odata;
  const w = getWindow();
  const g = globalThis as Record<string, unknown>;
  const Xhr = require('xhr2') as { prototype: { _restrictedHeaders: Record<string, boolean> } };
  // A browser sends the session cookie from its cookie jar; xhr2 has no jar and refuses a Cookie
  // header, so the tests pass the .ASPXAUTH cookie as a header, as the browser would.
  Xhr.prototype._restrictedHeaders = { ...Xhr.prototype._restrictedHeaders, cookie: false };
  g.XMLHttpRequest = Xhr;
  g.DOMParser = w.DOMParser; // Atom and $metadata parsing
  g.XMLSerializer = w.XMLSerializer;
  g.document = w.document; // the Atom writer uses document.implementation.createDocument
  require('datajs'); // module.exports is empty: the API is the global OData
  const loaded = g.OData as ODataGlobal | undefined;
  if (!loaded || typeof loaded.request !== 'function') throw new Error('datajs did not define globalThis.OData');
  odata = loaded;
  return odata;
}

/**
 * datajs's default HTTP client with the 204 fix: vanilla datajs fails ("Cannot read properties of
 * null (reading 'mediaType')") on a 2xx without body and Content-Type, so such bodies become null.
 */
export function datajsHttpClient(): ODataHttpClient {
  if (fixedHttpClient) return fixedHttpClient;
  const base = loadDatajs().defaultHttpClient;
  fixedHttpClient = {
    request: (request, success, error) =>
      base.request(
        request,
        (response) => {
          if (response.statusCode === 204 || response.body === '') response.body = null;
          success(response);
        },
        error,
      ),
  };
  return fixedHttpClient;
}

/** datajs's error object as an Error, keeping request and response for assertions. */
export class ODataRequestError extends Error {
  readonly request: ODataRequest | undefined;
  readonly response: ODataResponse | undefined;
  constructor(err: ODataError) {
    super(err.response?.statusCode !== undefined ? `${err.message} (${err.response.statusCode})` : err.message);
    this.name = 'ODataRequestError';
    this.request = err.request;
    this.response = err.response;
  }
}

/**
 * OData.request as a promise, through the 204-fixed HTTP client. Resolves with the parsed data
 * and the response; rejects with an ODataRequestError for non-2xx answers and parse failures.
 */
export function odataRequest(
  request: ODataRequest,
  handler?: ODataHandler,
): Promise<{ data: unknown; response: ODataResponse }> {
  const OData = loadDatajs();
  // datajs writes its Accept and version headers into the object it is given: pass a copy, so a
  // caller's shared headers (a seller's credentials) never carry one request's Accept to the next.
  const own = { ...request, headers: { ...(request.headers ?? {}) } };
  return new Promise((resolve, reject) => {
    OData.request(
      own,
      (data, response) => resolve({ data, response }),
      (err) => reject(new ODataRequestError(err)),
      handler ?? OData.defaultHandler,
      datajsHttpClient(),
    );
  });
}
