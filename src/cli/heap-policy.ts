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
 *
 * The old generation may grow to twice what survived its last full collection, not more. V8
 * chooses the factor itself, up to 4 where memory is not tight; the service's live heap is small
 * (about 14 MB during an export), so the limit it chose let an export's promoted garbage pile up
 * to some 60 MB, and the full collection that finally ran needed room of its own to compact it:
 * the process's peak. Twice is what V8 itself allows on a device short of memory. Peak RSS of
 * three PostgreSQL exports per process: 144–146 MB with V8's choice, 124–131 MB at twice; no
 * full collection ran in a measured GET by key run either way (docs/operating.md, "Memory").
 */
import v8 from 'node:v8';

export function applyHeapPolicy(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
  v8.setFlagsFromString('--heap-growing-percent=100');
}
