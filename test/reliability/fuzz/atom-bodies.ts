/**
 * Atom XML bodies for POST, PUT and MERGE: valid entries with odd values, and hostile XML:
 * external entities (a file, /etc/passwd, and an HTTP URL the test watches), billion laughs,
 * parameter entities, two DOCTYPEs, 10^5-deep nesting, malformed XML (unclosed tags, bad
 * character and entity references, unquoted and repeated attributes, stray CDATA), wrong or
 * missing namespaces, processing instructions, other encodings and invalid UTF-8, huge values.
 */
import type { FuzzContext, HttpCase } from './cases';
import { Gen, mutate } from './gen';

const ATOM = 'http://www.w3.org/2005/Atom';
const D = 'http://schemas.microsoft.com/ado/2007/08/dataservices';
const M = 'http://schemas.microsoft.com/ado/2007/08/dataservices/metadata';

const VALUES: Record<string, readonly string[]> = {
  Title: ['Shirt', '', ' ', 'é😀', 'x'.repeat(81), 'x'.repeat(80), '&lt;b&gt;', '&amp;amp;', '&#x1F600;', '&#0;', '&#xD800;', ']]>', '<![CDATA[x]]>', "O'Neil", '"'],
  Price: ['1', '0', '-1', '12.5', '1e3', 'abc', '', '99999999999999999999999999999', '1.1234567', 'NaN', '١'],
  StockAmount: ['0', '5', '-1', '2147483648', '1.5', 'x', '', '+3', ' 7 '],
  Brand: ['Acme', '', 'x'.repeat(256), '\u202e'],
  ProductType: ['0', '2', '3', '-1'],
  Description: ['x'.repeat(5000), 'line\nbreak', '\t'],
  ExternalProductId: ['1', '9223372036854775808', '-9223372036854775809', 'x'],
  DisableAutomatch: ['true', 'false', '1', 'yes', ''],
  Nope: ['1'],
};

function property(g: Gen, name: string): string {
  const value = g.pick(VALUES[name]!);
  const type = g.chance(0.3) ? ` m:type="${g.pick(['Edm.String', 'Edm.Int32', 'Edm.Decimal', 'Edm.Boolean', 'Edm.Guid', 'Nope', ''])}"` : '';
  if (g.chance(0.05)) return `<d:${name} m:null="${g.pick(['true', 'false', 'x'])}"${type}/>`;
  return `<d:${name}${type}>${value}</d:${name}>`;
}

/** A valid Product entry (Title, Price, StockAmount and a Brand, in Atom's element order of .NET or datajs). */
function validEntry(g: Gen): string {
  const properties = [`<d:Title>Atom ${g.int(0, 9999)} é😀 &amp; &lt;x&gt;</d:Title>`, `<d:Price m:type="Edm.Decimal">${g.int(0, 999)}.${g.int(0, 99)}</d:Price>`, `<d:StockAmount m:type="Edm.Int32">${g.int(0, 99)}</d:StockAmount>`];
  if (g.chance(0.5)) properties.push(`<d:Brand>${g.pick(['Acme', '', "O'Neil"])}</d:Brand>`);
  return (
    `<?xml version="1.0" encoding="utf-8" standalone="yes"?><entry xmlns="${ATOM}" xmlns:d="${D}" xmlns:m="${M}">` +
    `<category term="CatalogueService.Product" scheme="http://schemas.microsoft.com/ado/2007/08/dataservices/scheme"/><title/><author><name/></author><updated>2013-09-16T07:21:12Z</updated>` +
    `<content type="application/xml"><m:properties>${properties.join('')}</m:properties></content></entry>`
  );
}

/** An entry of odd, often wrongly typed values, sometimes of unknown properties. */
function entry(g: Gen, ctx: FuzzContext, ns: { atom: string; d: string; m: string } = { atom: ATOM, d: D, m: M }): string {
  const names = Object.keys(VALUES).filter(() => g.chance(0.5));
  if (g.chance(0.7)) names.push('Title', 'Price', 'StockAmount');
  const link = g.chance(0.2)
    ? `<link rel="http://schemas.microsoft.com/ado/2007/08/dataservices/related/${g.pick(['Catalogs', 'Nope', 'ProductImages'])}" type="application/atom+xml;type=${g.pick(['feed', 'entry'])}" href="Catalogs(${g.pick(ctx.catalogIds)}L)"/>`
    : '';
  return (
    `${g.chance(0.5) ? '<?xml version="1.0" encoding="utf-8" standalone="yes"?>' : ''}` +
    `<entry xmlns="${ns.atom}" xmlns:d="${ns.d}" xmlns:m="${ns.m}">` +
    `${g.chance(0.5) ? '<category term="CatalogueService.Product" scheme="http://schemas.microsoft.com/ado/2007/08/dataservices/scheme"/>' : ''}` +
    `<title/><author><name/></author><updated>2013-09-16T07:21:12Z</updated>${link}` +
    `<content type="application/xml"><m:properties>${names.map((n) => property(g, n)).join('')}</m:properties></content></entry>`
  );
}

