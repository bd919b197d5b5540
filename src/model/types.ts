/**
 * The shape of the entity model. The model (./catalogue-model.ts) is declarative data only:
 * $metadata, the database schema, validation and both wire formats are derived from it, so a
 * property is added in exactly one place.
 */

export type EdmType =
  | 'Edm.Int64'
  | 'Edm.Int32'
  | 'Edm.Decimal'
  | 'Edm.String'
  | 'Edm.Boolean'
  | 'Edm.DateTime';

/** Who may set a property: the key is assigned by the service, read-only ones by the service or the platform. */
export type PropertyAccess = 'key' | 'writable' | 'readOnly';

export interface PropertyDef {
  readonly name: string;
  readonly type: EdmType;
  readonly nullable: boolean;
  readonly access: PropertyAccess;
  /** Database column, derived from the name (snake_case). */
  readonly column: string;
  /** Characters, for strings, counted as .NET counts them: UTF-16 code units. */
  readonly maxLength?: number;
  /**
   * How rules compare this text (uniqueness and counting limits): 'ignoreCase' as SQL Server's
   * default collation did (case-insensitive, trailing spaces ignored; model/text.ts). The store
   * keeps the comparison key in a column of its own (`${column}_key`), which unique indexes use.
   * Without it, text compares exactly.
   */
  readonly textComparison?: 'ignoreCase';
  /** Blank text is no value: an empty or blank string is stored as null (an empty Sku is no Sku). */
  readonly blankIsNull?: boolean;
  /** Must be present (and non-null) on create. */
  readonly requiredOnCreate?: boolean;
  /** Value stored when a create omits the property (kept as wire text so Decimal stays exact). */
  readonly defaultValue?: string | number | boolean;
  /** Inclusive numeric bounds. */
  readonly min?: number;
  readonly max?: number;
  /** Maintained by the service: set on create, and on every change for 'modified'. */
  readonly timestamp?: 'created' | 'modified';
  /**
   * Looked up by its value in bulk (an import finds each order's buyer by name): the table has
   * an index on it within the account, so a lookup costs its matches, not the account's rows.
   */
  readonly indexed?: boolean;
  /**
   * A change of this property moves the entity's ETag, so $metadata declares it
   * ConcurrencyMode="Fixed" (generated clients then send If-Match). These are the writable
   * properties: the ETag is a row version that moves when one of them is written, as WCF Data
   * Services computes it from the Fixed properties. Values the service or the platform set
   * (dates, profile ids, payment flags) leave it alone, so a client's whole-entity update after
   * such a change still matches (the read-only values it re-sends are ignored anyway).
   */
  readonly concurrencyToken: boolean;
  /**
   * A change of this property is an event a seller's integration waits for (a payment, a
   * shipping status, stock or price): the change log (store/change-log.ts) names it in a
   * 'changed' row's changed_properties, and webhooks announce it.
   */
  readonly watched?: boolean;
}

/** What a seller may do with a set through the public API. */
export type SetAccess =
  /** Seller-owned catalogue data: every verb. */
  | 'catalogue'
  /** Delivered by the platform: read, and update the writable properties. */
  | 'updatable'
  /** Delivered by the platform: read only. */
  | 'readOnly';

export interface EntityTypeDef {
  /** Singular type name, e.g. Product (qualified: CatalogueService.Product). */
  readonly name: string;
  /** Entity set name, e.g. Products. */
  readonly setName: string;
  /** Further set names that answer exactly like setName (ProductVariationPictures). */
  readonly setAliases: readonly string[];
  readonly table: string;
  readonly access: SetAccess;
  readonly properties: readonly PropertyDef[];
  readonly navigations: readonly NavigationDef[];
  /** Property tuples that must be unique within an account (a null member never collides). */
  readonly uniqueKeys: readonly UniqueKey[];
}

/**
 * A uniqueness rule: checked generically before a write (catalogue/rules.ts), enforced by a unique
 * index, and answered alike whichever catches a duplicate.
 */
export interface UniqueKey {
  readonly properties: readonly string[];
  /** The answer's message; `{Name}` stands for the value of the property Name in the write. A duplicate is always a 409 Conflict. */
  readonly message: string;
}

