/**
 * Unit tests of the $metadata generator (src/odata/metadata.ts) and the XML escape: the document
 * is parsed with jsdom and checked against the model and against literal expectations from the
 * interface specification, and read with datajs's metadata handler like a real client would.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { model } from '../../src/model/catalogue-model';
import { defineModel, p } from '../../src/model/define';
import type { Model, RelationDef } from '../../src/model/types';
import { renderMetadata } from '../../src/odata/metadata';
import { escapeXml } from '../../src/odata/xml-escape';
import { childElements, loadDatajs, parseXml, type XmlDocument, type XmlElement } from '../clients/datajs';
import { D, EDM, M, SPEC_ENTITY_SETS } from '../support/spec';

const EDMX = 'http://schemas.microsoft.com/ado/2007/06/edmx';
const NS = 'CatalogueService';


/** The 7 service operations of the specification's index, with their methods. */
const SPEC_OPERATIONS: Record<string, 'GET' | 'POST'> = {
  GetSalesOrderHistory: 'GET',
  ProductIsListed: 'GET',
  SetEbayCategory: 'POST',
  DeleteAccountData: 'POST',
  SetProductProfile: 'POST',
  SetCatalogProfile: 'POST',
  ReviseInventoryStatus: 'POST',
};

const xml = renderMetadata(model);
const doc = parseXml(xml);

// ---------------------------------------------------------------------------------------------
// helpers

function only<T>(items: readonly T[], what: string): T {
  assert.equal(items.length, 1, `expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}

function attr(el: XmlElement, name: string): string | null {
  return el.getAttribute(name);
}

function all(d: XmlDocument | XmlElement, localName: string, ns = EDM): XmlElement[] {
  return Array.from(d.getElementsByTagNameNS(ns, localName));
}

function byName(elements: readonly XmlElement[], name: string, what: string): XmlElement {
  return only(elements.filter((e) => attr(e, 'Name') === name), `${what} ${name}`);
}

const schema = only(all(doc, 'Schema'), 'Schema');
const container = only(childElements(schema, EDM, 'EntityContainer'), 'EntityContainer');
const entityTypes = childElements(schema, EDM, 'EntityType');
const associations = childElements(schema, EDM, 'Association');
const entitySets = childElements(container, EDM, 'EntitySet');
const associationSets = childElements(container, EDM, 'AssociationSet');
const functionImports = childElements(container, EDM, 'FunctionImport');

function entityType(name: string): XmlElement {
  return byName(entityTypes, name, 'EntityType');
}

function property(typeName: string, propName: string): XmlElement {
  return byName(childElements(entityType(typeName), EDM, 'Property'), propName, `${typeName} Property`);
}

function navigation(typeName: string, navName: string): XmlElement {
  return byName(childElements(entityType(typeName), EDM, 'NavigationProperty'), navName, `${typeName} NavigationProperty`);
}

function association(qualifiedName: string): XmlElement {
  assert.ok(qualifiedName.startsWith(`${NS}.`), `${qualifiedName} is qualified with ${NS}`);
  return byName(associations, qualifiedName.slice(NS.length + 1), 'Association');
}

function associationSetFor(qualifiedName: string): XmlElement {
  return only(
    associationSets.filter((s) => attr(s, 'Association') === qualifiedName),
    `AssociationSet of ${qualifiedName}`,
  );
}

function endByRole(parent: XmlElement, role: string): XmlElement {
  return only(
    childElements(parent, EDM, 'End').filter((e) => attr(e, 'Role') === role),
    `End ${role} of ${attr(parent, 'Name')}`,
  );
}

function attrs(el: XmlElement, names: readonly string[]): Record<string, string | null> {
  return Object.fromEntries(names.map((n) => [n, attr(el, n)]));
}

// ---------------------------------------------------------------------------------------------
// document frame

test('escapeXml escapes the five XML specials and leaves other text alone', () => {
  assert.equal(escapeXml(`a&b<c>d"e'f`), 'a&amp;b&lt;c&gt;d&quot;e&apos;f');
  assert.equal(escapeXml('&&'), '&amp;&amp;');
  assert.equal(escapeXml('&amp;'), '&amp;amp;');
  assert.equal(escapeXml('Grüße ü €'), 'Grüße ü €');
  assert.equal(escapeXml(''), '');
  // Repeated calls give the same answer (no regex lastIndex state leaks between calls).
  for (let i = 0; i < 3; i++) assert.equal(escapeXml('x<y'), 'x&lt;y');
});

