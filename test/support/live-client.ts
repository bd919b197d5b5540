/**
 * A seller's JSON client of the live service, for tests that need entities in place or read them
 * back: create, read, MERGE and link as a connector does, each asserting the status it needs.
 */
import assert from 'node:assert/strict';
import type { HttpResponse } from './http-client';
import { asSeller, type LiveService, type Seller } from './live-service';

/** What a connector sends with a JSON body. */
export const JSON_HEADERS: Readonly<Record<string, string>> = { Accept: 'application/json', 'Content-Type': 'application/json' };

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

/**
 * POSTs an entity that must be created (to a set, or a path such as `Products(1L)/ProductImages`);
 * its Id. `headers` adds to the JSON ones (an Idempotency-Key).
 */
export async function createEntity(live: LiveService, seller: Seller, set: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const res = await asSeller(seller, `${live.root}/${set}`, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) });
  assert.equal(res.status, 201, `${set}: ${res.body}`);
  return String((JSON.parse(res.body) as { d: { Id: string } }).d.Id);
}

/** MERGE of some properties as a connector sends it. */
export function mergeEntity(live: LiveService, seller: Seller, set: string, id: string, body: Record<string, unknown>): Promise<HttpResponse> {
  return asSeller(seller, `${live.root}/${set}(${id}L)`, {
    method: 'MERGE',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', DataServiceVersion: '1.0' },
    body: JSON.stringify(body),
  });
}

/** POSTs a `$links` body (`{"uri":…}`) that must be accepted. */
export async function addLink(live: LiveService, seller: Seller, path: string, uri: string): Promise<void> {
  const res = await asSeller(seller, live.root + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ uri }) });
  assert.equal(res.status, 204, `${path}: ${res.body}`);
}
