/**
 * The .NET WCF Data Services client creating an object graph, replayed request by request as it
 * puts them on the wire (./wcf-client.ts): a product with variations (and their specifics),
 * images and catalog links in one SaveChanges, without SaveChangesOptions.Batch (one request per
 * change, in the order the changes were made) and with it (one changeset, later operations naming
 * earlier ones by Content-ID); then the graph is read back as the client reads it.
 *
 * What the client does, and the service must take:
 * - AddRelatedObject(product, "ProductVariations", variation) POSTs Products(id)/ProductVariations
 *   with the variation's ProductId still 0: its generated class holds every foreign key as a
 *   non-nullable long, 0 until set.
 * - AddObject(image) + SetLink(image, "Product", product) POSTs the image with ProductId 0 and a
 *   binding naming the product (`<link rel=…/related/Product href=…/>`); inside a changeset the
 *   href is `$n` when the product is created in the same changeset, or the link comes later as
 *   `PUT $3/$links/Product` with `<uri>$1</uri>`.
 * - AddLink(product, "Catalogs", catalog) POSTs Products(id)/$links/Catalogs with the uri element
 *   in the METADATA namespace.
 * - In a changeset, request URIs are absolute, with `$n` as the first segment after the service
 *   root: `http://host/publicapi/v1/api.svc/$1/ProductVariations`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { batchBody, changesetAnswers, changesetPart, errorMessageOf, httpPart, postBatch, readBatchAnswer, singleAnswer, type PartAnswer } from '../batch/support';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { childElements, parseXml, type XmlElement } from './datajs';
import { ATOM, D, M } from '../support/spec';
import { readAtomEntity, typeOfSet, WCF_ATOM_HEADERS, wcfAtomEntry, wcfLinkBody, type ClientEntity, type WcfBinding } from './wcf-client';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'wcfgraph');
});
after(() => live.close());

const Product = typeOfSet('Products');
const Catalog = typeOfSet('Catalogs');
const Variation = typeOfSet('ProductVariations');
const VariationSpecific = typeOfSet('ProductVariationSpecifics');
const Image = typeOfSet('ProductImages');

let counter = 0;

const product = (): ClientEntity => new Map([['Id', '0'], ['Title', `graph ${++counter}`], ['Price', '19.99'], ['StockAmount', '4'], ['ProductType', '0']]);
const catalog = (): ClientEntity => new Map([['Id', '0'], ['Name', `catalog ${++counter}`]]);
/** Every foreign key 0, as the generated classes hold it until set. */
const variation = (sku: string): ClientEntity => new Map([['Id', '0'], ['ProductId', '0'], ['Price', '21.5'], ['StockAmount', '2'], ['Sku', sku]]);
const specific = (name: string, value: string): ClientEntity => new Map([['Id', '0'], ['ProductVariationId', '0'], ['Name', name], ['Value', value]]);
const image = (type: number, name: string): ClientEntity => new Map([['Id', '0'], ['ProductId', '0'], ['ImageUrl', `https://img.example/${name}.jpg`], ['Type', String(type)]]);

const related = (navigation: string, href: string): WcfBinding => ({ navigation, href });

/** One request as the client sends it on its own (SaveChanges without Batch). */
function send(method: string, path: string, body: string, contentType = 'application/atom+xml'): Promise<HttpResponse> {
  return asSeller(seller, live.root + path, { method, headers: { ...WCF_ATOM_HEADERS, 'Content-Type': contentType }, body });
}

function created(res: HttpResponse, type = Product): string {
  assert.equal(res.status, 201, res.body);
  return readAtomEntity(type, res.body).get('Id')!;
}

/** An operation of the client's changeset: absolute URI, Content-ID, Content-Type and Content-Length. */
function operation(method: string, target: string, contentId: number, body: string, contentType = 'application/atom+xml;type=entry'): string {
  return httpPart({
    method,
    target: target.startsWith('http') || target.startsWith('/') ? target : `${live.root}/${target}`,
    headers: [`Content-ID: ${contentId}`, `Content-Type: ${contentType}`, `Content-Length: ${Buffer.byteLength(body)}`, 'DataServiceVersion: 1.0;NetFx', 'MaxDataServiceVersion: 2.0;NetFx'],
    body,
  });
}