test('$metadata is a well-formed EDMX 1.0 document with the data-services namespaces', () => {
  assert.ok(xml.startsWith('<?xml version="1.0" encoding="utf-8" standalone="yes"?>'), 'XML declaration first');
  const root = doc.documentElement;
  assert.equal(root.localName, 'Edmx');
  assert.equal(root.namespaceURI, EDMX);
  assert.equal(attr(root, 'Version'), '1.0');

  const dataServices = only(childElements(root, EDMX, 'DataServices'), 'edmx:DataServices');
  assert.equal(dataServices.getAttributeNS(M, 'DataServiceVersion'), '1.0');
  assert.equal(attr(dataServices, 'xmlns:m'), M);

  assert.equal(only(childElements(dataServices, EDM, 'Schema'), 'Schema'), schema);
  assert.equal(attr(schema, 'Namespace'), 'CatalogueService');
  assert.equal(attr(schema, 'xmlns'), EDM);
  assert.equal(attr(schema, 'xmlns:d'), D);
  assert.equal(attr(schema, 'xmlns:m'), M);

  assert.equal(attr(container, 'Name'), 'CatalogueEntities');
  assert.equal(container.getAttributeNS(M, 'IsDefaultEntityContainer'), 'true');
});

test('$metadata is computed deterministically', () => {
  assert.equal(renderMetadata(model), xml);
});

// ---------------------------------------------------------------------------------------------
// entity types

test('every entity type of the model is present with its key and every property in model order', () => {
  assert.equal(entityTypes.length, 17);
  assert.deepEqual(
    entityTypes.map((e) => attr(e, 'Name')),
    model.entityTypes.map((t) => t.name),
  );
  for (const t of model.entityTypes) {
    const el = entityType(t.name);
    const key = only(childElements(el, EDM, 'Key'), `${t.name} Key`);
    assert.deepEqual(
      childElements(key, EDM, 'PropertyRef').map((r) => attr(r, 'Name')),
      ['Id'],
      `${t.name} key`,
    );
    const props = childElements(el, EDM, 'Property');
    assert.deepEqual(
      props.map((x) => attr(x, 'Name')),
      t.properties.map((x) => x.name),
      `${t.name} properties in model order`,
    );
    for (const def of t.properties) {
      const x = property(t.name, def.name);
      const where = `${t.name}.${def.name}`;
      assert.equal(attr(x, 'Type'), def.type, `${where} Type`);
      assert.equal(attr(x, 'Nullable'), def.nullable ? 'true' : 'false', `${where} Nullable`);
      // The ETag moves when a writable property is written: those are the concurrency tokens.
      assert.equal(attr(x, 'ConcurrencyMode'), def.access === 'writable' ? 'Fixed' : null, `${where} ConcurrencyMode`);
      assert.equal(attr(x, 'MaxLength'), def.maxLength === undefined ? null : String(def.maxLength), `${where} MaxLength`);
      if (def.type === 'Edm.String') {
        assert.deepEqual(attrs(x, ['Unicode', 'FixedLength']), { Unicode: 'true', FixedLength: 'false' }, `${where} facets`);
      } else {
        assert.equal(x.hasAttribute('Unicode'), false, `${where} has no Unicode`);
      }
      if (def.type === 'Edm.Decimal') {
        assert.deepEqual(attrs(x, ['Precision', 'Scale']), { Precision: '18', Scale: '6' }, `${where} facets`);
      } else {
        assert.equal(x.hasAttribute('Precision'), false, `${where} has no Precision`);
      }
    }
  }
});

