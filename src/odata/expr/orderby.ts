/**
 * $orderby: comma-separated `expr [asc|desc]` items (docs/protocol.md). Each expression
 * is of the $filter grammar and of any type; the limits apply to the whole text, not per item.
 */
import type { EntityTypeDef, Model } from '../../model/types';
import { badRequest } from '../errors';
import { DEFAULT_EXPR_LIMITS, type ExprLimits, type OrderByItem } from './ast';
import { checkExpressionCost } from './cost';
import { describeToken } from './lexer';
import { ExpressionParser } from './parser';

export function parseOrderBy(model: Model, type: EntityTypeDef, text: string, limits: ExprLimits = DEFAULT_EXPR_LIMITS): OrderByItem[] {
  const parser = new ExpressionParser(model, type, text, '$orderby', limits);
  const lexer = parser.lexer;
  const items: OrderByItem[] = [];
  for (;;) {
    const first = lexer.peek();
    if (first.kind === 'end' && items.length === 0) throw badRequest('The $orderby option is empty.');
    if (first.kind === 'end' || first.kind === 'comma') {
      throw badRequest(`The $orderby option has an empty item at position ${first.pos}.`);
    }
    const expr = parser.parseExpression('item');
    let descending = false;
    const direction = lexer.peek();
    if (direction.kind === 'name' && (direction.text === 'asc' || direction.text === 'desc')) {
      lexer.next();
      descending = direction.text === 'desc';
    }
    checkExpressionCost(expr, '$orderby', limits);
    items.push({ expr, descending });
    const after = lexer.next();
    if (after.kind === 'end') return items;
    if (after.kind !== 'comma') {
      throw lexer.syntaxError(after.pos, `expected ',' or the end after an $orderby item but found ${describeToken(after)}.`);
    }
  }
}
