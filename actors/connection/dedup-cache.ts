/**
 * Bounded memory of recently accepted event keys: the newest `keysMax`, oldest forgotten
 * first. A lookup never refreshes a key (so the content depends only on the order of
 * accepted events and replay rebuilds it exactly), which makes this a FIFO: a ring of
 * keys plus a Set. Compared with an LRU library it is cheaper per event and its snapshot
 * is one array copy, taken while requests wait (a 100k-key iteration cost ~70 ms there).
 */
export class DedupCache {
  private readonly present = new Set<string>();
  private readonly ring: (string | undefined)[];
  /** where the next key goes; once full, also the oldest key */
  private next = 0;

  constructor(private readonly keysMax: number) {
    this.ring = new Array<string | undefined>(keysMax).fill(undefined);
  }

  has(key: string): boolean {
    return this.present.has(key);
  }

  add(key: string): void {
    if (this.present.has(key)) return;
    const evicted = this.ring[this.next];
    if (evicted !== undefined) this.present.delete(evicted);
    this.ring[this.next] = key;
    this.present.add(key);
    this.next = (this.next + 1) % this.keysMax;
  }

  get size(): number {
    return this.present.size;
  }

  /** Oldest first, so restoring in order reproduces the eviction order. */
  toSnapshot(): string[] {
    const keys = [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    return keys.filter((key): key is string => key !== undefined);
  }

  restore(keys: string[]): void {
    for (const key of keys) this.add(key);
  }
}