test('entity types carry the facets the specification gives', () => {
  const facets = ['Type', 'Nullable', 'MaxLength', 'Precision', 'Scale'];
  assert.deepEqual(attrs(property('Product', 'Id'), facets), {
    Type: 'Edm.Int64', Nullable: 'false', MaxLength: null, Precision: null, Scale: null,
  });
  assert.deepEqual(attrs(property('Product', 'Title'), facets), {
    Type: 'Edm.String', Nullable: 'false', MaxLength: '80', Precision: null, Scale: null,
  });
  assert.deepEqual(attrs(property('Product', 'Description'), facets), {
    Type: 'Edm.String', Nullable: 'true', MaxLength: null, Precision: null, Scale: null,
  });
  assert.deepEqual(attrs(property('Product', 'Price'), facets), {
    Type: 'Edm.Decimal', Nullable: 'false', MaxLength: null, Precision: '18', Scale: '6',
  });
  assert.deepEqual(attrs(property('Product', 'DisableAutomatch'), facets), {
    Type: 'Edm.Boolean', Nullable: 'false', MaxLength: null, Precision: null, Scale: null,
  });
  assert.deepEqual(attrs(property('ProductVariation', 'StockAmount'), facets), {
    Type: 'Edm.Int32', Nullable: 'false', MaxLength: null, Precision: null, Scale: null,
  });
  assert.deepEqual(attrs(property('ProductVariation', 'Sku'), facets), {
    Type: 'Edm.String', Nullable: 'true', MaxLength: '255', Precision: null, Scale: null,
  });
  assert.deepEqual(attrs(property('ProductSpecific', 'Type'), facets), {
    Type: 'Edm.Int32', Nullable: 'true', MaxLength: null, Precision: null, Scale: null,
  });
  assert.deepEqual(attrs(property('SalesOrder', 'PaidDate'), facets), {
    Type: 'Edm.DateTime', Nullable: 'true', MaxLength: null, Precision: null, Scale: null,
  });
  assert.deepEqual(attrs(property('CarPart', 'HSN'), facets), {
    Type: 'Edm.String', Nullable: 'true', MaxLength: '4', Precision: null, Scale: null,
  });
});

// ---------------------------------------------------------------------------------------------
// navigations, associations, association sets

test('every navigation resolves to an Association and an AssociationSet that agree with it', () => {
  for (const t of model.entityTypes) {
    const navEls = childElements(entityType(t.name), EDM, 'NavigationProperty');
    assert.deepEqual(
      navEls.map((n) => attr(n, 'Name')),
      t.navigations.map((n) => n.name),
      `${t.name} navigations`,
    );
    for (const nav of t.navigations) {
      const el = navigation(t.name, nav.name);
      const where = `${t.name}.${nav.name}`;
      const relationship = attr(el, 'Relationship');
      const from = attr(el, 'FromRole');
      const to = attr(el, 'ToRole');
      assert.equal(relationship, `${NS}.${nav.association}`, `${where} Relationship`);
      assert.equal(from, nav.fromRole, `${where} FromRole`);
      assert.equal(to, nav.toRole, `${where} ToRole`);
      assert.ok(relationship && from && to, `${where} has Relationship, FromRole and ToRole`);
      assert.notEqual(from, to, `${where} roles differ`);

      const target = model.typeByName.get(nav.target);
      assert.ok(target, `${where} target ${nav.target}`);

      const assoc = association(relationship);
      const ends = childElements(assoc, EDM, 'End');
      assert.equal(ends.length, 2, `${relationship} has two ends`);
      assert.deepEqual(new Set(ends.map((e) => attr(e, 'Role'))), new Set([from, to]), `${relationship} roles`);
      assert.equal(attr(endByRole(assoc, from), 'Type'), `${NS}.${t.name}`, `${where} FromRole end type`);
      assert.equal(attr(endByRole(assoc, to), 'Type'), `${NS}.${nav.target}`, `${where} ToRole end type`);
      const toMultiplicity = attr(endByRole(assoc, to), 'Multiplicity');
      if (nav.many) assert.equal(toMultiplicity, '*', `${where} leads to many`);
      else assert.ok(toMultiplicity === '1' || toMultiplicity === '0..1', `${where} leads to one, got ${toMultiplicity}`);

      const set = associationSetFor(relationship);
      assert.equal(attr(set, 'Name'), nav.association);
      assert.equal(childElements(set, EDM, 'End').length, 2);
      assert.equal(attr(endByRole(set, from), 'EntitySet'), t.setName, `${where} AssociationSet FromRole set`);
      assert.equal(attr(endByRole(set, to), 'EntitySet'), target.setName, `${where} AssociationSet ToRole set`);
    }
  }
});

