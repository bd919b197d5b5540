/**
 * The canonical functions of OData v2 that this service evaluates, with their signatures, and the
 * binding of a call. Names are lower-case and exact, as in WCF Data Services.
 */
import { badRequest } from '../errors';
import type { CallExpr, ExprType, FunctionName } from './ast';
import { bindArgument, type Operand } from './bind';
import { show } from './show';
import { TYPE_FUNCTIONS, type TypeFunctionName } from './type-functions';

interface Signature {
  readonly parameters: readonly ExprType[];
  /** How many of the parameters must be given (the rest are optional); all of them by default. */
  readonly required?: number;
  readonly result: ExprType;
}

const S = 'Edm.String';
const I = 'Edm.Int32';
const D = 'Edm.DateTime';
const M = 'Edm.Decimal';
const B = 'Edm.Boolean';

const datePart: Signature = { parameters: [D], result: I };
const rounding: Signature = { parameters: [M], result: M };

export const FUNCTIONS: Readonly<Record<FunctionName, Signature>> = {
  // substringof(needle, haystack): true when haystack contains needle (the V2 order).
  substringof: { parameters: [S, S], result: B },
  startswith: { parameters: [S, S], result: B },
  endswith: { parameters: [S, S], result: B },
  length: { parameters: [S], result: I },
  indexof: { parameters: [S, S], result: I },
  replace: { parameters: [S, S, S], result: S },
  substring: { parameters: [S, I, I], required: 2, result: S },
  tolower: { parameters: [S], result: S },
  toupper: { parameters: [S], result: S },
  trim: { parameters: [S], result: S },
  concat: { parameters: [S, S], result: S },
  year: datePart,
  month: datePart,
  day: datePart,
  hour: datePart,
  minute: datePart,
  second: datePart,
  round: rounding,
  floor: rounding,
  ceiling: rounding,
};


/** Hints for names that other OData versions use (a Map: request text never reaches Object.prototype). */
const HINTS: ReadonlyMap<string, string> = new Map([['contains', ' OData v2 writes substringof(needle, haystack).']]);

function isFunctionName(name: string): name is FunctionName {
  return Object.prototype.hasOwnProperty.call(FUNCTIONS, name);
}

/** The function a name calls; a 400 for unknown and unsupported names (checked before the arguments are read). */
export function lookupFunction(name: string, pos: number): FunctionName | TypeFunctionName {
  if (isFunctionName(name)) return name;
  if (TYPE_FUNCTIONS.has(name)) return name as TypeFunctionName;
  throw badRequest(`Unknown function '${show(name)}' at position ${pos}.${HINTS.get(name) ?? ''}`);
}

function describeSignature(name: FunctionName, signature: Signature): string {
  const parameters = signature.parameters.map((p, i) => (i < (signature.required ?? signature.parameters.length) ? p : `[${p}]`));
  return `${name}(${parameters.join(', ')})`;
}

export function bindCall(name: FunctionName, pos: number, args: readonly Operand[]): CallExpr {
  const signature = FUNCTIONS[name];
  const max = signature.parameters.length;
  const min = signature.required ?? max;
  if (args.length < min || args.length > max) {
    const expected = min === max ? `${min} argument${min === 1 ? '' : 's'}` : `${min} to ${max} arguments`;
    throw badRequest(
      `The function '${name}' at position ${pos} takes ${expected}, not ${args.length}: ${describeSignature(name, signature)}.`,
    );
  }
  const bound = args.map((arg, i) => {
    const parameter = signature.parameters[i] ?? S;
    const result = bindArgument(arg, parameter);
    if (result === undefined) {
      throw badRequest(
        `No applicable function found for '${name}' at position ${pos} with the specified arguments: ` +
          `argument ${i + 1} (at position ${arg.pos}) is of type '${arg.expr.type}' where '${parameter}' is expected. ` +
          `The function is ${describeSignature(name, signature)}.`,
      );
    }
    return result;
  });
  return { kind: 'call', name, type: signature.result, args: bound };
}
