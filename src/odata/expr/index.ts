/**
 * The system query options $filter, $orderby, $expand and $select, parsed and bound against the
 * model into the trees of ./ast.ts, and URI literals read and written. A pure module: every
 * failure is a 400 ODataError, whatever the input text.
 */
export * from './ast';
export { parseFilter } from './parser';
export { parseOrderBy } from './orderby';
export { parseExpand } from './expand';
export { parseSelect } from './select';
export { formatUriLiteral, parseUriLiteral } from './literals';