test('one Association and one AssociationSet per association of the model (one per relation, one per twin navigation), with distinct roles', () => {
  assert.equal(model.associations.length, model.relations.length + 1, 'the relations and the one twin navigation');
  assert.equal(associations.length, model.associations.length);
  assert.equal(associationSets.length, model.associations.length);
  assert.deepEqual(
    associations.map((a) => attr(a, 'Name')),
    model.associations.map((a) => a.name),
  );
  for (const a of model.associations) {
    const r = a.relation;
    const assoc = association(`${NS}.${a.name}`);
    const [first, second] = a.ends;
    assert.notEqual(first.role, second.role, `${a.name} roles differ`);
    assert.deepEqual(
      childElements(assoc, EDM, 'End').map((e) => [attr(e, 'Role'), attr(e, 'Type')]),
      [
        [first.role, `${NS}.${first.type}`],
        [second.role, `${NS}.${second.type}`],
      ],
      `${a.name} ends`,
    );
    const setEnds = childElements(associationSetFor(`${NS}.${a.name}`), EDM, 'End');
    assert.deepEqual(
      setEnds.map((e) => [attr(e, 'Role'), attr(e, 'EntitySet')]),
      [
        [first.role, model.typeByName.get(first.type)?.setName],
        [second.role, model.typeByName.get(second.type)?.setName],
      ],
      `${a.name} AssociationSet ends`,
    );
    const constraints = childElements(assoc, EDM, 'ReferentialConstraint');
    assert.equal(constraints.length, r.kind === 'reference' ? 1 : 0, `${a.name} ReferentialConstraint`);
  }
});

test('reference associations: multiplicities follow the foreign key, with a referential constraint', () => {
  const ends = (name: string) =>
    childElements(association(`${NS}.${name}`), EDM, 'End').map((e) => attrs(e, ['Role', 'Type', 'Multiplicity']));

  // Required foreign key ProductImage.ProductId: exactly one product.
  assert.deepEqual(ends('Product_ProductImages'), [
    { Role: 'Product_ProductImages_Product', Type: 'CatalogueService.Product', Multiplicity: '1' },
    { Role: 'Product_ProductImages_ProductImage', Type: 'CatalogueService.ProductImage', Multiplicity: '*' },
  ]);
  const constraint = only(childElements(association(`${NS}.Product_ProductImages`), EDM, 'ReferentialConstraint'), 'constraint');
  const principal = only(childElements(constraint, EDM, 'Principal'), 'Principal');
  const dependent = only(childElements(constraint, EDM, 'Dependent'), 'Dependent');
  assert.equal(attr(principal, 'Role'), 'Product_ProductImages_Product');
  assert.deepEqual(childElements(principal, EDM, 'PropertyRef').map((x) => attr(x, 'Name')), ['Id']);
  assert.equal(attr(dependent, 'Role'), 'Product_ProductImages_ProductImage');
  assert.deepEqual(childElements(dependent, EDM, 'PropertyRef').map((x) => attr(x, 'Name')), ['ProductId']);

  // Nullable foreign key SalesOrderItem.ProductId: at most one product.
  assert.deepEqual(ends('Product_SalesOrderItems'), [
    { Role: 'Product_SalesOrderItems_Product', Type: 'CatalogueService.Product', Multiplicity: '0..1' },
    { Role: 'Product_SalesOrderItems_SalesOrderItem', Type: 'CatalogueService.SalesOrderItem', Multiplicity: '*' },
  ]);
  assert.deepEqual(ends('Address_ShippingSalesOrders'), [
    { Role: 'Address_ShippingSalesOrders_Address', Type: 'CatalogueService.Address', Multiplicity: '0..1' },
    { Role: 'Address_ShippingSalesOrders_SalesOrder', Type: 'CatalogueService.SalesOrder', Multiplicity: '*' },
  ]);

  // Navigation on the dependent end only: the association is still complete.
  assert.deepEqual(ends('ProductRelation_ParentProduct'), [
    { Role: 'ProductRelation_ParentProduct_Product', Type: 'CatalogueService.Product', Multiplicity: '1' },
    { Role: 'ProductRelation_ParentProduct_ProductRelation', Type: 'CatalogueService.ProductRelation', Multiplicity: '*' },
  ]);
  assert.deepEqual(attrs(navigation('ProductRelation', 'ParentProduct'), ['Relationship', 'FromRole', 'ToRole']), {
    Relationship: 'CatalogueService.ProductRelation_ParentProduct',
    FromRole: 'ProductRelation_ParentProduct_ProductRelation',
    ToRole: 'ProductRelation_ParentProduct_Product',
  });
  assert.equal(
    childElements(entityType('Product'), EDM, 'NavigationProperty').some(
      (n) => attr(n, 'Relationship') === 'CatalogueService.ProductRelation_ParentProduct',
    ),
    false,
  );
});

