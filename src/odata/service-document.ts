/**
 * The service document (GET <serviceRoot>/): AtomPub app:service or JSON verbose. It lists each
 * entity set once under its own name; set aliases (ProductVariationPictures) answer but are not
 * listed. The model is fixed, so callers may cache the results.
 */
import type { Model } from '../model/types';
import { escapeXml } from './xml-escape';

export const APP_NS = 'http://www.w3.org/2007/app';
export const ATOM_NS = 'http://www.w3.org/2005/Atom';

/** AtomPub service document; `serviceRoot` is the absolute service root URI (a trailing slash is added when missing). */
export function renderServiceDocumentXml(model: Model, serviceRoot: string): string {
  const base = serviceRoot.endsWith('/') ? serviceRoot : `${serviceRoot}/`;
  const collections = model.entityTypes.map((t) => {
    const name = escapeXml(t.setName);
    return `    <collection href="${name}"><atom:title>${name}</atom:title></collection>\n`;
  });
  return (
    `<?xml version="1.0" encoding="utf-8" standalone="yes"?>\n` +
    `<service xml:base="${escapeXml(base)}" xmlns:atom="${ATOM_NS}" xmlns:app="${APP_NS}" xmlns="${APP_NS}">\n` +
    `  <workspace>\n` +
    `    <atom:title>Default</atom:title>\n` +
    collections.join('') +
    `  </workspace>\n` +
    `</service>\n`
  );
}

/** JSON verbose service document: {"d":{"EntitySets":[…]}}. */
export function renderServiceDocumentJson(model: Model): string {
  return JSON.stringify({ d: { EntitySets: model.entityTypes.map((t) => t.setName) } });
}
