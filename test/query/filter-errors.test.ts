/**
 * Malformed query options answer 400 with an OData error document that names the problem, in
 * the format the request asked for (JSON by $format=json or Accept: application/json, XML
 * otherwise): unknown properties, bad literals, type mismatches, unbalanced parentheses, unknown
 * functions, values over a limit, and the other options' malformed values. None of them changes
 * anything (every tenant table is read raw before and after).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newSeller, startLive, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { encodeOption, KeepAliveClient, seedRow } from './fixture';
import { odataError } from '../support/odata-error';

let live: LiveService;
let seller: Seller;
let client: KeepAliveClient;
let before_: Record<string, string[]>;

before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'filtererrors');
  client = new KeepAliveClient(4);
  const product = await seedRow(live, seller.accountId, 'Products', { Title: 'Shirt', Price: '19.99', StockAmount: 3, ExternalProductId: 5n });
  await seedRow(live, seller.accountId, 'ProductSpecifics', { ProductId: product, Name: 'Color', Value: 'Blue' });
  await seedRow(live, seller.accountId, 'ProductVariations', { ProductId: product, Price: '20', StockAmount: 1, Sku: 'S-1' });
  const buyer = await seedRow(live, seller.accountId, 'Buyers', { BuyerName: 'Erika' });
  await seedRow(live, seller.accountId, 'SalesOrders', { BuyerId: buyer, PlatformOrderId: 'PO-1' });
  before_ = await tenantRows(live, seller.accountId);
});

after(async () => {
  client?.close();
  await live?.close();
});

interface ErrorCase {
  readonly name: string;
  /** Path and query after the service root, already encoded as a client sends it. */
  readonly query: string;
  /** What the message must say: it names the problem and where. */
  readonly message: RegExp;
}

const filter = (set: string, text: string) => `${set}?$filter=${encodeOption(text)}`;

const nested = (open: string, close: string, n: number, inner: string) => open.repeat(n) + inner + close.repeat(n);
const EXPAND_13 =
  'ProductImages,ProductSpecifics,ProductVariations,OptionalProductAttributes,DiscountOffers,CarParts,' +
  'ChildProducts,ParentProducts,Catalogs,SalesOrderItems,Listings,ListingItems,ProductVariations/ProductVariationSpecifics';