test('many-to-many associations: both ends "*", roles named after the navigation that leads to them', () => {
  const ends = (name: string) =>
    childElements(association(`${NS}.${name}`), EDM, 'End').map((e) => attrs(e, ['Role', 'Type', 'Multiplicity']));
  assert.deepEqual(ends('Catalog_ChildCatalogs'), [
    { Role: 'Catalog_ChildCatalogs_ParentCatalogs', Type: 'CatalogueService.Catalog', Multiplicity: '*' },
    { Role: 'Catalog_ChildCatalogs_ChildCatalogs', Type: 'CatalogueService.Catalog', Multiplicity: '*' },
  ]);
  assert.deepEqual(attrs(navigation('Catalog', 'ChildCatalogs'), ['FromRole', 'ToRole']), {
    FromRole: 'Catalog_ChildCatalogs_ParentCatalogs',
    ToRole: 'Catalog_ChildCatalogs_ChildCatalogs',
  });
  assert.deepEqual(ends('Product_Catalogs'), [
    { Role: 'Product_Catalogs_Products', Type: 'CatalogueService.Product', Multiplicity: '*' },
    { Role: 'Product_Catalogs_Catalogs', Type: 'CatalogueService.Catalog', Multiplicity: '*' },
  ]);
  assert.deepEqual(attrs(navigation('Product', 'Catalogs'), ['Relationship', 'FromRole', 'ToRole']), {
    Relationship: 'CatalogueService.Product_Catalogs',
    FromRole: 'Product_Catalogs_Products',
    ToRole: 'Product_Catalogs_Catalogs',
  });
  assert.deepEqual(
    childElements(associationSetFor('CatalogueService.Product_Catalogs'), EDM, 'End').map((e) => attrs(e, ['Role', 'EntitySet'])),
    [
      { Role: 'Product_Catalogs_Products', EntitySet: 'Products' },
      { Role: 'Product_Catalogs_Catalogs', EntitySet: 'Catalogs' },
    ],
  );
  assert.deepEqual(ends('Product_ChildProducts'), [
    { Role: 'Product_ChildProducts_ParentProducts', Type: 'CatalogueService.Product', Multiplicity: '*' },
    { Role: 'Product_ChildProducts_ChildProducts', Type: 'CatalogueService.Product', Multiplicity: '*' },
  ]);
});

