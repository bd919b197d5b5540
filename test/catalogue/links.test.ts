/**
 * `$links` for every relation `$metadata` declares, against the live service. A table written out
 * here says, navigation by navigation, which link writes a seller may send (POST to a to-many
 * link, PUT to a to-one link, DELETE of a link); the service's Allow headers must say exactly that,
 * and the writes must do what they mean: a to-one link sets the foreign key (with the rules of the
 * set), a principal's to-many link takes a dependent over, ChildProducts/ParentProducts create and
 * remove ProductRelations, and a nullable link is cleared by DELETE.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { model } from '../../src/model/catalogue-model';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { createEntity, getCollection, getEntity, JSON_HEADERS } from '../support/live-client';
import { errorMessage } from '../support/odata-error';
import { D } from '../support/spec';
import { batchBody, changesetAnswers, changesetPart, jsonOperation, postBatch, readBatchAnswer } from '../batch/support';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'links');
});
after(() => live.close());

/** Writable links, by `Type.Navigation`: what a seller may send. Every other navigation's links are read only. */
const WRITABLE: Readonly<Record<string, 'POST' | 'POST, DELETE' | 'PUT' | 'PUT, DELETE'>> = {
  'Product.ProductImages': 'POST',
  'Product.ProductSpecifics': 'POST',
  'Product.ProductVariations': 'POST',
  'Product.OptionalProductAttributes': 'POST',
  'Product.DiscountOffers': 'POST',
  'Product.CarParts': 'POST',
  'Product.ChildProducts': 'POST, DELETE',
  'Product.ParentProducts': 'POST, DELETE',
  'Product.Catalogs': 'POST, DELETE',
  'Catalog.Products': 'POST, DELETE',
  'Catalog.ChildCatalogs': 'POST, DELETE',
  'Catalog.ParentCatalogs': 'POST, DELETE',
  'ProductImage.Product': 'PUT',
  'ProductSpecific.Product': 'PUT',
  'ProductVariation.Product': 'PUT',
  'OptionalProductAttribute.Product': 'PUT',
  'DiscountOffer.Product': 'PUT',
  'CarPart.Product': 'PUT',
  'ProductRelation.ParentProduct': 'PUT',
  'ProductRelation.ChildProduct': 'PUT',
  'ProductVariation.ProductVariationSpecifics': 'POST',
  'ProductVariation.ProductVariationImages': 'POST',
  'ProductVariation.ProductVariationPictures': 'POST',
  'ProductVariation.DiscountOffers': 'POST, DELETE',
  'ProductVariationSpecific.ProductVariation': 'PUT',
  'ProductVariationImage.ProductVariation': 'PUT',
  'DiscountOffer.ProductVariation': 'PUT, DELETE',
};

