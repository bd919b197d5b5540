/**
 * System query options in combination: $top, $skip, $orderby, $select, $expand, $inlinecount,
 * $format and $skiptoken with valid values, bad values (negative, fractional, beyond Int32 and
 * MAX_TOP, empty, garbage), duplicates, wrong case, unknown `$foo`, custom options, empty and
 * name-less pairs, on collections, single entities, `$count`, navigations, service operations,
 * the service document and $metadata.
 */
import type { ErrorFormat, FuzzContext, HttpCase } from './cases';
import { Gen, mutate, percentEncode, rawish } from './gen';
import { OPERATIONS, SETS, type SetShape } from './model-paths';

const NUMBERS = ['0', '1', '2', '10', '100', '10000', '10001', '-1', '-0', '1.5', '1e2', '2147483647', '2147483648', '9223372036854775808', '99999999999999999999', '', ' ', 'abc', '1L', '0x10', '+3', '3 ', '١٢', '½'];
const DIRECTIONS = ['', ' asc', ' desc', ' ASC', ' Desc', ' up', ' asc desc', ','];

function orderby(g: Gen, set: SetShape): string {
  return g.repeat(g.int(1, 4), () => `${g.chance(0.85) ? g.pick([...set.properties, ...[...set.paths.values()].flat()]) : g.pick(['Nope', '', 'Id add 1', "tolower(Title)", 'Product', set.navigations[0] ?? 'X', '$it', 'Id/Id', '1'])}${g.pick(DIRECTIONS)}`, ',');
}

function select(g: Gen, set: SetShape): string {
  return g.repeat(g.int(1, 5), () => g.pick([...set.properties, ...set.navigations.map((n) => `${n}${g.pick(['', '/*', '/Id', '/Nope'])}`), '*', '', 'Nope', '**', '/', 'Id,', '$value']), ',');
}

function expand(g: Gen, set: SetShape): string {
  const nav = (): string => {
    const first = g.chance(0.9) && set.navigations.length ? g.pick(set.navigations) : g.pick(['Nope', 'Title', '', '*', '$links']);
    const depth = g.int(0, 4);
    const deeper = ['ProductVariations', 'ProductVariationSpecifics', 'Product', 'Catalogs', 'ChildCatalogs', 'ParentCatalogs', 'Products', 'ProductImages', 'Nope'];
    return [first, ...Array.from({ length: depth }, () => g.pick(deeper))].join('/');
  };
  return g.repeat(g.int(1, g.chance(0.1) ? 15 : 4), nav, ',');
}

const FORMATS = ['json', 'atom', 'xml', 'JSON', 'application/json', 'application/json;odata=verbose', 'application/atom+xml', 'text/html', 'garbage', '', '<>', 'json,atom', 'application/'];

/** The error format the server owes a request with these $format values and this Accept. */
function expectedFormat(formats: readonly string[], accept: string): ErrorFormat {
  if (formats.length > 1) return 'any';
  if (formats.length === 1) {
    const f = formats[0]!.toLowerCase();
    return f === 'json' || f.startsWith('application/json') ? 'json' : f === '' ? 'any' : 'xml';
  }
  return accept === 'application/json' ? 'json' : 'xml';
}

