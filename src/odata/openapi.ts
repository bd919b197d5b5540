/**
 * The OpenAPI 3.0 description of the service, generated from the entity model like $metadata.
 * It follows the form the OASIS odata-openapi converter gives OData V2 services: a path per entity
 * set, per entity (by key) and per navigation, one per service operation with its HTTP method and
 * parameters, `/$batch`, components named `Namespace.Type`, `…-create` and `…-update`, and
 * responses in the version 2.0 JSON verbose shapes (`{"d":{"results":[…]}}` for collections,
 * `{"d":{…}}` for one entity). Those are the shapes a request that declares no version gets
 * (docs/protocol.md, "Versions"); the 1.0 shapes (`{"d":[…]}`) and Atom are not described here.
 *
 * Where the converter stays loose, this document says what the service writes: every entity
 * carries `__metadata`, a navigation that was not expanded is `{"__deferred":{"uri":…}}`, Int64
 * and Decimal values are strings and DateTime is `/Date(ms)/`. Plain OpenAPI 3.0.3, no `x-`
 * extensions. Computed once per process; nothing here runs per request.
 */
import type { EdmType, EntityTypeDef, Model, NavigationDef, OperationParameterDef, PropertyDef, ServiceOperationDef } from '../model/types';
import { DECIMAL_INTEGER_DIGITS, DECIMAL_SCALE, INT32_MAX, INT32_MIN } from './edm';

/** A JSON value of the document (plain data, serialised with JSON.stringify). */
type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export interface OpenApiOptions {
  /** Where the service lives, as the document's server URL (relative to the document's origin). */
  readonly servicePath: string;
  /** info.version: the version of the interface the document describes. */
  readonly version: string;
}

/** The names of the security schemes: both are needed on every request (one requirement). */
export const SECURITY_SCHEMES = { token: 'SubscriptionToken', cookie: 'SessionCookie' } as const;

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const typeName = (model: Model, t: EntityTypeDef) => `${model.namespace}.${t.name}`;

/** An Int64 as JSON verbose writes it: a string of digits (Olingo refuses it as a number). */
const INT64_TEXT = '^-?[0-9]{1,19}$';
/** A Decimal(18,6) as JSON verbose writes it: canonical text, a string. */
const DECIMAL_TEXT = `^-?[0-9]{1,${DECIMAL_INTEGER_DIGITS}}(\\.[0-9]{1,${DECIMAL_SCALE}})?$`;
/** A DateTime as JSON verbose writes it, once the JSON string is read: /Date(ms since 1970 UTC)/. */
const JSON_DATE = '^/Date\\(-?[0-9]+\\)/$';

/**
 * The schema of a value of `type` in JSON verbose. `written` is true for what the service writes
 * (exact patterns), false for what a client sends (the readers also take ISO dates and numbers).
 */
function edmSchema(type: EdmType, written: boolean): JsonObject {
  switch (type) {
    case 'Edm.Int64':
      return { type: 'string', format: 'int64', pattern: INT64_TEXT, example: '42' };
    case 'Edm.Int32':
      return { type: 'integer', format: 'int32', minimum: INT32_MIN, maximum: INT32_MAX };
    case 'Edm.Decimal':
      return { type: 'string', format: 'decimal', pattern: DECIMAL_TEXT, example: '9.99' };
    case 'Edm.String':
      return { type: 'string' };
    case 'Edm.Boolean':
      return { type: 'boolean' };
    case 'Edm.DateTime':
      return written
        ? { type: 'string', pattern: JSON_DATE, example: '/Date(1492098664000)/' }
        : { type: 'string', example: '/Date(1492098664000)/', description: '/Date(ms)/ or ISO 8601 (2017-04-13T15:51:04, UTC unless an offset is given)' };
  }
}

function propertySchema(p: PropertyDef, written: boolean): JsonObject {
  const schema = edmSchema(p.type, written);
  if (p.maxLength !== undefined) schema.maxLength = p.maxLength;
  // Bounds are the model's rules for Int32 values (Decimal values are strings: said in words).
  if (p.type === 'Edm.Int32') {
    if (p.min !== undefined) schema.minimum = p.min;
    if (p.max !== undefined) schema.maximum = p.max;
  } else if (p.type === 'Edm.Decimal' && p.min !== undefined) {
    schema.description = `at least ${p.min}`;
  }
  if (p.defaultValue !== undefined) schema.default = p.defaultValue;
  if (p.nullable) schema.nullable = true;
  return schema;
}

