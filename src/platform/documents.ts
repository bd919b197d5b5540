/**
 * The documents the marketplace delivers (README "The platform API"): listings, orders, payment
 * events and shipping events, as JSON validated against a JSON Schema (Ajv) before anything is
 * stored. The schemas are derived from the entity model: a document's members are the model's
 * properties that the platform supplies, with the model's names, types, lengths and bounds. What
 * the service maintains itself (keys, foreign keys, flags, totals, modification dates, values
 * copied from the catalogue) is left out, so a property added to the model reaches the documents
 * without being written down twice.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { EntityTypeDef, Model, PropertyDef } from '../model/types';
import { badRequest } from '../odata/errors';
import { fromJson, INT32_MAX, INT32_MIN, parseIsoDateTime, ValueError, type EdmValue } from '../odata/edm';

export type DocumentKind = 'listing' | 'order' | 'payment' | 'shipment';
export const DOCUMENT_KINDS: readonly DocumentKind[] = ['listing', 'order', 'payment', 'shipment'];

/** A document after validation: its members as parsed JSON. */
export type Json = Readonly<Record<string, unknown>>;

export interface PlatformDocument {
  readonly kind: DocumentKind;
  readonly body: Json;
}

type Schema = Record<string, unknown>;

/** Properties of each type that the service maintains, never the platform. */
const SERVICE_MAINTAINED: Readonly<Record<string, readonly string[]>> = {
  SalesOrder: [
    'BuyerId', 'AddressId', 'ShippingAddressId', 'ModificationDate', 'EbayModificationDate', 'MarkedAsPayed', 'MarkedAsShipped',
    'ItemCount', 'TotalAmount', 'TotalPrice',
    // Set by payment events.
    'PaymentStatus', 'MonetaryPaymentStatus', 'PaymentTransactionId',
  ],
  // The catalogue's ids are copied from the referenced product and variation.
  SalesOrderItem: ['SalesOrderId', 'ProductId', 'ProductVariationId', 'ForeignId', 'ProductVariationSku', 'ProductVariationForeignId', 'ModificationDate'],
  Buyer: [],
  Address: ['BuyerId'],
  Listing: ['ProductId'],
  ListingItem: ['ListingId', 'ProductId', 'ProductVariationId'],
};

/** Rules that are not facets of the model: listing states, country codes, the platform's ids. */
const REFINEMENTS: Readonly<Record<string, Schema>> = {
  'Listing.Status': { enum: [0, 1] },
  'Address.Country': { pattern: '^[A-Z]{2}$' },
  // The platform's ids identify what a delivery updates: never empty.
  'SalesOrder.PlatformOrderId': { minLength: 1 },
  'SalesOrderItem.PlatformItemId': { minLength: 1 },
  'Listing.PlatformItemId': { minLength: 1 },
  // A listing item is known by its Sku within its listing.
  'ListingItem.Sku': { type: 'string', minLength: 1 },
};

/** Most entries one document may hold in a list (a body is at most 1 MiB anyway). */
const MAX_ENTRIES = 1000;

const INT64_TEXT = '^-?[0-9]{1,19}$';
const DECIMAL_TEXT = '^-?[0-9]{1,12}(\\.[0-9]{1,6})?$';
/** UTC only: `Z`, `+00:00` or no offset. */
const DATETIME_TEXT = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,7})?)?(Z|[+-]00:?00)?$';

/** The JSON Schema of one model property: Int64 and Decimal as strings (or JSON numbers), DateTime as ISO 8601 UTC. */
function propertySchema(type: EntityTypeDef, p: PropertyDef): Schema {
  const nullable = (t: string | string[]) => (p.nullable ? [...(Array.isArray(t) ? t : [t]), 'null'] : t);
  let schema: Schema;
  switch (p.type) {
    case 'Edm.String':
      schema = { type: nullable('string'), ...(p.maxLength !== undefined ? { maxLength: p.maxLength } : {}) };
      break;
    case 'Edm.Int32':
      schema = { type: nullable('integer'), minimum: p.min ?? INT32_MIN, maximum: p.max ?? INT32_MAX };
      break;
    case 'Edm.Int64':
      schema = { type: nullable(['string', 'integer']), pattern: INT64_TEXT };
      break;
    case 'Edm.Decimal':
      schema = { type: nullable(['string', 'number']), pattern: DECIMAL_TEXT };
      break;
    case 'Edm.Boolean':
      schema = { type: nullable('boolean') };
      break;
    case 'Edm.DateTime':
      schema = { type: nullable('string'), pattern: DATETIME_TEXT };
      break;
  }
  return { ...schema, ...(REFINEMENTS[`${type.name}.${p.name}`] ?? {}) };
}

