/**
 * Tenancy, against the live service: a row of another account behaves exactly like a row that
 * does not exist. Two sellers A and B each hold a full catalogue (product with image, specific,
 * variation with specific and picture, catalogs linked, car part, optional attribute, discount
 * offer, relation) and platform data (buyer, address, order with item, listing with item). For
 * every entity set, navigation and operation, A acting on one of B's ids answers exactly what A
 * acting on a never-existing id answers (status, content type and message apart from the id);
 * A's collections, counts and links never show B's rows; and every tenant row of B, read raw
 * from the store, is the same after all of it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { linkAccess } from '../../src/model/link-access';
import { model } from '../../src/model/catalogue-model';
import type { EntityTypeDef, NavigationDef } from '../../src/model/types';
import type { EdmValue } from '../../src/odata/edm';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, storeRow, type LiveService, type Seller, tenantRows } from '../support/live-service';
import { atomEntry, type EntryValue } from '../support/entries';
import { errorMessage } from '../support/odata-error';
import { parseXml } from '../clients/datajs';
import { entityType as typeOf } from '../support/model-types';

const D_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices';
const M_NS = 'http://schemas.microsoft.com/ado/2007/08/dataservices/metadata';

/** An id no entity ever had (the service's ids are one small sequence). */
const MISSING = '870000000123';

type Json = Record<string, unknown>;
/** One entity id per type name. */
type Ids = Record<string, string>;

let live: LiveService;
let a: Seller;
let b: Seller;
let aIds: Ids;
let bIds: Ids;
let aRowsBefore: Record<string, string[]>;
let bRowsBefore: Record<string, string[]>;

// ---------------------------------------------------------------------------------------------
// Requests

interface Init {
  readonly body?: Json | string;
  readonly headers?: Record<string, string>;
  readonly atom?: boolean;
}

function call(as: Seller, method: string, path: string, init: Init = {}): Promise<HttpResponse> {
  const headers: Record<string, string> = init.atom ? {} : { Accept: 'application/json' };
  let body: string | undefined;
  if (typeof init.body === 'string') {
    body = init.body;
    headers['Content-Type'] = init.atom ? 'application/atom+xml' : 'application/xml';
  } else if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['Content-Type'] = 'application/json';
  }
  return asSeller(as, live.root + path, { method, headers: { ...headers, ...(init.headers ?? {}) }, ...(body === undefined ? {} : { body }) });
}

function entityOf(res: HttpResponse): Json {
  assert.match(String(res.headers['content-type']), /^application\/json/, res.body);
  return (JSON.parse(res.body) as { d: Json }).d;
}

async function create(as: Seller, set: string, body: Json): Promise<string> {
  const res = await call(as, 'POST', `/${set}`, { body });
  assert.equal(res.status, 201, `${set}: ${res.body}`);
  return String(entityOf(res).Id);
}

async function link(as: Seller, path: string, uri: string): Promise<void> {
  const res = await call(as, 'POST', path, { body: { uri } });
  assert.equal(res.status, 204, `${path}: ${res.body}`);
}

/** What must be identical between "another account's id" and "an id that never existed". */
function answerShape(res: HttpResponse, id: string): Json {
  const idPattern = new RegExp(`(?<!\\d)${id}(?!\\d)`, 'g');
  return {
    status: res.status,
    contentType: res.headers['content-type'],
    allow: res.headers.allow,
    location: res.headers.location,
    message: res.status >= 400 ? errorMessage(res).replace(idPattern, '<id>') : res.body.replace(idPattern, '<id>'),
  };
}

/**
 * What a missing id gets for a method: 404 where the resource takes the method, else 405 (the
 * method is checked before any row is looked up, so it says nothing about whose row it is).
 */
const missingFor = (allowed: boolean): readonly number[] => (allowed ? [404] : [405]);
const ENTITY_WRITES: Record<EntityTypeDef['access'], readonly string[]> = { catalogue: ['PUT', 'MERGE', 'PATCH', 'DELETE'], updatable: ['PUT', 'MERGE', 'PATCH'], readOnly: [] };