/** The members of an entity as the service writes them. */
function entitySchema(model: Model, t: EntityTypeDef): JsonObject {
  const properties: JsonObject = { __metadata: ref('entityMetadata') };
  for (const p of t.properties) properties[p.name] = propertySchema(p, true);
  for (const n of t.navigations) properties[n.name] = navigationSchema(model, n);
  return { title: t.name, type: 'object', properties, required: ['__metadata'] };
}

/**
 * A navigation member: deferred unless expanded; expanded, a to-many one is `{"results":[…]}`
 * and a to-one one the entity, or null when there is none.
 */
function navigationSchema(model: Model, n: NavigationDef): JsonObject {
  const target = ref(typeName(model, model.typeByName.get(n.target)!));
  if (n.many) {
    return { anyOf: [ref('deferred'), { type: 'object', properties: { results: { type: 'array', items: target } }, required: ['results'] }] };
  }
  return { anyOf: [ref('deferred'), target, { type: 'object', nullable: true, enum: [null] }] };
}

/** What a create takes: the writable properties; the key and read-only ones are ignored if sent. */
function createSchema(t: EntityTypeDef): JsonObject {
  const writable = t.properties.filter((p) => p.access === 'writable');
  const properties: JsonObject = {};
  for (const p of writable) properties[p.name] = propertySchema(p, false);
  const required = writable.filter((p) => p.requiredOnCreate).map((p) => p.name);
  return { title: `${t.name} (for create)`, type: 'object', properties, ...(required.length ? { required } : {}) };
}

/** What an update takes: the writable properties, none required (MERGE and PATCH keep the rest). */
function updateSchema(t: EntityTypeDef): JsonObject {
  const properties: JsonObject = {};
  for (const p of t.properties) if (p.access === 'writable') properties[p.name] = propertySchema(p, false);
  return { title: `${t.name} (for update)`, type: 'object', properties };
}

const wrapped = (title: string, d: JsonObject): JsonObject => ({ title, type: 'object', properties: { d }, required: ['d'] });

function collectionOf(model: Model, t: EntityTypeDef): JsonObject {
  return wrapped('Wrapper', {
    title: `Collection of ${t.name}`,
    type: 'object',
    properties: {
      results: { type: 'array', items: ref(typeName(model, t)) },
      __count: { type: 'string', pattern: INT64_TEXT, description: 'with $inlinecount=allpages' },
      __next: { type: 'string', description: 'the next page, when the service pages the answer' },
    },
    required: ['results'],
  });
}

const json = (description: string, schema: JsonObject): JsonObject => ({ description, content: { 'application/json': { schema } } });
const ERROR: JsonObject = { $ref: '#/components/responses/error' };
const NO_CONTENT: JsonObject = { description: 'Success' };

function selectParameter(t: EntityTypeDef): JsonObject {
  const names = [...t.properties.map((p) => p.name), ...t.navigations.map((n) => n.name)];
  return listParameter('$select', 'Select properties to be returned', names);
}

function expandParameter(t: EntityTypeDef): JsonObject {
  return listParameter('$expand', 'Expand related entities', t.navigations.map((n) => n.name));
}

function listParameter(name: string, description: string, values: readonly string[]): JsonObject {
  return { name, in: 'query', description, explode: false, schema: { type: 'array', uniqueItems: true, items: { type: 'string', enum: [...values] } } };
}

function orderbyParameter(t: EntityTypeDef): JsonObject {
  const values = t.properties.flatMap((p) => [p.name, `${p.name} desc`]);
  return listParameter('$orderby', 'Order items by property values', values);
}

/** The options of a collection read: paging, filter, count, order, select, expand. */
function collectionParameters(t: EntityTypeDef): Json[] {
  return [
    { $ref: '#/components/parameters/top' },
    { $ref: '#/components/parameters/skip' },
    { $ref: '#/components/parameters/filter' },
    { $ref: '#/components/parameters/count' },
    orderbyParameter(t),
    selectParameter(t),
    expandParameter(t),
  ];
}

/** The key in a path: Products(42) and Products(42L) address the same entity. */
function keyParameter(t: EntityTypeDef): JsonObject {
  const key = t.properties.find((p) => p.access === 'key')!;
  return { name: key.name, in: 'path', required: true, description: `key: ${key.name}`, schema: { type: 'integer', format: 'int64', minimum: 1 } };
}

