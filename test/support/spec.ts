/** Facts written out literally from the interface specification, for tests to check against. */

/** The 17 entity sets of the service index (interface-specification.md, item 5). */
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