const send = (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<HttpResponse> =>
  asSeller(seller, `${live.root}/${path}`, {
    method,
    headers: { ...JSON_HEADERS, 'Content-Type': contentType },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });

const uri = (set: string, id: string) => ({ uri: `${live.root}/${set}(${id}L)` });

function assertStatus(res: HttpResponse, status: number, what: string): void {
  assert.equal(res.status, status, `${what}: ${res.body}`);
}

describe('$links', () => {
  test('the Allow header of every navigation\'s links says exactly which link writes the table grants', async () => {
    const wrong: string[] = [];
    for (const type of model.entityTypes) {
      for (const nav of type.navigations) {
        const grant = WRITABLE[`${type.name}.${nav.name}`] ?? '';
        // PATCH is never taken by a link: the 405 lists what is.
        const links = `${type.setName}(1L)/$links/${nav.name}`;
        const allowOf = async (path: string) => String((await send('PATCH', path, {})).headers.allow);
        if (nav.many) {
          const collection = await allowOf(links);
          const expected = ['GET', 'HEAD', ...(grant.includes('POST') ? ['POST'] : [])].join(', ');
          if (collection !== expected) wrong.push(`${links}: ${collection}, expected ${expected}`);
          const one = await allowOf(`${links}(2L)`);
          const expectedOne = ['GET', 'HEAD', ...(grant.includes('DELETE') ? ['DELETE'] : [])].join(', ');
          if (one !== expectedOne) wrong.push(`${links}(2L): ${one}, expected ${expectedOne}`);
        } else {
          const one = await allowOf(links);
          const expected = ['GET', 'HEAD', ...(grant.includes('PUT') ? ['PUT'] : []), ...(grant.includes('DELETE') ? ['DELETE'] : [])].join(', ');
          if (one !== expected) wrong.push(`${links}: ${one}, expected ${expected}`);
        }
      }
    }
    assert.deepEqual(wrong, []);
  });

  test('a to-one link is set by PUT (JSON and XML bodies); a principal\'s to-many link takes a dependent over by POST', async () => {
    const a = await createEntity(live, seller, 'Products', { Title: 'A', Price: '1', StockAmount: 1 });
    const b = await createEntity(live, seller, 'Products', { Title: 'B', Price: '1', StockAmount: 1 });
    const image = await createEntity(live, seller, `Products(${a}L)/ProductImages`, { ImageUrl: 'https://img.example.com/1.jpg', Type: 3 });
    assertStatus(await send('PUT', `ProductImages(${image}L)/$links/Product`, uri('Products', b)), 204, 'PUT JSON');
    assert.equal((await getEntity(live, seller, 'ProductImages', image)).ProductId, b);
    assertStatus(await send('PUT', `ProductImages(${image}L)/$links/Product`, `<uri xmlns="${D}">Products(${a}L)</uri>`, 'application/xml'), 204, 'PUT XML');
    assert.equal((await getEntity(live, seller, 'ProductImages', image)).ProductId, a);
    const linked = await asSeller(seller, `${live.root}/ProductImages(${image}L)/$links/Product`, { headers: { Accept: 'application/json' } });
    assert.match(linked.body, new RegExp(`Products\\(${a}L\\)`));

    const specific = await createEntity(live, seller, `Products(${a}L)/ProductSpecifics`, { Name: 'Colour', Value: 'red' });
    assertStatus(await send('POST', `Products(${b}L)/$links/ProductSpecifics`, uri('ProductSpecifics', specific)), 204, 'POST to-many reference');
    assert.equal((await getEntity(live, seller, 'ProductSpecifics', specific)).ProductId, b);
    // A dependent that must belong somewhere cannot be unlinked.
    assertStatus(await send('DELETE', `ProductImages(${image}L)/$links/Product`), 405, 'DELETE of a required link');
    assertStatus(await send('DELETE', `Products(${b}L)/$links/ProductSpecifics(${specific}L)`), 405, 'DELETE of a required dependent');
  });

  test('a link write keeps the rules of the set and writes nothing when it breaks one', async () => {
    const a = await createEntity(live, seller, 'Products', { Title: 'Ra', Price: '1', StockAmount: 1 });
    const b = await createEntity(live, seller, 'Products', { Title: 'Rb', Price: '1', StockAmount: 1 });
    const first = await createEntity(live, seller, `Products(${a}L)/ProductImages`, { ImageUrl: 'https://img.example.com/a.jpg', Type: 1 });
    await createEntity(live, seller, `Products(${b}L)/ProductImages`, { ImageUrl: 'https://img.example.com/b.jpg', Type: 1 });
    const before = await tenantRows(live, seller.accountId);
    const slot = await send('PUT', `ProductImages(${first}L)/$links/Product`, uri('Products', b));
    assertStatus(slot, 409, 'a second image of Type 1');
    assert.match(errorMessage(slot), /Type 1/);
    assertStatus(await send('PUT', `ProductImages(${first}L)/$links/Product`, uri('Products', '999999')), 404, 'a missing product');
    assertStatus(await send('PUT', `ProductImages(${first}L)/$links/Product`, uri('Catalogs', a)), 400, 'a URI of another set');
    assert.deepEqual(await tenantRows(live, seller.accountId), before);
  });

  test('ChildProducts and ParentProducts: POST creates the ProductRelation, DELETE removes it, the relation rules hold', async () => {
    const parent = await createEntity(live, seller, 'Products', { Title: 'Parent', Price: '1', StockAmount: 1 });
    const child = await createEntity(live, seller, 'Products', { Title: 'Child', Price: '1', StockAmount: 1 });
    const other = await createEntity(live, seller, 'Products', { Title: 'Other', Price: '1', StockAmount: 1 });
    assertStatus(await send('POST', `Products(${parent}L)/$links/ChildProducts`, uri('Products', child)), 204, 'POST ChildProducts');
    assertStatus(await send('POST', `Products(${other}L)/$links/ParentProducts`, uri('Products', parent)), 204, 'POST ParentProducts');
    const children = await getCollection(live, seller, `Products(${parent}L)/ChildProducts`);
    assert.deepEqual(children.map((p) => p.Title).sort(), ['Child', 'Other']);
    const relations = await getCollection(live, seller, `ProductRelations?$filter=ParentProductId eq ${parent}L`);
    assert.deepEqual(relations.map((r) => r.Quantity), [1, 1], 'created with the default Quantity');

    // The same pair again answers as a duplicate ProductRelation does; a cycle and a self-link are refused.
    const duplicateRelation = await send('POST', 'ProductRelations', { ParentProductId: parent, ChildProductId: child });
    const duplicateLink = await send('POST', `Products(${parent}L)/$links/ChildProducts`, uri('Products', child));
    assert.ok(duplicateLink.status === 400 || duplicateLink.status === 409, duplicateLink.body);
    assert.equal(duplicateLink.status, duplicateRelation.status);
    assertStatus(await send('POST', `Products(${child}L)/$links/ChildProducts`, uri('Products', parent)), 400, 'a cycle');
    assertStatus(await send('POST', `Products(${child}L)/$links/ChildProducts`, uri('Products', child)), 400, 'a self-relation');

    assertStatus(await send('DELETE', `Products(${parent}L)/$links/ChildProducts(${child}L)`), 204, 'DELETE ChildProducts');
    assertStatus(await send('DELETE', `Products(${parent}L)/$links/ChildProducts(${child}L)`), 404, 'DELETE again');
    assertStatus(await send('DELETE', `Products(${other}L)/$links/ParentProducts(${parent}L)`), 204, 'DELETE ParentProducts');
    assert.deepEqual(await getCollection(live, seller, `Products(${parent}L)/ChildProducts`), []);
    assert.deepEqual(await getCollection(live, seller, `ProductRelations?$filter=ParentProductId eq ${parent}L`), []);
  });

  test('a nullable link (a discount offer\'s variation) is set and cleared from both ends', async () => {
    const product = await createEntity(live, seller, 'Products', { Title: 'Offers', Price: '5', StockAmount: 1 });
    const variation = await createEntity(live, seller, `Products(${product}L)/ProductVariations`, { Price: '5', StockAmount: 1, Sku: 'V' });
    const offer = await createEntity(live, seller, `Products(${product}L)/DiscountOffers`, { Price: '4', Type: 1 });
    const variationOf = async () => (await getEntity(live, seller, 'DiscountOffers', offer)).ProductVariationId;
    assertStatus(await send('PUT', `DiscountOffers(${offer}L)/$links/ProductVariation`, uri('ProductVariations', variation)), 204, 'PUT');
    assert.equal(await variationOf(), variation);
    assertStatus(await send('DELETE', `DiscountOffers(${offer}L)/$links/ProductVariation`), 204, 'DELETE to-one');
    assert.equal(await variationOf(), null);
    assertStatus(await send('POST', `ProductVariations(${variation}L)/$links/DiscountOffers`, uri('DiscountOffers', offer)), 204, 'POST');
    assert.equal(await variationOf(), variation);
    assertStatus(await send('DELETE', `ProductVariations(${variation}L)/$links/DiscountOffers(${offer}L)`), 204, 'DELETE to-many');
    assert.equal(await variationOf(), null);
    assertStatus(await send('DELETE', `ProductVariations(${variation}L)/$links/DiscountOffers(${offer}L)`), 404, 'DELETE of a link that is not there');
  });

  test('link writes inside a $batch changeset', async () => {
    const parent = await createEntity(live, seller, 'Products', { Title: 'BP', Price: '1', StockAmount: 1 });
    const child = await createEntity(live, seller, 'Products', { Title: 'BC', Price: '1', StockAmount: 1 });
    const image = await createEntity(live, seller, `Products(${parent}L)/ProductImages`, { ImageUrl: 'https://img.example.com/batch.jpg', Type: 3 });
    const res = await postBatch(
      live,
      seller,
      batchBody([
        changesetPart([
          jsonOperation('POST', `Products(${parent}L)/$links/ChildProducts`, 1, uri('Products', child)),
          jsonOperation('PUT', `ProductImages(${image}L)/$links/Product`, 2, uri('Products', child)),
        ]),
      ]),
    );
    assert.deepEqual(changesetAnswers(readBatchAnswer(res)[0]).map((a) => a.status), [204, 204]);
    assert.equal((await getEntity(live, seller, 'ProductImages', image)).ProductId, child);
    assert.deepEqual((await getCollection(live, seller, `Products(${parent}L)/ChildProducts`)).map((p) => p.Title), ['BC']);
  });
});