const GROUPS: Record<string, ErrorCase[]> = {
  'an unknown property': [
    { name: 'a property the type does not have', query: filter('Products', 'Nope eq 1'), message: /No property 'Nope' exists in type 'CatalogueService\.Product' at position 0/ },
    { name: 'a property after a navigation', query: filter('ProductSpecifics', "Product/Nope eq 'x'"), message: /No property 'Nope' exists in type 'CatalogueService\.Product' at position 8/ },
    { name: 'an unknown navigation', query: filter('Products', "Nope/Title eq 'x'"), message: /No property 'Nope'.*position 0/ },
    { name: 'a collection navigation in a path', query: filter('Products', 'ProductVariations/Price eq 1'), message: /'ProductVariations'.*leads to many entities/ },
    { name: 'a property followed by /', query: filter('Products', 'Title/Length eq 1'), message: /'Title' at position 0 is a property.*not a navigation property/ },
    { name: 'a property name in the wrong case', query: filter('Products', "title eq 'x'"), message: /No property 'title' exists/ },
    { name: 'an unknown property in $orderby', query: 'Products?$orderby=Nope', message: /No property 'Nope' exists in type 'CatalogueService\.Product'/ },
    { name: '$select=Nope', query: 'Products?$select=Nope', message: /'Nope'.*CatalogueService\.Product/ },
    { name: '$expand=Title (a property, not a navigation)', query: 'Products?$expand=Title', message: /'Title'.*not a navigation property/ },
    { name: '$expand of an unknown navigation', query: 'Products?$expand=Nope', message: /No navigation property 'Nope'/ },
  ],
  'a bad literal': [
    { name: "datetime'2013-13-45'", query: filter('Products', "CreationDate eq datetime'2013-13-45'"), message: /datetime'2013-13-45'.*not a valid Edm\.DateTime literal at position 16/ },
    { name: "datetime'2013-02-29T00:00' (no such day)", query: filter('Products', "CreationDate eq datetime'2013-02-29T00:00'"), message: /not a valid Edm\.DateTime literal/ },
    { name: "datetime'2013-09-16' (no time)", query: filter('Products', "CreationDate eq datetime'2013-09-16'"), message: /not a valid Edm\.DateTime literal/ },
    { name: '5LL', query: filter('Products', 'StockAmount eq 5LL'), message: /Syntax error at position 15.*'5LL' is not a valid numeric literal/ },
    { name: "'unterminated", query: filter('Products', "Title eq 'unterminated"), message: /position 9.*no closing quote/ },
    { name: "guid'123'", query: filter('Products', "guid'123' eq null"), message: /not a valid Edm\.Guid literal/ },
    { name: 'a Decimal with 7 places', query: filter('Products', 'Price eq 1.2345678'), message: /'1\.2345678' is not a valid Edm\.Decimal literal.*6 decimal places/ },
    { name: 'an integer beyond Int64', query: filter('Products', 'ExternalProductId eq 99999999999999999999'), message: /not a valid Edm\.Int64 literal.*outside the range/ },
    { name: '5.5L', query: filter('Products', 'ExternalProductId eq 5.5L'), message: /not a valid Edm\.Int64 literal|not a valid numeric literal/ },
    { name: 'INF', query: filter('Products', 'Price eq INF'), message: /'INF'.*not supported/ },
    { name: "X'0A'", query: filter('Products', "Title eq X'0A'"), message: /X'0A'.*Edm\.Binary/ },
    { name: 'an unknown prefix', query: filter('Products', "foo'bar' eq 'x'"), message: /'foo' is not a literal prefix/ },
    { name: 'a double-quoted string', query: filter('Products', 'Title eq "x"'), message: /position 9.*character '"'/ },
  ],
  'a type mismatch': [
    { name: 'Title eq 5', query: filter('Products', 'Title eq 5'), message: /Operator 'eq' incompatible with operand types 'Edm\.String' and 'Edm\.Int32' at position 6/ },
    { name: "Price add 'x'", query: filter('Products', "Price add 'x' eq 1"), message: /Operator 'add' incompatible with operand types 'Edm\.Decimal' and 'Edm\.String'/ },
    { name: 'an Int32 in and', query: filter('Products', 'StockAmount and true'), message: /Operator 'and' incompatible/ },
    { name: 'not of a number', query: filter('Products', 'not Price'), message: /Operator 'not' incompatible with operand type 'Edm\.Decimal'/ },
    { name: 'not binds tighter than lt', query: filter('Products', 'not StockAmount lt 5'), message: /Operator 'not' incompatible with operand type 'Edm\.Int32'/ },
    { name: 'minus of a string', query: filter('Products', "-Title eq 'x'"), message: /Operator '-' incompatible with operand type 'Edm\.String'/ },
    { name: 'a DateTime compared with a string', query: filter('Products', "CreationDate eq '2013-01-01'"), message: /'Edm\.DateTime' and 'Edm\.String'/ },
    { name: 'a Boolean compared with 1', query: filter('Products', 'AutoMatched eq 1'), message: /'Edm\.Boolean' and 'Edm\.Int32'/ },
    { name: 'length of a number', query: filter('Products', 'length(StockAmount) eq 1'), message: /No applicable function found for 'length'.*'Edm\.Int32' where 'Edm\.String' is expected/ },
    { name: 'substringof with a number', query: filter('Products', 'substringof(Title, 5)'), message: /'substringof'.*argument 2/ },
    { name: 'year of a string', query: filter('Products', 'year(Title) eq 1'), message: /'year'.*'Edm\.String' where 'Edm\.DateTime'/ },
    { name: 'a non-Boolean filter', query: filter('Products', 'Price'), message: /must be a Boolean expression.*'Edm\.Decimal'/ },
    { name: 'a Guid compared with a string', query: filter('Products', "Title eq guid'12345678-aaaa-bbbb-cccc-ddddeeeeffff'"), message: /incompatible with operand types 'Edm\.String' and 'Edm\.Guid'/ },
  ],
  'unbalanced parentheses': [
    { name: 'an unclosed (', query: filter('Products', '(StockAmount eq 5'), message: /Unbalanced parentheses.*'\(' at position 0 is not closed/ },
    { name: 'a ) without (', query: filter('Products', 'StockAmount eq 5)'), message: /Unbalanced parentheses.*'\)' at position 16 has no matching '\('/ },
    { name: 'an unclosed call', query: filter('Products', "startswith(Title, 'a'"), message: /Unbalanced parentheses.*position 10/ },
    { name: 'one ( too many', query: filter('Products', '((StockAmount eq 5)'), message: /Unbalanced parentheses/ },
    { name: 'empty parentheses', query: filter('Products', '()'), message: /Syntax error at position 1/ },
  ],
  'an unknown function': [
    { name: 'contains (V4), with a hint', query: filter('Products', "contains(Title, 'a')"), message: /Unknown function 'contains' at position 0.*substringof/ },
    { name: 'foo', query: filter('Products', 'foo(Title)'), message: /Unknown function 'foo' at position 0/ },
    { name: 'a function name in upper case', query: filter('Products', "STARTSWITH(Title, 'a')"), message: /Unknown function 'STARTSWITH'/ },
    { name: 'a narrowing cast (not supported)', query: filter('Products', "cast(Price, 'Edm.Int32') eq 19"), message: /cast at position 0 from 'Edm.Decimal' to 'Edm.Int32' is not supported/ },
    { name: 'isof of an unknown type', query: filter('Products', "isof('CatalogueService.Nothing')"), message: /names the type 'CatalogueService.Nothing', which is neither/ },
    { name: 'a known function with too few arguments', query: filter('Products', 'substringof(Title)'), message: /'substringof'.*takes 2 arguments, not 1/ },
    { name: 'a known function with too many arguments', query: filter('Products', "substring(Title, 1, 2, 3) eq 'a'"), message: /'substring'.*2 to 3 arguments, not 4/ },
  ],
  'a syntax error': [
    { name: 'an empty $filter', query: 'Products?$filter=', message: /\$filter expression is empty/ },
    { name: 'a missing operand', query: filter('Products', 'StockAmount eq'), message: /Syntax error at position 14/ },
    { name: 'a leading operator', query: filter('Products', 'eq 5'), message: /Syntax error at position 0.*'eq'/ },
    { name: 'an upper-case operator, with a hint', query: filter('Products', 'StockAmount EQ 5'), message: /Syntax error at position 12.*'EQ'.*lower-case: 'eq'/ },
    { name: 'two operands in a row', query: filter('Products', 'StockAmount eq 5 5'), message: /Syntax error at position 17/ },
    { name: 'a trailing and', query: filter('Products', "Title eq 'a' and"), message: /Syntax error at position 16/ },
    { name: 'a character outside the grammar', query: filter('Products', 'Title eq @'), message: /position 9.*'@'/ },
    { name: 'malformed percent-encoding', query: 'Products?$filter=Title%20eq%20%27%zz%27', message: /malformed percent-encoding/ },
    { name: 'percent-encoded bytes that are not UTF-8', query: 'Products?$filter=Title%20eq%20%27%ED%A0%80%27', message: /malformed percent-encoding/ },
    { name: '$filter given twice', query: 'Products?$filter=true&$filter=false', message: /'\$filter' is given more than once/ },
  ],
  'a value over a limit': [
    { name: '101 nodes', query: filter('Products', Array(51).fill('true').join(' or ')), message: /more than 100 nodes/ },
    { name: '33 nested parentheses', query: filter('Products', nested('(', ')', 33, 'true')), message: /nested more than 32 levels/ },
    { name: '33 nested nots', query: filter('Products', 'not '.repeat(33) + 'true'), message: /nested more than 32 levels/ },
    { name: '33 nested calls', query: filter('Products', nested('trim(', ')', 33, 'Title') + " eq 'x'"), message: /nested more than 32 levels/ },
    { name: 'a $filter longer than 2048 characters', query: filter('Products', `Title eq '${'x'.repeat(2040)}'`), message: /2051 characters long, more than the 2048 allowed/ },
    { name: '$top=10001', query: 'Products?$top=10001', message: /\$top is 10001, more than the limit of 10000/ },
    { name: '$expand with 13 paths', query: `Products?$expand=${EXPAND_13}`, message: /13 paths, more than the 12 allowed/ },
    { name: '$expand 4 levels deep', query: 'Products?$expand=ProductVariations/Product/ProductVariations/Product', message: /4 segments, more than the 3/ },
  ],
  // U+FFFE and U+FFFF are valid in a URI (percent-encoded UTF-8) but are no XML 1.0 characters: a
  // message that quotes them must still be a well-formed XML error document.
  'text that quotes a character XML cannot hold (U+FFFF)': [
    { name: 'in $filter', query: 'Products?$filter=Title%20eq%20%EF%BF%BF', message: /Syntax error at position 9/ },
    { name: 'in a $filter property name', query: 'Products?$filter=Ti%EF%BF%BEtle%20eq%201', message: /Syntax error at position 2|No property/ },
    { name: 'in $orderby', query: 'Products?$orderby=%EF%BF%BF', message: /Syntax error at position 0 in \$orderby/ },
    { name: 'in $select', query: 'Products?$select=A%EF%BF%BF', message: /No property or navigation property/ },
    { name: 'in $expand', query: 'Products?$expand=A%EF%BF%BF', message: /No navigation property/ },
    { name: 'in $inlinecount', query: 'Products?$inlinecount=%EF%BF%BF', message: /\$inlinecount must be 'allpages' or 'none'/ },
    { name: 'in $top', query: 'Products?$top=%EF%BF%BF', message: /\$top must be a whole number/ },
    { name: 'in an unknown option name', query: 'Products?$%EF%BF%BF=1', message: /system-reserved '\$' character/ },
  ],
  'a malformed value of another option': [
    { name: '$inlinecount=foo', query: 'Products?$inlinecount=foo', message: /\$inlinecount must be 'allpages' or 'none', not 'foo'/ },
    { name: '$skip=-1', query: 'Products?$skip=-1', message: /\$skip must be a whole number of 0 or more, not '-1'/ },
    { name: '$top=-1', query: 'Products?$top=-1', message: /\$top must be a whole number of 0 or more, not '-1'/ },
    { name: '$skip=1.5', query: 'Products?$skip=1.5', message: /\$skip must be a whole number/ },
    { name: '$orderby= with an empty item at the end', query: 'Products?$orderby=Title,', message: /\$orderby option has an empty item at position 6/ },
    { name: '$orderby= with an empty first item', query: 'Products?$orderby=,Title', message: /empty item at position 0/ },
    { name: '$orderby with two directions', query: `Products?$orderby=${encodeOption('Title asc desc')}`, message: /Syntax error at position 10 in \$orderby/ },
    { name: '$select with an empty item', query: 'Products?$select=Title,', message: /\$select option has an empty item/ },
    { name: 'an unknown $ option', query: 'Products?$foo=1', message: /'\$foo' begins with a system-reserved '\$' character but is not recognized/ },
    { name: 'a $skiptoken the service never issued', query: 'Products?$skiptoken=abc', message: /\$skiptoken 'abc' is not one this service issued/ },
  ],
};