const link = (method: string, target: string, contentId: number, uri: string) => operation(method, target, contentId, wcfLinkBody(uri), 'application/xml');

/** The client's SaveChanges(SaveChangesOptions.Batch): one changeset, answered as one. */
async function saveInBatch(operations: readonly string[]): Promise<readonly PartAnswer[] | PartAnswer> {
  const [answer] = readBatchAnswer(await postBatch(live, seller, batchBody([changesetPart(operations)]), undefined, { DataServiceVersion: '1.0;NetFx', MaxDataServiceVersion: '2.0;NetFx' }));
  return answer?.kind === 'changeset' ? changesetAnswers(answer) : singleAnswer(answer);
}

function allSucceeded(answers: readonly PartAnswer[] | PartAnswer): readonly PartAnswer[] {
  assert.ok(Array.isArray(answers), `a changeset answer, not the error ${JSON.stringify((answers as PartAnswer).body)}`);
  return answers;
}

interface Graph {
  readonly variations: { readonly sku: string; readonly specifics: string[] }[];
  readonly images: string[];
  readonly catalogs: string[];
}

/** The product read back as the client reads a graph: the entry with $expand, in Atom. */
async function readGraph(productId: string): Promise<Graph> {
  const res = await asSeller(seller, `${live.root}/Products(${productId}L)?$expand=ProductVariations/ProductVariationSpecifics,ProductImages,Catalogs`, {
    headers: { Accept: WCF_ATOM_HEADERS.Accept!, DataServiceVersion: '1.0;NetFx', MaxDataServiceVersion: '2.0;NetFx' },
  });
  assert.equal(res.status, 200, res.body);
  const entry = parseXml(res.body).documentElement;
  const inline = (parent: XmlElement, navigation: string): XmlElement[] => {
    const l = childElements(parent, ATOM, 'link').find((e) => e.getAttribute('title') === navigation);
    assert.ok(l, `a link ${navigation}`);
    const feed = childElements(childElements(l, M, 'inline')[0]!, ATOM, 'feed')[0]!;
    return childElements(feed, ATOM, 'entry');
  };
  /** A property of an entry as the client's materializer reads it: the text in content/m:properties. */
  const text = (e: XmlElement, name: string) => {
    const properties = childElements(childElements(e, ATOM, 'content')[0]!, M, 'properties')[0]!;
    return childElements(properties, D, name)[0]?.textContent ?? '';
  };
  return {
    variations: inline(entry, 'ProductVariations')
      .map((v) => ({ sku: text(v, 'Sku'), specifics: inline(v, 'ProductVariationSpecifics').map((s) => `${text(s, 'Name')}=${text(s, 'Value')}`).sort() }))
      .sort((a, b) => a.sku.localeCompare(b.sku)),
    images: inline(entry, 'ProductImages').map((i) => `${text(i, 'Type')}:${text(i, 'ImageUrl')}`).sort(),
    catalogs: inline(entry, 'Catalogs').map((c) => text(c, 'Name')).sort(),
  };
}

const EXPECTED_GRAPH = (catalogs: string[]): Graph => ({
  variations: [
    { sku: 'GR-L', specifics: ['Size=L'] },
    { sku: 'GR-M', specifics: ['Colour=red', 'Size=M'] },
  ],
  images: ['1:https://img.example/front.jpg', '3:https://img.example/back.jpg'],
  catalogs: [...catalogs].sort(),
});

