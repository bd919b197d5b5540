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

/** The OData error message of a refused call, in the format the call asked for. */
export function odataError(res: HttpResponse, format: Format): string {
  if (format === 'json') {
    assert.match(String(res.headers['content-type']), /^application\/json/, res.body);
    return (JSON.parse(res.body) as { error: { message: { value: string } } }).error.message.value;
  }
  assert.match(String(res.headers['content-type']), /^application\/xml/, res.body);
  return parseXml(res.body).getElementsByTagNameNS(M, 'message')[0]?.textContent ?? '';
}

/** A JSON entity of the seller's account (d of GET Set(idL)). */
export async function getEntity(live: LiveService, seller: Seller, set: string, id: string): Promise<Record<string, unknown>> {
  const res = await asSeller(seller, `${live.root}/${set}(${id}L)`, { headers: { Accept: 'application/json' } });
  assert.equal(res.status, 200, `${set}(${id}L): ${res.body}`);
  return (JSON.parse(res.body) as { d: Record<string, unknown> }).d;
}

/** A collection of the seller's account, whatever the answered version. */
export async function getCollection(live: LiveService, seller: Seller, path: string): Promise<Record<string, unknown>[]> {
  const res = await asSeller(seller, `${live.root}/${path}`, { headers: { Accept: 'application/json' } });
  assert.equal(res.status, 200, `${path}: ${res.body}`);
  const d = (JSON.parse(res.body) as { d: Record<string, unknown>[] | { results: Record<string, unknown>[] } }).d;
  return Array.isArray(d) ? d : d.results;
}

/** JSON verbose date "\/Date(ms)\/" -> ms. */
export function jsonDate(value: unknown): number | null {
  if (value === null) return null;
  const m = /^\/Date\((-?\d+)\)\/$/.exec(String(value));
  assert.ok(m, `a JSON date: ${String(value)}`);
  return Number(m[1]);
}

/** POSTs an entity that must be created; its Id. */
export async function createEntity(live: LiveService, seller: Seller, set: string, body: Record<string, unknown>): Promise<string> {
  const res = await asSeller(seller, `${live.root}/${set}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });
  assert.equal(res.status, 201, `${set}: ${res.body}`);
  return String((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
}

/** MERGE of some properties as a connector sends it. */
export function merge(live: LiveService, seller: Seller, set: string, id: string, body: Record<string, unknown>): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${set}(${id}L)`, {
    method: 'MERGE',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', DataServiceVersion: '1.0' },
    body: JSON.stringify(body),
  });
}
