/**
 * Text outside ASCII in streamed feeds. A streamed feed encodes String values that hold such
 * characters apart from the ASCII around them (src/odata/text-sink.ts): this replays what a
 * connector sends (JSON with every non-ASCII character as a \uXXXX escape) and reads the feeds
 * back with datajs, in JSON verbose and in Atom, with and without an expansion. Every value must
 * come back as sent, in its place, and the bytes must be valid UTF-8; each streamed entity must
 * equal the same entity read by key (written in one piece, without the streaming sink).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../support/http-client';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { loadDatajs, odataRequest, type ODataHandler } from '../clients/datajs';

type Entity = Record<string, unknown>;

let live: LiveService;
let seller: Seller;

/** Long enough that its UTF-8 cannot fit the rest of a 64 KiB output buffer. */
const LONG_UMLAUTS = 'Ä'.repeat(30_000);
/** ASCII on both sides of one character outside it, longer than the sink's thresholds. */
const PADDED = `${'a'.repeat(300)}ß${'z'.repeat(300)}`;

/** Title and Description of each product: Latin-1, other BMP, astral (surrogate pairs), ASCII. */
const TEXTS: readonly { readonly title: string; readonly description: string | null; readonly specific: string }[] = [
  { title: 'Größe – 20 €', description: '<p>Grün & „schön“</p>', specific: 'Größe' },
  { title: '😀 am Anfang', description: 'am Ende 😀', specific: 'ASCII only' },
  { title: 'plain ASCII title', description: PADDED, specific: 'ö' },
  { title: 'ÄÖÜäöüß', description: LONG_UMLAUTS, specific: '日本語のテキスト' },
  { title: 'x', description: null, specific: '–' },
];

/** The connector's JSON: `/` as `\/` and every non-ASCII character as a \uXXXX escape. */
function connectorJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

async function post(path: string, body: unknown): Promise<Entity> {
  const res = await asSeller(seller, `${live.root}/${path}`, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: connectorJson(body),
  });
  assert.equal(res.status, 201, res.body);
  return (JSON.parse(res.body) as { d: Entity }).d;
}

const ids: string[] = [];

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'streamed-text');
  for (const [i, t] of TEXTS.entries()) {
    const product = await post('Products', { ForeignId: `T-${i}`, Title: t.title, Description: t.description, Price: '1.00', StockAmount: 1, ProductType: 0 });
    ids.push(product.Id as string);
    await post('ProductSpecifics', { ProductId: product.Id, Name: t.specific, Value: `${t.specific} ${i}` });
  }
});
after(() => live.close());

const FORMATS: readonly { readonly name: string; readonly handler: () => ODataHandler }[] = [
  { name: 'JSON', handler: () => loadDatajs().jsonHandler },
  { name: 'Atom', handler: () => loadDatajs().atomHandler },
];

async function read(path: string, handler: ODataHandler): Promise<unknown> {
  const { data } = await odataRequest({ requestUri: `${live.root}/${path}`, headers: seller.auth }, handler);
  return data;
}

/** The values this test compares, whatever else a format adds (datajs' metadata differs by format). */
function texts(entity: Entity): Entity {
  const specifics = entity.ProductSpecifics as { results?: Entity[] } | Entity[] | undefined;
  const list = specifics === undefined ? undefined : Array.isArray(specifics) ? specifics : specifics.results;
  return {
    Id: entity.Id,
    Title: entity.Title,
    Description: entity.Description,
    ...(list ? { ProductSpecifics: list.map((s) => ({ Name: s.Name, Value: s.Value })) } : {}),
  };
}

describe('text outside ASCII in streamed feeds', () => {
  for (const format of FORMATS) {
    for (const expand of [false, true]) {
      test(`${format.name}${expand ? ' with $expand=ProductSpecifics' : ''}: every value as sent, each entity as its GET by key`, async () => {
        const query = expand ? '?$expand=ProductSpecifics' : '';
        const feed = (await read(`Products${query}`, format.handler())) as { results: Entity[] };
        assert.equal(feed.results.length, TEXTS.length);
        for (const [i, t] of TEXTS.entries()) {
          const entity = feed.results.find((e) => e.Id === ids[i]);
          assert.ok(entity, `product ${ids[i]} in the feed`);
          const expected: Entity = { Id: ids[i], Title: t.title, Description: t.description };
          if (expand) expected.ProductSpecifics = [{ Name: t.specific, Value: `${t.specific} ${i}` }];
          assert.deepEqual(texts(entity), expected, `product ${i} in the ${format.name} feed`);
          const single = (await read(`Products(${ids[i]}L)${query}`, format.handler())) as Entity;
          assert.deepEqual(texts(single), texts(entity), `product ${i}: the feed's entity and the GET by key`);
        }
      });
    }
  }

  test('the streamed bytes are valid UTF-8 in both formats', async () => {
    for (const accept of ['application/json', 'application/atom+xml']) {
      const res = await request(`${live.root}/Products?$expand=ProductSpecifics`, { headers: { ...seller.auth, Accept: accept } });
      assert.equal(res.status, 200);
      // Bytes that are not UTF-8 decode to U+FFFD, which no value here holds.
      assert.ok(!res.body.includes('\uFFFD'), `${accept}: the body is not valid UTF-8`);
      for (const t of TEXTS) assert.ok(res.body.includes(t.title), `${accept}: ${t.title}`);
    }
  });
});