const CASE_COUNT = Object.values(GROUPS).reduce((n, g) => n + g.length, 0);

type Way = 'json by $format' | 'json by Accept' | 'xml by default' | 'xml by Accept';
const WAYS: Way[] = ['json by $format', 'json by Accept', 'xml by default', 'xml by Accept'];

function requestFor(query: string, way: Way): [string, Record<string, string>] {
  const url = `${live.root}/${query}`;
  switch (way) {
    case 'json by $format':
      return [`${url}${query.includes('?') ? '&' : '?'}$format=json`, { ...seller.auth }];
    case 'json by Accept':
      return [url, { ...seller.auth, Accept: 'application/json' }];
    case 'xml by default':
      return [url, { ...seller.auth }];
    case 'xml by Accept':
      return [url, { ...seller.auth, Accept: 'application/atom+xml' }];
  }
}

for (const [groupName, cases] of Object.entries(GROUPS)) {
  describe(`400 for ${groupName}, with a message naming it, in the request's format`, () => {
    for (const c of cases) {
      test(c.name, async () => {
        for (const way of WAYS) {
          const [url, headers] = requestFor(c.query, way);
          const res = await client.get(url, headers);
          assert.equal(res.status, 400, `${way}: ${url} answered ${res.status}: ${res.body.slice(0, 300)}`);
          assert.match(String(res.headers.dataserviceversion), /^1\.0/, 'errors carry DataServiceVersion 1.0');
          const error = odataError(res);
          assert.equal(error.format, way.startsWith('json') ? 'json' : 'xml', `${way}: answered as ${error.format}`);
          assert.match(error.message, c.message, `${way}: ${url}`);
        }
      });
    }
  });
}

