/**
 * The body of `PUT Set(key)/Property/$value`: the value as text/plain, written as a GET of the
 * same $value answers it (the XML text form of its type), in UTF-8 unless the Content-Type names
 * another charset.
 */
import { TextDecoder } from 'node:util';
import type { PropertyDef } from '../model/types';
import { fromXmlText, ValueError, type EdmValue } from './edm';
import { badRequest, ODataError } from './errors';
import { quote } from './quote';

export function readRawValue(property: PropertyDef, body: Buffer, charset: string | undefined): Exclude<EdmValue, null> {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset ?? 'utf-8', { fatal: true });
  } catch {
    throw new ODataError(415, `The charset '${quote(charset ?? '', 40)}' is not supported for a raw value.`);
  }
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw badRequest(`The raw value of '${property.name}' is not valid ${charset ?? 'utf-8'} text.`);
  }
  try {
    return fromXmlText(property.type, text) as Exclude<EdmValue, null>;
  } catch (e) {
    if (e instanceof ValueError) throw badRequest(`Invalid value for property '${property.name}' (${property.type}): ${e.message}.`);
    throw e;
  }
}
