/**
 * The shop connector's reading of ProductVariation entries, replayed from its side. It reads the
 * key ProductVariationPictures from every variation it is given (the 201 of POST
 * ProductVariations, a read by key, a feed, an inline expansion, a $batch part), not only from
 * $expand, and follows it: in JSON the `__deferred.uri`, in Atom the href of the entry's link whose
 * rel is …/related/ProductVariationPictures (relative to the entry's xml:base). A missing key is a
 * PHP warning, and the shop platform it runs in turns every warning into an exception: the
 * readers below throw where the connector would die.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { childElements, parseXml, type XmlElement } from '../clients/datajs';
import type { HttpResponse } from '../support/http-client';
import { asSeller as asSellerDeclaring, CONNECTOR_VERSIONS, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import type { HttpRequest } from '../support/http-client';
import { ATOM, D, M } from '../support/spec';

/** Every request declares its versions as the connector does, and so gets the 1.0 shapes it reads. */
const asSeller = (who: Seller, url: string, init: HttpRequest = {}) => asSellerDeclaring(who, url, { ...init, headers: { ...CONNECTOR_VERSIONS, ...(init.headers ?? {}) } });

const RELATED = 'http://schemas.microsoft.com/ado/2007/08/dataservices/related/';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';

let live: LiveService;
let seller: Seller;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'connector-pictures');
});
after(() => live.close());

const JSON_HEADERS = { Accept: 'application/json', 'Content-Type': 'application/json' };
const ATOM_HEADERS = { Accept: 'application/atom+xml', 'Content-Type': 'application/atom+xml' };

function ok(res: HttpResponse, status: number, what: string): HttpResponse {
  assert.equal(res.status, status, `${what}: ${res.body.slice(0, 300)}`);
  return res;
}

/** `$variation['ProductVariationPictures']['__deferred']['uri']`, or the exception the platform makes of the warning. */
function picturesUriJson(variation: Record<string, unknown>, where: string): string {
  const nav = variation['ProductVariationPictures'] as { __deferred?: { uri?: unknown } } | undefined;
  if (nav === undefined) throw new Error(`${where}: Undefined index: ProductVariationPictures`);
  const uri = nav.__deferred?.uri;
  if (typeof uri !== 'string') throw new Error(`${where}: ProductVariationPictures is not deferred`);
  return uri;
}

/** The absolute href of an Atom entry's ProductVariationPictures link. */
function picturesHrefAtom(entry: XmlElement, where: string): string {
  const link = childElements(entry, ATOM, 'link').find((l) => l.getAttribute('rel') === `${RELATED}ProductVariationPictures`);
  if (!link) throw new Error(`${where}: no ProductVariationPictures link`);
  assert.equal(link.getAttribute('title'), 'ProductVariationPictures');
  assert.equal(link.getAttribute('type'), 'application/atom+xml;type=feed');
  let base: string | null = null;
  for (let el: XmlElement | null = entry; el && base === null; el = el.parentElement) base = el.getAttributeNS(XML_NS, 'base');
  assert.ok(base, `${where}: xml:base`);
  return new URL(link.getAttribute('href')!, base.endsWith('/') ? base : base + '/').href;
}

async function newProduct(): Promise<string> {
  const res = ok(
    await asSeller(seller, `${live.root}/Products`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ Title: 'Shirt', Price: '10', StockAmount: 5 }) }),
    201,
    'POST Products',
  );
  return (JSON.parse(res.body) as { d: { Id: string } }).d.Id;
}

async function newPicture(variationId: string, url: string): Promise<string> {
  const body = JSON.stringify({ ProductVariationId: variationId, ImageUrl: url, ImagePosition: 0 });
  const res = ok(await asSeller(seller, `${live.root}/ProductVariationPictures`, { method: 'POST', headers: JSON_HEADERS, body }), 201, 'POST ProductVariationPictures');
  return (JSON.parse(res.body) as { d: { Id: string } }).d.Id;
}

