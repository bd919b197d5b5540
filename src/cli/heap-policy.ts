/**
 * The V8 heap policy of a serving process, set before it serves.
 *
 * Allocation-site pretenuring is off. V8 places the objects of an allocation site straight in
 * the old generation once enough of them have survived young-generation collections. During a
 * PostgreSQL export, objects of the rows a page holds while its expansions are on their way
 * survived often enough for some sites to be pretenured; from then on the export allocated
 * old-generation garbage at about 30 MB/s, collected only when that generation reached its limit
 * (without it, by about 1 MB/s in the same export). Peak RSS of three 10,000-product exports
 * on PostgreSQL: 162–173 MB with pretenuring, 147–157 MB without (131–133 MB after the first),
 * and the export ran faster, with less marking (docs/operating.md, "Memory"). It is set here,
 * at run time before the service starts, rather than on node's command line, so that every way
 * of starting `catalogue serve` has it; those figures were measured with it set this way.
 */
import v8 from 'node:v8';

export function applyHeapPolicy(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
