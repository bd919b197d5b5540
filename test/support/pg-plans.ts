/** Reading PostgreSQL's plans (EXPLAIN (FORMAT JSON)) in tests of which index a statement uses. */

export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** The indexes a plan reads, and whether it reads any table whole. */
export function scansOf(node: PlanNode): string[] {
  const own = node['Index Name'] ? [node['Index Name']] : node['Node Type'] === 'Seq Scan' ? ['(whole table)'] : [];
  return [...own, ...(node.Plans ?? []).flatMap(scansOf)];
}
