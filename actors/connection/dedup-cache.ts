/**
 * Bounded memory of recently accepted event keys: the newest `keysMax`, oldest forgotten
 * first. A lookup never refreshes a key (so the content depends only on the order of
 * accepted events and replay rebuilds it exactly), which makes this a FIFO: a ring of
 * keys plus a Set. Compared with an LRU library it is cheaper per event and its snapshot
 * is one array copy, taken while requests wait (a 100k-key iteration cost ~70 ms there).
 */
export class DedupCache {
  private present = new Set<string>();
  /** grows to keysMax (an idle connection costs nothing), then wraps */
  // Stryker disable next-line ArrayDeclaration: a placeholder in the ring is evicted first and matches no real key, so the keys kept are the same
  private ring: string[] = [];
  /** once the ring is full: where the next key goes, which is also the oldest key */
  private next = 0;

  constructor(private readonly keysMax: number) {}

  has(key: string): boolean {
    return this.present.has(key);
  }

  add(key: string): void {
    if (this.present.has(key)) return;
    this.present.add(key);
    // Stryker disable next-line ConditionalExpression,BlockStatement: filling by index from 0 is the same ring as filling by push
    if (this.ring.length < this.keysMax) {
      this.ring.push(key);
      return;
    }
    this.present.delete(this.ring[this.next]!);
    this.ring[this.next] = key;
    this.next = (this.next + 1) % this.keysMax;
  }

  get size(): number {
    return this.present.size;
  }

  /** Oldest first, so restoring in order reproduces the eviction order. */
  toSnapshot(): string[] {
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  restore(keys: string[]): void {
    if (this.present.size === 0 && keys.length <= this.keysMax) {
      // Recovery: the snapshot's keys are distinct and oldest first, so they are the ring as
      // it was, and the Set is built in one native pass (a smaller bound since: the adds below).
      const kept = keys.slice();
      const present = new Set(kept);
      if (present.size === kept.length) {
        this.ring = kept;
        this.present = present;
        this.next = 0;
        return;
      }
    }
    for (const key of keys) this.add(key);
  }
}
