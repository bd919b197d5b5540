/**
 * Unit tests of the service document generators (src/odata/service-document.ts): AtomPub and
 * JSON verbose, checked against the 17 entity sets of the interface specification and read with
 * datajs's Atom and JSON handlers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../src/model/catalogue-model';
import { renderServiceDocumentJson, renderServiceDocumentXml } from '../../src/odata/service-document';
import { childElements, loadDatajs, parseXml } from '../clients/datajs';
import { APP, ATOM, SPEC_ENTITY_SETS } from '../support/spec';

const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const ROOT = 'http://localhost:8080/publicapi/v1/api.svc';

const SORTED_SPEC_SETS = [...SPEC_ENTITY_SETS].sort();

test('parseXml rejects text that is not well-formed (so the XML checks below can fail)', () => {
  assert.throws(() => parseXml('<service><workspace></service>'), /not well-formed/);
});

test('AtomPub service document: one workspace "Default" with exactly the 17 entity sets', () => {
  const xml = renderServiceDocumentXml(model, ROOT);
  assert.ok(xml.startsWith('<?xml version="1.0" encoding="utf-8" standalone="yes"?>'), 'XML declaration first');
  const doc = parseXml(xml);
  const service = doc.documentElement;
  assert.equal(service.localName, 'service');
  assert.equal(service.namespaceURI, APP);
  assert.equal(service.getAttributeNS(XML_NS, 'base'), `${ROOT}/`);
  assert.equal(service.getAttribute('xmlns:atom'), ATOM);
  assert.equal(service.getAttribute('xmlns:app'), APP);

  const workspace = childElements(service, APP, 'workspace');
  assert.equal(workspace.length, 1);
  const ws = workspace[0];
  assert.ok(ws);
  assert.deepEqual(childElements(ws, ATOM, 'title').map((t) => t.textContent), ['Default']);

  const collections = childElements(ws, APP, 'collection');
  assert.equal(collections.length, 17);
  const hrefs = collections.map((c) => c.getAttribute('href'));
  assert.deepEqual([...hrefs].sort(), SORTED_SPEC_SETS);
  for (const c of collections) {
    assert.deepEqual(
      childElements(c, ATOM, 'title').map((t) => t.textContent),
      [c.getAttribute('href')],
      'collection title is the set name',
    );
  }
  // Model order, one entry per entity type.
  assert.deepEqual(hrefs, model.entityTypes.map((t) => t.setName));
});

test('AtomPub service document: xml:base keeps an existing trailing slash and is escaped', () => {
  const doc = parseXml(renderServiceDocumentXml(model, `${ROOT}/`));
  assert.equal(doc.documentElement.getAttributeNS(XML_NS, 'base'), `${ROOT}/`);

  const odd = 'http://h/a.svc?x=1&y="2"';
  const xml = renderServiceDocumentXml(model, odd);
  assert.ok(xml.includes('xml:base="http://h/a.svc?x=1&amp;y=&quot;2&quot;/"'), 'escaped in the text');
  assert.equal(parseXml(xml).documentElement.getAttributeNS(XML_NS, 'base'), `${odd}/`);
});

test('service documents do not list aliases', () => {
  assert.ok(model.typeBySetName.has('ProductVariationPictures'), 'the alias exists in the model');
  assert.equal(renderServiceDocumentXml(model, ROOT).includes('ProductVariationPictures'), false);
  assert.equal(renderServiceDocumentJson(model).includes('ProductVariationPictures'), false);
});

test('JSON service document: {"d":{"EntitySets":[…]}} with exactly the 17 entity sets', () => {
  const text = renderServiceDocumentJson(model);
  const json = JSON.parse(text) as unknown;
  assert.deepEqual(Object.keys(json as object), ['d']);
  const d = (json as { d: unknown }).d;
  assert.deepEqual(Object.keys(d as object), ['EntitySets']);
  const sets = (d as { EntitySets: unknown }).EntitySets;
  assert.ok(Array.isArray(sets));
  assert.equal(sets.length, 17);
  assert.deepEqual([...(sets as string[])].sort(), SORTED_SPEC_SETS);
  assert.deepEqual(sets, model.entityTypes.map((t) => t.setName));
  assert.ok(text.startsWith('{"d":{"EntitySets":["Catalogs","Products",'), text.slice(0, 60));
});

interface DatajsServiceDocument {
  workspaces: { title: string; collections: { href: string; title: string }[] }[];
}

test("datajs's Atom handler reads the AtomPub service document", () => {
  const OData = loadDatajs();
  const response = {
    requestUri: `${ROOT}/`,
    headers: { 'Content-Type': 'application/atomsvc+xml;charset=utf-8' },
    body: renderServiceDocumentXml(model, ROOT),
  } as { requestUri: string; headers: Record<string, string>; body: string; data?: unknown };
  assert.equal(OData.atomHandler.read(response, {}), true);
  const sd = response.data as DatajsServiceDocument;
  assert.equal(sd.workspaces.length, 1);
  const ws = sd.workspaces[0];
  assert.ok(ws);
  assert.equal(ws.title, 'Default');
  assert.deepEqual(ws.collections.map((c) => c.title).sort(), SORTED_SPEC_SETS);
  // datajs resolves each href against xml:base.
  assert.deepEqual(
    ws.collections.map((c) => c.href).sort(),
    SORTED_SPEC_SETS.map((s) => `${ROOT}/${s}`),
  );
});

test("datajs's JSON handler reads the JSON service document", () => {
  const OData = loadDatajs();
  const response = {
    requestUri: `${ROOT}/`,
    headers: { 'Content-Type': 'application/json;odata=verbose;charset=utf-8' },
    body: renderServiceDocumentJson(model),
  } as { requestUri: string; headers: Record<string, string>; body: string; data?: unknown };
  assert.equal(OData.jsonHandler.read(response, {}), true);
  const sd = response.data as DatajsServiceDocument;
  assert.equal(sd.workspaces.length, 1);
  assert.deepEqual(sd.workspaces[0]?.collections.map((c) => c.title).sort(), SORTED_SPEC_SETS);
  assert.equal(sd.workspaces[0]?.collections.find((c) => c.title === 'CarParts')?.href, `${ROOT}/CarParts`);
});
