/**
 * JSON verbose bodies for POST, PUT and MERGE: objects with typed, odd and wrongly typed values;
 * `__proto__`, `constructor` and `prototype` keys at every level (the service runs in the test's
 * process, so the suite also checks afterwards that Object.prototype was not polluted);
 * duplicate keys, 10^5-deep arrays and objects, huge strings and numbers, `__metadata` and
 * navigation bindings of every shape, broken JSON (truncated, trailing commas, comments, single
 * quotes, NaN), non-object documents, invalid UTF-8, other Content-Types and charsets.
 */
import type { FuzzContext, HttpCase } from './cases';
import { Gen, mutate } from './gen';

const ODD_VALUES: readonly string[] = [
  'null', 'true', 'false', '0', '-0', '1', '-1', '1.5', '1e400', '-1e400', '1e-400', '123456789012345678901234567890', '9223372036854775808', '2147483648', '0.1234567',
  '""', '"1"', '"12.5"', '"x"', '"1e3"', '"9223372036854775808"', '"-9223372036854775809"', '"\\u0000"', '"\\ud800"', '"😀"', '"\\u202e"', `"${'x'.repeat(300)}"`,
  '[]', '[1]', '{}', '{"a":1}', '{"__metadata":{"uri":"x"}}', '{"__deferred":{"uri":"x"}}', '"\\/Date(1379316072000)\\/"', '"\\/Date(-99999999999999999)\\/"', '"\\/Date(x)\\/"',
  '"2013-09-16T07:21:12"', '"datetime\'2013-09-16T07:21\'"',
];
const PROPERTIES = ['Title', 'Price', 'StockAmount', 'Brand', 'ProductType', 'Description', 'ExternalProductId', 'DisableAutomatch', 'UnitQuantity', 'Id', 'CreationDate', 'EbayCategoryId1', 'Nope', 'title', ''];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__', 'valueOf'];

function validish(g: Gen): Record<string, string> {
  const out: Record<string, string> = {};
  if (g.chance(0.7)) Object.assign(out, { Title: `"Fuzz ${g.int(0, 999)}"`, Price: `"${g.int(0, 500)}.${g.int(0, 99)}"`, StockAmount: String(g.int(0, 50)) });
  for (let n = g.int(0, 4); n > 0; n--) out[g.pick(PROPERTIES)] = g.pick(ODD_VALUES);
  return out;
}

/** A valid Product (as the connector writes one), so that the fuzz also reaches the writes. */
function validProduct(g: Gen): string {
  return JSON.stringify({ Title: `JSON ${g.int(0, 9999)} \u00e9\ud83d\ude00`, Price: `${g.int(0, 999)}.${g.int(0, 99)}`, StockAmount: g.int(0, 99), ...(g.chance(0.5) ? { Brand: 'Acme', Ean: null } : {}) });
}

/** Writes members as JSON text by hand, so that duplicate and prototype keys survive as written. */
const object = (members: readonly (readonly [string, string])[]) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;

