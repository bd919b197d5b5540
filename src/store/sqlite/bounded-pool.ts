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
  with<R>(fn: (item: T) => Promise<R>): Promise<R> {
    // An item at hand is lent without waiting for a turn of the microtask queue.
    const free = this.idle.pop();
    if (free !== undefined) return this.lend(free, fn);
    if (this.made.length < this.max) {
      let item: T;
      try {
        item = this.make();
      } catch (error) {
        // A failure to make one (the file cannot be opened) is the caller's rejection, as before.
        return Promise.reject(error);
      }
      this.made.push(item);
      return this.lend(item, fn);
    }
    return new Promise<T>((resolve) => this.waiting.push(resolve)).then((item) => this.lend(item, fn));
  }

  private async lend<R>(item: T, fn: (item: T) => Promise<R>): Promise<R> {
    try {
      return await fn(item);
    } finally {
      this.release(item);
    }
  }

  private release(item: T): void {
    const next = this.waiting.shift();
    if (next) next(item);
    else this.idle.push(item);
  }
}