/** Hostile documents: each an attack or a malformation of its own kind. */
function hostile(g: Gen, ctx: FuzzContext): string {
  const body = entry(g, ctx);
  const inner = body.replace(/^<\?xml[^>]*\?>/, '');
  const withTitle = (entity: string) => inner.replace(/<d:Title>[^<]*<\/d:Title>|<m:properties>/, (m) => (m === '<m:properties>' ? `<m:properties><d:Title>${entity}</d:Title>` : `<d:Title>${entity}</d:Title>`));
  switch (g.int(0, 17)) {
    case 0:
      return `<?xml version="1.0"?><!DOCTYPE entry [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${withTitle('&xxe;')}`;
    case 1:
      return `<?xml version="1.0"?><!DOCTYPE entry [<!ENTITY xxe SYSTEM "${ctx.trapUrl}/entity">]>${withTitle('&xxe;')}`;
    case 2:
      return `<!DOCTYPE entry [<!ENTITY % p SYSTEM "${ctx.trapUrl}/dtd"> %p;]>${inner}`;
    case 3:
      return `<!DOCTYPE entry SYSTEM "${ctx.trapUrl}/external.dtd">${inner}`;
    case 4: {
      const lol = ['<!ENTITY lol "lol">', ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`)].join('');
      return `<?xml version="1.0"?><!DOCTYPE lolz [${lol}]>${withTitle('&lol9;')}`;
    }
    case 5:
      return `<!DOCTYPE a [<!ENTITY x "y">]><!DOCTYPE b [<!ENTITY z "w">]>${inner}`;
    case 6:
      return `<!doctype entry>${inner}`;
    case 7: {
      const depth = g.chance(0.5) ? 100_000 : g.int(60, 70);
      const tag = g.pick(['a', 'd:Title', 'entry', 'm:properties']);
      return `<entry xmlns="${ATOM}" xmlns:d="${D}" xmlns:m="${M}">${`<${tag}>`.repeat(depth)}x${`</${tag}>`.repeat(depth)}</entry>`;
    }
    case 8:
      return `<entry xmlns="${ATOM}">${'<a>'.repeat(100_000)}`;
    case 9:
      return entry(g, ctx, { atom: g.pick(['http://www.w3.org/2005/atom', '', 'urn:x']), d: D, m: M });
    case 10:
      return entry(g, ctx, { atom: ATOM, d: g.pick(['http://schemas.microsoft.com/ado/2007/08/dataservices/', 'urn:d', M]), m: g.pick([M, D, 'urn:m']) });
    case 11:
      return inner.replace(/ xmlns(:\w)?="[^"]*"/g, '');
    case 12:
      return `<?xml-stylesheet href="x"?>${inner}`;
    case 13:
      return `<?xml version="1.0" encoding="${g.pick(['utf-16', 'iso-8859-1', 'ebcdic', 'x'])}"?>${inner}`;
    case 14:
      return g.pick([`${inner}<entry/>`, `${inner}garbage`, `text${inner}`, '', ' ', '<', '<entry', '<entry/>', '</entry>', '<entry xmlns="', '<entry a=1/>', '<entry a="1" a="2"/>', '<![CDATA[x]]>', '<!-- -->', '&amp;', '<entry>&nope;</entry>', '<entry>&#xFFFFFFFF;</entry>', '<entry>&#55296;</entry>', '<1entry/>', '<x:entry/>', '<entry xmlns:x=""/>']);
    case 15:
      return withTitle('x'.repeat(g.chance(0.5) ? 900_000 : 2_000_000));
    case 16:
      return `<!ENTITY x "y">${inner}`;
    default:
      return mutate(g, inner, ['<', '>', '&', '"', "'", '</', '/>', '<!--', ']]>', '<![CDATA[', '&#0;', '\u0000', '\ufffe', 'xmlns:d=""', '<!DOCTYPE x>']);
  }
}

export function atomBodyCases(seed: number, count: number, ctx: FuzzContext): HttpCase[] {
  const g = new Gen(seed);
  const cases: HttpCase[] = [];
  for (let i = 0; i < count; i++) {
    const json = g.chance(0.4);
    const method = g.pick(['POST', 'POST', 'PUT', 'MERGE', 'PATCH']);
    const target = method === 'POST' ? g.pick(['Products', 'Products', 'Catalogs', `Products(${g.pick(ctx.productIds)}L)/ProductSpecifics`]) : `Products(${g.pick(ctx.productIds)}L)`;
    const r = g.float();
    const text = r < 0.12 ? validEntry(g) : r < 0.3 ? entry(g, ctx) : r < 0.42 ? mutate(g, entry(g, ctx)) : hostile(g, ctx);
    let body: string | Buffer = text;
    if (g.chance(0.04)) body = Buffer.concat([Buffer.from(text.slice(0, 200)), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from(text.slice(200))]);
    else if (g.chance(0.03)) body = Buffer.from(text, 'utf16le');
    else if (g.chance(0.03)) body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    const contentType = g.chance(0.85) ? 'application/atom+xml' : g.pick(['application/atom+xml;type=entry', 'application/xml', 'text/xml', 'application/atom+xml;charset=iso-8859-1', 'application/atom+xml; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded']);
    cases.push({
      area: 'atom',
      method,
      target: `${ctx.servicePath}/${target}`,
      headers: { 'Content-Type': contentType, Accept: json ? 'application/json' : 'application/atom+xml', DataServiceVersion: '1.0' },
      body,
      errorFormat: json ? 'json' : 'xml',
    });
  }
  return cases;
}