/** Multiplicity of an association end, as CSDL writes it. */
export type Multiplicity = '1' | '0..1' | '*';

/** What deleting the referenced row does to the referencing rows. */
export type OnDelete = 'cascade' | 'setNull' | 'restrict';

/**
 * A relationship between two entity types. Every navigation property is one end of exactly one
 * relation; a relation may have a navigation on one end only.
 */
export type RelationDef = ReferenceRelation | LinkTableRelation | ThroughEntityRelation;

/** The dependent type holds a foreign-key property that points at the principal's key. */
export interface ReferenceRelation {
  readonly kind: 'reference';
  readonly name: string;
  readonly principal: string;
  /** Navigation on the principal to its dependents (always many), if any. */
  readonly principalNav?: string;
  readonly dependent: string;
  /** Navigation on the dependent to its principal, if any. */
  readonly dependentNav?: string;
  /** Foreign-key property on the dependent. */
  readonly foreignKey: string;
  readonly onDelete: OnDelete;
  /**
   * Further to-many navigations on the principal over the same foreign key, each a navigation of
   * its own: entries carry it, $metadata declares it with an association of its own
   * (`${principal}_${twin}`) over the same two entity sets, and it reads and writes exactly like
   * principalNav. ProductVariationPictures: the name the shop connector reads from every variation.
   */
  readonly principalNavTwins?: readonly string[];
}

/** Many-to-many through a link table of (account, left id, right id), managed with $links. */
export interface LinkTableRelation {
  readonly kind: 'linkTable';
  readonly name: string;
  readonly left: string;
  readonly leftNav: string;
  readonly right: string;
  readonly rightNav: string;
  readonly table: string;
  readonly leftColumn: string;
  readonly rightColumn: string;
}

/** Many-to-many whose pairs are themselves entities (ProductRelations): a $links write creates or deletes the pair's entity. */
export interface ThroughEntityRelation {
  readonly kind: 'throughEntity';
  readonly name: string;
  readonly left: string;
  readonly leftNav: string;
  readonly right: string;
  readonly rightNav: string;
  readonly through: string;
  /** Foreign key on the through type that points at the left end. */
  readonly leftKey: string;
  readonly rightKey: string;
}

export interface NavigationDef {
  readonly name: string;
  /** Type name of the entities the navigation leads to. */
  readonly target: string;
  readonly many: boolean;
  readonly relation: RelationDef;
  /** Name of the CSDL Association (and AssociationSet) the navigation is declared with. */
  readonly association: string;
  /** Role names for CSDL: this end and the other end. */
  readonly fromRole: string;
  readonly toRole: string;
}

/** One end of an association: the entity type that plays it and its CSDL role name. */
export interface RelationEnd {
  readonly type: string;
  readonly role: string;
}

/**
 * A CSDL Association with its AssociationSet of the same name. Every relation has one, named
 * after it; each twin navigation of a reference relation (principalNavTwins) has one more over
 * the same ends.
 */
export interface AssociationDef {
  readonly name: string;
  readonly relation: RelationDef;
  /** reference: [principal, dependent]; linkTable / throughEntity: [left, right]. */
  readonly ends: readonly [RelationEnd, RelationEnd];
}

export interface OperationParameterDef {
  readonly name: string;
  readonly type: EdmType;
  readonly required: boolean;
  /** Least value accepted (ids are positive: 1). */
  readonly min?: number;
}

export interface ServiceOperationDef {
  readonly name: string;
  readonly httpMethod: 'GET' | 'POST';
  readonly parameters: readonly OperationParameterDef[];
  readonly returnType: EdmType;
}

export interface Model {
  readonly namespace: string;
  readonly containerName: string;
  readonly entityTypes: readonly EntityTypeDef[];
  readonly relations: readonly RelationDef[];
  /** The CSDL associations: one per relation, one more per twin navigation. */
  readonly associations: readonly AssociationDef[];
  readonly operations: readonly ServiceOperationDef[];
  /** Set name or alias -> entity type. */
  readonly typeBySetName: ReadonlyMap<string, EntityTypeDef>;
  readonly typeByName: ReadonlyMap<string, EntityTypeDef>;
  readonly operationByName: ReadonlyMap<string, ServiceOperationDef>;
}