test('a self-referencing reference relation gets distinct roles (the _Dependent suffix)', () => {
  const tree: Model = defineModel({
    namespace: 'TreeService',
    containerName: 'TreeEntities',
    entities: [
      {
        name: 'Node',
        setName: 'Nodes',
        access: 'catalogue',
        properties: { Id: p.key(), ParentId: p.int64({ nullable: true }), Label: p.string({ maxLength: 10 }) },
      },
    ],
    relations: [
      {
        kind: 'reference',
        name: 'Node_Children',
        principal: 'Node',
        principalNav: 'Children',
        dependent: 'Node',
        dependentNav: 'Parent',
        foreignKey: 'ParentId',
        onDelete: 'setNull',
      } satisfies RelationDef,
    ],
    operations: [],
  });
  const treeDoc = parseXml(renderMetadata(tree));
  const assoc = only(all(treeDoc, 'Association'), 'Association');
  assert.deepEqual(
    childElements(assoc, EDM, 'End').map((e) => attrs(e, ['Role', 'Type', 'Multiplicity'])),
    [
      { Role: 'Node_Children_Node', Type: 'TreeService.Node', Multiplicity: '0..1' },
      { Role: 'Node_Children_Node_Dependent', Type: 'TreeService.Node', Multiplicity: '*' },
    ],
  );
  const navs = all(treeDoc, 'NavigationProperty').map((n) => attrs(n, ['Name', 'FromRole', 'ToRole']));
  assert.deepEqual(navs, [
    { Name: 'Children', FromRole: 'Node_Children_Node', ToRole: 'Node_Children_Node_Dependent' },
    { Name: 'Parent', FromRole: 'Node_Children_Node_Dependent', ToRole: 'Node_Children_Node' },
  ]);
  assert.deepEqual(
    childElements(only(all(treeDoc, 'AssociationSet'), 'AssociationSet'), EDM, 'End').map((e) => attrs(e, ['Role', 'EntitySet'])),
    [
      { Role: 'Node_Children_Node', EntitySet: 'Nodes' },
      { Role: 'Node_Children_Node_Dependent', EntitySet: 'Nodes' },
    ],
  );
  // A container without operations has no FunctionImport.
  assert.equal(all(treeDoc, 'FunctionImport').length, 0);
});

// ---------------------------------------------------------------------------------------------
// container

test('the container has exactly the 17 entity sets of the specification, each of its own type', () => {
  assert.deepEqual(
    entitySets.map((s) => attr(s, 'Name')).sort(),
    [...SPEC_ENTITY_SETS].sort(),
  );
  for (const t of model.entityTypes) {
    assert.equal(attr(byName(entitySets, t.setName, 'EntitySet'), 'EntityType'), `${NS}.${t.name}`);
  }
  assert.equal(attr(byName(entitySets, 'ProductVariationImages', 'EntitySet'), 'EntityType'), 'CatalogueService.ProductVariationImage');
  assert.equal(attr(byName(entitySets, 'Addresses', 'EntitySet'), 'EntityType'), 'CatalogueService.Address');
});

test('ProductVariation declares ProductVariationPictures and ProductVariationImages, each with its own association over the same sets', () => {
  const images = navigation('ProductVariation', 'ProductVariationImages');
  const pictures = navigation('ProductVariation', 'ProductVariationPictures');
  const imagesAssoc = attr(images, 'Relationship')!;
  const picturesAssoc = attr(pictures, 'Relationship')!;
  assert.notEqual(imagesAssoc, picturesAssoc, 'two associations');
  for (const relationship of [imagesAssoc, picturesAssoc]) {
    const assoc = association(relationship);
    const set = associationSetFor(relationship);
    const ends = (el: XmlElement, a: string) => childElements(el, EDM, 'End').map((e) => attr(e, a));
    assert.deepEqual(ends(assoc, 'Type'), [`${NS}.ProductVariation`, `${NS}.ProductVariationImage`], `${relationship} types`);
    assert.deepEqual(ends(assoc, 'Multiplicity'), ['1', '*'], `${relationship} multiplicities`);
    assert.deepEqual(ends(set, 'EntitySet'), ['ProductVariations', 'ProductVariationImages'], `${relationship} sets`);
    const dependent = only(all(assoc, 'Dependent'), 'Dependent');
    assert.equal(attr(only(childElements(dependent, EDM, 'PropertyRef'), 'PropertyRef'), 'Name'), 'ProductVariationId');
  }
  // The set alias stays out of the container (the 17 sets of the specification).
  assert.equal(entitySets.some((s) => attr(s, 'Name') === 'ProductVariationPictures'), false);
  const navCount = model.entityTypes.reduce((n, t) => n + t.navigations.length, 0);
  assert.equal(all(doc, 'NavigationProperty').length, navCount);
});

