/**
 * Service operation parameters from the query string, typed as the model declares them
 * (docs/protocol.md): Int64 with an optional L/l suffix (`productId=123L`), Decimal with
 * an optional M/m suffix (`price=109.900000m`), Int32 and Boolean plain. Every problem is a 400
 * naming the parameter; parameters the operation does not declare are ignored, as clients send
 * some (`DiscountOffer=9.99m`).
 */
import type { EdmType, ServiceOperationDef } from '../../model/types';
import { parseBooleanText, parseDecimalText, parseInt32Text, parseInt64Text, ValueError, type EdmValue } from '../edm';
import { badRequest } from '../errors';

/** The parameters an operation was called with, by declared name; absent optional ones are missing. */
export type OperationArguments = ReadonlyMap<string, Exclude<EdmValue, null>>;

/** How each type is written, for messages. */
const EXAMPLE: Readonly<Partial<Record<EdmType, string>>> = {
  'Edm.Int64': 'an Int64 such as 123L',
  'Edm.Int32': 'an Int32 such as 5',
  'Edm.Decimal': 'a Decimal such as 12.5m',
  'Edm.Boolean': 'true or false',
};

/** A query-string literal read as `type`; the suffix of Int64 and Decimal literals is optional. */
function parseLiteral(type: EdmType, text: string): Exclude<EdmValue, null> {
  switch (type) {
    case 'Edm.Int64':
      return parseInt64Text(text.replace(/[Ll]$/, ''));
    case 'Edm.Int32':
      return parseInt32Text(text);
    case 'Edm.Decimal':
      // parseDecimalText trims; a literal with blanks around it is not one.
      if (text.trim() !== text) throw new ValueError(`'${text}' is not a Decimal`);
      return parseDecimalText(text.replace(/[Mm]$/, ''));
    case 'Edm.Boolean':
      return parseBooleanText(text);
    default:
      // The model declares no other parameter types; a new one must be taught here first.
      throw new Error(`operation parameters of type ${type} are not supported`);
  }
}

/**
 * The declared parameters of `operation`, read from the custom query options. An optional
 * parameter sent empty or as `null` counts as not sent (a client that clears a profile may write
 * `profileId=`); a required one must hold a value.
 */
export function parseOperationArguments(operation: ServiceOperationDef, query: ReadonlyMap<string, string>, repeated: ReadonlySet<string> = new Set()): OperationArguments {
  const args = new Map<string, Exclude<EdmValue, null>>();
  for (const p of operation.parameters) {
    // Which of two values a client meant cannot be known; WCF Data Services refuses it too.
    if (repeated.has(p.name)) throw badRequest(`The parameter '${p.name}' of ${operation.name} is given more than once.`);
    const text = query.get(p.name);
    const absent = text === undefined || (!p.required && (text === '' || text === 'null'));
    if (absent) {
      if (p.required) throw badRequest(`The parameter '${p.name}' of ${operation.name} is required: ${EXAMPLE[p.type] ?? p.type}.`);
      continue;
    }
    let value: Exclude<EdmValue, null>;
    try {
      value = parseLiteral(p.type, text);
    } catch (error) {
      if (!(error instanceof ValueError)) throw error;
      throw badRequest(`The parameter '${p.name}' of ${operation.name} must be ${EXAMPLE[p.type] ?? p.type}: ${error.message}.`);
    }
    if (p.min !== undefined && (typeof value === 'bigint' || typeof value === 'number') && value < p.min) {
      throw badRequest(`The parameter '${p.name}' of ${operation.name} must be at least ${p.min}; ${String(value)} is out of range.`);
    }
    args.set(p.name, value);
  }
  return args;
}