function setPaths(model: Model, t: EntityTypeDef, paths: JsonObject): void {
  const name = typeName(model, t);
  const tags = [t.setName];
  const entity = json('Retrieved entity', wrapped(t.name, ref(name)));
  const collection: JsonObject = {
    get: {
      summary: `Get entities from ${t.setName}`,
      tags,
      parameters: collectionParameters(t),
      responses: { '200': json('Retrieved entities', collectionOf(model, t)), default: ERROR },
    },
  };
  if (t.access === 'catalogue') {
    collection.post = {
      summary: `Add new entity to ${t.setName}`,
      tags,
      requestBody: { required: true, description: 'New entity', content: { 'application/json': { schema: ref(`${name}-create`) } } },
      responses: { '201': json('Created entity', wrapped(t.name, ref(name))), default: ERROR },
    };
  }
  paths[`/${t.setName}`] = collection;
  paths[`/${t.setName}/$count`] = {
    get: {
      summary: `Count the entities of ${t.setName}`,
      tags,
      parameters: [{ $ref: '#/components/parameters/filter' }],
      responses: { '200': { description: 'The number of entities', content: { 'text/plain': { schema: { type: 'string', pattern: '^[0-9]+$' } } } }, default: ERROR },
    },
  };

  const byKey: JsonObject = {
    parameters: [keyParameter(t)],
    get: { summary: `Get entity from ${t.setName} by key`, tags, parameters: [selectParameter(t), expandParameter(t)], responses: { '200': entity, default: ERROR } },
  };
  if (t.access !== 'readOnly') {
    const update = (summary: string): JsonObject => ({
      summary,
      tags,
      parameters: [{ $ref: '#/components/parameters/ifMatch' }],
      requestBody: { required: true, description: 'New property values', content: { 'application/json': { schema: ref(`${name}-update`) } } },
      responses: { '204': NO_CONTENT, default: ERROR },
    });
    byKey.patch = update(`Update entity in ${t.setName} (the properties sent; MERGE does the same)`);
    byKey.put = update(`Replace entity in ${t.setName}`);
  }
  if (t.access === 'catalogue') {
    byKey.delete = { summary: `Delete entity from ${t.setName}`, tags, parameters: [{ $ref: '#/components/parameters/ifMatch' }], responses: { '204': NO_CONTENT, default: ERROR } };
  }
  paths[`/${t.setName}({${keyParameter(t).name}})`] = byKey;

  for (const n of t.navigations) {
    const target = model.typeByName.get(n.target)!;
    const targetName = typeName(model, target);
    const navTags = [t.setName, target.setName];
    const item: JsonObject = { parameters: [keyParameter(t)] };
    if (n.many) {
      item.get = {
        summary: `Get entities from related ${n.name}`,
        tags: navTags,
        parameters: collectionParameters(target),
        responses: { '200': json('Retrieved entities', collectionOf(model, target)), default: ERROR },
      };
    } else {
      item.get = {
        summary: `Get related ${n.name}`,
        tags: navTags,
        parameters: [selectParameter(target), expandParameter(target)],
        responses: { '200': json('Retrieved entity', wrapped(target.name, ref(targetName))), default: ERROR },
      };
    }
    paths[`/${t.setName}({${keyParameter(t).name}})/${n.name}`] = item;
  }
}

/**
 * A service operation parameter in the query string. Int64 takes an `L` suffix, Decimal an `M`;
 * both are optional, so the plain number is described.
 */
function operationParameter(p: OperationParameterDef): JsonObject {
  const schemas: Record<EdmType, JsonObject> = {
    'Edm.Int64': { type: 'integer', format: 'int64' },
    'Edm.Int32': { type: 'integer', format: 'int32' },
    'Edm.Decimal': { type: 'number', format: 'decimal' },
    'Edm.Boolean': { type: 'boolean' },
    'Edm.String': { type: 'string' },
    'Edm.DateTime': { type: 'string', example: "datetime'2017-04-13T15:51:04'" },
  };
  const schema: JsonObject = { ...schemas[p.type] };
  if (p.min !== undefined) schema.minimum = p.min;
  return { name: p.name, in: 'query', required: p.required, schema };
}

function operationPath(op: ServiceOperationDef): JsonObject {
  const result = { ...edmSchema(op.returnType, true) };
  return {
    [op.httpMethod.toLowerCase()]: {
      summary: `Invoke ${op.httpMethod === 'GET' ? 'function' : 'action'} ${op.name}`,
      tags: ['Service operations'],
      parameters: op.parameters.map(operationParameter),
      responses: {
        '200': json('Success', wrapped(op.name, { type: 'object', properties: { [op.name]: result }, required: [op.name] })),
        default: ERROR,
      },
    },
  };
}

