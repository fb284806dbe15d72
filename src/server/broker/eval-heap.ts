/**
 * A priority queue of evaluations: higher Priority first, then older (lower CreateIndex), then
 * by ID so order is total and deterministic.
 */
import type { Evaluation } from '../../structs/index.js';

function before(a: Evaluation, b: Evaluation): boolean {
  if (a.Priority !== b.Priority) return a.Priority > b.Priority;
  if (a.CreateIndex !== b.CreateIndex) return a.CreateIndex < b.CreateIndex;
  return a.ID < b.ID;
}

/** A binary heap of evaluations ordered by scheduling priority. */
export class EvalHeap {
  private readonly items: Evaluation[] = [];

  get size(): number {
    return this.items.length;
  }

  push(e: Evaluation): void {
    const h = this.items;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  peek(): Evaluation | undefined {
    return this.items[0];
  }

  pop(): Evaluation | undefined {
    const h = this.items;
    if (h.length === 0) return undefined;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }

  /** Removes every item, returning them. */
  drain(): Evaluation[] {
    return this.items.splice(0);
  }
}
