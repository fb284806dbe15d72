/** Allocation names `<job>.<group>[<index>]` and the index bookkeeping that reuses the lowest free one. */

/** The name of the allocation at `index` of a group. */
export function allocName(jobId: string, group: string, index: number): string {
  return `${jobId}.${group}[${index}]`;
}

/** The index in an allocation name, or -1 when the name has none. */
export function allocIndex(name: string): number {
  const open = name.lastIndexOf('[');
  if (open < 0 || !name.endsWith(']')) return -1;
  const n = Number(name.slice(open + 1, -1));
  return Number.isInteger(n) && n >= 0 ? n : -1;
}

/** Hands out the lowest indexes not already in use, in increasing order. */
export class IndexAllocator {
  private readonly used: Set<number>;
  private next = 0;

  constructor(used: Iterable<number>) {
    this.used = new Set(used);
  }

  /** Marks an index as taken. */
  take(index: number): void {
    this.used.add(index);
  }

  /** The lowest free index, now taken. */
  nextFree(): number {
    while (this.used.has(this.next)) this.next++;
    this.used.add(this.next);
    return this.next;
  }
}