const platformPropertiesOf = new WeakMap<EntityTypeDef, readonly PropertyDef[]>();

/** The properties of a type that the platform supplies (worked out once per type: an import asks per item). */
export function platformProperties(type: EntityTypeDef): readonly PropertyDef[] {
  let props = platformPropertiesOf.get(type);
  if (!props) {
    const maintained = SERVICE_MAINTAINED[type.name] ?? [];
    platformPropertiesOf.set(type, (props = type.properties.filter((p) => p.access === 'readOnly' && !maintained.includes(p.name))));
  }
  return props;
}

/** The properties of a type with these names, in this order. */
export const propertiesNamed = (type: EntityTypeDef, names: readonly string[]) => names.map((n) => type.properties.find((p) => p.name === n)!);

function objectSchema(type: EntityTypeDef, props: readonly PropertyDef[], required: readonly string[], extra: Readonly<Record<string, Schema>> = {}): Schema {
  return {
    type: 'object',
    properties: { ...Object.fromEntries(props.map((p) => [p.name, propertySchema(type, p)])), ...extra },
    required: [...required],
    additionalProperties: false,
  };
}

/** A reference to exactly one catalogue entity by one of `keys`. */
function referenceSchema(type: EntityTypeDef, keys: readonly string[]): Schema {
  const props = propertiesNamed(type, keys).map((p) => ({ ...p, nullable: false }));
  return { ...objectSchema(type, props, []), minProperties: 1, maxProperties: 1 };
}

const list = (items: Schema, minItems = 0): Schema => ({ type: 'array', items, minItems, maxItems: MAX_ENTRIES });

function kindMember(kind: DocumentKind): Schema {
  return { kind: { const: kind } };
}

/** The JSON Schemas of the four documents (also served at GET /platform/v1/schema). */
export function documentSchemas(model: Model): Record<DocumentKind, Schema> {
  const t = (name: string) => model.typeByName.get(name)!;
  const [order, item, buyer, address, listing, listingItem] = ['SalesOrder', 'SalesOrderItem', 'Buyer', 'Address', 'Listing', 'ListingItem'].map(t) as [
    EntityTypeDef, EntityTypeDef, EntityTypeDef, EntityTypeDef, EntityTypeDef, EntityTypeDef,
  ];
  const product = referenceSchema(t('Product'), ['Id', 'ForeignId']);
  const variation = referenceSchema(t('ProductVariation'), ['Id', 'Sku']);
  const references = { Product: product, ProductVariation: variation };
  const addressSchema = objectSchema(address, platformProperties(address), []);
  const itemKey = objectSchema(item, propertiesNamed(item, ['PlatformItemId', 'TransactionId']), ['PlatformItemId']);
  return {
    listing: objectSchema(listing, platformProperties(listing), ['kind', 'PlatformItemId'], {
      ...kindMember('listing'),
      Product: product,
      ListingItems: list(objectSchema(listingItem, platformProperties(listingItem), ['Sku'], references)),
    }),
    order: objectSchema(order, platformProperties(order), ['kind', 'PlatformOrderId', 'Buyer', 'SalesOrderItems'], {
      ...kindMember('order'),
      Buyer: objectSchema(buyer, platformProperties(buyer), ['BuyerName']),
      Address: addressSchema,
      ShippingAddress: addressSchema,
      SalesOrderItems: list(objectSchema(item, platformProperties(item), ['PlatformItemId'], references), 1),
    }),
    payment: objectSchema(order, propertiesNamed(order, ['PlatformOrderId', 'PaymentTransactionId', 'MonetaryPaymentStatus']), ['kind', 'PlatformOrderId', 'Paid'], {
      ...kindMember('payment'),
      Paid: { type: 'boolean' },
    }),
    shipment: objectSchema(order, propertiesNamed(order, ['PlatformOrderId']), ['kind', 'PlatformOrderId', 'ShippingStatus'], {
      ...kindMember('shipment'),
      ...Object.fromEntries(propertiesNamed(item, ['ShippingStatus', 'CarrierUsed', 'TrackingNumbers']).map((p) => [p.name, propertySchema(item, p)])),
      SalesOrderItems: list(itemKey, 1),
    }),
  };
}