describe('SaveChanges without SaveChangesOptions.Batch: one request per change', () => {
  test('AddRelatedObject, AddObject + SetLink and AddLink make the graph the client built', async () => {
    const p = created(await send('POST', '/Products', wcfAtomEntry(Product, product())));
    const shelfName = `shelf ${counter}`;
    const shelf = created(await send('POST', '/Catalogs', wcfAtomEntry(Catalog, new Map([['Id', '0'], ['Name', shelfName]]))), Catalog);
    const productUri = `${live.root}/Products(${p}L)`;

    // AddRelatedObject(product, "ProductVariations", v): ProductId 0 under the product in the URI.
    for (const [sku, specifics] of [['GR-M', [['Size', 'M'], ['Colour', 'red']]], ['GR-L', [['Size', 'L']]]] as const) {
      const v = created(await send('POST', `/Products(${p}L)/ProductVariations`, wcfAtomEntry(Variation, variation(sku))), Variation);
      for (const [name, value] of specifics) {
        created(await send('POST', `/ProductVariations(${v}L)/ProductVariationSpecifics`, wcfAtomEntry(VariationSpecific, specific(name, value))), VariationSpecific);
      }
    }
    // AddObject(image) + SetLink(image, "Product", product): ProductId 0 and a binding naming the product.
    created(await send('POST', '/ProductImages', wcfAtomEntry(Image, image(1, 'front'), '', [related('Product', productUri)])), Image);
    created(await send('POST', '/ProductImages', wcfAtomEntry(Image, image(3, 'back'), '', [related('Product', productUri)])), Image);
    // AddLink(product, "Catalogs", shelf): the uri element in the metadata namespace.
    const linked = await send('POST', `/Products(${p}L)/$links/Catalogs`, wcfLinkBody(`${live.root}/Catalogs(${shelf}L)`), 'application/xml');
    assert.equal(linked.status, 204, linked.body);

    assert.deepEqual(await readGraph(p), EXPECTED_GRAPH([shelfName]));
  });

  test('SetLink of an image the client holds: PUT …/$links/Product with the metadata namespace', async () => {
    const [first, second] = [created(await send('POST', '/Products', wcfAtomEntry(Product, product()))), created(await send('POST', '/Products', wcfAtomEntry(Product, product())))];
    const img = created(await send('POST', '/ProductImages', wcfAtomEntry(Image, image(1, 'moved'), '', [related('Product', `${live.root}/Products(${first}L)`)])), Image);
    const moved = await send('PUT', `/ProductImages(${img}L)/$links/Product`, wcfLinkBody(`${live.root}/Products(${second}L)`), 'application/xml');
    assert.equal(moved.status, 204, moved.body);
    assert.deepEqual((await readGraph(second)).images, ['1:https://img.example/moved.jpg']);
  });

  test('a foreign key that is set and names another parent than the URI or the binding is still a 400', async () => {
    const [p, other] = [created(await send('POST', '/Products', wcfAtomEntry(Product, product()))), created(await send('POST', '/Products', wcfAtomEntry(Product, product())))];
    const underUri = await send('POST', `/Products(${p}L)/ProductVariations`, wcfAtomEntry(Variation, variation('X').set('ProductId', other)));
    assert.equal(underUri.status, 400, underUri.body);
    assert.match(underUri.body, new RegExp(`ProductId ${other} contradicts the parent ${p}`));
    const bound = await send('POST', '/ProductImages', wcfAtomEntry(Image, image(1, 'x').set('ProductId', other), '', [related('Product', `${live.root}/Products(${p}L)`)]));
    assert.equal(bound.status, 400, bound.body);
    assert.match(bound.body, new RegExp(`ProductId ${other} contradicts the binding of &apos;Product&apos; to ${p}`));
    // Without any parent named, 0 names nothing.
    const alone = await send('POST', '/ProductImages', wcfAtomEntry(Image, image(1, 'y')));
    assert.equal(alone.status, 400, alone.body);
    assert.match(alone.body, /ProductId 0 does not refer to an existing Product/);
  });
});

