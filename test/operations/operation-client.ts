/**
 * Calling service operations as the connectors do (typed literals, suffixes optional): typed query
 * parameters, empty-bodied POSTs that still carry Content-Type: application/json, and reading the
 * result in either format, checked against the specification's shapes.
 */
import assert from 'node:assert/strict';
import type { HttpResponse } from '../support/http-client';
import { asSeller, type LiveService, type Seller } from '../support/live-service';
import { D, M } from '../support/spec';
import { parseXml } from '../clients/datajs';

export type Format = 'json' | 'xml';

export function callOperation(live: LiveService, seller: Seller, method: string, name: string, query: string, format: Format = 'json', headers: Record<string, string> = {}): Promise<HttpResponse> {
  const sent: Record<string, string> = { DataServiceVersion: '2.0', MaxDataServiceVersion: '3.0' };
  if (format === 'json') sent.Accept = 'application/json';
  // Connectors send a Content-Type with their empty-bodied POSTs too.
  if (method === 'POST') sent['Content-Type'] = 'application/json';
  return asSeller(seller, `${live.root}/${name}${query ? `?${query}` : ''}`, { method, headers: { ...sent, ...headers } });
}

/**
 * The value of a successful operation answer, after checking its shape: JSON
 * {"d":{"<Operation>":value}}, or an XML root element named after the operation in the
 * data-services namespace, carrying m:type unless the value is a string.
 */
export function operationValue(res: HttpResponse, name: string, format: Format): unknown {
  assert.equal(res.status, 200, `${name}: ${res.body}`);
  assert.equal(res.headers['cache-control'], 'no-cache');
  assert.equal(res.headers.dataserviceversion, '1.0;');
  if (format === 'json') {
    assert.equal(res.headers['content-type'], 'application/json;charset=utf-8');
    const parsed = JSON.parse(res.body) as { d: Record<string, unknown> };
    assert.deepEqual(Object.keys(parsed), ['d']);
    assert.deepEqual(Object.keys(parsed.d), [name]);
    return parsed.d[name];
  }
  assert.equal(res.headers['content-type'], 'application/xml;charset=utf-8');
  const root = parseXml(res.body).documentElement;
  assert.equal(root.localName, name);
  assert.equal(root.namespaceURI, D);
  const type = root.getAttributeNS(M, 'type');
  const text = root.textContent ?? '';
  if (type === 'Edm.Boolean') {
    assert.match(text, /^(true|false)$/);
    return text === 'true';
  }
  assert.ok(!type, `${name}: a string result carries no m:type (got ${type})`);
  return text;
}
