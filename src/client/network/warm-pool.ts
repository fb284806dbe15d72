/**
 * A pool of things made ahead of time and used once each (warm network namespaces): `take`
 * hands out one made earlier, or nothing when the pool is empty (the caller then makes its
 * own); `fill` tops the pool up to its size in the background, one at a time, so a refill
 * never competes with itself for the machine. Nothing taken comes back: what was handed out
 * belongs to the taker, which destroys it. `close` stops filling and destroys what is idle.
 */
export interface WarmPoolOptions<T> {
  /** How many to keep ready; 0 disables the pool. */
  size: number;
  create: () => Promise<T>;
  destroy: (item: T) => Promise<void>;
  /** Awaited before each create: lets the owner hold the refill back while it has urgent work. */
  beforeCreate?: () => Promise<void>;
  /** A failed create or destroy (filling stops until the next `fill`). */
  onError?: (err: unknown) => void;
}

export class WarmPool<T> {
  private readonly idle: T[] = [];
  private filling: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly opts: WarmPoolOptions<T>) {}

  /** How many are ready now. */
  get ready(): number {
    return this.idle.length;
  }

  /** One made earlier (the oldest), or undefined. Does not refill: call `fill` once the caller's own work is done. */
  take(): T | undefined {
    return this.idle.shift();
  }

  /** Starts topping the pool up in the background (no-op when full, already filling, closed or disabled). */
  fill(): void {
    if (this.closed || this.filling || this.idle.length >= this.opts.size) return;
    this.filling = this.fillLoop().finally(() => {
      this.filling = null;
    });
  }

  /** Resolves when the current refill (if any) has finished. */
  async settled(): Promise<void> {
    await this.filling;
  }

  private async fillLoop(): Promise<void> {
    while (!this.closed && this.idle.length < this.opts.size) {
      await this.opts.beforeCreate?.();
      if (this.closed) return;
      let item: T;
      try {
        item = await this.opts.create();
      } catch (err) {
        this.opts.onError?.(err);
        return;
      }
      if (this.closed) {
        await this.opts.destroy(item).catch((err: unknown) => this.opts.onError?.(err));
        return;
      }
      this.idle.push(item);
    }
  }

  /** Stops filling and destroys every idle item (concurrently). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await this.filling;
    const items = this.idle.splice(0);
    await Promise.all(items.map((i) => this.opts.destroy(i).catch((err: unknown) => this.opts.onError?.(err))));
  }
}