/**
 * Sends the request once naming B's entity and once a never-existing id: both answers must be
 * the same refusal. `missingStatus` pins what a missing id gets, so the comparison is not vacuous.
 */
async function sameAsMissing(label: string, foreignId: string, request: (id: string) => Promise<HttpResponse>, missingStatus: readonly number[] = [404]): Promise<void> {
  const foreign = await request(foreignId);
  const missing = await request(MISSING);
  assert.ok(missingStatus.includes(missing.status), `${label}: a missing id answers ${missing.status} ${missing.body}`);
  assert.deepEqual(answerShape(foreign, foreignId), answerShape(missing, MISSING), `${label}: B's id answers unlike a missing one`);
}

// ---------------------------------------------------------------------------------------------
// Raw rows of an account

const snapshot = (accountId: number) => tenantRows(live, accountId);

async function idsInStore(accountId: number, type: EntityTypeDef): Promise<string[]> {
  const rows = await live.service.app.store.read(accountId, (tx) => tx.all<{ id: bigint | number }>(`SELECT id FROM "${type.table}" WHERE account_id = ? ORDER BY id`, [accountId]));
  return rows.map((r) => String(r.id));
}

// ---------------------------------------------------------------------------------------------
// Two complete catalogues

async function seed(accountId: number, typeName: string, values: Record<string, EdmValue>): Promise<string> {
  return String(await storeRow(live, accountId, live.service.app.model.typeByName.get(typeName)!, values));
}

