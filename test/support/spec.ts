/** Facts written out literally from the interface specification, for tests to check against. */

/** The 17 entity sets that the specification's service index names. */
export const SPEC_ENTITY_SETS: readonly string[] = [
  'Catalogs',
  'Products',
  'ProductImages',
  'ProductRelations',
  'ProductSpecifics',
  'ProductVariations',
  'ProductVariationSpecifics',
  'ProductVariationImages',
  'OptionalProductAttributes',
  'SalesOrders',
  'SalesOrderItems',
  'Addresses',
  'Buyers',
  'Listings',
  'ListingItems',
  'DiscountOffers',
  'CarParts',
];

/** The XML namespaces of OData v1/v2 payloads, written out. */
export const ATOM = 'http://www.w3.org/2005/Atom';
export const D = 'http://schemas.microsoft.com/ado/2007/08/dataservices';
export const M = 'http://schemas.microsoft.com/ado/2007/08/dataservices/metadata';
export const SCHEME = 'http://schemas.microsoft.com/ado/2007/08/dataservices/scheme';
export const RELATED = 'http://schemas.microsoft.com/ado/2007/08/dataservices/related/';
export const APP = 'http://www.w3.org/2007/app';
export const EDM = 'http://schemas.microsoft.com/ado/2008/09/edm';