/** The ids and image urls of the JSON feed at an absolute uri. */
async function picturesAtJson(uri: string): Promise<string[]> {
  const res = ok(await asSeller(seller, uri, { headers: { Accept: 'application/json' } }), 200, `GET ${uri}`);
  const d = (JSON.parse(res.body) as { d: unknown }).d;
  const rows = (Array.isArray(d) ? d : (d as { results: unknown[] }).results) as { ImageUrl: string }[];
  return rows.map((r) => r.ImageUrl);
}

async function picturesAtAtom(href: string): Promise<string[]> {
  const res = ok(await asSeller(seller, href, { headers: { Accept: 'application/atom+xml' } }), 200, `GET ${href}`);
  const feed = parseXml(res.body).documentElement;
  assert.equal(feed.localName, 'feed');
  return childElements(feed, ATOM, 'entry').map((e) => e.getElementsByTagNameNS(D, 'ImageUrl')[0]?.textContent ?? '');
}

test('JSON: the 201 of POST ProductVariations carries ProductVariationPictures, whose __deferred uri lists the pictures', async () => {
  const productId = await newProduct();
  const res = ok(
    await asSeller(seller, `${live.root}/ProductVariations`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ ProductId: productId, Price: '12.5', StockAmount: 3, Sku: 'RED-M' }),
    }),
    201,
    'POST ProductVariations',
  );
  const d = (JSON.parse(res.body) as { d: Record<string, unknown> }).d;
  const uri = picturesUriJson(d, 'POST answer');
  assert.equal(uri, `${live.root}/ProductVariations(${d.Id as string}L)/ProductVariationPictures`);
  assert.ok((d.ProductVariationImages as { __deferred: { uri: string } }).__deferred.uri.endsWith('/ProductVariationImages'));
  assert.deepEqual(await picturesAtJson(uri), []);
  await newPicture(d.Id as string, 'https://img.example.com/red-m.jpg');
  assert.deepEqual(await picturesAtJson(uri), ['https://img.example.com/red-m.jpg']);
});

test('Atom: the 201 of POST ProductVariations has a ProductVariationPictures link whose href lists the pictures', async () => {
  const productId = await newProduct();
  const entry =
    `<?xml version="1.0" encoding="utf-8"?><entry xmlns="${ATOM}" xmlns:d="${D}" xmlns:m="${M}">` +
    `<category term="CatalogueService.ProductVariation" scheme="http://schemas.microsoft.com/ado/2007/08/dataservices/scheme" />` +
    `<title /><author><name /></author><updated>2015-01-01T00:00:00Z</updated><id />` +
    `<content type="application/xml"><m:properties><d:ProductId m:type="Edm.Int64">${productId}</d:ProductId>` +
    `<d:Price m:type="Edm.Decimal">9.99</d:Price><d:StockAmount m:type="Edm.Int32">1</d:StockAmount><d:Sku>BLUE-L</d:Sku></m:properties></content></entry>`;
  const res = ok(await asSeller(seller, `${live.root}/ProductVariations`, { method: 'POST', headers: ATOM_HEADERS, body: entry }), 201, 'POST ProductVariations (Atom)');
  const root = parseXml(res.body).documentElement;
  const href = picturesHrefAtom(root, 'Atom POST answer');
  const id = /ProductVariations\((\d+)L\)/.exec(childElements(root, ATOM, 'id')[0]!.textContent ?? '')![1]!;
  assert.equal(href, `${live.root}/ProductVariations(${id}L)/ProductVariationPictures`);
  assert.deepEqual(await picturesAtAtom(href), []);
  await newPicture(id, 'https://img.example.com/blue-l.jpg');
  assert.deepEqual(await picturesAtAtom(href), ['https://img.example.com/blue-l.jpg']);
});

