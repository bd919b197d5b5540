/**
 * The served $metadata against the published schemas, as a strict metadata reader checks it:
 * its <Schema> against the CSDL 2.0 XML schema (test/odata/csdl-schemas, unmodified, checked by
 * SHA-256), validated by libxml2 (compiled to WebAssembly: nothing to build), and the EDMX 1.0
 * envelope around it against that envelope's rules, written out here because no schema file for
 * it is at hand. Two documents the schema must refuse show that the validation can fail.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { childElements, parseXml, type XmlElement } from '../clients/datajs';
import { asSeller, newSeller, startLive, type LiveService } from '../support/live-service';
import { EDM, M } from '../support/spec';

const EDMX = 'http://schemas.microsoft.com/ado/2007/06/edmx';
const XMLNS = 'http://www.w3.org/2000/xmlns/';
const SCHEMAS = path.join(__dirname, '..', '..', '..', 'test', 'odata', 'csdl-schemas');
const CSDL_XSD = 'System.Data.Resources.CSDLSchema_2.xsd';
/** The files as published (see csdl-schemas/SOURCE.md); the CSDL schema imports the other two by name. */
const SHA256: Record<string, string> = {
  [CSDL_XSD]: 'cfce3bc142edd4a512594583587721f232492d50e8ec094ac93b1359c368f014',
  'System.Data.Resources.CodeGenerationSchema.xsd': '1defd67cae1b1c0147faf583c5c7be90eb755a98b104ba6f47f1971f46606af0',
  'System.Data.Resources.AnnotationSchema.xsd': '6080358091073d44949e49e8691b1de72adfe1ab4e63b850c17726e4dc5f9209',
};

/** The part of libxml2-wasm this test uses. */
interface LibXml {
  XmlDocument: { fromString(source: string, options?: { url?: string }): LibXmlDocument };
  XsdValidator: { fromDoc(xsd: LibXmlDocument): { validate(node: unknown): void; dispose(): void } };
}
interface LibXmlDocument {
  get(xpath: string): unknown;
  dispose(): void;
}
interface ValidateError extends Error {
  readonly details?: readonly { readonly message: string; readonly line: number }[];
}

// libxml2-wasm is an ES module with top-level await: this CommonJS build loads it with a real
// dynamic import (TypeScript would turn `import()` into `require()`).
const importEsm = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;

let live: LiveService;
let metadata: string;
let lib: LibXml;
let validator: { validate(node: unknown): void; dispose(): void };

before(async () => {
  for (const [file, sha] of Object.entries(SHA256)) {
    assert.equal(createHash('sha256').update(fs.readFileSync(path.join(SCHEMAS, file))).digest('hex'), sha, `${file} is the published file`);
  }
  lib = (await importEsm('libxml2-wasm')) as LibXml;
  // The CSDL schema imports its two companions by relative file name: let libxml2 read files.
  const nodeIo = (await importEsm('libxml2-wasm/lib/nodejs.mjs')) as { xmlRegisterFsInputProviders(): boolean };
  nodeIo.xmlRegisterFsInputProviders();
  const file = path.join(SCHEMAS, CSDL_XSD);
  const xsd = lib.XmlDocument.fromString(fs.readFileSync(file, 'utf8'), { url: file });
  validator = lib.XsdValidator.fromDoc(xsd);

  live = await startLive();
  const seller = await newSeller(live, 'metadata-schema');
  const res = await asSeller(seller, `${live.root}/$metadata`);
  assert.equal(res.status, 200);
  metadata = res.body;
});
after(async () => {
  validator?.dispose();
  await live?.close();
});

/** The CSDL schema's complaints about every <Schema> of a document, one line each (none: valid). */
function csdlProblems(xml: string): string[] {
  const doc = lib.XmlDocument.fromString(xml);
  try {
    const schema = doc.get(`//*[local-name()='Schema' and namespace-uri()='${EDM}']`);
    assert.ok(schema, 'the document has a CSDL Schema element');
    try {
      validator.validate(schema);
      return [];
    } catch (e) {
      const details = (e as ValidateError).details;
      if (!details) throw e;
      return [...new Set(details.map((d) => d.message.trim()))];
    }
  } finally {
    doc.dispose();
  }
}

test('the <Schema> of $metadata is valid against the published CSDL 2.0 XML schema', () => {
  assert.deepEqual(csdlProblems(metadata), []);
});

test('the EDMX 1.0 envelope: edmx:Edmx Version="1.0" holding one edmx:DataServices that holds only CSDL 2.0 Schemas', () => {
  const root = parseXml(metadata).documentElement;
  assert.equal(root.namespaceURI, EDMX);
  assert.equal(root.localName, 'Edmx');
  const ownAttributes = (el: XmlElement) => Array.from(el.attributes).filter((a) => a.namespaceURI !== XMLNS);
  // Edmx: the one attribute Version, "1.0" in EDMX 1.0; namespace declarations aside.
  assert.deepEqual(ownAttributes(root).map((a) => a.name), ['Version']);
  assert.equal(root.getAttribute('Version'), '1.0');
  const children = Array.from(root.children);
  assert.deepEqual(children.map((c) => `${c.namespaceURI} ${c.localName}`), [`${EDMX} DataServices`]);
  const dataServices = children[0]!;
  // DataServices: m:DataServiceVersion, the version of the protocol the document needs.
  assert.deepEqual(ownAttributes(dataServices).map((a) => `${a.namespaceURI} ${a.name.replace(/^.*:/, '')}`), [`${M} DataServiceVersion`]);
  assert.ok(['1.0', '2.0'].includes(dataServices.getAttributeNS(M, 'DataServiceVersion') ?? ''), 'DataServiceVersion');
  const schemas = Array.from(dataServices.children);
  assert.ok(schemas.length >= 1);
  for (const s of schemas) assert.deepEqual([s.namespaceURI, s.localName], [EDM, 'Schema'], 'only CSDL 2.0 Schemas inside DataServices');
  // Exactly one default entity container across the schemas (the one clients address).
  const containers = schemas.flatMap((s) => childElements(s, EDM, 'EntityContainer'));
  assert.equal(containers.filter((c) => c.getAttributeNS(M, 'IsDefaultEntityContainer') === 'true').length, 1);
});

test('the validation can fail: Nullable on a FunctionImport parameter and an unknown ConcurrencyMode are refused, naming them', () => {
  assert.ok(metadata.includes('<Parameter '), 'the document has parameters to spoil');
  const nullable = metadata.replace(/(<Parameter [^>]*?)\/>/, '$1 Nullable="true"/>');
  assert.notEqual(nullable, metadata);
  assert.deepEqual(csdlProblems(nullable), [
    `Element '{${EDM}}Parameter', attribute 'Nullable': The attribute 'Nullable' is not allowed.`,
  ]);
  const mode = metadata.replace('ConcurrencyMode="Fixed"', 'ConcurrencyMode="Always"');
  assert.notEqual(mode, metadata);
  assert.match(csdlProblems(mode).join('\n'), /attribute 'ConcurrencyMode': \[facet 'enumeration'\] The value 'Always' is not an element of the set/);
  const misplaced = metadata.replace(/<EntityContainer /, '<Documentation>x</Documentation><EntityContainer ');
  assert.match(csdlProblems(misplaced).join('\n'), /Documentation/);
});
