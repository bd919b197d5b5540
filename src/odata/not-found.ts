/**
 * The one not-found answer for anything a path or a body names that the account does not have
 * (WCF Data Services' wording, which clients match on): 404 "Resource not found for the segment
 * 'Products(42L)'." Another account's entity answers exactly like one that never existed.
 */
import type { EntityTypeDef } from '../model/types';
import { entityPath } from './entity';
import { notFound, type ODataError } from './errors';
import { quote } from './quote';

/** `segment` as the client wrote it (quoted here). */
export function resourceNotFound(segment: string): ODataError {
  return notFound(`Resource not found for the segment '${quote(segment)}'.`);
}

/** An entity by key: the segment is its canonical path. */
export function entityNotFound(type: EntityTypeDef, id: bigint): ODataError {
  return resourceNotFound(entityPath(type, id));
}
