/**
 * Key predicates: `Set(…)` with every literal form (1, 1L, 1l, -1L, 0L, the Int64 edges and
 * beyond), other types' literals (decimals, strings, guids, datetimes, booleans), named and
 * composite keys (the sets have one key, Id), empty and unbalanced parentheses, garbage and
 * Unicode, and segments after the key (navigations, properties, $value, $links, $count, a second
 * key). Mostly GETs, some writes (never on the seller's own keys). A product of another account
 * must answer 404 exactly like a missing one, for every verb.
 */
import type { FuzzContext, HttpCase } from './cases';
import { Gen, ODD_CHARACTERS, mutate, percentEncode, rawish } from './gen';
import { SETS } from './model-paths';

const KEY_FORMS = [
  '1', '1L', '1l', '0', '0L', '-1', '-1L', '-0L', '+1L', '01L', '00000000000000000000001L', '2147483647', '2147483648', '-2147483649', '9223372036854775807L', '9223372036854775808L',
  '-9223372036854775808L', '-9223372036854775809L', '18446744073709551616L', '99999999999999999999999999999L', '1' + '0'.repeat(200) + 'L', '1.5', '1.0', '1M', '1m', '1.5M', '1d', '1f',
  '1e3', '1E+3L', '0x1', '1_0', 'NaN', 'INF', "'1'", "'1L'", '"1"', "'abc'", "''", "'", "'O''Neil'", "guid'12345678-aaaa-bbbb-cccc-ddddeeeeffff'", "datetime'2013-09-16T07:21'",
  "X'01'", 'true', 'false', 'null', 'Id=1L', 'Id=1', "Id='1'", 'id=1L', 'Id = 1L', 'Id=', '=1L', 'Id=1L,Id=2L', 'Id=1L,Other=2L', 'ProductId=1L,Name=\'x\'', '1L,2L', '1L,', ',1L',
  '1L 2L', ' 1L', '1L ', '1 L', 'L', 'LL', '1LL', '-', '--1L', '', '()', '(1L)', '1L)', '(1L', '1L)(2L', '$1', '@x', '*', '%', '%00', '%zz', '%2527', '\u0000', 'é', '😀', '\ud800',
  "1L or 1 eq 1", "1L; DROP TABLE products", "1L'--", "1L)/Title eq ('x",
];

const AFTER_KEY = [
  '', '', '', '', '/Title', '/Id', '/Title/$value', '/Id/$value', '/$value', '/Nope', '/ProductImages', '/ProductSpecifics?$top=1', '/$links/Catalogs', '/$links/Catalogs(1L)',
  '/$links/Nope', '/$count', '/ProductImages/$count', '/ProductImages(1L)', '/ProductImages(1L)/Product', '(2L)', '/', '//', '/..', '/%2e%2e', '/$batch', '/$metadata', '/Title/Nope',
  '/ProductVariations(1L)/ProductVariationSpecifics', '/Product/Product/Product', '/Catalogs/$count',
];

export function keyCases(seed: number, count: number, ctx: FuzzContext): HttpCase[] {
  const g = new Gen(seed);
  const cases: HttpCase[] = [];
  const path = ctx.servicePath;
  for (let i = 0; i < count; i++) {
    const json = g.chance(0.5);
    const headers = { Accept: json ? 'application/json' : 'application/atom+xml', 'Content-Type': 'application/json', MaxDataServiceVersion: '2.0' };
    const errorFormat = json ? 'json' : 'xml';
    if (g.chance(0.1)) {
      // Another account's product, in every key form that names it and with every verb: a 404.
      const key = g.pick([`${ctx.foreignProductId}L`, ctx.foreignProductId, `${ctx.foreignProductId}l`, `Id=${ctx.foreignProductId}L`]);
      const suffix = g.pick(['', '/Title', '/Title/$value', '/ProductImages', '/ProductSpecifics', '/$links/Catalogs']);
      const method = suffix === '' ? g.pick(['GET', 'GET', 'DELETE', 'MERGE', 'PUT', 'PATCH']) : 'GET';
      const body = method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify({ Title: 'taken over', Price: '1', StockAmount: 1 });
      cases.push({ area: 'keys', method, target: `${path}/Products(${key})${suffix}`, headers, errorFormat, mustBe: 404, ...(body ? { body } : {}) });
      continue;
    }
    const set = g.chance(0.5) ? 'Products' : g.chance(0.9) ? g.pick(SETS).name : g.pick(['products', 'PRODUCTS', 'Product', 'Nope', 'ProductVariationPictures', 'Products ', '$metadata', '']);
    let key = g.pick(KEY_FORMS);
    if (g.chance(0.12)) key = mutate(g, key);
    if (g.chance(0.05)) key = g.repeat(g.int(1, 6), () => g.pick(ODD_CHARACTERS));
    if (g.chance(0.1)) key = g.pick(ctx.productIds) + g.pick(['L', '', 'l']);
    const suffix = g.pick(AFTER_KEY);
    const encoded = g.chance(0.5) ? rawish(key) : percentEncode(key);
    const method = g.chance(0.85) ? 'GET' : g.pick(['DELETE', 'MERGE', 'PUT', 'PATCH', 'POST']);
    // Writes go only to keys that cannot name the seller's fixtures (no small number in them).
    const writable = method === 'GET' || !/(^|\D)0*[1-9]\d{0,6}(\D|$)/.test(key);
    const body = method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify(g.chance(0.5) ? { Title: 'x' } : { uri: `http://127.0.0.1/x/Catalogs(${g.pick(ctx.catalogIds)}L)` });
    cases.push({
      area: 'keys',
      method: writable ? method : 'GET',
      target: `${path}/${set}(${encoded})${suffix}`,
      headers,
      // '?' or '#' in a raw key moves the query; '$format' then is whatever followed.
      errorFormat: /[?#&]/.test(key) ? 'any' : errorFormat,
      ...(writable && body ? { body } : {}),
    });
  }
  return cases;
}
