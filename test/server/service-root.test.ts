/**
 * The service root and its metadata over real HTTP: the service document in both formats, the
 * protocol headers on every answer, version handling, content negotiation and path matching.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadDatajs, odataRequest, parseXml } from '../clients/datajs';
import { EDM, SPEC_ENTITY_SETS } from '../support/spec';
import { asSeller as asSellerDeclaring, CONNECTOR_VERSIONS, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import type { HttpRequest } from '../support/http-client';

/** Every request declares its versions as the connector does, and so gets the 1.0 shapes it reads. */
const asSeller = (who: Seller, url: string, init: HttpRequest = {}) => asSellerDeclaring(who, url, { ...init, headers: { ...CONNECTOR_VERSIONS, ...(init.headers ?? {}) } });

const SPEC_SETS = SPEC_ENTITY_SETS;

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live);
});
after(() => live.close());

describe('service document', () => {
  test('Atom/AtomPub lists exactly the 17 sets with xml:base on the service root', async () => {
    const res = await asSeller(seller, live.root + '/');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/xml;charset=utf-8');
    const doc = parseXml(res.body);
    const service = doc.documentElement;
    assert.equal(service.localName, 'service');
    assert.equal(service.namespaceURI, 'http://www.w3.org/2007/app');
    assert.equal(service.getAttribute('xml:base'), live.root + '/');
    const hrefs = Array.from(doc.getElementsByTagNameNS('http://www.w3.org/2007/app', 'collection')).map((c) => c.getAttribute('href'));
    assert.deepEqual([...hrefs].sort(), [...SPEC_SETS].sort());
    const titles = Array.from(doc.getElementsByTagNameNS('http://www.w3.org/2005/Atom', 'title')).map((t) => t.textContent);
    assert.ok(titles.includes('Default'));
  });

  test('JSON is {"d":{"EntitySets":[…]}} with the same 17 sets', async () => {
    const res = await asSeller(seller, live.root + '/', { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json;charset=utf-8');
    const body = JSON.parse(res.body) as { d: { EntitySets: string[] } };
    assert.deepEqual(Object.keys(body), ['d']);
    assert.deepEqual([...body.d.EntitySets].sort(), [...SPEC_SETS].sort());
  });

  test('$format=json, Accept with odata=verbose, and the datajs default Accept all negotiate', async () => {
    const viaFormat = await asSeller(seller, live.root + '/?$format=json');
    assert.equal(viaFormat.headers['content-type'], 'application/json;charset=utf-8');
    const verbose = await asSeller(seller, live.root + '/', { headers: { Accept: 'application/json;odata=verbose' } });
    assert.equal(verbose.headers['content-type'], 'application/json;charset=utf-8');
    const datajsDefault = await asSeller(seller, live.root + '/', {
      headers: { Accept: 'application/atomsvc+xml;q=0.8, application/json;odata=verbose;q=0.5, */*;q=0.1' },
    });
    assert.equal(datajsDefault.headers['content-type'], 'application/atomsvc+xml;charset=utf-8');
    const atomFormat = await asSeller(seller, live.root + '/?$format=xml');
    assert.equal(atomFormat.headers['content-type'], 'application/xml;charset=utf-8');
  });

  test('an unsatisfiable Accept is a 406 OData error', async () => {
    const res = await asSeller(seller, live.root + '/', { headers: { Accept: 'image/png' } });
    assert.equal(res.status, 406);
    assert.match(res.body, /<error xmlns="http:\/\/schemas.microsoft.com\/ado\/2007\/08\/dataservices\/metadata">/);
  });

  test('the service path is matched case-insensitively, with or without the trailing slash', async () => {
    for (const path of ['/PublicApi/v1/Api.svc/', '/PUBLICAPI/V1/API.SVC', '/publicapi/v1/api.svc']) {
      const res = await asSeller(seller, live.origin + path, { headers: { Accept: 'application/json' } });
      assert.equal(res.status, 200, path);
      assert.equal((JSON.parse(res.body) as { d: { EntitySets: string[] } }).d.EntitySets.length, 17, path);
    }
  });

  test('HEAD on the root answers 200 with headers and no body (UI5 sends x-csrf-token: Fetch)', async () => {
    const res = await asSeller(seller, live.root + '/', { method: 'HEAD', headers: { 'x-csrf-token': 'Fetch' } });
    assert.equal(res.status, 200);
    assert.equal(res.body, '');
    assert.equal(res.headers['dataserviceversion'], '1.0;');
  });

  test('every answer carries DataServiceVersion 1.0;, Cache-Control no-cache and a utf-8 Content-Type', async () => {
    for (const path of ['/', '/$metadata', '/NoSuchSet', '/?$bogus=1']) {
      const res = await asSeller(seller, live.root + path);
      assert.equal(res.headers['dataserviceversion'], '1.0;', path);
      assert.equal(res.headers['cache-control'], 'no-cache', path);
      assert.match(String(res.headers['content-type']), /;charset=utf-8$/, path);
    }
  });
});

describe('$metadata', () => {
  test('is EDMX 1.0 XML with DataServiceVersion 1.0, whatever the Accept', async () => {
    for (const accept of [undefined, 'application/xml', 'application/json', '*/*']) {
      const res = await asSeller(seller, live.root + '/$metadata', accept ? { headers: { Accept: accept } } : {});
      assert.equal(res.status, 200, String(accept));
      assert.equal(res.headers['content-type'], 'application/xml;charset=utf-8');
      assert.equal(res.headers['dataserviceversion'], '1.0;');
      const doc = parseXml(res.body);
      assert.equal(doc.documentElement.localName, 'Edmx');
      assert.equal(doc.documentElement.getAttribute('Version'), '1.0');
      const sets = [...(Array.from(doc.getElementsByTagNameNS(EDM, 'EntitySet')))].map((e) => e.getAttribute('Name'));
      assert.deepEqual([...sets].sort(), [...SPEC_SETS].sort());
    }
  });

  test('$format=json on $metadata is a 406, other methods a 405 with Allow', async () => {
    const json = await asSeller(seller, live.root + '/$metadata?$format=json');
    assert.equal(json.status, 406);
    assert.match(json.body, /^\{"error":/);
    const post = await asSeller(seller, live.root + '/$metadata', { method: 'POST', body: '' });
    assert.equal(post.status, 405);
    assert.equal(post.headers['allow'], 'GET, HEAD');
  });
});

describe('datajs', () => {
  test("datajs's metadata handler reads $metadata from the live service", async () => {
    const OData = loadDatajs();
    const { data, response } = await odataRequest({ requestUri: live.root + '/$metadata', headers: seller.auth }, OData.metadataHandler);
    assert.equal(response.statusCode, 200);
    const metadata = data as {
      version: string;
      dataServices: { schema: { namespace: string; entityType: { name: string }[]; association: unknown[]; entityContainer: { entitySet: { name: string }[]; functionImport: { name: string; parameter?: unknown[] }[] }[] }[] };
    };
    assert.equal(metadata.version, '1.0');
    const schema = metadata.dataServices.schema[0]!;
    assert.equal(schema.namespace, 'CatalogueService');
    assert.equal(schema.entityType.length, 17);
    // One per relation (25), and one for ProductVariationPictures, the twin of ProductVariationImages.
    assert.equal(schema.association.length, 26);
    const container = schema.entityContainer[0]!;
    assert.deepEqual(container.entitySet.map((s) => s.name).sort(), [...SPEC_SETS].sort());
    assert.deepEqual(
      container.functionImport.map((f) => f.name).sort(),
      ['DeleteAccountData', 'GetSalesOrderHistory', 'ProductIsListed', 'ReviseInventoryStatus', 'SetCatalogProfile', 'SetEbayCategory', 'SetProductProfile'],
    );
    assert.ok(container.functionImport.every((f) => (f.parameter ?? []).length > 0));
  });

  test('datajs reads the service document in JSON', async () => {
    const OData = loadDatajs();
    const { data } = await odataRequest({ requestUri: live.root + '/', headers: seller.auth }, OData.jsonHandler);
    // datajs turns {"d":{"EntitySets":[…]}} into its workspace/collection form.
    const collections = (data as { workspaces: { collections: { title: string; href: string }[] }[] }).workspaces[0]!.collections;
    assert.deepEqual(collections.map((c) => c.title).sort(), [...SPEC_SETS].sort());
  });
});

describe('versions', () => {
  test('DataServiceVersion up to 2.0 is accepted in the forms clients send', async () => {
    for (const v of ['1.0', '2.0', '2.0;NetFx', '1.0;', '1.0;AspNetAjax']) {
      const res = await asSeller(seller, live.root + '/', { headers: { DataServiceVersion: v, MaxDataServiceVersion: '3.0' } });
      assert.equal(res.status, 200, v);
    }
  });

  test('DataServiceVersion above 2.0 or malformed is a 400 naming the header', async () => {
    for (const v of ['3.0', '4.0', '2.1', 'somethingwrong', '']) {
      const res = await asSeller(seller, live.root + '/', { headers: { DataServiceVersion: v, Accept: 'application/json' } });
      if (v === '') {
        assert.equal(res.status, 200);
        continue;
      }
      assert.equal(res.status, 400, v);
      const error = JSON.parse(res.body) as { error: { message: { value: string } } };
      assert.match(error.error.message.value, /DataServiceVersion/);
    }
  });

  test('a malformed MaxDataServiceVersion is a 400', async () => {
    const res = await asSeller(seller, live.root + '/', { headers: { MaxDataServiceVersion: 'x.y' } });
    assert.equal(res.status, 400);
    assert.match(res.body, /MaxDataServiceVersion/);
  });
});