describe('SaveChanges(SaveChangesOptions.Batch): one changeset, $n for what it creates', () => {
  test('the graph with $n in absolute URIs, in bindings and as $links bodies, images linked by a later PUT $n/$links/Product', async () => {
    const existingName = `existing ${++counter}`;
    const existing = created(await send('POST', '/Catalogs', wcfAtomEntry(Catalog, new Map([['Id', '0'], ['Name', existingName]]))), Catalog);
    const newShelf = catalog();
    const answers = allSucceeded(
      await saveInBatch([
        operation('POST', 'Products', 1, wcfAtomEntry(Product, product())),
        operation('POST', `${live.root}/$1/ProductVariations`, 2, wcfAtomEntry(Variation, variation('GR-M'))),
        operation('POST', `${live.root}/$2/ProductVariationSpecifics`, 3, wcfAtomEntry(VariationSpecific, specific('Size', 'M'))),
        operation('POST', `${live.root}/$2/ProductVariationSpecifics`, 4, wcfAtomEntry(VariationSpecific, specific('Colour', 'red'))),
        // AddObject + SetLink, the product created in this changeset: ProductId 0 and a $links PUT later.
        operation('POST', 'ProductVariations', 5, wcfAtomEntry(Variation, variation('GR-L'))),
        operation('POST', `${live.root}/$5/ProductVariationSpecifics`, 6, wcfAtomEntry(VariationSpecific, specific('Size', 'L'))),
        // AddObject + SetLink written as a binding to $1.
        operation('POST', 'ProductImages', 7, wcfAtomEntry(Image, image(1, 'front'), '', [related('Product', '$1')])),
        operation('POST', 'ProductImages', 8, wcfAtomEntry(Image, image(3, 'back'))),
        operation('POST', 'Catalogs', 9, wcfAtomEntry(Catalog, newShelf)),
        // AddLink to a catalog that exists and to one created here.
        link('POST', `${live.root}/$1/$links/Catalogs`, 10, `${live.root}/Catalogs(${existing}L)`),
        link('POST', `${live.root}/$1/$links/Catalogs`, 11, '$9'),
        link('PUT', `${live.root}/$5/$links/Product`, 12, '$1'),
        link('PUT', `${live.root}/$8/$links/Product`, 13, '$1'),
      ]),
    );
    assert.deepEqual(answers.map((a) => a.status), [201, 201, 201, 201, 201, 201, 201, 201, 201, 204, 204, 204, 204], answers.map((a) => a.body).join('\n'));
    assert.deepEqual(answers.map((a) => a.headers.get('content-id')), ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13']);
    const p = readAtomEntity(Product, answers[0]!.body).get('Id')!;
    assert.deepEqual(await readGraph(p), EXPECTED_GRAPH([existingName, newShelf.get('Name')!]));
  });

  test('host-relative targets, a MERGE binding $n, and JSON $links bodies {"uri":"$n"} inside the changeset', async () => {
    const answers = allSucceeded(
      await saveInBatch([
        operation('POST', '/publicapi/v1/api.svc/Products', 1, wcfAtomEntry(Product, product())),
        operation('POST', '/publicapi/v1/api.svc/$1/ProductImages', 2, wcfAtomEntry(Image, image(1, 'front'))),
        operation('POST', '/publicapi/v1/api.svc/Catalogs', 3, wcfAtomEntry(Catalog, catalog())),
        operation('POST', '/publicapi/v1/api.svc/$1/$links/Catalogs', 4, '{"uri":"$3"}', 'application/json'),
        operation('POST', '/publicapi/v1/api.svc/Products', 5, wcfAtomEntry(Product, product())),
        // The image moves to the second product by a binding to $5 in a MERGE of $2.
        operation('MERGE', '/publicapi/v1/api.svc/$2', 6, wcfAtomEntry(Image, image(1, 'front'), '', [related('Product', '$5')])),
      ]),
    );
    assert.deepEqual(answers.map((a) => a.status), [201, 201, 201, 204, 201, 204], answers.map((a) => a.body).join('\n'));
    const [first, second] = [readAtomEntity(Product, answers[0]!.body).get('Id')!, readAtomEntity(Product, answers[4]!.body).get('Id')!];
    assert.equal((await readGraph(first)).catalogs.length, 1);
    assert.deepEqual((await readGraph(second)).images, ['1:https://img.example/front.jpg']);
  });

  test('objects added before their parent: the child waits for the parent the later $links request names, the answers keep their order', async () => {
    // AddObject(image); AddObject(variation); AddRelatedObject(variation, specifics); AddObject(product); SetLink(image/variation, "Product", product).
    const answers = allSucceeded(
      await saveInBatch([
        operation('POST', 'ProductImages', 1, wcfAtomEntry(Image, image(1, 'front'))),
        operation('POST', 'ProductVariations', 2, wcfAtomEntry(Variation, variation('GR-L'))),
        operation('POST', `${live.root}/$2/ProductVariationSpecifics`, 3, wcfAtomEntry(VariationSpecific, specific('Size', 'L'))),
        operation('POST', 'Products', 4, wcfAtomEntry(Product, product())),
        link('PUT', `${live.root}/$1/$links/Product`, 5, '$4'),
        link('PUT', `${live.root}/$2/$links/Product`, 6, `$4`),
      ]),
    );
    assert.deepEqual(answers.map((a) => a.status), [201, 201, 201, 201, 204, 204], answers.map((a) => a.body).join('\n'));
    assert.deepEqual(answers.map((a) => a.headers.get('content-id')), ['1', '2', '3', '4', '5', '6']);
    const p = readAtomEntity(Product, answers[3]!.body).get('Id')!;
    assert.equal(readAtomEntity(Image, answers[0]!.body).get('ProductId'), p, 'the 201 of the image names its product');
    const graph = await readGraph(p);
    assert.deepEqual(graph.images, ['1:https://img.example/front.jpg']);
    assert.deepEqual(graph.variations, [{ sku: 'GR-L', specifics: ['Size=L'] }]);
  });

  test('a $n that names no earlier operation of the changeset is a 400 naming it, in a target, a $links body and a binding', async () => {
    for (const [operations, named] of [
      [[operation('POST', `${live.root}/$7/ProductVariations`, 1, wcfAtomEntry(Variation, variation('N')))], /'7'/],
      [[operation('POST', 'Products', 1, wcfAtomEntry(Product, product())), link('POST', `${live.root}/$1/$links/Catalogs`, 2, '$8')], /Content-ID '8'/],
      [[operation('POST', 'ProductImages', 1, wcfAtomEntry(Image, image(1, 'n'), '', [related('Product', '$1')]))], /Content-ID '1'/],
    ] as const) {
      const answer = await saveInBatch(operations);
      assert.ok(!Array.isArray(answer), 'the changeset fails whole');
      const failed = answer as PartAnswer;
      assert.equal(failed.status, 400, failed.body);
      assert.match(errorMessageOf(failed), named);
    }
  });

  test('a changeset that leaves a required reference unset fails whole with a 400 naming the Content-ID and the property', async () => {
    const title = `unlinked ${++counter}`;
    const answer = await saveInBatch([
      operation('POST', 'Products', 1, wcfAtomEntry(Product, product().set('Title', title))),
      operation('POST', 'ProductImages', 2, wcfAtomEntry(Image, image(1, 'orphan'))),
    ]);
    assert.ok(!Array.isArray(answer), 'the changeset fails whole');
    const failed = answer as PartAnswer;
    assert.equal(failed.status, 400, failed.body);
    assert.equal(failed.headers.get('content-id'), '2');
    const message = errorMessageOf(failed);
    assert.match(message, /Content-ID '2'/);
    assert.match(message, /ProductId/);
    const found = await asSeller(seller, `${live.root}/Products?$filter=${encodeURIComponent(`Title eq '${title}'`)}`, { headers: { Accept: 'application/json', DataServiceVersion: '2.0' } });
    assert.deepEqual((JSON.parse(found.body) as { d: unknown[] }).d, [], 'nothing of the changeset was kept');
  });
});