const BATCH: JsonObject = {
  post: {
    summary: 'Send a group of requests',
    description: 'Query parts (one GET each) and changesets in one multipart/mixed body; answered with one part per request part, in order.',
    tags: ['Batch requests'],
    requestBody: {
      required: true,
      description: 'Batch request',
      content: {
        'multipart/mixed;boundary=request-separator': {
          schema: { type: 'string' },
          example: '--request-separator\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nGET Products HTTP/1.1\r\nAccept: application/json\r\n\r\n\r\n--request-separator--',
        },
      },
    },
    responses: {
      '202': { description: 'Batch response', content: { 'multipart/mixed': { schema: { type: 'string' } } } },
      default: ERROR,
    },
  },
};

function components(model: Model): JsonObject {
  const schemas: JsonObject = {};
  for (const t of model.entityTypes) {
    const name = typeName(model, t);
    schemas[name] = entitySchema(model, t);
    if (t.access === 'catalogue') schemas[`${name}-create`] = createSchema(t);
    if (t.access !== 'readOnly') schemas[`${name}-update`] = updateSchema(t);
  }
  schemas.entityMetadata = {
    type: 'object',
    properties: { uri: { type: 'string' }, type: { type: 'string' }, etag: { type: 'string' } },
    required: ['uri', 'type'],
  };
  schemas.deferred = {
    type: 'object',
    properties: { __deferred: { type: 'object', properties: { uri: { type: 'string' } }, required: ['uri'] } },
    required: ['__deferred'],
  };
  schemas.error = {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string' },
          message: { type: 'object', required: ['lang', 'value'], properties: { lang: { type: 'string' }, value: { type: 'string' } } },
        },
      },
    },
  };
  return {
    schemas,
    parameters: {
      top: { name: '$top', in: 'query', description: 'Show only the first n items', schema: { type: 'integer', minimum: 0 }, example: 50 },
      skip: { name: '$skip', in: 'query', description: 'Skip the first n items', schema: { type: 'integer', minimum: 0 } },
      filter: { name: '$filter', in: 'query', description: 'Filter items by property values (OData V2 $filter syntax)', schema: { type: 'string' } },
      count: { name: '$inlinecount', in: 'query', description: 'Include count of items', schema: { type: 'string', enum: ['allpages', 'none'] } },
      ifMatch: { name: 'If-Match', in: 'header', description: 'The ETag read (__metadata.etag); a stale one answers 412', schema: { type: 'string' } },
    },
    responses: { error: json('Error', ref('error')) },
    securitySchemes: {
      [SECURITY_SCHEMES.token]: { type: 'apiKey', in: 'header', name: 'SubscriptionToken', description: "The account's subscription token, as the login answers it" },
      [SECURITY_SCHEMES.cookie]: {
        type: 'apiKey',
        in: 'cookie',
        name: '.ASPXAUTH',
        description: 'The session cookie set by POST /Authentication_JSON_AppService.axd/Login',
      },
    },
  };
}

/** The OpenAPI 3.0.3 document of the service, as a plain object. */
export function renderOpenApi(model: Model, options: OpenApiOptions): JsonObject {
  const paths: JsonObject = {};
  for (const t of model.entityTypes) setPaths(model, t, paths);
  for (const op of model.operations) paths[`/${op.name}`] = operationPath(op);
  paths['/$batch'] = BATCH;
  return {
    openapi: '3.0.3',
    info: {
      title: 'Product Catalogue Data Service',
      version: options.version,
      description:
        'The OData V2 service, described from its entity model. Shapes are JSON verbose in version 2.0 ' +
        '(`{"d":{"results":[…]}}`), which a request without version headers gets; a request that declares ' +
        'its versions may get 1.0 shapes (`{"d":[…]}`). Ask for JSON with `Accept: application/json` or ' +
        '`$format=json`; the default is Atom. Every request needs both the SubscriptionToken header and the session cookie.',
    },
    servers: [{ url: options.servicePath }],
    security: [{ [SECURITY_SCHEMES.token]: [], [SECURITY_SCHEMES.cookie]: [] }],
    tags: [...model.entityTypes.map((t) => ({ name: t.setName })), { name: 'Service operations' }, { name: 'Batch requests' }],
    paths,
    components: components(model),
  };
}
