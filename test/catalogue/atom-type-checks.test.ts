/**
 * An Atom entry states its entity type in `<category term scheme=".../scheme">` and may state each
 * property's type in `m:type`: when either disagrees with the model, the write answers 400 naming
 * it and writes nothing, as a JSON body with another `__metadata.type` does. Against the live
 * service, alone and inside a $batch changeset.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { asSeller, newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { createEntity } from '../support/live-client';
import { atomEntry } from '../support/entries';
import { errorMessage } from '../support/odata-error';
import { batchBody, changesetPart, errorMessageOf, httpPart, postBatch, readBatchAnswer, singleAnswer } from '../batch/support';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'atom-types');
});
after(() => live.close());

const postAtom = (path: string, body: string, method = 'POST') =>
  asSeller(seller, `${live.root}/${path}`, { method, headers: { 'Content-Type': 'application/atom+xml', Accept: 'application/atom+xml' }, body });

describe('Atom entries whose types disagree with the model answer 400', () => {
  test('a category term naming another entity type (POST and MERGE)', async () => {
    const p = await createEntity(live, seller, 'Products', { Title: 'atom', Price: '1', StockAmount: 1 });
    const rows = await tenantRows(live, seller.accountId);
    const entry = atomEntry('ProductSpecific', { ProductId: p, Name: 'Brand', Value: 'Acme' }).replace('term="CatalogueService.ProductSpecific"', 'term="CatalogueService.ProductImage"');
    const res = await postAtom('ProductSpecifics', entry);
    assert.equal(res.status, 400, res.body);
    assert.match(errorMessage(res), /category term 'CatalogueService.ProductImage' does not match the entity type 'CatalogueService.ProductSpecific'/);
    const unknown = await postAtom(`Products(${p}L)`, atomEntry('Product', { Title: 'x' }).replace('term="CatalogueService.Product"', 'term="Other.Thing"'), 'MERGE');
    assert.equal(unknown.status, 400, unknown.body);
    assert.match(errorMessage(unknown), /category term 'Other.Thing'/);
    assert.deepEqual(await tenantRows(live, seller.accountId), rows, 'nothing written');
  });

  test("an m:type that is not the property's type in the model", async () => {
    const p = await createEntity(live, seller, 'Products', { Title: 'atom', Price: '1', StockAmount: 1 });
    const typed = atomEntry('ProductImage', { ProductId: p, ImageUrl: 'https://img.example.com/a.jpg', Type: 1 }, { typed: true });
    const res = await postAtom('ProductImages', typed.replace('m:type="Edm.Int32"', 'm:type="Edm.String"'));
    assert.equal(res.status, 400, res.body);
    assert.match(errorMessage(res), /property 'Type' of type 'CatalogueService.ProductImage' is of type 'Edm.Int32', but the entry gives m:type 'Edm.String'/);
    const int64 = await postAtom('ProductImages', typed.replace('m:type="Edm.Int64"', 'm:type="Edm.Int32"'));
    assert.equal(int64.status, 400, int64.body);
    assert.match(errorMessage(int64), /'ProductId'.*'Edm.Int64'.*m:type 'Edm.Int32'/);
    // The types the model has, as the .NET client and datajs write them, are accepted.
    assert.equal((await postAtom('ProductImages', typed)).status, 201);
  });

  test('inside a $batch changeset the whole changeset is refused', async () => {
    const p = await createEntity(live, seller, 'Products', { Title: 'atom', Price: '1', StockAmount: 1 });
    const rows = await tenantRows(live, seller.accountId);
    const good = atomEntry('ProductSpecific', { ProductId: p, Name: 'Colour', Value: 'Red' });
    const bad = good.replace('term="CatalogueService.ProductSpecific"', 'term="CatalogueService.Catalog"');
    const part = (body: string, id: number) => httpPart({ method: 'POST', target: 'ProductSpecifics', headers: [`Content-ID: ${id}`, 'Content-Type: application/atom+xml'], body });
    const answer = singleAnswer(readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart([part(good, 1), part(bad, 2)])])))[0]);
    assert.equal(answer.status, 400);
    assert.match(errorMessageOf(answer), /category term 'CatalogueService.Catalog'/);
    assert.deepEqual(await tenantRows(live, seller.accountId), rows);
  });
});