test('every read of a variation carries ProductVariationPictures: by key, feed, inline expansion, both formats', async () => {
  const productId = await newProduct();
  const created = ok(
    await asSeller(seller, `${live.root}/ProductVariations`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ ProductId: productId, Price: '1', StockAmount: 1 }) }),
    201,
    'POST ProductVariations',
  );
  const id = (JSON.parse(created.body) as { d: { Id: string } }).d.Id;
  await newPicture(id, 'https://img.example.com/p.jpg');

  const json = async (path: string) => (JSON.parse(ok(await asSeller(seller, live.root + path, { headers: { Accept: 'application/json' } }), 200, path).body) as { d: unknown }).d;
  const byKey = (await json(`/ProductVariations(${id}L)`)) as Record<string, unknown>;
  assert.deepEqual(await picturesAtJson(picturesUriJson(byKey, 'by key')), ['https://img.example.com/p.jpg']);
  const feed = (await json(`/Products(${productId}L)/ProductVariations`)) as Record<string, unknown>[];
  assert.equal(feed.length, 1);
  picturesUriJson(feed[0]!, 'feed');
  const product = (await json(`/Products(${productId}L)?$expand=ProductVariations`)) as { ProductVariations: Record<string, unknown>[] };
  picturesUriJson(product.ProductVariations[0]!, 'inline under a product');
  // Expanded under its own name it is inline, and ProductVariationImages stays deferred.
  const expanded = (await json(`/ProductVariations(${id}L)?$expand=ProductVariationPictures`)) as Record<string, unknown>;
  assert.deepEqual((expanded.ProductVariationPictures as { ImageUrl: string }[]).map((p) => p.ImageUrl), ['https://img.example.com/p.jpg']);
  assert.ok('__deferred' in (expanded.ProductVariationImages as object));

  const atom = async (path: string) => parseXml(ok(await asSeller(seller, live.root + path, { headers: { Accept: 'application/atom+xml' } }), 200, path).body).documentElement;
  assert.deepEqual(await picturesAtAtom(picturesHrefAtom(await atom(`/ProductVariations(${id}L)`), 'Atom by key')), ['https://img.example.com/p.jpg']);
  const atomFeed = await atom(`/Products(${productId}L)/ProductVariations`);
  picturesHrefAtom(childElements(atomFeed, ATOM, 'entry')[0]!, 'Atom feed');
  const atomProduct = await atom(`/Products(${productId}L)?$expand=ProductVariations`);
  const inlineLink = childElements(atomProduct, ATOM, 'link').find((l) => l.getAttribute('title') === 'ProductVariations')!;
  const inlineEntry = childElements(childElements(childElements(inlineLink, M, 'inline')[0]!, ATOM, 'feed')[0]!, ATOM, 'entry')[0]!;
  picturesHrefAtom(inlineEntry, 'Atom inline entry');
});

test('$batch: a changeset POST of a variation and a query of it both answer entries with ProductVariationPictures', async () => {
  const productId = await newProduct();
  const CRLF = '\r\n';
  const body = [
    '--batch_v',
    'Content-Type: multipart/mixed; boundary=changeset_v',
    '',
    '--changeset_v',
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    '',
    'POST ProductVariations HTTP/1.1',
    'Content-Type: application/json',
    'Accept: application/json',
    '',
    JSON.stringify({ ProductId: productId, Price: '2', StockAmount: 2, Sku: 'BATCH-1' }),
    '--changeset_v--',
    '--batch_v',
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    '',
    `GET Products(${productId}L)/ProductVariations HTTP/1.1`,
    'Accept: application/json',
    '',
    '',
    '--batch_v--',
    '',
  ].join(CRLF);
  const res = ok(
    await asSeller(seller, `${live.root}/$batch`, { method: 'POST', headers: { 'Content-Type': 'multipart/mixed; boundary=batch_v' }, body }),
    202,
    '$batch',
  );
  // Each part's answer body is the JSON after its blank line; the connector json_decodes each.
  const documents = res.body
    .split(/\r\n/)
    .filter((line) => line.startsWith('{"d":'))
    .map((line) => (JSON.parse(line) as { d: unknown }).d);
  assert.equal(documents.length, 2, res.body);
  const posted = documents[0] as Record<string, unknown>;
  assert.ok(/HTTP\/1\.1 201/.test(res.body));
  assert.deepEqual(await picturesAtJson(picturesUriJson(posted, 'changeset answer')), []);
  const listed = documents[1] as Record<string, unknown>[] | { results: Record<string, unknown>[] };
  const rows = Array.isArray(listed) ? listed : listed.results;
  picturesUriJson(rows[0]!, 'query part');
});