test('every service operation is a FunctionImport with its parameters, return type and HTTP method', () => {
  assert.deepEqual(
    functionImports.map((f) => attr(f, 'Name')).sort(),
    Object.keys(SPEC_OPERATIONS).sort(),
  );
  for (const [name, method] of Object.entries(SPEC_OPERATIONS)) {
    const fi = byName(functionImports, name, 'FunctionImport');
    assert.equal(fi.getAttributeNS(M, 'HttpMethod'), method, `${name} m:HttpMethod`);
    assert.equal(attr(fi, 'EntitySet'), null, `${name} returns no entities`);
  }
  for (const op of model.operations) {
    const fi = byName(functionImports, op.name, 'FunctionImport');
    assert.equal(attr(fi, 'ReturnType'), op.returnType, `${op.name} ReturnType`);
    assert.deepEqual(
      childElements(fi, EDM, 'Parameter').map((x) => attrs(x, ['Name', 'Type', 'Mode'])),
      op.parameters.map((x) => ({ Name: x.name, Type: x.type, Mode: 'In' })),
      `${op.name} parameters`,
    );
    // CSDL 2.0 gives a FunctionImport parameter Name, Type, Mode, MaxLength, Precision and Scale
    // only: a strict reader refuses any other attribute (Nullable among them).
    for (const x of childElements(fi, EDM, 'Parameter')) {
      const names = Array.from(x.attributes).filter((a) => a.namespaceURI === null).map((a) => a.name);
      assert.deepEqual(names.filter((n) => !['Name', 'Type', 'Mode', 'MaxLength', 'Precision', 'Scale'].includes(n)), [], `${op.name} ${attr(x, 'Name')} attributes`);
    }
  }

  const params = (name: string) =>
    childElements(byName(functionImports, name, 'FunctionImport'), EDM, 'Parameter').map((x) => attrs(x, ['Name', 'Type']));
  assert.equal(attr(byName(functionImports, 'GetSalesOrderHistory', 'FunctionImport'), 'ReturnType'), 'Edm.String');
  assert.deepEqual(params('GetSalesOrderHistory'), [{ Name: 'salesOrderId', Type: 'Edm.Int64' }]);
  assert.equal(attr(byName(functionImports, 'ProductIsListed', 'FunctionImport'), 'ReturnType'), 'Edm.Boolean');
  assert.deepEqual(params('SetEbayCategory'), [
    { Name: 'productId', Type: 'Edm.Int64' },
    { Name: 'categoryId1', Type: 'Edm.Int64' },
    { Name: 'categoryId2', Type: 'Edm.Int64' },
    { Name: 'autoMatched', Type: 'Edm.Boolean' },
  ]);
  assert.deepEqual(params('DeleteAccountData'), [{ Name: 'type', Type: 'Edm.Int32' }]);
  assert.deepEqual(params('ReviseInventoryStatus').map((x) => `${x.Name}:${x.Type}`), [
    'productId:Edm.Int64',
    'productVariationId:Edm.Int64',
    'stockAmount:Edm.Int32',
    'price:Edm.Decimal',
    'discountOfferPrice:Edm.Decimal',
  ]);
});

// ---------------------------------------------------------------------------------------------
// datajs

interface DatajsNamed {
  name: string;
}
interface DatajsMetadata {
  version: string;
  dataServices: {
    dataServiceVersion: string;
    schema: {
      namespace: string;
      entityType: (DatajsNamed & {
        key: { propertyRef: DatajsNamed[] };
        property: (DatajsNamed & { type: string; nullable: string; maxLength?: string })[];
        navigationProperty?: (DatajsNamed & { relationship: string; fromRole: string; toRole: string })[];
      })[];
      association: (DatajsNamed & { end: { role: string; type: string; multiplicity: string }[] })[];
      entityContainer: {
        name: string;
        isDefaultEntityContainer: string;
        entitySet: (DatajsNamed & { entityType: string })[];
        associationSet: (DatajsNamed & { association: string; end: { role: string; entitySet: string }[] })[];
        functionImport: (DatajsNamed & {
          returnType: string;
          httpMethod: string;
          parameter?: (DatajsNamed & { type: string; mode: string })[];
        })[];
      }[];
    }[];
  };
}