export function optionCases(seed: number, count: number, ctx: FuzzContext): HttpCase[] {
  const g = new Gen(seed);
  const cases: HttpCase[] = [];
  for (let i = 0; i < count; i++) {
    const set = g.pick(SETS);
    const r = g.float();
    const resource =
      r < 0.55 ? set.name
      : r < 0.7 ? `${set.name}(${g.pick(ctx.productIds)}L)`
      : r < 0.78 ? `${set.name}/$count`
      : r < 0.85 ? `Products(${g.pick(ctx.productIds)}L)/${g.pick(['ProductImages', 'ProductSpecifics', 'Catalogs', 'ProductVariations'])}`
      : r < 0.92 ? `${g.pick(OPERATIONS).name}?productId=${g.pick(ctx.productIds)}L&salesOrderId=1L`
      : g.pick(['', '$metadata', 'Products/$count', 'Catalogs']);
    const pairs: string[] = [];
    const formats: string[] = [];
    if (g.chance(0.25)) {
      // A well-formed combination on a collection, so that the fuzz also reaches the readers and writers.
      const clean = [`$top=${g.int(0, 20)}`, `$skip=${g.int(0, 5)}`, `$orderby=${percentEncode(`${g.pick(set.properties)}${g.pick(['', ' asc', ' desc'])}`)}`, '$inlinecount=allpages', `$select=${g.pick(set.properties)}`];
      if (set.navigations.length) clean.push(`$expand=${g.pick(set.navigations)}`);
      const chosen = clean.filter(() => g.chance(0.5));
      const json = g.chance(0.5);
      cases.push({
        area: 'options',
        method: 'GET',
        target: `${ctx.servicePath}/${set.name}?${[...chosen, ...(json ? ['$format=json'] : [])].join('&')}`,
        headers: { Accept: 'application/atom+xml', MaxDataServiceVersion: '2.0' },
        errorFormat: json ? 'json' : 'xml',
      });
      continue;
    }
    const add = (name: string, value: string) => pairs.push(`${name}=${g.chance(0.15) ? rawish(value) : percentEncode(value)}`);
    for (let n = g.int(1, 6); n > 0; n--) {
      const option = g.pick(['$top', '$skip', '$orderby', '$select', '$expand', '$inlinecount', '$format', '$skiptoken', '$filter', 'odd']);
      switch (option) {
        case '$top':
        case '$skip':
          add(g.chance(0.05) ? option.toUpperCase() : option, g.pick(NUMBERS));
          break;
        case '$orderby':
          add(option, g.chance(0.15) ? mutate(g, orderby(g, set)) : orderby(g, set));
          break;
        case '$select':
          add(option, g.chance(0.15) ? mutate(g, select(g, set)) : select(g, set));
          break;
        case '$expand':
          add(option, g.chance(0.15) ? mutate(g, expand(g, set)) : expand(g, set));
          break;
        case '$inlinecount':
          add(option, g.pick(['allpages', 'none', 'AllPages', '', 'all', 'allpages,none']));
          break;
        case '$format': {
          const f = g.pick(FORMATS);
          formats.push(f);
          add(option, f);
          break;
        }
        case '$skiptoken':
          add(option, g.pick(['1L', '1', "'x'", '', '1L,2L', "1L,'a'", "datetime'2013-01-01T00:00',5L", 'null,3L', 'garbage', '99999999999999999999999L', '%', "'", '-1L']));
          break;
        case '$filter':
          add(option, g.pick(['Id gt 0L', 'true', 'Id eq', '']));
          break;
        default:
          pairs.push(g.pick(['$foo=1', '$=1', '$', '=1', '', 'foo=bar', 'x', '$top', '$expand', '%24top=2', '$top%3D2', '&&', '$format', '$FOO=bar', '$callback=x', '$count=true', '$search=x', '$apply=x', '$levels=2']));
      }
    }
    const accept = g.pick(['application/json', 'application/atom+xml', 'application/xml', '*/*']);
    const query = pairs.join('&');
    const target = `${ctx.servicePath}/${resource}${resource.includes('?') ? '&' : '?'}${query}`;
    cases.push({
      area: 'options',
      method: 'GET',
      target,
      headers: { Accept: accept, MaxDataServiceVersion: g.chance(0.8) ? '2.0' : '1.0' },
      // A raw value may carry '&' and '=' into the query; a bare '$format' has no value.
      errorFormat: /\$format(&|$)/i.test(query) || /%24format/i.test(query) || pairs.some((p) => !p.startsWith('$format') && /format/i.test(p)) ? 'any' : expectedFormat(formats, accept),
    });
  }
  return cases;
}