async function catalogue(s: Seller, tag: string): Promise<Ids> {
  const ids: Ids = {};
  ids.Product = await create(s, 'Products', { Title: `${tag} product`, Price: '19.99', StockAmount: 3, ForeignId: `${tag}-1`, ProductType: 2 });
  const child = await create(s, 'Products', { Title: `${tag} child`, Price: '5', StockAmount: 1 });
  ids.ProductImage = await create(s, 'ProductImages', { ProductId: ids.Product, ImageUrl: `https://img.example.com/${tag}.jpg`, Type: 1 });
  ids.ProductSpecific = await create(s, 'ProductSpecifics', { ProductId: ids.Product, Name: 'Brand', Value: `${tag} brand` });
  ids.ProductVariation = await create(s, 'ProductVariations', { ProductId: ids.Product, Price: '20', StockAmount: 2, Sku: `${tag}-RED` });
  ids.ProductVariationSpecific = await create(s, 'ProductVariationSpecifics', { ProductVariationId: ids.ProductVariation, Name: 'Colour', Value: 'Red' });
  ids.ProductVariationImage = await create(s, 'ProductVariationPictures', { ProductVariationId: ids.ProductVariation, ImageUrl: `https://img.example.com/${tag}-red.jpg`, ImagePosition: 0 });
  ids.Catalog = await create(s, 'Catalogs', { Name: `${tag} catalog`, IsRootLevel: true });
  const childCatalog = await create(s, 'Catalogs', { Name: `${tag} child catalog` });
  await link(s, `/Products(${ids.Product}L)/$links/Catalogs`, `Catalogs(${ids.Catalog}L)`);
  await link(s, `/Catalogs(${ids.Catalog}L)/$links/ChildCatalogs`, `${live.root}/Catalogs(${childCatalog}L)`);
  await link(s, `/Catalogs(${childCatalog}L)/$links/Products`, `Products(${child}L)`);
  ids.CarPart = await create(s, 'CarParts', { ProductId: ids.Product, KType: 12345, HSN: '0603', TSN: 'ABC' });
  ids.OptionalProductAttribute = await create(s, 'OptionalProductAttributes', { ProductId: ids.Product, Name: 'Warranty', Value: '2 years' });
  ids.DiscountOffer = await create(s, 'DiscountOffers', { ProductId: ids.Product, ProductVariationId: ids.ProductVariation, Price: '25', Type: 1 });
  ids.ProductRelation = await create(s, 'ProductRelations', { ParentProductId: ids.Product, ChildProductId: child, Quantity: 2 });
  // Platform data, written through the store as the platform side would.
  ids.Buyer = await seed(s.accountId, 'Buyer', { BuyerName: `${tag}-buyer`, Email: `${tag}@example.com` });
  ids.Address = await seed(s.accountId, 'Address', { BuyerId: BigInt(ids.Buyer), Name: 'Erika', Surname: 'Mustermann', Country: 'DE' });
  ids.SalesOrder = await seed(s.accountId, 'SalesOrder', {
    BuyerId: BigInt(ids.Buyer),
    AddressId: BigInt(ids.Address),
    ShippingAddressId: BigInt(ids.Address),
    PlatformOrderId: `${tag}-order-1`,
    CurrencyCode: 'EUR',
    ItemCount: 1,
    TotalPrice: '20',
  });
  ids.SalesOrderItem = await seed(s.accountId, 'SalesOrderItem', {
    SalesOrderId: BigInt(ids.SalesOrder),
    ProductId: BigInt(ids.Product),
    ProductVariationId: BigInt(ids.ProductVariation),
    PlatformItemId: `${tag}-item-1`,
    TransactionId: `${tag}-tx-1`,
    Name: `${tag} product`,
    Amount: 1,
    Price: '20',
  });
  ids.Listing = await seed(s.accountId, 'Listing', { ProductId: BigInt(ids.Product), PlatformItemId: `${tag}-item-1`, Title: `${tag} product`, Status: 1, Price: '20', Quantity: 3 });
  ids.ListingItem = await seed(s.accountId, 'ListingItem', { ListingId: BigInt(ids.Listing), ProductId: BigInt(ids.Product), ProductVariationId: BigInt(ids.ProductVariation), Sku: `${tag}-RED`, Price: '20', Quantity: 2 });
  for (const t of model.entityTypes) assert.ok(ids[t.name], `the ${tag} catalogue has a ${t.name}`);
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Request bodies

/** A body that would create an entity of the type (foreign keys aside). */
const CREATE: Record<string, Json> = {
  Product: { Title: 'intruder', Price: '1', StockAmount: 1 },
  Catalog: { Name: 'intruder' },
  ProductImage: { ImageUrl: 'https://img.example.com/intruder.jpg', Type: 9 },
  ProductSpecific: { Name: 'Intruder', Value: 'x' },
  ProductVariation: { Price: '1', StockAmount: 1, Sku: 'INTRUDER' },
  ProductVariationSpecific: { Name: 'Size', Value: 'XL' },
  ProductVariationImage: { ImageUrl: 'https://img.example.com/intruder.jpg', ImagePosition: 7 },
  OptionalProductAttribute: { Name: 'Intruder' },
  DiscountOffer: { Price: '1', Type: 2 },
  CarPart: { KType: 999 },
  ProductRelation: { Quantity: 1 },
};

/** A's own ids for every foreign key, so that only the one under test names another account. */
function ownForeignKeys(type: EntityTypeDef): Json {
  const out: Json = {};
  for (const r of model.relations) {
    if (r.kind !== 'reference' || r.dependent !== type.name) continue;
    out[r.foreignKey] = aIds[r.principal];
  }
  // A's relation Product -> aChild exists; tests replace one of the two keys, so no pair repeats.
  if (type.name === 'ProductRelation') out.ChildProductId = aChild;
  return out;
}
let aChild: string;

/** An update body that is valid for the type (a writable property set to a new value). */
function updateBody(type: EntityTypeDef): Json {
  const writable = type.properties.find((p) => p.access === 'writable' && p.type === 'Edm.String' && !p.name.endsWith('Url'));
  if (writable) return { [writable.name]: 'hijacked' };
  const int = type.properties.find((p) => p.access === 'writable' && p.type === 'Edm.Int32');
  return int ? { [int.name]: 1 } : {};
}

const setsAndAliases = (): [string, EntityTypeDef][] => [...model.typeBySetName.entries()];
const navNames = (nav: NavigationDef) => [nav.name];

// ---------------------------------------------------------------------------------------------

before(async () => {
  live = await startLive();
  a = await newSeller(live, 'tenant-a');
  b = await newSeller(live, 'tenant-b');
  aIds = await catalogue(a, 'A');
  bIds = await catalogue(b, 'B');
  aChild = String((entityOf(await call(a, 'GET', `/ProductRelations(${aIds.ProductRelation}L)`)).ChildProductId));
  aRowsBefore = await snapshot(a.accountId);
  bRowsBefore = await snapshot(b.accountId);
});
after(() => live.close());

describe('B sees its own catalogue (the rows A must not see exist)', () => {
  test('every entity of B answers B', async () => {
    for (const [set, type] of setsAndAliases()) {
      const res = await call(b, 'GET', `/${set}(${bIds[type.name]}L)`);
      assert.equal(res.status, 200, `${set}: ${res.body}`);
      assert.equal(entityOf(res).Id, bIds[type.name]);
    }
  });
});

describe("A acting on B's ids answers exactly as on a missing id", () => {
  for (const [set, type] of setsAndAliases()) {
    test(`${set}: entity, properties, $value, navigations, $count, $links`, async () => {
      const foreign = bIds[type.name]!;
      const own = aIds[type.name]!;
      const entity = (id: string) => `/${set}(${id}L)`;
      // A's own entity answers, so the refusals below are about whose row it is.
      assert.equal((await call(a, 'GET', entity(own))).status, 200);

      await sameAsMissing(`GET ${set} JSON`, foreign, (id) => call(a, 'GET', entity(id)));
      await sameAsMissing(`GET ${set} Atom`, foreign, (id) => call(a, 'GET', entity(id), { atom: true }));
      await sameAsMissing(`GET ${set}(id) without L`, foreign, (id) => call(a, 'GET', `/${set}(${id})`));
      const [headForeign, headMissing] = [await call(a, 'HEAD', entity(foreign)), await call(a, 'HEAD', entity(MISSING))];
      assert.equal(headMissing.status, 404);
      assert.equal(headForeign.status, headMissing.status);
      assert.equal(headForeign.headers['content-type'], headMissing.headers['content-type']);
      for (const p of type.properties.slice(0, 3)) {
        assert.equal((await call(a, 'GET', `${entity(own)}/${p.name}`)).status, 200);
        await sameAsMissing(`GET ${set}/${p.name}`, foreign, (id) => call(a, 'GET', `${entity(id)}/${p.name}`));
        await sameAsMissing(`GET ${set}/${p.name} XML`, foreign, (id) => call(a, 'GET', `${entity(id)}/${p.name}`, { atom: true }));
        await sameAsMissing(`GET ${set}/${p.name}/$value`, foreign, (id) => call(a, 'GET', `${entity(id)}/${p.name}/$value`));
      }
      for (const nav of type.navigations) {
        for (const name of navNames(nav)) {
          assert.equal((await call(a, 'GET', `${entity(own)}/${name}`)).status, 200, `${set}/${name} of A's own entity`);
          await sameAsMissing(`GET ${set}/${name}`, foreign, (id) => call(a, 'GET', `${entity(id)}/${name}`));
          await sameAsMissing(`GET ${set}/${name} Atom`, foreign, (id) => call(a, 'GET', `${entity(id)}/${name}`, { atom: true }));
          await sameAsMissing(`GET ${set}/$links/${name}`, foreign, (id) => call(a, 'GET', `${entity(id)}/$links/${name}`));
          await sameAsMissing(`GET ${set}/$links/${name} XML`, foreign, (id) => call(a, 'GET', `${entity(id)}/$links/${name}`, { atom: true }));
          if (!nav.many) continue;
          const ownTarget = aIds[nav.target]!;
          await sameAsMissing(`GET ${set}/${name}/$count`, foreign, (id) => call(a, 'GET', `${entity(id)}/${name}/$count`));
          await sameAsMissing(`GET ${set}/$links/${name}/$count`, foreign, (id) => call(a, 'GET', `${entity(id)}/$links/${name}/$count`));
          await sameAsMissing(`GET ${set}/${name}(key)`, foreign, (id) => call(a, 'GET', `${entity(id)}/${name}(${ownTarget}L)`));
          await sameAsMissing(`GET ${set}/$links/${name}(key)`, foreign, (id) => call(a, 'GET', `${entity(id)}/$links/${name}(${ownTarget}L)`));
          const managed = missingFor(linkAccess(model, nav).add);
          await sameAsMissing(`POST ${set}/$links/${name}`, foreign, (id) => call(a, 'POST', `${entity(id)}/$links/${name}`, { body: { uri: `${typeOf(nav.target).setName}(${ownTarget}L)` } }), managed);
          await sameAsMissing(
            `POST ${set}/$links/${name} XML`,
            foreign,
            (id) => call(a, 'POST', `${entity(id)}/$links/${name}`, { body: `<uri xmlns="${D_NS}">${live.root}/${typeOf(nav.target).setName}(${ownTarget}L)</uri>` }),
            managed,
          );
          await sameAsMissing(`DELETE ${set}/$links/${name}(key)`, foreign, (id) => call(a, 'DELETE', `${entity(id)}/$links/${name}(${ownTarget}L)`), missingFor(linkAccess(model, nav).remove));
          const target = typeOf(nav.target);
          if (CREATE[target.name]) {
            const body = { ...ownForeignKeys(target), ...CREATE[target.name] };
            if (nav.relation.kind === 'reference') delete body[nav.relation.foreignKey];
            const creatable = missingFor(target.access === 'catalogue');
            await sameAsMissing(`POST ${set}/${name}`, foreign, (id) => call(a, 'POST', `${entity(id)}/${name}`, { body }), creatable);
            await sameAsMissing(`POST ${set}/${name} Atom`, foreign, (id) => call(a, 'POST', `${entity(id)}/${name}`, { body: atomEntry(target, body as Record<string, EntryValue>), atom: true }), creatable);
          }
        }
      }
    });

    test(`${set}: PUT, MERGE, PATCH, X-HTTP-Method, DELETE`, async () => {
      const foreign = bIds[type.name]!;
      const entity = (id: string) => `/${set}(${id}L)`;
      const body = updateBody(type);
      for (const method of ['PUT', 'MERGE', 'PATCH', 'DELETE']) {
        const init = method === 'DELETE' ? {} : { body };
        const expected = missingFor(ENTITY_WRITES[type.access].includes(method));
        await sameAsMissing(`${method} ${set}`, foreign, (id) => call(a, method, entity(id), init), expected);
        await sameAsMissing(`POST+X-HTTP-Method ${method} ${set}`, foreign, (id) => call(a, 'POST', entity(id), { ...init, headers: { 'X-HTTP-Method': method } }), expected);
        await sameAsMissing(`POST+X-HTTP-Method-Override ${method} ${set}`, foreign, (id) => call(a, 'POST', entity(id), { ...init, headers: { 'X-HTTP-Method-Override': method } }), expected);
        if (method !== 'DELETE') {
          await sameAsMissing(`${method} ${set} Atom`, foreign, (id) => call(a, method, entity(id), { body: atomEntry(type, body as Record<string, EntryValue>), atom: true }), expected);
        }
      }
      // Writable properties of writable sets take PUT, and DELETE of their $value; the rest are only read.
      for (const p of type.properties.slice(1, 3)) {
        const writable = missingFor(p.access === 'writable' && type.access !== 'readOnly');
        await sameAsMissing(`PUT ${set}/${p.name}`, foreign, (id) => call(a, 'PUT', `${entity(id)}/${p.name}`, { body: { [p.name]: null } }), writable);
        await sameAsMissing(`DELETE ${set}/${p.name}/$value`, foreign, (id) => call(a, 'DELETE', `${entity(id)}/${p.name}/$value`), writable);
      }
    });
  }
});

describe("A's requests that name B's entities in A's own paths and bodies", () => {
  test('navigating from A\'s entity to B\'s by key, and $links to B\'s entities', async () => {
    for (const type of model.entityTypes) {
      const own = `/${type.setName}(${aIds[type.name]}L)`;
      for (const nav of type.navigations.filter((n) => n.many)) {
        const foreign = bIds[nav.target]!;
        for (const name of navNames(nav)) {
          await sameAsMissing(`GET ${type.setName}/${name}(B)`, foreign, (id) => call(a, 'GET', `${own}/${name}(${id}L)`));
          await sameAsMissing(`GET ${type.setName}/${name}(B)/Id`, foreign, (id) => call(a, 'GET', `${own}/${name}(${id}L)/Id`));
          const targetWrites = ENTITY_WRITES[typeOf(nav.target).access];
          await sameAsMissing(`MERGE ${type.setName}/${name}(B)`, foreign, (id) => call(a, 'MERGE', `${own}/${name}(${id}L)`, { body: updateBody(typeOf(nav.target)) }), missingFor(targetWrites.includes('MERGE')));
          await sameAsMissing(`DELETE ${type.setName}/${name}(B)`, foreign, (id) => call(a, 'DELETE', `${own}/${name}(${id}L)`), missingFor(targetWrites.includes('DELETE')));
          await sameAsMissing(`GET ${type.setName}/$links/${name}(B)`, foreign, (id) => call(a, 'GET', `${own}/$links/${name}(${id}L)`));
          const targetSet = typeOf(nav.target).setName;
          const access = linkAccess(model, nav);
          await sameAsMissing(`DELETE ${type.setName}/$links/${name}(B)`, foreign, (id) => call(a, 'DELETE', `${own}/$links/${name}(${id}L)`), missingFor(access.remove));
          await sameAsMissing(`POST ${type.setName}/$links/${name} naming B`, foreign, (id) => call(a, 'POST', `${own}/$links/${name}`, { body: { uri: `${targetSet}(${id}L)` } }), missingFor(access.add));
          await sameAsMissing(`POST ${type.setName}/$links/${name} naming B, absolute XML`, foreign, (id) =>
            call(a, 'POST', `${own}/$links/${name}`, { body: `<uri xmlns="${D_NS}">${live.root}/${targetSet}(${id}L)</uri>` }), missingFor(access.add));
        }
      }
    }
  });

  test('updating a to-one link of A\'s entity to B\'s entity', async () => {
    for (const type of model.entityTypes) {
      const own = `/${type.setName}(${aIds[type.name]}L)`;
      for (const nav of type.navigations.filter((n) => !n.many)) {
        const targetSet = typeOf(nav.target).setName;
        for (const method of ['PUT', 'MERGE']) {
          await sameAsMissing(`${method} ${type.setName}/$links/${nav.name} naming B`, bIds[nav.target]!, (id) =>
            call(a, method, `${own}/$links/${nav.name}`, { body: { uri: `${targetSet}(${id}L)` } }), [400, 404, 405]);
        }
      }
    }
  });

  test('creating with a foreign key that names B\'s row is refused like a missing row (400)', async () => {
    for (const type of model.entityTypes.filter((t) => CREATE[t.name])) {
      for (const r of model.relations) {
        if (r.kind !== 'reference' || r.dependent !== type.name) continue;
        const foreign = bIds[r.principal]!;
        const body = (id: string) => ({ ...CREATE[type.name], ...ownForeignKeys(type), [r.foreignKey]: id });
        await sameAsMissing(`POST ${type.setName} ${r.foreignKey}`, foreign, (id) => call(a, 'POST', `/${type.setName}`, { body: body(id) }), [400]);
        await sameAsMissing(`POST ${type.setName} ${r.foreignKey} Atom`, foreign, (id) => call(a, 'POST', `/${type.setName}`, { body: atomEntry(type, body(id) as Record<string, EntryValue>), atom: true }), [400]);
        await sameAsMissing(`MERGE ${type.setName} ${r.foreignKey}`, foreign, (id) => call(a, 'MERGE', `/${type.setName}(${aIds[type.name]}L)`, { body: { [r.foreignKey]: id } }), [400]);
        // A binding by URI instead of the property.
        if (r.dependentNav) {
          const nav = r.dependentNav;
          const principalSet = typeOf(r.principal).setName;
          const bound = (id: string) => {
            const x: Json = { ...CREATE[type.name], ...ownForeignKeys(type), [nav]: { __metadata: { uri: `${live.root}/${principalSet}(${id}L)` } } };
            delete x[r.foreignKey];
            return x;
          };
          await sameAsMissing(`POST ${type.setName} binding ${nav}`, foreign, (id) => call(a, 'POST', `/${type.setName}`, { body: bound(id) }), [400]);
          const atomBound = (id: string) => {
            const props: Json = { ...CREATE[type.name], ...ownForeignKeys(type) };
            delete props[r.foreignKey];
            return atomEntry(type, props as Record<string, EntryValue>).replace(
              '<content',
              `<link rel="http://schemas.microsoft.com/ado/2007/08/dataservices/related/${nav}" type="application/atom+xml;type=entry" href="${principalSet}(${id}L)" /><content`,
            );
          };
          await sameAsMissing(`POST ${type.setName} Atom link ${nav}`, foreign, (id) => call(a, 'POST', `/${type.setName}`, { body: atomBound(id), atom: true }), [400]);
        }
        // Through A's own parent, with the body naming B's row as the parent.
        const parentNav = typeOf(r.principal).navigations.find((n) => n.relation === r);
        if (parentNav) {
          const parentPath = `/${typeOf(r.principal).setName}(${aIds[r.principal]}L)/${parentNav.name}`;
          await sameAsMissing(`POST ${parentPath} with ${r.foreignKey} of B`, foreign, (id) => call(a, 'POST', parentPath, { body: body(id) }), [400]);
        }
      }
    }
  });

  test('many-to-many bindings in a create body that name B\'s entities', async () => {
    await sameAsMissing('POST Catalogs binding Products', bIds.Product!, (id) =>
      call(a, 'POST', '/Catalogs', { body: { Name: 'bound', Products: [{ __metadata: { uri: `Products(${id}L)` } }] } }), [400, 404]);
    await sameAsMissing('POST Catalogs binding ChildCatalogs', bIds.Catalog!, (id) =>
      call(a, 'POST', '/Catalogs', { body: { Name: 'bound', ChildCatalogs: { results: [{ __metadata: { uri: `${live.root}/Catalogs(${id}L)` } }] } } }), [400, 404]);
    await sameAsMissing('POST Products binding Catalogs', bIds.Catalog!, (id) =>
      call(a, 'POST', '/Products', { body: { Title: 'bound', Price: '1', StockAmount: 1, Catalogs: [{ __metadata: { uri: `Catalogs(${id}L)` } }] } }), [400, 404]);
  });

  test('a discount offer for A\'s product with B\'s variation', async () => {
    await sameAsMissing('POST DiscountOffers ProductVariationId of B', bIds.ProductVariation!, (id) =>
      call(a, 'POST', '/DiscountOffers', { body: { ProductId: aIds.Product, ProductVariationId: id, Price: '1', Type: 3 } }), [400]);
  });
});

describe("A's collections never contain B's rows", () => {
  test('every entity set, its $count, in JSON and Atom', async () => {
    for (const [set, type] of setsAndAliases()) {
      const mine = await idsInStore(a.accountId, type);
      const theirs = await idsInStore(b.accountId, type);
      assert.ok(theirs.length > 0 && mine.length > 0);
      const json = await call(a, 'GET', `/${set}`);
      assert.equal(json.status, 200);
      const d = (JSON.parse(json.body) as { d: Json[] | { results: Json[] } }).d;
      const rows = Array.isArray(d) ? d : d.results;
      assert.deepEqual(rows.map((r) => String(r.Id)), mine, `${set} in JSON`);
      const atom = await call(a, 'GET', `/${set}`, { atom: true });
      assert.equal(atom.status, 200);
      const atomIds = Array.from(parseXml(atom.body).getElementsByTagNameNS(M_NS, 'properties')).map((p) => p.getElementsByTagNameNS(D_NS, 'Id')[0]?.textContent);
      assert.deepEqual(atomIds, mine, `${set} in Atom`);
      assert.equal((await call(a, 'GET', `/${set}/$count`)).body, String(mine.length));
      assert.equal((await call(b, 'GET', `/${set}/$count`)).body, String(theirs.length));
    }
  });

  test('every navigation and $links collection of A\'s entities', async () => {
    for (const type of model.entityTypes) {
      for (const id of await idsInStore(a.accountId, type)) {
        for (const nav of type.navigations) {
          const theirs = new Set(await idsInStore(b.accountId, typeOf(nav.target)));
          const mine = new Set(await idsInStore(a.accountId, typeOf(nav.target)));
          const res = await call(a, 'GET', `/${type.setName}(${id}L)/${nav.name}`);
          if (!nav.many && res.status === 404) continue; // an unset to-one navigation
          assert.equal(res.status, 200, res.body);
          const d = (JSON.parse(res.body) as { d: Json | Json[] | { results: Json[] } }).d;
          const rows = nav.many ? (Array.isArray(d) ? d : (d as { results: Json[] }).results) : [d as Json];
          for (const row of rows) {
            assert.ok(!theirs.has(String(row.Id)), `${type.setName}(${id})/${nav.name} shows B's ${String(row.Id)}`);
            assert.ok(mine.has(String(row.Id)));
          }
          if (!nav.many) continue;
          assert.equal((await call(a, 'GET', `/${type.setName}(${id}L)/${nav.name}/$count`)).body, String(rows.length));
          const links = await call(a, 'GET', `/${type.setName}(${id}L)/$links/${nav.name}`);
          assert.equal(links.status, 200);
          const linked = JSON.parse(links.body) as { d: { uri: string }[] | { results: { uri: string }[] } };
          const uris = Array.isArray(linked.d) ? linked.d : linked.d.results;
          assert.deepEqual(uris.map((u) => /\((\d+)L\)$/.exec(u.uri)?.[1]), rows.map((r) => String(r.Id)));
        }
      }
    }
  });
});

describe('nothing of either account changed', () => {
  test("B's rows, read raw from every tenant table, are unchanged", async () => {
    assert.deepEqual(await snapshot(b.accountId), bRowsBefore);
  });

  test("A's rows are unchanged too: every request that named B's rows was refused", async () => {
    assert.deepEqual(await snapshot(a.accountId), aRowsBefore);
  });

  test('B still sees its own catalogue whole', async () => {
    for (const [set, type] of setsAndAliases()) {
      assert.equal((await call(b, 'GET', `/${set}(${bIds[type.name]}L)`)).status, 200);
    }
    const links = await call(b, 'GET', `/Products(${bIds.Product}L)/$links/Catalogs`);
    assert.match(links.body, new RegExp(`Catalogs\\(${bIds.Catalog}L\\)`));
  });
});