test("datajs's metadata handler reads the document", () => {
  const OData = loadDatajs();
  const response = { headers: { 'Content-Type': 'application/xml;charset=utf-8' }, body: xml } as {
    headers: Record<string, string>;
    body: string;
    data?: unknown;
  };
  assert.equal(OData.metadataHandler.read(response, {}), true, 'handler accepted the response');
  const md = response.data as DatajsMetadata;
  assert.equal(md.version, '1.0');
  assert.equal(md.dataServices.dataServiceVersion, '1.0');
  const s = only(md.dataServices.schema, 'datajs schema');
  assert.equal(s.namespace, 'CatalogueService');

  assert.deepEqual(s.entityType.map((t) => t.name), model.entityTypes.map((t) => t.name));
  const product = s.entityType.find((t) => t.name === 'Product');
  assert.ok(product);
  assert.deepEqual(product.key.propertyRef.map((r) => r.name), ['Id']);
  assert.deepEqual(product.property.find((x) => x.name === 'Title'), {
    name: 'Title', type: 'Edm.String', nullable: 'false', maxLength: '80', unicode: 'true', fixedLength: 'false', concurrencyMode: 'Fixed',
  });
  assert.deepEqual(product.navigationProperty?.map((n) => n.name), [
    'ProductImages',
    'ProductSpecifics',
    'ProductVariations',
    'OptionalProductAttributes',
    'DiscountOffers',
    'CarParts',
    'ChildProducts',
    'ParentProducts',
    'Catalogs',
    'SalesOrderItems',
    'Listings',
    'ListingItems',
  ]);

  // Both navigations of a variation to its images, each through its own association.
  const variation = only(s.entityType.filter((t) => t.name === 'ProductVariation'), 'datajs ProductVariation');
  const toImages = variation.navigationProperty?.filter((n) => n.name === 'ProductVariationImages' || n.name === 'ProductVariationPictures');
  assert.deepEqual(toImages?.map((n) => [n.name, n.relationship]), [
    ['ProductVariationImages', 'CatalogueService.ProductVariation_ProductVariationImages'],
    ['ProductVariationPictures', 'CatalogueService.ProductVariation_ProductVariationPictures'],
  ]);

  assert.equal(s.association.length, model.associations.length);
  const pc = s.association.find((a) => a.name === 'Product_Catalogs');
  assert.deepEqual(pc?.end, [
    { role: 'Product_Catalogs_Products', type: 'CatalogueService.Product', multiplicity: '*' },
    { role: 'Product_Catalogs_Catalogs', type: 'CatalogueService.Catalog', multiplicity: '*' },
  ]);

  const c = only(s.entityContainer, 'datajs entity container');
  assert.equal(c.name, 'CatalogueEntities');
  assert.equal(c.isDefaultEntityContainer, 'true');
  assert.equal(c.entitySet.length, 17);
  assert.deepEqual(c.entitySet.map((x) => x.name).sort(), [...SPEC_ENTITY_SETS].sort());
  assert.equal(c.associationSet.length, model.associations.length);

  assert.deepEqual(c.functionImport.map((f) => f.name).sort(), Object.keys(SPEC_OPERATIONS).sort());
  const sec = c.functionImport.find((f) => f.name === 'SetEbayCategory');
  assert.equal(sec?.httpMethod, 'POST');
  assert.equal(sec?.returnType, 'Edm.Boolean');
  assert.deepEqual(sec?.parameter?.map((x) => [x.name, x.type, x.mode]), [
    ['productId', 'Edm.Int64', 'In'],
    ['categoryId1', 'Edm.Int64', 'In'],
    ['categoryId2', 'Edm.Int64', 'In'],
    ['autoMatched', 'Edm.Boolean', 'In'],
  ]);

  // A datajs client resolves a navigation's target type the way UI5 and datajs do: through the
  // association end whose role is the navigation's ToRole.
  const pv = s.entityType.find((t) => t.name === 'ProductVariation');
  const images = pv?.navigationProperty?.find((n) => n.name === 'ProductVariationImages');
  assert.ok(images);
  const assoc = s.association.find((a) => `CatalogueService.${a.name}` === images.relationship);
  assert.equal(assoc?.end.find((e) => e.role === images.toRole)?.type, 'CatalogueService.ProductVariationImage');
});

test('datajs reports malformed metadata (the handler test can fail)', () => {
  const OData = loadDatajs();
  const response = { headers: { 'Content-Type': 'application/xml' }, body: xml.replace('</Schema>', '') };
  assert.throws(() => OData.metadataHandler.read(response, {}));
});