/** What the value patterns mean, for messages that do not quote a regular expression. */
const PATTERN_MEANING: Readonly<Record<string, string>> = {
  [INT64_TEXT]: 'an Int64: digits, as a string or a number',
  [DECIMAL_TEXT]: 'a decimal with at most 12 integer digits and 6 decimal places, as a string or a number',
  [DATETIME_TEXT]: 'a UTC date and time such as 2024-05-01T10:30:00Z',
  '^[A-Z]{2}$': 'a two-letter ISO 3166-1 country code such as DE',
};

function describeError(e: ErrorObject): string {
  const at = e.instancePath === '' ? 'The document' : `'${e.instancePath}'`;
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return `${at} has the member '${String(params.additionalProperty)}', which this kind of document does not have.`;
    case 'required':
      return `${at} lacks the required member '${String(params.missingProperty)}'.`;
    case 'const':
      return `${at} must be ${JSON.stringify(params.allowedValue)}.`;
    case 'enum':
      return `${at} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`;
    case 'pattern':
      return `${at} must be ${PATTERN_MEANING[String(params.pattern)] ?? `text matching ${String(params.pattern)}`}.`;
    case 'minProperties':
    case 'maxProperties':
      return `${at} must name exactly one of its members.`;
    default:
      return `${at} ${e.message ?? 'is invalid'}.`;
  }
}

/** Validates documents and reads their members as Edm values. */
export class DocumentValidator {
  private readonly validators: Readonly<Record<DocumentKind, ValidateFunction>>;
  readonly schemas: Record<DocumentKind, Schema>;

  constructor(model: Model) {
    this.schemas = documentSchemas(model);
    const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
    this.validators = Object.fromEntries(DOCUMENT_KINDS.map((k) => [k, ajv.compile(this.schemas[k])])) as Record<DocumentKind, ValidateFunction>;
  }

  /** The document, or a 400 naming what is wrong with it. */
  validate(body: unknown): PlatformDocument {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('A platform document is a JSON object.');
    const kind = (body as Json).kind;
    if (typeof kind !== 'string' || !(DOCUMENT_KINDS as readonly string[]).includes(kind)) {
      throw badRequest(`The document's 'kind' must be one of ${DOCUMENT_KINDS.map((k) => `"${k}"`).join(', ')}.`);
    }
    const validate = this.validators[kind as DocumentKind];
    if (!validate(body)) throw badRequest(`Invalid ${kind} document: ${describeError(validate.errors![0]!)}`);
    return { kind: kind as DocumentKind, body: body as Json };
  }
}

/**
 * The members of `json` that are properties of `type` (of those named), as Edm values. The
 * schema has checked their shapes; what it cannot (an Int64 beyond the range, a 30 February) is
 * a 400 naming the member.
 */
export function readValues(type: EntityTypeDef, props: readonly PropertyDef[], json: Json, path: string): Record<string, EdmValue> {
  const values: Record<string, EdmValue> = {};
  for (const p of props) {
    if (!Object.prototype.hasOwnProperty.call(json, p.name)) continue;
    const raw = json[p.name];
    try {
      values[p.name] = p.type === 'Edm.DateTime' && raw !== null ? parseIsoDateTime(raw as string) : fromJson(p.type, raw);
    } catch (error) {
      if (error instanceof ValueError) throw badRequest(`Invalid document: '${path}/${p.name}': ${error.message}.`);
      throw error;
    }
  }
  return values;
}