function hostile(g: Gen, ctx: FuzzContext): string {
  const base = Object.entries(validish(g));
  switch (g.int(0, 13)) {
    case 0: {
      const key = g.pick(PROTO_KEYS);
      return object([...base, [key, g.pick(['{"Title":"polluted","polluted":true}', '{"prototype":{"polluted":true}}', '1', 'null', '"x"', '[]'])]]);
    }
    case 1:
      return object([['__proto__', object(base)]]);
    case 2:
      return object([...base, ['__metadata', object([['type', g.pick(['"CatalogueService.Product"', '"Nope"', '1', 'null'])], ['__proto__', '{"polluted":true}'], ['uri', '"x"']])]]);
    case 3:
      return object([...base, ['Title', '"first"'], ['Title', g.pick(['"second"', '1', 'null', '{}'])]]);
    case 4: {
      const depth = g.chance(0.5) ? 100_000 : g.int(60, 70);
      return g.chance(0.5) ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    }
    case 5: {
      const depth = 100_000;
      return object([...base, ['Description', '['.repeat(depth) + ']'.repeat(depth)]]);
    }
    case 6:
      return object([...base, ['Title', `"${'x'.repeat(g.chance(0.5) ? 900_000 : 2_000_000)}"`]]);
    case 7:
      return object([...base, [g.pick(['Price', 'StockAmount', 'ExternalProductId', 'UnitQuantity']), g.chance(0.5) ? '9'.repeat(g.int(20, 5000)) : `1e${g.int(300, 100000)}`]]);
    case 8:
      return object([...base, [g.pick(['Catalogs', 'ProductImages', 'ProductSpecifics', 'Nope']), g.pick([
        `[{"__metadata":{"uri":"${ctx.servicePath}/Catalogs(${g.pick(ctx.catalogIds)}L)"}}]`,
        '{"__metadata":{"uri":"Catalogs(99999999999999999999L)"}}',
        '[{"__metadata":{"uri":"file:///etc/passwd"}}]',
        `[{"__metadata":{"uri":"${ctx.trapUrl}/bind"}}]`,
        '[{"Title":"deep insert"}]',
        '{"__deferred":{"uri":"x"}}',
        '[1,2,3]',
        '"x"',
      ])]]);
    case 9:
      return g.pick(['', ' ', 'null', 'true', '1', '"x"', '[]', '[{}]', '{}', '{', '}', '{"Title":}', "{'Title':'x'}", '{"Title":"x",}', '{"Title":"x"/*c*/}', '{"Title":NaN}', '{"Title":undefined}', '{Title:"x"}', '{"Title":"x"}{"Title":"y"}', '\ufeff{"Title":"x"}', '{"d":{"Title":"x"}}']);
    case 10:
      return object(Array.from({ length: g.int(500, 5000) }, (_, k) => [`k${k}`, '1'] as const));
    case 11:
      return object([...base, ['Title', `"${g.pick(['\\u', '\\x41', '\\', '\\ud83d', '\u0000', '\n', '\\uZZZZ'])}"`]]);
    case 12:
      return object([[g.pick(PROTO_KEYS), object([[g.pick(PROTO_KEYS), object([['polluted', 'true']])]])]]);
    default:
      return mutate(g, object(base), ['{', '}', '[', ']', ',', ':', '"', '\\', 'null', '1e999', '\u0000', '__proto__']);
  }
}

export function jsonBodyCases(seed: number, count: number, ctx: FuzzContext): HttpCase[] {
  const g = new Gen(seed);
  const cases: HttpCase[] = [];
  for (let i = 0; i < count; i++) {
    const r = g.float();
    const method = g.pick(['POST', 'POST', 'PUT', 'MERGE', 'PATCH']);
    const target =
      method !== 'POST' ? `Products(${g.pick(ctx.productIds)}L)`
      : r < 0.1 ? 'Products'
      : g.pick(['Products', 'Products', 'Catalogs', `Products(${g.pick(ctx.productIds)}L)/ProductSpecifics`, `Products(${g.pick(ctx.productIds)}L)/$links/Catalogs`]);
    const text = r < 0.1 ? validProduct(g) : r < 0.3 ? object(Object.entries(validish(g))) : hostile(g, ctx);
    let body: string | Buffer = text;
    if (g.chance(0.03)) body = Buffer.concat([Buffer.from(text.slice(0, 10)), Buffer.from([0xc3, 0x28, 0xff, 0xed, 0xa0, 0x80]), Buffer.from(text.slice(10))]);
    else if (g.chance(0.02)) body = Buffer.from(text, 'utf16le');
    const contentType = g.chance(0.85) ? 'application/json' : g.pick(['application/json;odata=verbose', 'application/json; charset=utf-8', 'application/json; charset=utf-16', 'text/json', 'application/JSON', 'application/json;', 'json', '*/*', '']);
    // A JSON body asks its answer (and its error) in JSON, or in XML by Accept.
    const json = g.chance(0.8);
    cases.push({
      area: 'json',
      method,
      target: `${ctx.servicePath}/${target}`,
      headers: { 'Content-Type': contentType, Accept: json ? 'application/json' : 'application/atom+xml', DataServiceVersion: g.pick(['1.0', '2.0']) },
      body,
      errorFormat: json ? 'json' : 'xml',
    });
  }
  return cases;
}
