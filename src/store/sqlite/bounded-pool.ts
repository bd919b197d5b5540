/**
 * Things made on demand up to a bound (reader connections, read workers), lent to one user at a
 * time: beyond the bound, callers wait in arrival order for one to be given back.
 */
export class BoundedPool<T> {
  private readonly idle: T[] = [];
  private readonly waiting: ((item: T) => void)[] = [];
  /** Everything made so far, lent or idle (to close them). */
  readonly made: T[] = [];

  constructor(
    private readonly make: () => T,
    private readonly max: number,
  ) {}

  /** fn with an item of its own, given back when fn has settled. */
  async with<R>(fn: (item: T) => Promise<R>): Promise<R> {
    const item = await this.acquire();
    try {
      return await fn(item);
    } finally {
      this.release(item);
    }
  }

  private acquire(): T | Promise<T> {
    const free = this.idle.pop();
    if (free !== undefined) return free;
    if (this.made.length < this.max) {
      const item = this.make();
      this.made.push(item);
      return item;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(item: T): void {
    const next = this.waiting.shift();
    if (next) next(item);
    else this.idle.push(item);
  }
}