describe('limits are not off by one: the largest allowed values are answered 200', () => {
  const allowed: [string, string][] = [
    ['100 nodes', filter('Products', Array(50).fill('true').join(' or '))],
    ['32 nested parentheses', filter('Products', nested('(', ')', 32, 'true'))],
    ['32 nested nots', filter('Products', 'not '.repeat(32) + 'true')],
    ['a $filter of 2048 characters', filter('Products', `Title eq '${'x'.repeat(2037)}'`)],
    ['$top=10000', 'Products?$top=10000'],
    ['$expand with 12 paths', `Products?$expand=${EXPAND_13.split(',').slice(0, 12).join(',')}`],
    ['$expand 3 levels deep', 'Products?$expand=ProductVariations/Product/ProductVariations'],
  ];
  for (const [name, query] of allowed) {
    test(name, async () => {
      const res = await client.get(`${live.root}/${query}`, { ...seller.auth, Accept: 'application/json' });
      assert.equal(res.status, 200, `${query}: ${res.body.slice(0, 300)}`);
    });
  }
});

/**
 * dialect.ts: "a database error raised by evaluating a client's expression (an overflow, a value
 * out of range) ... is answered 400". Decimal products are checked; integer results that leave
 * Int32 or Int64 must be refused the same way rather than computed in another type.
 */
describe('arithmetic that leaves the range of its type answers 400', () => {
  const overflows: [string, string][] = [
    ['Decimal: a product beyond Decimal(18,6)', 'Price mul 999999999999 mul 999999999999 gt 0'],
    ['Int64: add past the maximum', 'ExternalProductId add 9223372036854775807L gt 0'],
    ['Int64: sub past the minimum', 'ExternalProductId sub 9223372036854775807L sub 10L lt 0'],
    ['Int64: mul past the maximum', 'ExternalProductId mul 9223372036854775807L gt 0'],
    ['Int64: the minimum div -1', '-9223372036854775808L div -1L gt 0'],
    ['Int32: mul past the Int32 maximum', 'StockAmount mul 2147483647 gt 0'],
  ];
  for (const [name, text] of overflows) {
    test(`${name}: ${text}`, async () => {
      const res = await client.get(`${live.root}/${filter('Products', text)}`, { ...seller.auth, Accept: 'application/json' });
      assert.equal(res.status, 400, `${text} answered ${res.status}: ${res.body.slice(0, 300)}`);
      assert.match(odataError(res).message, /outside the range of its type/);
    });
  }
});

/**
 * Division or mod by zero is an error of the expression on both engines (SQLite's NULL and
 * PostgreSQL's 22012 both become this 400), not an empty answer: by a literal 0 before any SQL,
 * by a column that is 0 on a row when that row is evaluated.
 */
describe('division by zero answers 400 naming it', () => {
  const cases: [string, RegExp][] = [
    ['StockAmount div 0 eq 1', /Division by zero at position 12: the divisor of 'div' is the literal 0/],
    ['StockAmount mod 0 eq 1', /Division by zero at position 12/],
    ['ExternalProductId div 0L eq 1', /Division by zero/],
    ['Price div 0.0 eq 1', /Division by zero/],
    ['Price mod 0M eq 1', /Division by zero/],
    ['StockAmount div (StockAmount sub StockAmount) eq 1', /Division by zero in the expression: a div or mod has a divisor that is 0/],
    ['Price mod (Price sub Price) eq 1', /Division by zero in the expression/],
    ['Price div (Price sub Price) eq 1', /Division by zero in the expression/],
    ['ExternalProductId mod (Id sub Id) eq 1', /Division by zero in the expression/],
  ];
  for (const [text, message] of cases) {
    test(text, async () => {
      const res = await client.get(`${live.root}/${filter('Products', text)}`, { ...seller.auth, Accept: 'application/json' });
      assert.equal(res.status, 400, `${text} answered ${res.status}: ${res.body.slice(0, 300)}`);
      assert.match(odataError(res).message, message);
    });
  }
});

describe('nothing changed', () => {
  test(`the cases are many (${CASE_COUNT}), and every tenant table of the account is as before`, async () => {
    assert.ok(CASE_COUNT >= 60, `${CASE_COUNT} cases`);
    assert.ok(Object.values(before_).some((rows) => rows.length > 0));
    assert.deepEqual(await tenantRows(live, seller.accountId), before_);
  });

  test('the seeded rows are still answered', async () => {
    for (const set of ['Products', 'ProductSpecifics', 'ProductVariations', 'Buyers', 'SalesOrders']) {
      const res = await client.get(`${live.root}/${set}?$format=json`, { ...seller.auth });
      assert.equal(res.status, 200, set);
      assert.equal((JSON.parse(res.body) as { d: unknown[] }).d.length, 1, set);
    }
  });
});
